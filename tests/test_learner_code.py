"""Real learners' code (issue #17, part 3): what the contract tolerates costs nothing, and what it
does not gets one message that says what to write instead.

The files in tests/learners/ are in the styles found in learners' public notebooks; each is graded in
the real sandbox with the real suites.
"""
from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Optional

import pytest

from autograder import config
from autograder.grading import scoring, session, signatures
from autograder.grading.remote import Connection
from autograder.sandbox.forkserver import Zygote
from autograder.selfcheck.symptoms import CRASH_HEADING
from kit_helpers import edited, reference_source

LEARNERS = Path(__file__).resolve().parent / "learners"
A = "02_attention_scoring"


def texts(result: session.Result, component: str) -> list[str]:
    comp = next(c for c in result.components if c.name == component)
    return [t.output for t in comp.tests if not t.passed]


def said(result: session.Result, crash_sites: bool = True) -> list[tuple[str, float, list[tuple[str, str]]]]:
    """Each component's score and its failed tests' messages (what a path must give alike). Without `crash_sites`, a
    crash's text stops before the student's frame ("where (your code):"), which a sandbox adds and an in-process
    grading does not show (helper-80's F4)."""
    def text(output: str) -> str:
        return output if crash_sites else output.split("\n  " + CRASH_HEADING)[0].rstrip()
    return [(c.name, round(c.score, 6), [(t.function, text(t.output)) for t in c.tests if not t.passed])
            for c in result.components]


def graded_on_both_paths_losing_naming_tests_alone(zygote: Zygote, assignment_id: str, path: Path,
                                                   renamed: tuple[str, ...]) -> list[session.Result]:
    """[sandboxed, in-process] gradings of `path`, in which each of `renamed` loses its naming test alone, every
    other component keeps full marks, and both paths say the same."""
    results = [session.grade_file(zygote, assignment_id, path), session.run_in_process(assignment_id, path)]
    for result in results:
        for comp in result.components:
            failed = [t.function for t in comp.tests if not t.passed]
            if comp.name in renamed:
                assert failed == [signatures.naming_test(comp.name)], (comp.name, failed)
                assert comp.points * 0.85 < comp.score < comp.points
            else:
                assert comp.score == comp.points, (comp.name, failed)
    assert said(results[0]) == said(results[1])
    return results


def test_book_style_d2l_names_resolve_to_the_course_names(zygote: Zygote) -> None:
    result = session.grade_file(zygote, A, LEARNERS / "d2l_style.py")
    assert result.score == result.max_score, [t for c in result.components for t in texts(result, c.name)][:2]


def test_d2l_s_short_names_for_torch_s_resolve_as_in_the_book(zygote: Zygote) -> None:
    """`d2l.zeros`, `d2l.arange`, `d2l.float32`...: d2l.torch's aliases, which the 0.17 package's own
    PositionalEncoding uses (found by a review: that code, verbatim, got 0/6)."""
    result = session.grade_file(zygote, "05_positional_encoding", LEARNERS / "d2l_aliases_pe.py")
    assert result.score == result.max_score, texts(result, "PositionalEncoding")[:2]


def test_d2l_1_0_s_module_base_and_add_to_class_work_as_in_the_book(zygote: Zygote, tmp_path: Path) -> None:
    """d2l 1.0's MultiHeadAttention derives from `d2l.Module`, keeps its arguments with
    `save_hyperparameters()` and gets methods with `@d2l.add_to_class(...)`; the book's own file scored
    0 of 6 ("`Module` is not part of this course", audit 35): now it is graded on what it does."""
    source = reference_source("04_multihead").replace("from solutions.attention_scoring import",
                                                      "from attention_support import")
    source = source.replace("class MultiHeadAttention(nn.Module):", "from d2l import torch as d2l\n\n\n"
                            "class MultiHeadAttention(d2l.Module):", 1)
    source = source.replace("        self.num_heads = num_heads\n", "        self.save_hyperparameters()\n", 1)
    old = "transpose_qkv(self.W_q(queries), self.num_heads)"
    assert source.count(old) == 1
    source = source.replace(old, "self.heads_of(self.W_q(queries))")
    source += ("\n\n@d2l.add_to_class(MultiHeadAttention)\ndef heads_of(self, X):\n"
               "    return transpose_qkv(X, self.num_heads)\n")
    path = tmp_path / "d2l_1_0_module.py"
    path.write_text(source)
    result = session.grade_file(zygote, "04_multihead", path)
    assert result.score == result.max_score, [t for c in result.components for t in texts(result, c.name)][:2]


def test_newer_edition_signatures_and_own_names_get_one_clear_message(zygote: Zygote) -> None:
    result = session.grade_file(zygote, A, LEARNERS / "d2l_v1_names.py")
    scores = {c.name: c.score for c in result.components}
    assert scores["masked_softmax"] == 4  # its own mask_sequence is used as written
    # and said to be: the sequence_mask graded is the student's (it was "the course's ... (not defined)")
    masked = next(c for c in result.components if c.name == "masked_softmax")
    assert [u.student for u in masked.dependencies] == [True], [u.describe() for u in masked.dependencies]
    # d2l 1.0's names, graded in the contract names' places: each costs its naming test alone
    for name, theirs in (("sequence_mask", "mask_sequence"), ("DotProductAttention", "ScaledDotProductAttention")):
        assert texts(result, name) == [f"`{name}` is not defined in your submission: the grader graded your `{theirs}` "
                                       f"in its place, as the contract's `{name}`. The contract fixes the name "
                                       f"(docs/course-api.md): rename `{theirs}` to `{name}`, or add `{name} = {theirs}`"]
    signature = [t for t in texts(result, "AdditiveAttention") if "signature:" in t]
    assert len(signature) == 1, texts(result, "AdditiveAttention")[:1]  # said once, on the first failure
    assert ("signature: your AdditiveAttention takes (num_hiddens, dropout); the contract is (key_size, "
            "query_size, num_hiddens, dropout)\n  the grader passed ") in signature[0]
    assert "d2l 1.0 changed these signatures" in signature[0]
    # called by name (its LazyLinear layers need no sizes): the signature test costs the signature
    assert scores["AdditiveAttention"] > 0
    lazy = [t for t in texts(result, "AdditiveAttention") if "your layers are lazy (nn.LazyLinear" in t]
    assert len(lazy) == 1 and "uninitialized" not in lazy[0]  # the naming test, in the contract's terms


def test_a_correct_component_spelled_otherwise_loses_its_naming_test_alone_on_both_paths(
        zygote: Zygote, tmp_path: Path) -> None:
    """d2l 1.0's `TransformerEncoderBlock`, and `Transformer_Decoder` (both seen in learners' code): the
    reference under those names. Before, each scored 0 ("`EncoderBlock` is not defined ... did you mean")."""
    source = re.sub(r"\bEncoderBlock\b", "TransformerEncoderBlock", reference_source("06_transformer"))
    source = re.sub(r"\bTransformerDecoder\b", "Transformer_Decoder", source)
    path = tmp_path / "renamed.py"
    path.write_text(source)
    graded_on_both_paths_losing_naming_tests_alone(zygote, "06_transformer", path, ("EncoderBlock", "TransformerDecoder"))


def test_transpose_output_named_as_the_inverse_of_transpose_qkv_loses_its_naming_test_alone_on_both_paths(
        zygote: Zygote, tmp_path: Path) -> None:
    """Helper-78's F3 (learner code-index 11206529761): transpose_output named `untranspose_qkv`, its MultiHeadAttention
    calling it so, was "not defined": 0 of 2 for a correct function (signatures.inverse_named)."""
    path = tmp_path / "untranspose.py"
    path.write_text(re.sub(r"\btranspose_output\b", "untranspose_qkv", reference_source("04_multihead")))
    graded_on_both_paths_losing_naming_tests_alone(zygote, "04_multihead", path, ("transpose_output",))


@pytest.mark.parametrize("assignment_id,name,other", [
    ("05_positional_encoding", "PositionalEncoding", "PositionalEmbedding"),
    ("04_multihead", "MultiHeadAttention", "MultiHeadSelfAttention"),
])
def test_a_correct_component_named_plainly_otherwise_loses_its_naming_test_alone_on_both_paths(
        zygote: Zygote, tmp_path: Path, assignment_id: str, name: str, other: str) -> None:
    """Names real learners give that are not spellings of the contract's (helper-72's F8: `PositionalEmbedding`,
    nituchao/nituchao-deeplearning; `MultiHeadSelfAttention`): the reference under those names scored 0."""
    path = tmp_path / "renamed.py"
    path.write_text(re.sub(rf"\b{name}\b", other, reference_source(assignment_id)))
    graded_on_both_paths_losing_naming_tests_alone(zygote, assignment_id, path, (name,))


def book_1_0_transposes(style: str) -> str:
    """The reference 04 with transpose_qkv and transpose_output as methods of MultiHeadAttention reading
    `self.num_heads`: in the class's body (modifiededition/NLP_Accelerator, helper-54) or added with d2l 1.0's
    `@d2l.add_to_class(MultiHeadAttention)`, as the 1.0 book writes them (which binds the names to None)."""
    source = reference_source("04_multihead").replace("from solutions.attention_scoring import",
                                                      "from attention_support import")
    functions = {}
    for name in ("transpose_qkv", "transpose_output"):
        start = source.index(f"def {name}(")
        end = source.index("\n\n\n", start) + 3
        functions[name] = source[start:end].replace("(X: torch.Tensor, num_heads: int)", "(self, X)") \
            .replace(", num_heads,", ", self.num_heads,")
        source = source[:start] + source[end:]
        source = source.replace(f"{name}(self.W_q(queries), self.num_heads)", f"self.{name}(self.W_q(queries))")
        source = source.replace(f"{name}(self.W_k(keys), self.num_heads)", f"self.{name}(self.W_k(keys))")
        source = source.replace(f"{name}(self.W_v(values), self.num_heads)", f"self.{name}(self.W_v(values))")
        source = source.replace(f"{name}(output, self.num_heads)", f"self.{name}(output)")
    assert "num_heads)" not in "".join(functions.values()) and "self.num_heads" in functions["transpose_output"]
    if style == "add_to_class":
        return source.replace("class MultiHeadAttention(nn.Module):", "from d2l import torch as d2l\n\n\n"
                              "class MultiHeadAttention(nn.Module):") + "".join(
            f"\n\n@d2l.add_to_class(MultiHeadAttention)\n{f}" for f in functions.values())
    return source + "".join("\n" + "\n".join("    " + line if line else line for line in f.splitlines())
                            for f in functions.values())


@pytest.mark.parametrize("style", ["class body", "add_to_class"])
def test_a_broken_method_is_replaced_where_the_class_calls_it(zygote: Zygote, tmp_path: Path, style: str) -> None:
    """Helper-57 (session 41): a transpose_qkv method with a bug failed its tests, so MultiHeadAttention was
    graded "with the course's transpose_qkv", which the child bound to the name `transpose_qkv`; the class
    calls `self.transpose_qkv`, its own broken method, so the bug was charged twice (1.23 of 6 against 6 of 6
    for the same bug in a top-level function) and the feedback said the course's version was used. The course's
    function now also stands in for the method (dependencies.Job.method_stand_in, child.method_of_function)."""
    old = "X = X.permute(0, 2, 1, 3)  # (B, h, L, d/h)"
    source = book_1_0_transposes(style)
    assert source.count(old) == 1
    path = tmp_path / "broken_method.py"
    path.write_text(source.replace(old, "X = X.permute(2, 0, 1, 3)  # heads outermost: a bug"))
    results = [session.grade_file(zygote, "04_multihead", path), session.run_in_process("04_multihead", path)]
    for result in results:
        scores = {c.name: c.score for c in result.components}
        assert 0 < scores["transpose_qkv"] < 1.5 and scores["transpose_output"] > 1.8
        mha = next(c for c in result.components if c.name == "MultiHeadAttention")
        assert mha.score == mha.points, [t.output for t in mha.tests if not t.passed][:1]
        [qkv] = [u for u in mha.dependencies if u.name == "transpose_qkv"]
        assert not qkv.student
    assert said(results[0]) == said(results[1])


def test_torch_s_warnings_about_a_test_s_own_arguments_are_not_the_student_s_output(zygote: Zygote,
                                                                                    tmp_path: Path) -> None:
    """Helper-54 (session 40): the book's decoder hands its dropout to a one-layer GRU, as the contract's
    tests build it (dropout 0.3, num_layers 1), and every grading, the reference's too, showed torch's
    "dropout option adds dropout after all but last recurrent layer" as the output of the student's code."""
    path = tmp_path / "reference.py"
    path.write_text(reference_source("03_bahdanau"))
    result = session.grade_file(zygote, "03_bahdanau", path)
    assert result.score == result.max_score
    assert "dropout option" not in result.output and "output of your code" not in result.output


@pytest.mark.parametrize("style", ["class body", "add_to_class"])
def test_transposes_written_as_methods_lose_their_naming_tests_alone_on_both_paths(
        zygote: Zygote, tmp_path: Path, style: str) -> None:
    """Helper-54 (session 40): correct transpose_qkv and transpose_output written as methods of
    MultiHeadAttention got 0 of 2 each, with "`transpose_qkv` is not defined in your submission". Each
    method is now graded as the contract's function (signatures.methods_as_functions): its naming test
    alone is lost, and the feedback says what was graded in its place."""
    path = tmp_path / "methods.py"
    path.write_text(book_1_0_transposes(style))
    names = ("transpose_qkv", "transpose_output")
    for result in graded_on_both_paths_losing_naming_tests_alone(zygote, "04_multihead", path, names):
        for name in names:
            assert texts(result, name)[0].startswith(f"`{name}` is not defined in your submission: the grader graded "
                                                     f"your method `MultiHeadAttention.{name}` in its place")


def test_the_course_s_class_standing_in_for_the_student_s_takes_the_student_s_own_calls(
        zygote: Zygote, tmp_path: Path) -> None:
    """Helper-49's audit (session 35): a learner's EncoderBlock(Q_size, K_size, V_size, num_hiddens, num_heads,
    dropout, ffn_in_ch, ffn_hid_ch, nomalized_shape) failed its tests, so their TransformerEncoder was graded
    with the course's EncoderBlock, which their code called by their own names: "unexpected keyword argument
    'Q_size'", 0/4 for a correct encoder. The course's class now takes a call from the student's code by the
    student's signature (signatures.called_as, child.read_as_written): the encoder keeps every point."""
    source = reference_source("06_transformer")
    own_signature = [
        ("def __init__(self, key_size: int, query_size: int, value_size: int, num_hiddens: int,\n"
         "                 norm_shape: Any, ffn_num_input: int, ffn_num_hiddens: int, num_heads: int,\n"
         "                 dropout: float, use_bias: bool = False, **kwargs: object) -> None:\n"
         "        super().__init__(**kwargs)\n"
         "        self.attention = MultiHeadAttention(key_size, query_size, value_size, num_hiddens,",
         "def __init__(self, Q_size, K_size, V_size, num_hiddens, num_heads, dropout, ffn_in_ch, ffn_hid_ch,\n"
         "                 nomalized_shape, use_bias=False):\n"
         "        super().__init__()\n"
         "        key_size, query_size, value_size, norm_shape = K_size, Q_size, V_size, nomalized_shape\n"
         "        ffn_num_input, ffn_num_hiddens = ffn_in_ch, ffn_hid_ch\n"
         "        self.attention = MultiHeadAttention(key_size, query_size, value_size, num_hiddens,"),
        ("        return self.addnorm2(Y, self.ffn(Y))", "        return self.addnorm2(Y, self.ffn(X))"),  # a bug
        ("EncoderBlock(key_size, query_size, value_size, num_hiddens, norm_shape,\n"
         "                             ffn_num_input, ffn_num_hiddens, num_heads, dropout, use_bias)",
         "EncoderBlock(Q_size=query_size, K_size=key_size, V_size=value_size, num_hiddens=num_hiddens,\n"
         "                             num_heads=num_heads, dropout=dropout, ffn_in_ch=ffn_num_input,\n"
         "                             ffn_hid_ch=ffn_num_hiddens, nomalized_shape=norm_shape, use_bias=use_bias)"),
    ]
    for old, new in own_signature:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    path = tmp_path / "own_block_signature.py"
    path.write_text(source)
    sandboxed = session.grade_file(zygote, "06_transformer", path)
    in_process = session.run_in_process("06_transformer", path)
    for result in (sandboxed, in_process):
        scores = {c.name: c for c in result.components}
        # the bug, charged where it is: one named mistake keeps about half (its dependence test passes in full)
        assert scores["EncoderBlock"].score < scores["EncoderBlock"].points * 0.6
        encoder = scores["TransformerEncoder"]
        assert encoder.score == encoder.points, [t.output[:300] for t in encoder.tests if not t.passed]
        assert [u.student for u in encoder.dependencies if u.name == "EncoderBlock"] == [False]  # the course's
    assert said(sandboxed) == said(in_process)


def graded_both_ways(zygote: Zygote, tmp_path: Path, name: str, source: str, edits: list[tuple[str, str]],
                     every: bool = False, assignment_id: str = "06_transformer") -> tuple[session.Result, session.Result]:
    """`source` with each (old, new) edit made (once; with `every`, wherever old occurs), graded as `assignment_id` in
    the sandbox and in-process."""
    for old, new in edits:
        assert source.count(old) >= 1 if every else source.count(old) == 1, old
        source = source.replace(old, new)
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    return session.grade_file(zygote, assignment_id, path), session.run_in_process(assignment_id, path)


@pytest.mark.parametrize("variant", ["contract_order_call", "unused_stub"])
def test_a_call_the_contract_s_signature_takes_is_read_by_the_contract(
        variant: str, zygote: Zygote, tmp_path: Path) -> None:
    """Helper-50's review of the test above's mechanism, which had read every call from the student's code by
    the student's signature: an EncoderBlock listing num_heads before ffn_num_hiddens (and buggy) made the
    course's block read the reference TransformerEncoder's contract-order call in that order (4/4 -> 0/4, the
    signature mistake charged twice); an unused stub `MultiHeadAttention(key_size, query_size, value_size,
    num_heads, num_hiddens, ...)` turned an EncoderBlock that swaps those two arguments into 4/4, and the correct
    DecoderBlock into 0/6. A call the contract's signature takes now means the contract's parameters."""
    source = reference_source("06_transformer")
    if variant == "contract_order_call":
        edits = [("norm_shape: Any, ffn_num_input: int, ffn_num_hiddens: int, num_heads: int,\n"
                  "                 dropout: float, use_bias: bool = False, **kwargs: object) -> None:\n"
                  "        super().__init__(**kwargs)\n        self.attention = MultiHeadAttention(",
                  "norm_shape: Any, ffn_num_input: int, num_heads: int, ffn_num_hiddens: int,\n"
                  "                 dropout: float, use_bias: bool = False, **kwargs: object) -> None:\n"
                  "        super().__init__(**kwargs)\n        self.attention = MultiHeadAttention("),
                 ("        return self.addnorm2(Y, self.ffn(Y))\n", "        return self.addnorm2(Y, self.ffn(Y)) * 1.5\n")]
        expected = {"TransformerEncoder": 4.0, "DecoderBlock": 6.0}
    else:
        edits = [("self.attention = MultiHeadAttention(key_size, query_size, value_size, num_hiddens,\n"
                  "                                            num_heads, dropout, use_bias)",
                  "self.attention = MultiHeadAttention(key_size, query_size, value_size, num_heads,\n"
                  "                                            num_hiddens, dropout, use_bias)"),
                 ("\n\nclass PositionWiseFFN",
                  "\n\nclass MultiHeadAttention(nn.Module):\n"
                  "    def __init__(self, key_size, query_size, value_size, num_heads, num_hiddens, dropout, bias=False):\n"
                  "        super().__init__()\n\n\nclass PositionWiseFFN")]
        expected = {"EncoderBlock": 0.0, "DecoderBlock": 6.0}
    sandboxed, in_process = graded_both_ways(zygote, tmp_path, variant, source, edits)
    for result in (sandboxed, in_process):
        scores = {c.name: c.score for c in result.components}
        assert {name: scores[name] for name in expected} == expected, scores
    if variant == "contract_order_call":  # (in-process, a crash inside the course's class called by the student's
        assert said(sandboxed) == said(in_process)  # code lacks "your code raised": as on 52cf06a, left for #23)


#: The blocks' calls of MultiHeadAttention in the reference 06, and the same calls in the order
#: (num_hiddens, num_heads, dropout, key_size, query_size, value_size) of a learner's own class.
OWN_ORDER_CALLS = [
    ("MultiHeadAttention(key_size, query_size, value_size, num_hiddens,\n"
     "                                            num_heads, dropout, use_bias)",
     "MultiHeadAttention(num_hiddens, num_heads, dropout, key_size,\n"
     "                                            query_size, value_size, use_bias)"),
    ("MultiHeadAttention(key_size, query_size, value_size, num_hiddens,\n"
     "                                             num_heads, dropout)",
     "MultiHeadAttention(num_hiddens, num_heads, dropout, key_size,\n"
     "                                             query_size, value_size)")]
#: A learner's own MultiHeadAttention in that order, which forgets W_o (it fails 04's suite, agreeing with
#: the course's attention weights only), and a stub in that order which stores its arguments and does nothing.
OWN_MHA = {
    "own_class": (
        "class MultiHeadAttention(nn.Module):\n"
        "    def __init__(self, num_hiddens, num_heads, dropout, key_size, query_size, value_size, bias=False):\n"
        "        super().__init__()\n"
        "        self.num_heads = num_heads\n"
        "        self.attention = DotProductAttention(dropout)\n"
        "        self.W_q = nn.Linear(query_size, num_hiddens, bias=bias)\n"
        "        self.W_k = nn.Linear(key_size, num_hiddens, bias=bias)\n"
        "        self.W_v = nn.Linear(value_size, num_hiddens, bias=bias)\n"
        "        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)\n\n"
        "    def forward(self, queries, keys, values, valid_lens):\n"
        "        queries = transpose_qkv(self.W_q(queries), self.num_heads)\n"
        "        keys = transpose_qkv(self.W_k(keys), self.num_heads)\n"
        "        values = transpose_qkv(self.W_v(values), self.num_heads)\n"
        "        if valid_lens is not None:\n"
        "            valid_lens = torch.repeat_interleave(valid_lens, self.num_heads, dim=0)\n"
        "        return transpose_output(self.attention(queries, keys, values, valid_lens), self.num_heads)\n"),
    "stub": (
        "class MultiHeadAttention(nn.Module):\n"
        "    def __init__(self, num_hiddens, num_heads, dropout, key_size, query_size, value_size, bias=False):\n"
        "        super().__init__()\n"
        "        self.todo = (num_hiddens, num_heads, dropout, key_size, query_size, value_size, bias)\n")}


def _own_order_06(own: Optional[str]) -> str:
    """The reference 06 whose blocks call MultiHeadAttention in the own class's order, with `own` (an OWN_MHA
    class, or None) defined in it."""
    source = reference_source("06_transformer")
    for old, new in OWN_ORDER_CALLS:
        assert old in source, old
        source = source.replace(old, new)
    return source.replace("\n\nclass PositionWiseFFN", f"\n\n{own}\n\nclass PositionWiseFFN") if own else source


def test_a_call_in_the_order_of_the_student_s_own_working_class_is_read_in_that_order(
        zygote: Zygote, tmp_path: Path) -> None:
    """Helper-50's fixture B: the learner's own MultiHeadAttention lists (num_hiddens, num_heads, dropout, key_size,
    query_size, value_size) and forgets W_o, so it fails 04's suite and the course's stands in; the blocks call it
    in that order, which the course's signature also takes (six positional arguments). Read the contract's way,
    query_size was num_heads and value_size the dropout: every block crashed (0/4, 0/6). The arguments' names say
    the student's order, and that class is code that works (it agrees with the course's attention weights), so
    those calls are read that way (signatures.own_order_sites, providers.Runs.works)."""
    sandboxed, in_process = graded_both_ways(zygote, tmp_path, "own_order", _own_order_06(OWN_MHA["own_class"]), [])
    for result in (sandboxed, in_process):
        scores = {c.name: round(c.score, 6) for c in result.components}
        assert scores == {"PositionWiseFFN": 2.0, "AddNorm": 2.0, "EncoderBlock": 4.0, "TransformerEncoder": 4.0,
                          "DecoderBlock": 6.0, "TransformerDecoder": 6.0}, scores
        block = next(c for c in result.components if c.name == "EncoderBlock")
        assert [u.student for u in block.dependencies if u.name == "MultiHeadAttention"] == [False]
    assert said(sandboxed) == said(in_process)


@pytest.mark.parametrize("variant", ["one_name_for_three_sizes", "two_calls_on_one_line"])
def test_what_a_call_s_arguments_say_of_its_order_is_read_call_by_call(
        variant: str, zygote: Zygote, tmp_path: Path) -> None:
    """Helper-51's misses of the reading above: `num_hiddens` given for the three sizes (all equal in the blocks)
    stands where the contract has num_hiddens too, which had vetoed the reading of a correct call (EncoderBlock
    0/4); and a call in the student's order beside one in the contract's on one line (the reading is the call's
    span, not its line: DecoderBlock had 0/6)."""
    source = _own_order_06(OWN_MHA["own_class"])
    if variant == "one_name_for_three_sizes":
        old, new = OWN_ORDER_CALLS[0][1], ("MultiHeadAttention(num_hiddens, num_heads, dropout, num_hiddens,\n"
                                           "                                            num_hiddens, num_hiddens, use_bias)")
    else:
        old = (f"        self.attention1 = {OWN_ORDER_CALLS[1][1]}\n"
               "        self.addnorm1 = AddNorm(norm_shape, dropout)\n"
               f"        self.attention2 = {OWN_ORDER_CALLS[1][1]}\n")
        new = (f"        self.attention1, self.attention2 = (MultiHeadAttention(num_hiddens, num_heads, dropout, key_size, "
               f"query_size, value_size), {OWN_ORDER_CALLS[1][0]})\n"
               "        self.addnorm1 = AddNorm(norm_shape, dropout)\n")
    sandboxed, in_process = graded_both_ways(zygote, tmp_path, variant, source, [(old, new)])
    for result in (sandboxed, in_process):
        assert {c.name: round(c.score, 6) for c in result.components} == {
            "PositionWiseFFN": 2.0, "AddNorm": 2.0, "EncoderBlock": 4.0, "TransformerEncoder": 4.0,
            "DecoderBlock": 6.0, "TransformerDecoder": 6.0}
    assert said(sandboxed) == said(in_process)


def test_a_stub_s_order_does_not_make_a_wrong_call_right(zygote: Zygote, tmp_path: Path) -> None:
    """Helper-51's attack on the above: blocks that call the course's MultiHeadAttention in a wrong order, and a
    stub in that order that stores its arguments (reading them, so the static reading marks the calls). The stub
    agrees with the course in nothing, so it says nothing of what the calls mean: the file grades as it does
    without the stub (before the stub counted only when it worked, it made the blocks' wrong calls 24/24)."""
    scores = []
    for own in (None, OWN_MHA["stub"]):
        path = tmp_path / ("with_stub.py" if own else "without.py")
        path.write_text(_own_order_06(own))
        scores.append({c.name: round(c.score, 6) for c in session.grade_file(zygote, "06_transformer", path).components})
    assert scores[0] == scores[1], scores
    assert scores[1]["EncoderBlock"] == 0.0, scores


def test_a_part_is_not_failed_by_what_only_another_part_reads(zygote: Zygote, tmp_path: Path) -> None:
    """Helper-51: the parts of 03's step-by-step tests share one run of the decoder (T.steps); a decoder that
    returns its logits as a list of rows had the attention-weights part of its query test failed by the logits'
    type, which only the outputs part reads (it passed before the parts shared their run). What one part alone
    reads is taken as a T.Snapshot."""
    source = reference_source("03_bahdanau")
    old = "return logits.permute(1, 0, 2), [enc_outputs"
    assert source.count(old) == 1
    path = tmp_path / "list_logits.py"
    path.write_text(source.replace(old, "return list(logits.permute(1, 0, 2)), [enc_outputs"))
    result = session.grade_file(zygote, "03_bahdanau", path)
    passed = {t.nodeid.split("::")[-1]: t.passed for c in result.components for t in c.tests}
    assert passed["test_query_is_top_layer_of_current_hidden_state[attention_weights]"]
    assert not passed["test_query_is_top_layer_of_current_hidden_state[outputs]"]
    assert passed["test_matches_reference[attention_weights]"]


def test_two_definitions_spelled_like_a_component_are_both_named_and_neither_graded(
        zygote: Zygote, tmp_path: Path) -> None:
    """A correct `ScaledDotProductAttention` beside an unfinished `MaskedDotProductAttention` (audit 35's
    ADV1): the grader cannot tell which is meant. Before, the hint named the first in alphabetical order,
    the unfinished one: "did you mean `MaskedDotProductAttention`?"."""
    source = re.sub(r"\bDotProductAttention\b", "ScaledDotProductAttention", reference_source(A))
    path = tmp_path / "two.py"
    path.write_text(source + "\n\nclass MaskedDotProductAttention(nn.Module):\n    pass\n")
    sandboxed = session.grade_file(zygote, A, path)
    in_process = session.run_in_process(A, path)
    for result in (sandboxed, in_process):
        comp = next(c for c in result.components if c.name == "DotProductAttention")
        assert comp.score == 0
        assert all(t.output.startswith("`DotProductAttention` is not defined in your submission, and "
                                       "`MaskedDotProductAttention`, `ScaledDotProductAttention` are all spelled "
                                       "like it") for t in comp.tests), comp.tests[0].output
    assert said(sandboxed) == said(in_process)


def test_a_component_the_submission_lacks_scores_zero_on_both_paths(zygote: Zygote, tmp_path: Path) -> None:
    """A file with the FFN and AddNorm only: its EncoderBlock is 0 with "not defined" in the sandbox and
    in-process alike. In-process, the missing name was an AttributeError whose text the catalogue's
    signatures took for a typo of `self.ffn`: 1.86 of 4 for code that is not there."""
    source = reference_source("06_transformer")
    path = tmp_path / "ffn_and_addnorm_only.py"
    kept = source[:source.index("class EncoderBlock")]
    path.write_text("\n".join(line for line in kept.splitlines() if not line.startswith("from solutions")))
    sandboxed = session.grade_file(zygote, "06_transformer", path)
    in_process = session.run_in_process("06_transformer", path)
    for result in (sandboxed, in_process):
        comp = next(c for c in result.components if c.name == "EncoderBlock")
        assert comp.score == 0 and not comp.misconceptions
        assert all(t.output.startswith("`EncoderBlock` is not defined in your submission") for t in comp.tests)
        # The hint suggests from the submission's own definitions, read from its source: the child also holds
        # the course's TransformerEncoder standing in, which it once offered ("did you mean", helper-69).
        decoder = next(c for c in result.components if c.name == "TransformerDecoder")
        assert all(t.output.startswith("`TransformerDecoder` is not defined in your submission") and
                   "did you mean" not in t.output for t in decoder.tests), decoder.tests[0].output
    assert said(sandboxed) == said(in_process)


def test_a_device_chosen_at_the_top_and_an_abbreviated_name_cost_nothing_and_the_naming_test(
        zygote: Zygote, tmp_path: Path) -> None:
    """yhli00/my-d2l-code (helper-69): `device = torch.device(...)` at the top, used inside sequence_mask, which
    is named `seq_mask`. The device line was skipped (a call), so every function using it raised NameError, and
    `seq_mask` was no spelling of sequence_mask (0 of 2, "did you mean `seq_mask`?"). Now d2l's `try_gpu()` or
    torch's device at the top is kept (loader.DEVICE_CALLS) and an abbreviation is a spelling (`abbreviates`)."""
    source = reference_source(A).replace(
        "    positions = torch.arange(X.shape[1], device=X.device)", "    positions = torch.arange(X.shape[1], device=device)")
    source = re.sub(r"\bsequence_mask\b", "seq_mask", source)
    assert "device=device" in source and "def seq_mask(" in source
    path = tmp_path / "device_at_top.py"
    path.write_text("import torch\nfrom d2l import torch as d2l\n\ndevice = d2l.try_gpu()\n\n" + source)
    graded_on_both_paths_losing_naming_tests_alone(zygote, A, path, ("sequence_mask",))


def test_a_component_name_with_one_typing_slip_is_graded_losing_its_naming_test_alone(
        zygote: Zygote, tmp_path: Path) -> None:
    """`masked_softomax` (Yang4096/pythonALL, found by helper-69): the book's masked_softmax under a misspelt name
    scored 0 ("did you mean `masked_softomax`?"); one letter added, dropped, changed or two swapped is graded in
    its place (testing.one_slip), as another spelling is. Short names and the contract's own are not slips."""
    path = tmp_path / "slip.py"
    path.write_text(re.sub(r"\bmasked_softmax\b", "masked_softomax", reference_source(A)))
    graded_on_both_paths_losing_naming_tests_alone(zygote, A, path, ("masked_softmax",))
    assert signatures.spelled_like("PositionalEncoding", "PositionalEncodding")
    assert not signatures.spelled_like("TransformerDecoder", "TransformerEncoder")
    assert not signatures.spelled_like("AddNorm", "AdNorm")  # seven letters: too short to call a slip
    # a word by its initial beside one written out (helper-70's l13: `transpose_o`); alone, an initial names nothing
    assert signatures.spelled_like("transpose_output", "transpose_o")
    assert not signatures.spelled_like("transpose_qkv", "transpose_o")
    assert not signatures.spelled_like("AddNorm", "A_N") and not signatures.spelled_like("EncoderBlock", "E_B")


def test_the_course_s_signature_is_named_only_for_a_type_error_in_calling_a_course_component() -> None:
    conn = Connection(None, lambda: 0.0, course_parts={  # type: ignore[arg-type]  # the note reads no child
        "AdditiveAttention": "AdditiveAttention(key_size, query_size, num_hiddens, dropout)",
        "AdditiveAttention.forward": "AdditiveAttention.forward(queries, keys, values, valid_lens)"})
    note = conn._course_part_note
    assert "its signature is AdditiveAttention(key_size, query_size" in note(
        "TypeError", "AdditiveAttention.__init__() missing 2 required positional arguments: 'num_hiddens' and 'dropout'")
    assert "AdditiveAttention.forward(queries, keys" in note(
        "TypeError", "AdditiveAttention.forward() takes 5 positional arguments but 6 were given")
    assert note("TypeError", "AddNorm.__init__() missing 1 required positional argument: 'dropout'") == ""  # the student's
    assert note("RuntimeError", "AdditiveAttention.__init__() oops") == ""
    assert note("TypeError", "unsupported operand type(s) for /: 'tuple' and 'Tensor'") == ""


def test_blocks_named_with_a_space_are_the_same_blocks(zygote: Zygote) -> None:
    result = session.grade_file(zygote, "06_transformer", LEARNERS / "encoder_block_space.py")
    assert result.score == result.max_score, [t for c in result.components for t in texts(result, c.name)][:2]


def test_a_misspelt_attribute_costs_only_the_tests_that_read_it(zygote: Zygote) -> None:
    result = session.grade_file(zygote, "01_kernel_regression", LEARNERS / "nwk_misspelt_weights.py")
    comp = next(c for c in result.components if c.name == "NWKernelRegression")
    failed = [t for t in comp.tests if not t.passed]
    assert failed and all("attention_weights" in t.output for t in failed), [t.output[:200] for t in failed]
    # The tests that check predictions only pass: the misspelling costs the weights' tests.
    passed = {t.function for t in comp.tests if t.passed}
    assert {"test_nwk_within_range", "test_nwk_small_w_mean", "test_nwk_training_lowers_loss"} <= passed


def test_weights_stored_under_another_name_cost_only_the_weights_tests_with_the_kit_s_message(tmp_path: Path) -> None:
    """An encoder that keeps its weights as `attention_weight` (one letter short) and a decoder whose property is
    spelt so: no test says a raw AttributeError. The encoder's list is read under its name (testing.stored_spelling)
    and the slip costs the stored-values test alone; the decoder's property is no instance attribute (its
    `_attention_weights` is private, no spelling), so its base class's property answers, raising
    NotImplementedError, and every test that reads the weights says the class does not define them (it said "not
    implemented yet", as if the decoder were a stub), while its outputs' tests pass."""
    source = reference_source("06_transformer")
    at = source.index("class TransformerEncoder")
    misspelt = source[:at] + re.sub(r"self\.attention_weights\b", "self.attention_weight", source[at:]).replace(
        "def attention_weights(self)", "def attention_weight(self)")
    path = tmp_path / "misspelt_weights.py"
    path.write_text(misspelt)
    result = session.run_in_process("06_transformer", path, components=["TransformerEncoder", "TransformerDecoder"])
    encoder, decoder = (next(c for c in result.components if c.name == name)
                        for name in ("TransformerEncoder", "TransformerDecoder"))
    assert [(t.function, t.output) for t in encoder.tests if not t.passed] == [(
        "test_TransformerEncoder_contract_attributes", "your module stores `attention_weight`, and the contract reads "
        "`attention_weights`: the tests read your `attention_weight` in its place; rename it `attention_weights`")]
    failed = [t for t in decoder.tests if not t.passed]
    said = "your class does not define `attention_weights` (the base class leaves it to you)"
    assert failed and all(said in t.output for t in failed), [t.output[:200] for t in failed]
    assert not any("AttributeError" in t.output for t in failed)
    assert all("weights" in t.nodeid for t in failed), [t.nodeid for t in failed]
    # What passed earns its whole share: the gate weighs the outputs, not the stored weights (the
    # step-by-step weights test counted as an output comparison: the decoder kept 2.58 of 6, now 4.42).
    shares = scoring.shares(decoder.points, decoder.tests, result.scoring)
    assert all(s.score == s.max_score for s in shares if s.outcome.passed), decoder.score


def test_own_version_of_given_code_is_not_used_as_the_scaffolding(zygote: Zygote) -> None:
    """A submission that redefines the given Seq2SeqEncoder (incompatibly) keeps full marks for its correct
    decoder: the tests' scaffolding (EncoderDecoder training) is the course's given code (the review found
    8.12/10, "where (your code): course __course_deps__"). No message calls course code the student's."""
    result = session.grade_file(zygote, "03_bahdanau", LEARNERS / "own_given_encoder.py")
    assert result.score == result.max_score, [t for c in result.components for t in texts(result, c.name)][:2]
    assert "course __course_deps__" not in result.output


def test_a_raising_weights_property_costs_only_the_weights_tests(zygote: Zygote) -> None:
    result = session.grade_file(zygote, "03_bahdanau", LEARNERS / "bahdanau_weights_typo.py")
    comp = next(c for c in result.components if c.name == "Seq2SeqAttentionDecoder")
    failed = [t for t in comp.tests if not t.passed]
    assert failed and all("attention_weights" in t.output for t in failed), [t.output[:200] for t in failed]
    # The property raises AttributeError: only the weights' tests and parts fail; the logits' and state's pass.
    assert all("attention_weights" in t.nodeid for t in failed), [t.nodeid for t in failed]
    passed = {t.nodeid.split("::")[-1] for t in comp.tests if t.passed}
    assert {"test_query_is_top_layer_of_current_hidden_state[outputs]", "test_matches_reference[outputs]",
            "test_step_by_step_equals_whole_sequence[outputs]", "test_gru_input_is_context_then_embedding"} <= passed


def test_a_wrong_table_is_named_and_not_blamed_on_dropout(zygote: Zygote) -> None:
    entry = Path(__file__).resolve().parents[1] / "autograder/catalogue/entries/05_positional_encoding/mutants"
    result = session.grade_file(zygote, "05_positional_encoding", entry / "pe_base_1000.py")
    comp = next(c for c in result.components if c.name == "PositionalEncoding")
    assert [d.family for d in comp.misconceptions] == ["pe_base_1000"] and comp.score > 0
    # Its dropout is right: the dropout test compares with its own X + P and passes.
    assert {t.function for t in comp.tests if t.passed} >= {"test_dropout_in_training_only", "test_not_a_parameter"}


def test_in_place_masking_costs_only_the_input_unchanged_test(zygote: Zygote) -> None:
    mutants = Path(__file__).resolve().parents[1] / "autograder/catalogue/entries/02_attention_scoring/mutants"
    result = session.grade_file(zygote, A, mutants / "ms_book_view_in_place_mask.py")
    comp = next(c for c in result.components if c.name == "masked_softmax")
    # The gradient test's X is not a leaf (as no score tensor in a model is): writing into it is legal for autograd.
    assert {t.function for t in comp.tests if not t.passed} == {"test_ms_input_unchanged"}


def test_a_crash_on_one_form_of_valid_lens_costs_that_form_alone(zygote: Zygote, tmp_path: Path) -> None:
    """Helper-54 (session 40): a learner's masked_softmax written for 4-D scores repeats a 1-D valid_lens
    shape[2] (K) times instead of shape[1] (Q) times: right for None and (B, Q), a crash on (B,) whenever
    Q != K. Its property tests (row sums, shifts, junk, gradients) drew all forms in one test, so the crash
    failed them all: 1.27 of 4. Each is now scored per form (issue #23, "one check, one score")."""
    source = reference_source(A).replace("from solutions.attention_scoring import", "from attention_support import")
    old = "valid_lens = torch.repeat_interleave(valid_lens, shape[1])"
    assert source.count(old) == 1
    path = tmp_path / "k_times.py"
    path.write_text(source.replace(old, "valid_lens = torch.repeat_interleave(valid_lens, shape[2])"))
    comp = next(c for c in session.grade_file(zygote, A, path).components if c.name == "masked_softmax")
    one_d_only = {"test_masked_softmax_1d", "test_masked_softmax_large_masked_scores", "test_ms_1d_equals_2d"}
    failed = [t for t in comp.tests if not t.passed]
    assert failed and all(t.function in one_d_only or re.search(r"\[1d\]|valid_lens=1d", t.nodeid) for t in failed), \
        [t.nodeid for t in failed]
    assert {t.nodeid.rsplit("[", 1)[1] for t in comp.tests if t.passed and t.function == "test_ms_shift"} == {"none]", "2d]"}
    assert 0.5 * comp.points < comp.score < 0.75 * comp.points


@pytest.mark.parametrize("variant", ["keyword_of_own_05", "own_extra_parameter"])
def test_the_course_s_stand_in_takes_the_names_of_code_not_handed_in(
        variant: str, zygote: Zygote, tmp_path: Path) -> None:
    """Real code (chenkehan_transformer in the corpus) calls `PositionalEncoding(encoding_dim=num_hiddens,
    dropout=dropout)`, the keyword of the learner's own 05 code, which a 06 hand-in does not carry: the course's
    PositionalEncoding stood in and refused the keyword, 0/4 and 0/6 for the two stacks. A keyword the
    contract lacks now takes the one required parameter the call leaves out (signatures.keywords_called). Its
    DecoderBlock adds `training` to the contract's parameters and the decoder passes it: the course's block
    standing in for the (buggy) student's drops that extra instead of failing on it."""
    source = reference_source("06_transformer")
    if variant == "keyword_of_own_05":
        edits = [("PositionalEncoding(num_hiddens, dropout)", "PositionalEncoding(encoding_dim=num_hiddens, dropout=dropout)")]
        expected = {"TransformerEncoder": 4.0, "TransformerDecoder": 6.0}
    else:
        edits = [("                 dropout: float, i: int, **kwargs: object) -> None:\n"
                  "        super().__init__(**kwargs)\n        self.i = i\n",
                  "                 dropout: float, i: int, training, **kwargs: object) -> None:\n"
                  "        super().__init__(**kwargs)\n        self.i = i\n"),
                 ("        return self.addnorm3(Z, self.ffn(Z)), state", "        return self.addnorm3(Z, self.ffn(Y)), state"),
                 ("ffn_num_input, ffn_num_hiddens, num_heads, dropout, i))", "ffn_num_input, ffn_num_hiddens, num_heads, dropout, i, True))")]
        expected = {"TransformerDecoder": 6.0}
    sandboxed, in_process = graded_both_ways(zygote, tmp_path, variant, source, edits, every=True)
    for result in (sandboxed, in_process):
        scores = {c.name: c.score for c in result.components}
        assert {name: scores[name] for name in expected} == expected, scores
        if variant == "own_extra_parameter":
            assert scores["DecoderBlock"] < 6.0
    assert said(sandboxed) == said(in_process)


def test_an_earlier_component_spelled_otherwise_is_replaced_under_that_spelling(
        zygote: Zygote, tmp_path: Path) -> None:
    """Helper-49's audit (session 35): a 06 hand-in with its own `MultiHead_Attention` (04's component under
    another spelling, here without the output projection W_o) that its blocks build. The 04 suite, run on it
    under its spelling, finds the mistake and the dependency rule gives the blocks the course's
    MultiHeadAttention; but the blocks call `MultiHead_Attention`, which stayed the student's: the 04 mistake
    cost the 06 blocks again. The course's class now stands in under the student's spelling too."""
    source = reference_source("06_transformer")
    multihead = reference_source("04_multihead")
    own = multihead[multihead.index("class MultiHeadAttention"):].replace("class MultiHeadAttention",
                                                                         "class MultiHead_Attention")
    own = own.replace("return self.W_o(transpose_output(output, self.num_heads))",
                      "return transpose_output(output, self.num_heads)")  # the mistake: no output projection
    assert "class MultiHead_Attention" in own and "self.W_o(" not in own
    assert source.count("MultiHeadAttention(") == 3
    source = source.replace("MultiHeadAttention(", "MultiHead_Attention(")
    source = source.replace("\n\nclass PositionWiseFFN", "\n\n" + own + "\n\nclass PositionWiseFFN", 1)
    path = tmp_path / "own_multihead_spelling.py"
    path.write_text(source)
    sandboxed = session.grade_file(zygote, "06_transformer", path)
    in_process = session.run_in_process("06_transformer", path)
    for result in (sandboxed, in_process):
        scores = {c.name: c for c in result.components}
        assert {name: c.score for name, c in scores.items()} == {name: c.points for name, c in scores.items()}, \
            {name: [t.output[:200] for t in c.tests if not t.passed] for name, c in scores.items()}
        block = scores["EncoderBlock"]
        assert [u.student for u in block.dependencies if u.name == "MultiHeadAttention"] == [False]  # the course's
    assert said(sandboxed) == said(in_process)


def test_a_lazy_layer_forward_never_uses_costs_only_the_naming_test(zygote: Zygote, tmp_path: Path) -> None:
    """d2l 1.0's TransformerEncoder keeps a `dense = nn.LazyLinear(vocab_size)` that its forward never
    calls (sonnylau, session 41). The own-blocks tests count parameters after one call: the unused layer
    stays uninitialized and failed them with torch's "Attempted to use an uninitialized parameter" (3.16 of
    4). A layer that holds no numbers is not counted; the naming test names the extra entries."""
    source = reference_source("06_transformer")
    old = "        self.attention_weights: list[Optional[torch.Tensor]] = [None] * num_layers\n"
    assert source.count(old) == 1  # the encoder's
    source = source.replace(old, old + "        self.dense = nn.LazyLinear(vocab_size)\n", 1)
    path = tmp_path / "unused_lazy.py"
    path.write_text(source)
    for result in (session.grade_file(zygote, "06_transformer", path), session.run_in_process("06_transformer", path)):
        for comp in result.components:
            failed = [t.function for t in comp.tests if not t.passed]
            assert failed == (["test_encoder_contract_names"] if comp.name == "TransformerEncoder" else []), \
                (comp.name, failed, [t.output for t in comp.tests if not t.passed][:1])


def test_the_course_s_class_standing_in_takes_the_student_s_own_forward_keywords(zygote: Zygote, tmp_path: Path) -> None:
    """Helper-69's F8: a learner's `ScaledDotProductAttention.forward(q, k, v, mask=None)` without the scaling (so the
    course's DotProductAttention stands in for it) and a correct MultiHeadAttention calling
    `self.attention(queries, keys, values, mask=valid_lens)`: the course's forward raised "unexpected keyword
    argument 'mask'" on every test, 0 of 6. The course's class takes a call from the student's code by the student's
    forward signature where the names explain it (signatures.called_as, "forward"), as it does for constructors:
    6 of 6 on both paths, and a call in the contract's own form is the contract's."""
    source = reference_source("04_multihead").replace("from solutions.attention_scoring import DotProductAttention\n", "")
    source = source.replace("self.attention = DotProductAttention(dropout)", "self.attention = ScaledDotProductAttention(dropout)")
    source = source.replace("output = self.attention(queries, keys, values, valid_lens)",
                            "output = self.attention(queries, keys, values, mask=valid_lens)")
    source += '''

class ScaledDotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, q, k, v, mask=None):
        scores = q @ k.transpose(1, 2)  # not divided by sqrt(d)
        if mask is not None:
            lens = mask[:, None, None] if mask.dim() == 1 else mask[..., None]
            scores = scores.masked_fill(torch.arange(k.shape[1])[None, None, :] >= lens, -1e6)
        self.attention_weights = torch.softmax(scores, dim=-1)
        return self.dropout(self.attention_weights) @ v
'''
    assert source.count("mask=valid_lens") == 1
    path = tmp_path / "04_multihead.py"
    path.write_text(source)
    results = [session.grade_file(zygote, "04_multihead", path), session.run_in_process("04_multihead", path)]
    for result in results:
        assert [(c.name, c.score) for c in result.components] == [("transpose_qkv", 2), ("transpose_output", 2),
                                                                  ("MultiHeadAttention", 6)], texts(result, "MultiHeadAttention")[:1]
    assert said(results[0]) == said(results[1])


def test_code_that_runs_in_float32_only_keeps_its_float32_comparisons(tmp_path: Path) -> None:
    """The book's `.type(torch.float32)` cast (helper-70's l7, d2l 1.0's nadaraya_watson): exact in float32, and on
    float64 inputs `weights @ values` raises. One test drew both dtypes, so every example of it counted as a crash
    (0.32 of 4 for that learner's file). Each dtype is scored apart now: the float64 comparisons fail, the float32
    ones pass."""
    source = reference_source("01_kernel_regression").replace(
        "    attention_weights = torch.softmax(-diffs ** 2 / 2, dim=1)  # (n, m), rows sum to 1",
        "    attention_weights = torch.softmax(-diffs ** 2 / 2, dim=1).type(torch.float32)")
    assert ".type(torch.float32)" in source
    path = tmp_path / "float32_only.py"
    path.write_text(source)
    result = session.run_in_process("01_kernel_regression", path, components=["nadaraya_watson"])
    comp = next(c for c in result.components if c.name == "nadaraya_watson")
    compared = {t.nodeid.split("::")[-1]: t.passed for t in comp.tests if t.function == "test_nw_matches_reference"}
    assert compared == {"test_nw_matches_reference[float32-y_hat]": True,
                        "test_nw_matches_reference[float32-attention_weights]": True,
                        "test_nw_matches_reference[float64-y_hat]": False,
                        "test_nw_matches_reference[float64-attention_weights]": False}, compared
    assert 0.25 * comp.points < comp.score < comp.points


def test_a_stored_value_written_as_a_method_costs_one_test_and_its_values_are_graded(zygote: Zygote,
                                                                                      tmp_path: Path) -> None:
    """Helper-72's F3 (a learner's correct Bahdanau decoder): `def attention_weights(self)` without @property failed
    every test that reads the weights (6.48 of 10 for that file, 3 points for one missing decorator). The tests
    read it by calling it, and one structure test charged from the source says what to write (9.29): here the
    course's decoder without its @property loses that test alone, on both paths alike."""
    source = reference_source("03_bahdanau")
    prop = "    @property\n    def attention_weights(self)"
    assert source.count(prop) == 1
    path = tmp_path / "no_property.py"
    path.write_text(source.replace(prop, "    def attention_weights(self)"))
    results = [session.grade_file(zygote, "03_bahdanau", path), session.run_in_process("03_bahdanau", path)]
    for result in results:
        (comp,) = result.components
        failed = [t for t in comp.tests if not t.passed]
        assert [t.function for t in failed] == [signatures.attribute_test(comp.name)], [t.output for t in failed][:2]
        assert "put @property above `def attention_weights(self)`" in failed[0].output
        assert comp.points * 0.9 < comp.score < comp.points
    assert said(results[0]) == said(results[1])


def test_d2l_1_0_s_weight_initializer_runs_where_the_code_is_graded(zygote: Zygote, tmp_path: Path) -> None:
    """Helper-72's F12: d2l 1.0's Seq2SeqAttentionDecoder ends its constructor with `self.apply(d2l.init_seq2seq)`,
    which the grader's d2l did not have: every test raised AttributeError, 0 of 10 for the book's own decoder
    (9.63 without that line). The grader's d2l has it (child.D2L_1_0_BASES): nothing is lost, on both paths."""
    source = reference_source("03_bahdanau")
    dense = "        self.dense = nn.Linear(num_hiddens, vocab_size)\n"
    assert source.count(dense) == 1
    path = tmp_path / "init_seq2seq.py"
    path.write_text("from d2l import torch as d2l\n" + source.replace(dense, dense + "        self.apply(d2l.init_seq2seq)\n"))
    results = [session.grade_file(zygote, "03_bahdanau", path), session.run_in_process("03_bahdanau", path)]
    for result in results:
        assert result.score == result.max_score, [t.output for c in result.components for t in c.tests if not t.passed][:1]
    assert said(results[0]) == said(results[1])


@pytest.mark.parametrize("forward,kept", [
    ("X + self.P[:, :1, :]", True),  # row 0 at every position: a slip forward makes with its own table
    ("X + self.P[:, X.shape[1] - 1, :]", True),  # the last row: the same slip, another row
    ("X", False),  # the table never added
    ("X + torch.ones_like(X)", False),  # something else added
], ids=["row 0", "row T-1", "table not added", "ones added"])
def test_a_right_table_counts_on_its_own_where_forward_adds_its_rows(tmp_path: Path, forward: str,
                                                                     kept: bool) -> None:
    """A right table beside a forward that adds rows of it to X (not the first T) keeps the table's tests
    (scoring's `reads`: test_forward_adds_rows_of_its_table passed); beside a forward that adds something else,
    or nothing, the table earns nothing: its credit needs outputs computed from it. Slips the catalogue does not
    name, so that no floor stands in for the rule."""
    source = reference_source("05_positional_encoding")
    right = "X + self.P[:, : X.shape[1], :].to(X.device)"
    assert right in source
    path = tmp_path / "pe.py"
    path.write_text(source.replace(right, forward))
    [pe] = session.run_in_process("05_positional_encoding", path).components
    table = [t for t in pe.tests if t.part == "table"]
    assert table and all(t.passed for t in table), [t.function for t in table if not t.passed]
    earned = {s.outcome.nodeid: s.score for s in scoring.shares(pe.points, pe.tests, config.default().scoring)}
    table_credit = sum(earned[t.nodeid] for t in table)
    if kept:
        assert not pe.misconceptions and not pe.degenerate, pe.misconceptions
        assert 0.25 * pe.points < table_credit <= pe.score < 0.75 * pe.points, (table_credit, pe.score)
    else:
        assert pe.score == table_credit == 0.0


#: PositionalEncoding tables as learners store them, made from the reference by replacing its table's lines.
PE_BUILD = ('        P = torch.zeros((1, max_len, num_hiddens))\n'
            '        P[0, :, 0::2] = torch.sin(angles)\n'
            '        P[0, :, 1::2] = torch.cos(angles[:, : num_hiddens // 2])  # odd d: one fewer cosine column\n')
PE_TABLES = {
    # d2l-style code that builds the table on the first forward call (anon41416's LazySinCosPositionalEncoding)
    "built_on_first_forward": [
        (PE_BUILD + '        # A buffer, not a parameter: it moves with .to(device) and is never trained or saved.\n'
                    '        self.register_buffer("P", P, persistent=False)\n',
         '        self.angles, self.num_hiddens, self.max_len, self.P = angles, num_hiddens, max_len, None\n'),
        ('        return self.dropout(X + self.P',
         '        if self.P is None:\n'
         '            self.P = torch.zeros((1, self.max_len, self.num_hiddens))\n'
         '            self.P[0, :, 0::2] = torch.sin(self.angles)\n'
         '            self.P[0, :, 1::2] = torch.cos(self.angles[:, : self.num_hiddens // 2])\n'
         '        return self.dropout(X + self.P')],
    # a (max_len, d) table without the batch axis, under the contract's name and under another
    "two_dimensional_P": [
        (PE_BUILD, '        P = torch.zeros((max_len, num_hiddens))\n        P[:, 0::2] = torch.sin(angles)\n'
                   '        P[:, 1::2] = torch.cos(angles[:, : num_hiddens // 2])\n'),
        ("self.P[:, : X.shape[1], :]", "self.P[: X.shape[1]]")],
}
PE_TABLES["two_dimensional_pe"] = [*PE_TABLES["two_dimensional_P"], ('register_buffer("P"', 'register_buffer("pe"'),
                                   ("self.P[", "self.pe[")]


def test_a_table_kept_otherwise_costs_the_tests_of_how_it_is_kept(zygote: Zygote, tmp_path: Path) -> None:
    """Helper-76's finding 2: a table built on forward's first call lost every table test (2.28 of 6 for a real
    file): they read `P` after construction alone, and got None. They now read it after one call, and the naming
    test says when the contract builds it. A (max_len, d) table under the contract's name `P` failed every table
    test (4.37 of 6) while the same table under `pe` was reshaped and lost the naming test alone (5.74): a 2-D
    table now costs the shape tests whatever its name, and the name costs the naming test on top. The same on
    both paths."""
    source = reference_source("05_positional_encoding")
    failed: dict[str, set[str]] = {}
    scores: dict[str, float] = {}
    for name, edits in PE_TABLES.items():
        text = source
        for old, new in edits:
            assert old in text, (name, old)
            text = text.replace(old, new)
        path = tmp_path / f"{name}.py"
        path.write_text(text)
        sandboxed, in_process = session.grade_file(zygote, "05_positional_encoding", path), \
            session.run_in_process("05_positional_encoding", path)
        assert said(sandboxed) == said(in_process), name
        [pe] = in_process.components
        failed[name], scores[name] = {t.function for t in pe.tests if not t.passed}, pe.score
    assert failed == {"built_on_first_forward": {"test_pe_contract_names"},
                      "two_dimensional_P": {"test_table_shape"},
                      "two_dimensional_pe": {"test_pe_contract_names", "test_table_shape"}}, failed
    assert 6 > scores["built_on_first_forward"] >= 5.5 and 6 > scores["two_dimensional_P"] > scores["two_dimensional_pe"] >= 5
    [lazy] = session.run_in_process("05_positional_encoding", tmp_path / "built_on_first_forward.py").components
    assert any("is None once the module is built: build the table in __init__" in t.output for t in lazy.tests)


def test_an_ffn_with_a_dropout_of_its_own_loses_its_train_mode_test_alone(tmp_path: Path) -> None:
    """Helper-76 (floriankark's FFN, The Annotated Transformer's): a Dropout between the ReLU and dense2 is invisible
    in eval mode; the public worked example alone ran the module in training mode and failed it with "expected 1.5,
    got -0.611", so every FFN test came to compare in eval mode (full marks). But the contract's FFN has no dropout
    (dense1, ReLU, dense2), and the blocks built on it then paid for it in their train-mode tests (helper-81's F5):
    the FFN's own train-mode test now costs it, and nothing else does (the next test)."""
    source = reference_source("06_transformer")
    old = "        return self.dense2(self.relu(self.dense1(X)))"
    assert old in source
    path = tmp_path / "ffn_dropout.py"
    path.write_text(source.replace(old, "        return self.dense2(self.extra_dropout(self.relu(self.dense1(X))))").replace(
        "        self.relu = nn.ReLU()\n", "        self.relu = nn.ReLU()\n        self.extra_dropout = nn.Dropout(0.5)\n", 1))
    assert "extra_dropout = nn.Dropout(0.5)" in path.read_text()
    ffn = next(c for c in session.run_in_process("06_transformer", path, components=["PositionWiseFFN"]).components
               if c.name == "PositionWiseFFN")
    assert [t.function for t in ffn.tests if not t.passed] == ["test_ffn_matches_reference_in_train_mode"]
    assert not ffn.degenerate and ffn.points * 0.6 < ffn.score < ffn.points, ffn.score


def test_a_stored_value_under_a_name_with_one_typing_slip_costs_one_test_on_both_paths(zygote: Zygote,
                                                                                      tmp_path: Path) -> None:
    """Helper-75's D3, helper-78's F8: `self.attention_weight = ...` failed every test and part that reads the
    weights (DotProductAttention 2.37 of 4 with right values, a real NWKernelRegression 3.57 of 6). The tests read
    the attribute spelled so (testing.stored_spelling) and the slip costs the stored-values test alone, charged from
    the source (signatures.method_attributes), which says what to rename; alike in the sandbox and in-process."""
    source = reference_source(A)
    assert source.count("self.attention_weights") == 4
    path = tmp_path / "singular.py"
    path.write_text(source.replace("self.attention_weights", "self.attention_weight"))
    sandboxed, in_process = session.grade_file(zygote, A, path), session.run_in_process(A, path)
    assert said(sandboxed) == said(in_process)
    for comp in in_process.components:
        failed = [(t.function, t.output) for t in comp.tests if not t.passed]
        if comp.name in ("AdditiveAttention", "DotProductAttention"):
            assert failed == [(f"test_{comp.name}_contract_attributes",
                               "your module stores `attention_weight`, and the contract reads `attention_weights`: the "
                               "tests read your `attention_weight` in its place; rename it `attention_weights`")], failed
            assert 0.85 * comp.points < comp.score < comp.points
        else:
            assert comp.score == comp.points, failed


def test_contract_functions_pasted_into_a_class_without_self_are_graded_as_the_functions(zygote: Zygote,
                                                                                         tmp_path: Path) -> None:
    """Helper-78's F4: transpose_qkv and transpose_output indented into a class body with no `self` (a learner's,
    called as `Heads.transpose_qkv(X, h)`, which in Python 3 is the plain function) were "not defined", 0 of 2
    each, while the same methods with `self` kept 1.87. They are graded as the functions now, at the cost of their
    naming tests (signatures._without_self); alike on both paths."""
    source = reference_source("04_multihead")
    start, end = source.index("def transpose_qkv("), source.index("class MultiHeadAttention")
    functions = source[start:end].rstrip()
    heads = "class Heads:\n" + "\n".join(("    " + line) if line else "" for line in functions.splitlines()) + "\n\n\n"
    attention = source[end:].replace("transpose_qkv(", "Heads.transpose_qkv(").replace(
        "transpose_output(", "Heads.transpose_output(")
    path = tmp_path / "heads.py"
    path.write_text(source[:start] + heads + attention)
    graded_on_both_paths_losing_naming_tests_alone(zygote, "04_multihead", path, ("transpose_qkv", "transpose_output"))


def test_predictions_returned_without_their_weights_are_compared(tmp_path: Path) -> None:
    """Helper-78's F5: a nadaraya_watson returning y_hat alone (right values) kept 0 of 4: every test stopped at
    "must return a pair". The predictions are compared now (T.returned_pair) and every test or part about the
    weights fails, saying so: about half of the component."""
    source = reference_source("01_kernel_regression")
    old = "    return y_hat, attention_weights\n"
    assert source.count(old) == 1
    path = tmp_path / "y_hat_only.py"
    path.write_text(source.replace(old, "    return y_hat\n"))
    [nw, _nwk] = session.run_in_process("01_kernel_regression", path, components=["nadaraya_watson"]).components
    failed = [t for t in nw.tests if not t.passed]
    assert failed and all(t.part != "y_hat" for t in failed), [(t.function, t.part) for t in failed]
    assert {t.output for t in failed} == {"nadaraya_watson must return a pair (y_hat, attention_weights), got Tensor"}
    assert any(t.passed and t.part == "y_hat" for t in nw.tests)
    assert 0.3 * nw.points < nw.score < 0.6 * nw.points, nw.score


def test_a_catalogued_mistake_under_names_of_its_own_is_named_and_scored_as_under_the_contract_s(tmp_path: Path) -> None:
    """Helper-78's F6 (and helper-76's floriankark FFN): the catalogue's `ffn_output_size_is_input` (dense2 maps back to
    the input size) as `nn.Sequential` layers lost its diagnosis on every binding failure, which named the student's
    layers: 0.23 of 2 against 0.92 under the contract's names. The binding now says such a misfit in the contract's
    words (testing._misfit_in_order): the same diagnosis, the same score."""
    from autograder.catalogue import zoo
    [entry] = [e for e in zoo.entries("06_transformer") if e.name == "ffn_output_size_is_input"]
    contract_names = entry.path.read_text()
    own_names = '''
class PositionWiseFFN(nn.Module):
    def __init__(self, ffn_num_input, ffn_num_hiddens, ffn_num_outputs, **kwargs):
        super().__init__(**kwargs)
        self.net = nn.Sequential(nn.Linear(ffn_num_input, ffn_num_hiddens), nn.ReLU(),
                                 nn.Linear(ffn_num_hiddens, ffn_num_input))

    def forward(self, X):
        return self.net(X)
'''
    graded = {}
    for name, ffn in (("contract", contract_names), ("own", own_names)):
        path = tmp_path / f"{name}.py"
        path.write_text(ffn if name == "contract" else "import torch\nfrom torch import nn\n" + ffn)
        [comp] = [c for c in session.run_in_process("06_transformer", path, components=["PositionWiseFFN"]).components
                  if c.name == "PositionWiseFFN"]
        graded[name] = comp
    assert [d.family for d in graded["own"].misconceptions] == [d.family for d in graded["contract"].misconceptions] \
        and graded["own"].misconceptions, graded["own"].misconceptions
    assert graded["own"].score == pytest.approx(graded["contract"].score) and graded["own"].score > 0.4 * 2, \
        (graded["own"].score, graded["contract"].score)


def test_a_stored_value_defined_by_a_class_level_property_costs_nothing(tmp_path: Path) -> None:
    """Helper-79's A2c: `attention_weights = property(lambda self: self.attention_weight)` in the class body reads as
    the contract says; the source's reading of misspelt stored values took it for a slip and charged a test."""
    source = reference_source("01_kernel_regression")
    assert source.count("self.attention_weights") == 2
    path = tmp_path / "class_property.py"
    path.write_text(source.replace("self.attention_weights", "self.attention_weight").replace(
        "    def forward(self, queries", "    attention_weights = property(lambda self: self.attention_weight)\n\n"
        "    def forward(self, queries", 1))
    assert "attention_weights = property(" in path.read_text()
    [nwk] = [c for c in session.run_in_process("01_kernel_regression", path, components=["NWKernelRegression"]).components
             if c.name == "NWKernelRegression"]
    assert nwk.score == nwk.points, [(t.function, t.output) for t in nwk.tests if not t.passed]


@pytest.mark.parametrize("signature", [
    "forward(self, X, enc_outputs, hidden_state, enc_valid_lens)",
    # helper-80's F3 and F5: an option of the student's after the parts (every call had failed), the parts with defaults
    "forward(self, X, enc_outputs, hidden_state, enc_valid_lens, return_weights=False)",
    "forward(self, X, enc_outputs=None, hidden_state=None, enc_valid_lens=None)",
])
def test_a_decoder_taking_the_state_s_parts_is_graded_on_what_it_does_alike_on_both_paths(
        signature: str, zygote: Zygote, tmp_path: Path) -> None:
    """Helper-78's F9: a learner's decoder (code-index 21439676189) takes the state's parts,
    `forward(X, enc_outputs, hidden_state, enc_valid_lens)`, and its own EncoderDecoder calls `decoder(X, *state)`.
    The course's decoder written so kept 0.43 of 10: every call raised "missing 2 required positional arguments".
    The grader's calls now pass the state unpacked (signatures.Adapter.unpacked); the course's EncoderDecoder calls it
    as written, as it would in the learner's notebook, so the signature test and the two tests that run through
    EncoderDecoder fail (7.14 of 10), in the sandbox and in-process alike."""
    source = reference_source("03_bahdanau")
    source = edited(source, [("    def forward(self, X: torch.Tensor, state: list[Any]) -> tuple[torch.Tensor, list[Any]]:\n"
                              "        \"\"\"X (B, T) token ids -> (logits (B, T, vocab), new state).\"\"\"\n"
                              "        enc_outputs, hidden_state, enc_valid_lens = state\n",
                              f"    def {signature}:\n")])
    path = tmp_path / "decoder_state_unpacked.py"
    path.write_text(source)
    results = [session.grade_file(zygote, "03_bahdanau", path), session.run_in_process("03_bahdanau", path)]
    for result in results:
        (decoder,) = result.components
        failed = sorted(t.function for t in decoder.tests if not t.passed)
        assert failed == sorted([signatures.signature_test("Seq2SeqAttentionDecoder"),
                                 "test_one_sgd_step_matches_reference", "test_learns_to_reverse"]), failed
        assert decoder.points * 0.6 < decoder.score < decoder.points * 0.8, decoder.score
        signature = next(t.output for t in decoder.tests if t.function == failed[0])
        assert "the state unpacked into your enc_outputs, hidden_state, enc_valid_lens" in signature, signature
        assert "take `state` and unpack it inside" in signature, signature
    # where the parts have defaults, the course's EncoderDecoder's call goes through and the student's code crashes
    # inside: the sandbox's text then adds the student's frame ("where (your code):"), which an in-process grading
    # does not show (older than this test: helper-80's F4); the rest is the same
    assert said(results[0], crash_sites=False) == said(results[1], crash_sites=False)


def test_a_block_taking_its_own_cache_slot_is_told_its_calls_failed_not_how_to_unpack_the_state(
        zygote: Zygote, tmp_path: Path) -> None:
    """Helper-80's F8b: a DecoderBlock written for another API, `forward(X, enc_outputs, enc_valid_lens, cache)` taking
    its own cache slot and returning it, with a decoder calling `blk(X, state[0], state[1], state[2][i])`. The unpacked
    state gives its `cache` every block's caches, so every call fails (0 of 6 is fair: no test could run the block),
    but the message said the rest of the code "was graded on what it does" and to write `enc_outputs, enc_valid_lens,
    cache = state`, which does not fit it. Where no adapted call ran the code, it says the calls failed."""
    source = reference_source("06_transformer")
    source = edited(source, [("        enc_outputs, enc_valid_lens = state[0], state[1]\n        cache = state[2][self.i]\n", ""),
                             ("        state[2][self.i] = key_values\n", ""),
                             ("    def forward(self, X: torch.Tensor, state: list[Any]) -> tuple[torch.Tensor, list[Any]]:\n"
                              "        \"\"\"X (B, T, num_hiddens) new positions; state = [enc_outputs, enc_valid_lens, cache].\"\"\"\n",
                              "    def forward(self, X, enc_outputs, enc_valid_lens, cache):\n"),
                             ("        return self.addnorm3(Z, self.ffn(Z)), state\n", "        return self.addnorm3(Z, self.ffn(Z)), key_values\n"),
                             ("            X, state = blk(X, state)\n", "            X, state[2][i] = blk(X, state[0], state[1], state[2][i])\n")])
    path = tmp_path / "block_cache_slot.py"
    path.write_text(source)
    texts = []
    for result in [session.grade_file(zygote, "06_transformer", path),
                   session.run_in_process("06_transformer", path, components=["DecoderBlock", "TransformerDecoder"])]:
        block, decoder = (next(c for c in result.components if c.name == name) for name in ("DecoderBlock", "TransformerDecoder"))
        assert block.score == 0 and decoder.score == decoder.points, (block.score, decoder.score)
        [said] = [t.output for t in block.tests if t.function == signatures.signature_test("DecoderBlock")]
        assert "the tests' calls still failed" in said and "graded on what it does" not in said, said
        assert "= state)" not in said and "fix: def forward(self, X, state) in class DecoderBlock" in said, said
        texts.append(said)
    assert texts[0] == texts[1]


def test_a_correct_ffn_registering_its_output_layer_first_loses_its_naming_test_alone(zygote: Zygote,
                                                                                     tmp_path: Path) -> None:
    """Helper-79's A6: `out_layer` registered before `in_layer`. Where the suites drew an FFN whose three sizes coincide
    (hypothesis shrinks to (1, 1, 1)), both layers had one shape and the binding by structure took registration order:
    the course's dense1 went into the output layer, the comparisons failed and the dependence test made it degenerate,
    0.2 of 2. Such an example now tries the other binding and keeps it (testing.with_candidate_bindings)."""
    source = reference_source("06_transformer")
    old = ("        self.dense1 = nn.Linear(ffn_num_input, ffn_num_hiddens)\n        self.relu = nn.ReLU()\n"
           "        self.dense2 = nn.Linear(ffn_num_hiddens, ffn_num_outputs)\n")
    assert source.count(old) == 1
    source = source.replace(old, "        self.out_layer = nn.Linear(ffn_num_hiddens, ffn_num_outputs)\n        self.relu = nn.ReLU()\n"
                                 "        self.in_layer = nn.Linear(ffn_num_input, ffn_num_hiddens)\n").replace(
        "return self.dense2(self.relu(self.dense1(X)))", "return self.out_layer(self.relu(self.in_layer(X)))")
    path = tmp_path / "ffn_output_layer_first.py"
    path.write_text(source)
    results = [session.grade_file(zygote, "06_transformer", path),
               session.run_in_process("06_transformer", path, components=["PositionWiseFFN"])]
    for result in results:
        ffn = next(c for c in result.components if c.name == "PositionWiseFFN")
        assert [t.function for t in ffn.tests if not t.passed] == ["test_ffn_contract_names"], said(result)
        assert not ffn.degenerate and ffn.points * 0.85 < ffn.score < ffn.points, ffn.score
    assert [c for c in said(results[0]) if c[0] == "PositionWiseFFN"] == [c for c in said(results[1]) if c[0] == "PositionWiseFFN"]


def test_a_correct_additive_attention_projecting_the_queries_first_under_its_own_names_loses_its_naming_test_alone(
        zygote: Zygote, tmp_path: Path) -> None:
    """`W1 = nn.Linear(query_size, h)` registered before `W2 = nn.Linear(key_size, h)`, the score's `v` (a learner's, code-index
    43848487313, writes it so): where the suites draw a query size equal to the key size, the two projections have one
    shape and registration order gave the course's W_k to the queries' W1: 1.73 of 4. The example now runs again with
    the other binding, which the behaviour confirms (testing.with_candidate_bindings): the naming test alone."""
    source = reference_source("02_attention_scoring")
    source = edited(source, [("        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)\n"
                              "        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)\n"
                              "        self.w_v = nn.Linear(num_hiddens, 1, bias=False)\n",
                              "        self.W1 = nn.Linear(query_size, num_hiddens, bias=False)\n"
                              "        self.W2 = nn.Linear(key_size, num_hiddens, bias=False)\n"
                              "        self.v = nn.Linear(num_hiddens, 1, bias=False)\n"),
                             ("queries, keys = self.W_q(queries), self.W_k(keys)", "queries, keys = self.W1(queries), self.W2(keys)"),
                             ("scores = self.w_v(features)", "scores = self.v(features)")])
    path = tmp_path / "additive_queries_first.py"
    path.write_text(source)
    results = [session.grade_file(zygote, "02_attention_scoring", path),
               session.run_in_process("02_attention_scoring", path, components=["AdditiveAttention"])]
    for result in results:
        additive = next(c for c in result.components if c.name == "AdditiveAttention")
        assert [t.function for t in additive.tests if not t.passed] == ["test_additive_contract_names"], said(result)
        assert additive.points * 0.9 < additive.score < additive.points, additive.score
    assert [c for c in said(results[0]) if c[0] == "AdditiveAttention"] == \
        [c for c in said(results[1]) if c[0] == "AdditiveAttention"]


def test_an_ffn_with_a_dropout_of_its_own_loses_its_train_mode_test_and_costs_the_blocks_nothing(
        zygote: Zygote, tmp_path: Path) -> None:
    """Helper-81's F5 (a learner's FFN with `nn.Dropout()`, p=0.5, around both layers): no FFN test ran in train mode,
    so the FFN kept 2 of 2 and its dropout cost the EncoderBlock and DecoderBlock built on it (-0.92, -0.57, no
    diagnosis). The FFN's train-mode test now fails; the blocks are graded with the course's FFN too and keep the
    better (full marks); and the FFN is not degenerate (every dependence test passed), though the shrunk example, one
    hidden unit dropped, returns what `ffn_zeros` returns (it had been capped at 0.2 of 2)."""
    source = reference_source("06_transformer")
    source = edited(source, [("        self.relu = nn.ReLU()\n        self.dense2 = nn.Linear(ffn_num_hiddens, ffn_num_outputs)\n",
                              "        self.relu = nn.ReLU()\n        self.dropout = nn.Dropout()\n"
                              "        self.dense2 = nn.Linear(ffn_num_hiddens, ffn_num_outputs)\n"),
                             ("return self.dense2(self.relu(self.dense1(X)))",
                              "return self.dropout(self.dense2(self.dropout(self.relu(self.dense1(X)))))")])
    path = tmp_path / "ffn_dropout.py"
    path.write_text(source)
    results = [session.grade_file(zygote, "06_transformer", path), session.run_in_process("06_transformer", path)]
    for result in results:
        for comp in result.components:
            failed = [t.function for t in comp.tests if not t.passed]
            if comp.name == "PositionWiseFFN":
                assert failed == ["test_ffn_matches_reference_in_train_mode"] and not comp.degenerate, failed
                assert comp.points * 0.6 < comp.score < comp.points, comp.score
            else:
                assert comp.score == comp.points, (comp.name, failed)
    assert said(results[0]) == said(results[1])


def test_a_correct_decoder_named_by_what_it_is_built_of_loses_its_naming_test_alone(zygote: Zygote,
                                                                                     tmp_path: Path) -> None:
    """Helper-81's F1 (AcmeV/DL_acme's `AttentionGRUDecoder`): its words name several components (attention, decoder),
    so no name rule took it, and the correct decoder kept 0 of 10 while every message asked "did you mean
    `AttentionGRUDecoder`?". Its constructor takes Seq2SeqAttentionDecoder's parameters and it ends in its head noun:
    graded in its place (signatures.spelled_otherwise), the naming test alone, on both paths."""
    source = reference_source("03_bahdanau").replace("Seq2SeqAttentionDecoder", "AttentionGRUDecoder")
    path = tmp_path / "attention_gru_decoder.py"
    path.write_text(source)
    graded_on_both_paths_losing_naming_tests_alone(zygote, "03_bahdanau", path, ("Seq2SeqAttentionDecoder",))


#: The state of 03's decoder kept in a NamedTuple (helper-80's F6), and forward reading it by its fields or taking its parts.
NAMED_STATE = "from typing import NamedTuple\n\n\nclass DecState(NamedTuple):\n    enc_outputs: Any\n    hidden_state: Any\n" \
              "    enc_valid_lens: Any\n\n\n"
READS_STATE = "        enc_outputs, hidden_state, enc_valid_lens = state\n"


@pytest.mark.parametrize("reads, loses", [
    (READS_STATE, []),
    ("        enc_outputs, hidden_state, enc_valid_lens = state.enc_outputs, state.hidden_state, state.enc_valid_lens\n", []),
    ("", ["test_one_sgd_step_matches_reference", "test_learns_to_reverse", "SIGNATURE"]),  # forward takes the parts
])
def test_a_decoder_keeping_its_state_in_a_named_tuple_is_graded_alike_on_both_paths(
        reads: str, loses: list[str], zygote: Zygote, tmp_path: Path) -> None:
    """Helper-80's F6: a NamedTuple state came back to the sandbox's grader as an opaque handle, which the tests could
    not index: the course's decoder so written kept 1.88 of 10 sandboxed and 10 in-process (0 and 7.14 with forward
    taking the state's parts). It is now read as the tuple it is and sent back as the student's own object."""
    source = reference_source("03_bahdanau")
    start = source.index("class Seq2SeqAttentionDecoder")
    source = source[:start] + NAMED_STATE + source[start:]
    source = edited(source, [("return [outputs.permute(1, 0, 2), hidden_state, enc_valid_lens]",
                              "return DecState(outputs.permute(1, 0, 2), hidden_state, enc_valid_lens)"),
                             ("return logits.permute(1, 0, 2), [enc_outputs, hidden_state, enc_valid_lens]",
                              "return logits.permute(1, 0, 2), DecState(enc_outputs, hidden_state, enc_valid_lens)"),
                             (READS_STATE, reads)])
    if not reads:
        old = "    def forward(self, X: torch.Tensor, state: list[Any]) -> tuple[torch.Tensor, list[Any]]:\n"
        assert source.count(old) == 1
        source = source.replace(old, "    def forward(self, X, enc_outputs, hidden_state, enc_valid_lens):\n")
    path = tmp_path / "named_state.py"
    path.write_text(source)
    results = [session.grade_file(zygote, "03_bahdanau", path), session.run_in_process("03_bahdanau", path)]
    expected = sorted(signatures.signature_test("Seq2SeqAttentionDecoder") if f == "SIGNATURE" else f for f in loses)
    for result in results:
        (decoder,) = result.components
        assert sorted(t.function for t in decoder.tests if not t.passed) == expected, said(result)
    assert said(results[0]) == said(results[1])


def test_a_decoder_whose_own_call_unpacks_the_state_is_called_as_the_contract_says(zygote: Zygote, tmp_path: Path) -> None:
    """Helper-80's F1: the parts as forward's parameters and a `__call__(self, X, state)` that unpacks them for it. The
    sandbox's parent unpacked the state for the object's call, which reached that `__call__` with five arguments
    (1.76 of 10), while in-process only `forward` was adapted (9.64). Such a class takes the contract's calls as it is:
    no unpacking on either path, full marks on both."""
    source = reference_source("03_bahdanau")
    old = ("    def forward(self, X: torch.Tensor, state: list[Any]) -> tuple[torch.Tensor, list[Any]]:\n"
           "        \"\"\"X (B, T) token ids -> (logits (B, T, vocab), new state).\"\"\"\n"
           "        enc_outputs, hidden_state, enc_valid_lens = state\n")
    assert source.count(old) == 1
    source = source.replace(old, "    def __call__(self, X, state):\n        return super().__call__(X, *state)\n\n"
                                 "    def forward(self, X, enc_outputs, hidden_state, enc_valid_lens):\n")
    path = tmp_path / "decoder_own_call.py"
    path.write_text(source)
    results = [session.grade_file(zygote, "03_bahdanau", path), session.run_in_process("03_bahdanau", path)]
    assert [round(r.score, 6) for r in results] == [10.0, 10.0], said(results[0])
    assert said(results[0]) == said(results[1])


@pytest.mark.parametrize("bug", ["no_causal_mask", "identity_block"])
def test_a_buggy_block_taking_the_state_s_parts_costs_nothing_in_the_decoder_built_on_it(
        bug: str, zygote: Zygote, tmp_path: Path) -> None:
    """Helper-80's F7: a learner's DecoderBlock written `forward(self, X, enc_outputs, enc_valid_lens, caches)` and their
    TransformerDecoder calling `blk(X, *state)`. With a bug in the block, the course's block stands in under the decoder
    (the dependency rule), and it could not take that call: the correct decoder kept 1.08 of 6 (no causal mask) and 0
    (a block that returns its input). The course's block standing in now takes the state's parts as its state
    (child.read_as_written's `unpacked`): 6 of 6 on both paths."""
    source = reference_source("06_transformer")
    edits = [("    def forward(self, X: torch.Tensor, state: list[Any]) -> tuple[torch.Tensor, list[Any]]:\n"
              "        \"\"\"X (B, T, num_hiddens) new positions; state = [enc_outputs, enc_valid_lens, cache].\"\"\"\n"
              "        enc_outputs, enc_valid_lens = state[0], state[1]\n"
              "        cache = state[2][self.i]\n",
              "    def forward(self, X, enc_outputs, enc_valid_lens, caches):\n        cache = caches[self.i]\n"),
             ("        state[2][self.i] = key_values\n", "        caches[self.i] = key_values\n"),
             ("        return self.addnorm3(Z, self.ffn(Z)), state\n",
              "        return self.addnorm3(Z, self.ffn(Z)), [enc_outputs, enc_valid_lens, caches]\n"),
             ("            X, state = blk(X, state)\n", "            X, state = blk(X, *state)\n")]
    if bug == "no_causal_mask":
        edits.append(("        X2 = self.attention1(X, key_values, key_values, dec_valid_lens)\n",
                      "        X2 = self.attention1(X, key_values, key_values, None)\n"))
    else:
        edits.append(("        cache = caches[self.i]\n", "        caches[self.i] = X\n        return X, [enc_outputs, "
                                                             "enc_valid_lens, caches]\n        cache = caches[self.i]\n"))
    sandboxed, in_process = graded_both_ways(zygote, tmp_path, bug, source, edits)
    for result in (sandboxed, in_process):
        scores = {c.name: round(c.score, 6) for c in result.components}
        assert scores["TransformerDecoder"] == 6.0, scores
        assert scores["DecoderBlock"] < 6.0, scores
    assert said(sandboxed) == said(in_process)


def test_init_state_without_the_valid_lengths_is_called_without_them_alike_on_both_paths(
        zygote: Zygote, tmp_path: Path) -> None:
    """Helper-81's F2: `init_state(self, enc_outputs)`, a decoder that never masks (its state carries None). No call was
    adapted where the contract's signature ends in `*args` (init_state's does), so every test raised "takes 2 positional
    arguments but 3 were given": 0 of 10. The tests' calls now leave the valid lengths out; the course's EncoderDecoder
    calls it as written on both paths, and a bound method read first and called later (`f = dec.init_state; f(...)`)
    is adapted in the sandbox as a direct call is (remote.Connection.named_method). What is left is the unmasked
    decoder's cost (graded with `enc_valid_lens=None`, 4.63) and the signature's."""
    results = graded_both_ways(zygote, tmp_path, "init_state_without_lens", reference_source("03_bahdanau"), [
        ("                   enc_valid_lens: Optional[torch.Tensor], *args: Any) -> list[Any]:", "                   ) -> list[Any]:"),
        ("return [outputs.permute(1, 0, 2), hidden_state, enc_valid_lens]", "return [outputs.permute(1, 0, 2), hidden_state, None]")],
        assignment_id="03_bahdanau")
    for result in results:
        (decoder,) = result.components
        assert 0.3 * decoder.points < decoder.score < 0.5 * decoder.points, decoder.score
        outputs = [t.output for t in decoder.tests if not t.passed]
        assert not any("positional argument" in text for text in outputs if "EncoderDecoder" not in text), outputs
        [said_] = [t.output for t in decoder.tests if t.function == signatures.signature_test("Seq2SeqAttentionDecoder")]
        assert "init_state takes (enc_outputs); the contract is (enc_outputs, enc_valid_lens)" in said_, said_
        # and that the training test through the course's EncoderDecoder fails too (helper-83's F5)
        assert "the course's EncoderDecoder, which the training tests run your Seq2SeqAttentionDecoder in, calls " \
               "init_state as the contract does" in said_, said_
    assert said(results[0]) == said(results[1])


def test_a_state_keeping_the_encoder_outputs_time_first_costs_only_the_tests_of_the_state_s_layout(
        zygote: Zygote, tmp_path: Path) -> None:
    """Helper-81's F3: a decoder keeping the encoder outputs time first in its state, permuting them in forward, whose
    logits, hidden states and weights are the course's. The step test fed the student's state[0] to the grader's own
    step as batch first, and the reference comparisons checked state[0] beside the logits: 5.02 of 10. Now only the three
    tests of the state's layout fail (init_state's twice, forward's returned state once)."""
    results = graded_both_ways(zygote, tmp_path, "state_time_first", reference_source("03_bahdanau"), [
        ("return [outputs.permute(1, 0, 2), hidden_state, enc_valid_lens]", "return [outputs, hidden_state, enc_valid_lens]"),
        ("        enc_outputs, hidden_state, enc_valid_lens = state\n",
         "        enc_outputs, hidden_state, enc_valid_lens = state\n        enc_outputs = enc_outputs.permute(1, 0, 2)\n"),
        ("return logits.permute(1, 0, 2), [enc_outputs, hidden_state, enc_valid_lens]",
         "return logits.permute(1, 0, 2), [enc_outputs.permute(1, 0, 2), hidden_state, enc_valid_lens]")],
        assignment_id="03_bahdanau")
    for result in results:
        (decoder,) = result.components
        failed = sorted(t.function for t in decoder.tests if not t.passed)
        assert failed == ["test_forward_shapes", "test_init_state", "test_init_state_permutes_batch_first"], failed
    assert said(results[0]) == said(results[1])


def test_a_multihead_attention_crashing_on_none_loses_that_form_alone_on_both_paths(zygote: Zygote, tmp_path: Path) -> None:
    """Helper-81's F8/F9: a MultiHeadAttention that repeats valid_lens without asking whether it is None, exact on (B,)
    and (B, Q). Hypothesis shrinks every failing test to its simplest case, valid_lens None, so every test that drew
    all three forms failed: 0.87 of 6, and the agreement the diagnosis counts per test function was lost with them
    (a wrong diagnosis had followed). Each such test now scores each form on its own: about two thirds, no diagnosis."""
    results = graded_both_ways(zygote, tmp_path, "mha_none_crash", reference_source("04_multihead"),
                               [("        if valid_lens is not None:\n", "        if True:\n")], assignment_id="04_multihead")
    for result in results:
        mha = next(c for c in result.components if c.name == "MultiHeadAttention")
        failed = [t for t in mha.tests if not t.passed]
        assert failed and all(t.nodeid.endswith(("[none]", "lens_none]")) for t in failed), \
            [t.nodeid for t in failed]
        assert 0.55 * mha.points < mha.score < 0.75 * mha.points and not mha.misconceptions, mha.score
    assert said(results[0], crash_sites=False) == said(results[1], crash_sites=False)



def test_the_sequence_mask_written_inside_masked_softmax_loses_its_naming_test_alone_on_both_paths(
        zygote: Zygote, tmp_path: Path) -> None:
    """Helper-81's F6: d2l 1.0 writes `_sequence_mask` inside `masked_softmax`. A learner's copy kept 0 of 2 for
    sequence_mask, "not defined". A function written inside another that reads nothing of it is graded in the contract
    function's place, built in the child from the enclosing function's code (signatures.NestedForm,
    child.function_of_nested), at the cost of its naming test, whose message says to move it out."""
    source = reference_source(A)
    start, end = source.index("def sequence_mask("), source.index("def masked_softmax(")
    inner = textwrap.indent(source[start:end].strip().replace("def sequence_mask(", "def _sequence_mask("), "    ")
    source = edited(source[:start] + source[end:], [
        ("    valid_lens is None, (B,) (one length per batch item) or (B, Q) (one per query).\n    \"\"\"\n",
         "    valid_lens is None, (B,) (one length per batch item) or (B, Q) (one per query).\n    \"\"\"\n" + inner + "\n\n"),
        ("X = sequence_mask(", "X = _sequence_mask(")])
    path = tmp_path / "nested_sequence_mask.py"
    path.write_text(source)
    for result in graded_on_both_paths_losing_naming_tests_alone(zygote, A, path, ("sequence_mask",)):
        [said_] = [t.output for t in next(c for c in result.components if c.name == "sequence_mask").tests if not t.passed]
        assert "your `_sequence_mask`, written inside `masked_softmax`" in said_ and "move it out" in said_, said_


@pytest.mark.parametrize("source, why, others", [
    # the book's 06 notebook imports pandas, which the grading environment lacks: not why the class is missing
    ("import pandas as pd\nfrom torch import nn\n\nclass Other(nn.Module):\n    pass\n",
     [], ["No module named 'pandas'"]),
    # a base class from a failed import: the import is why too, the other failure is not
    ("import pandas as pd\nfrom d2lx import Base\n\nclass PositionalEncoding(Base):\n    pass\n",
     ["No module named 'd2lx'", "name 'Base' is not defined"], ["No module named 'pandas'"]),
])
def test_a_missing_name_s_message_says_which_load_errors_are_why(zygote: Zygote, tmp_path: Path, source: str,
                                                                  why: list[str], others: list[str]) -> None:
    """Helper-81's F7: "`PositionalEncoding` is not defined in your submission; while loading your code: No module named
    'pandas'" read as if pandas were why. The loader now says what each failed statement would have bound
    (loader.defines): the notes of the statements that would have bound the name, or a name one of them missed, are
    said to be why; the others are other errors. Alike on both paths."""
    path = tmp_path / "missing.py"
    path.write_text(source)
    texts = []
    for result in [session.grade_file(zygote, "05_positional_encoding", path),
                   session.run_in_process("05_positional_encoding", path)]:
        said_ = next(t.output for c in result.components for t in c.tests if not t.passed)
        head, _, rest = said_.partition(_OTHER_ERRORS)
        assert said_.startswith("`PositionalEncoding` is not defined in your submission"), said_
        assert all(w in head for w in why) and (_WHY in head) == bool(why), said_
        assert all(o in rest and o not in head for o in others), said_
        texts.append(said_)
    assert texts[0] == texts[1]


_WHY = "while loading your code, the statement that defines it failed:"
_OTHER_ERRORS = "other errors while loading your code:"


def test_a_contract_method_spelled_otherwise_is_called_in_its_place_at_the_cost_of_one_test(
        zygote: Zygote, tmp_path: Path) -> None:
    """Helper-83's F3: the course's decoder with `init_state` spelled `init_states` inherited the given class's stub for
    init_state, and every test said "not implemented yet" (0 of 10). A contract method that the class lacks and
    defines spelled otherwise is called in its place (signatures.method_slips; the child puts it on the class under the
    contract's name), at the cost of the attribute test, whose message says to rename it; alike on both paths."""
    results = graded_both_ways(zygote, tmp_path, "init_states", reference_source("03_bahdanau"), [
        ("    def init_state(self,", "    def init_states(self,")], assignment_id="03_bahdanau")
    for result in results:
        (decoder,) = result.components
        failed = [t for t in decoder.tests if not t.passed]
        assert [t.function for t in failed] == [signatures.attribute_test("Seq2SeqAttentionDecoder")], said(result)
        assert "defines `init_states`, not the contract's method `init_state`" in failed[0].output
    assert said(results[0]) == said(results[1])


def test_an_lstm_for_the_gru_is_told_so_not_that_its_input_size_is_wrong(zygote: Zygote, tmp_path: Path) -> None:
    """Helper-83's F7: a decoder with an nn.LSTM was told "the GRU reads cat(context, embedding), so its input size is
    embed_size + num_hiddens", although its input size was right: an LSTM's weights have 4 gates where a GRU's have 3.
    Where only the first axis differs, the names test says so."""
    results = graded_both_ways(zygote, tmp_path, "lstm", reference_source("03_bahdanau"), [
        ("self.rnn = nn.GRU(", "self.rnn = nn.LSTM(")], assignment_id="03_bahdanau")
    for result in results:
        [said_] = [t.output for c in result.components for t in c.tests if t.function == "test_decoder_contract_names"]
        assert "3 for the contract's nn.GRU (4 is an nn.LSTM's" in said_ and "its input size is" not in said_, said_
