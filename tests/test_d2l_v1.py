"""Code written for d2l 1.0 that builds the course's classes with 1.0's constructors (issue #23).

d2l 1.0 builds `AdditiveAttention(num_hiddens, dropout)`, `MultiHeadAttention(num_hiddens, num_heads,
dropout, bias)` and `PositionWiseFFN(ffn_num_hiddens, ffn_num_outputs)` with lazy layers. Where the
course's class stands in for the learner's own (the dependency rule), the grader builds it that way
(solutions/d2l_v1.py), so the learner's component is graded on what it does; its naming test alone
says that the layers are lazy and what the contract wants. A call that fits neither signature keeps
the contract's TypeError, with the course's signature named.
"""
from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
import torch
from test_learner_code import LEARNERS, texts
from test_signatures import changed, grade

from autograder import config
from autograder.grading import dependencies, session
from autograder.sandbox.forkserver import Zygote
from solutions import attention_scoring, d2l_v1, multihead, transformer

QKV = (torch.randn(2, 3, 5), torch.randn(2, 4, 3), torch.randn(2, 4, 6), None)  # queries, keys, values, valid_lens
CASES = [  # the course's class, a call with the contract's arguments, one with d2l 1.0's, its lazy layers, inputs
    (attention_scoring.AdditiveAttention, (3, 5, 4, 0.0), (4, 0.0), ["W_k", "W_q"], QKV),
    (multihead.MultiHeadAttention, (3, 5, 6, 4, 2, 0.0, True), (4, 2, 0.0, True), ["W_q", "W_k", "W_v"], QKV),
    (transformer.PositionWiseFFN, (3, 6, 4), (6, 4), ["dense1"], (torch.randn(2, 3, 3),)),
]


@pytest.mark.parametrize("cls,contract_args,v1_args,lazy,inputs", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_the_contract_s_call_builds_the_contract_s_module_and_1_0_s_call_its_lazy_twin(
        cls: type, contract_args: tuple, v1_args: tuple, lazy: list[str], inputs: tuple) -> None:
    edition = type(cls.__name__, (cls,), {"__init__": cls.__init__})  # given 1.0's in place: not the kit's own class
    d2l_v1._give_d2l_v1(edition, cls.__name__)
    assert edition.__init__ is not cls.__init__ and "_d2l_v1" not in vars(cls.__init__)
    assert inspect.signature(edition) == inspect.signature(cls)  # what the grader's describe() reads
    torch.manual_seed(0)
    mine = edition(*contract_args)
    torch.manual_seed(0)
    theirs = cls(*contract_args)
    assert {k: v.shape for k, v in mine.state_dict().items()} == {k: v.shape for k, v in theirs.state_dict().items()}
    assert all(torch.equal(a, b) for a, b in zip(mine.state_dict().values(), theirs.state_dict().values()))

    v1 = edition(*v1_args)
    assert list(v1.state_dict()) == list(theirs.state_dict())  # the contract's names, in its order
    assert sorted(name for name, m in v1.named_children() if isinstance(m, torch.nn.LazyLinear)) == sorted(lazy)
    v1.load_state_dict(theirs.state_dict())  # torch's lazy load hook gives the lazy layers the contract's shapes
    v1.eval(), theirs.eval()
    torch.testing.assert_close(v1(*inputs), theirs(*inputs), rtol=0, atol=0)

    with pytest.raises(TypeError, match=rf"^{cls.__name__}\.__init__\(\)"):
        edition(*v1_args[:1])  # fits neither signature: the contract's own error


def test_a_grading_child_s_course_classes_take_1_0_s_constructors() -> None:
    """dependencies.reference_source ends with the editions: every class of _EDITIONS it holds is wrapped."""
    namespace: dict = {}
    source = dependencies.reference_source(config.default(), ["sequence_mask", "masked_softmax", "AdditiveAttention",
                                                             "DotProductAttention", "MultiHeadAttention"])
    exec(compile(source, "<course deps>", "exec"), namespace)
    assert namespace["AdditiveAttention"](4, 0.0).W_k.__class__ is torch.nn.LazyLinear
    assert namespace["MultiHeadAttention"](4, 2, 0.0).W_v.__class__ is torch.nn.LazyLinear
    public = {n for n in vars(d2l_v1) if not n.startswith("_")}
    assert public <= {"annotations", "Any", "nn"}, public  # `import *` of the course's module gets nothing new


OWN_FFN = {  # learners' own PositionWiseFFN classes that take the contract's arguments (found by a review)
    "super_by_name": """
class PositionWiseFFN(nn.Module):  # d2l 0.17's style: super() by the class's name
    def __init__(self, ffn_num_input, ffn_num_hiddens, ffn_num_outputs, **kwargs):
        super(PositionWiseFFN, self).__init__(**kwargs)
        self.dense1, self.relu = nn.Linear(ffn_num_input, ffn_num_hiddens), nn.ReLU()
        self.dense2 = nn.Linear(ffn_num_hiddens, ffn_num_outputs)
""",
    "inherited_init": """
class Base(nn.Module):
    def __init__(self, ffn_num_input, ffn_num_hiddens, ffn_num_outputs):
        super().__init__()
        self.dense1, self.relu = nn.Linear(ffn_num_input, ffn_num_hiddens), nn.ReLU()
        self.dense2 = nn.Linear(ffn_num_hiddens, ffn_num_outputs)
class PositionWiseFFN(Base):
    pass
""",
    "other_names": """
class PositionWiseFFN(nn.Module):
    def __init__(self, d_in, d_hidden, d_out, dropout_p=0.0):
        super().__init__()
        self.dense1, self.relu = nn.Linear(d_in, d_hidden), nn.ReLU()
        self.dense2 = nn.Linear(d_hidden, d_out)
""",
}


@pytest.mark.parametrize("style", sorted(OWN_FFN))
def test_an_own_class_that_takes_the_contract_s_arguments_gets_1_0_s_constructors_in_place(style: str) -> None:
    """In place, not as a subclass under the class's name (which a `super(Cls, self)` call would reach with no
    arguments); an inherited constructor is given them on the class itself; the parameters' names do not matter."""
    namespace: dict = {}
    exec(compile("import torch\nfrom torch import nn\n" + OWN_FFN[style], "<learner>", "exec"), namespace)
    cls = namespace["PositionWiseFFN"]
    d2l_v1._install_own(namespace, ["PositionWiseFFN"])
    d2l_v1._install_own(namespace, ["PositionWiseFFN"])  # once only
    assert namespace["PositionWiseFFN"] is cls
    assert cls(3, 6, 4).dense1.weight.shape == (6, 3)
    assert isinstance(cls(6, 4).dense1, torch.nn.LazyLinear)
    if style == "inherited_init":
        assert not isinstance(namespace["Base"](6, 4, 2).dense1, torch.nn.LazyLinear)  # its base keeps its own


def failed_tests(result: session.Result, component: str) -> list[str]:
    comp = next(c for c in result.components if c.name == component)
    return sorted({t.function for t in comp.tests if not t.passed})


def test_a_decoder_building_the_course_s_attention_the_1_0_way_loses_its_naming_test_only(
        zygote: Zygote, tmp_path: Path) -> None:
    source = changed("03_bahdanau", "AdditiveAttention(num_hiddens, num_hiddens, num_hiddens, dropout)",
                     "AdditiveAttention(num_hiddens, dropout)")
    result = grade(zygote, tmp_path, "03_bahdanau", source)
    assert failed_tests(result, "Seq2SeqAttentionDecoder") == ["test_decoder_contract_names"]
    [said] = texts(result, "Seq2SeqAttentionDecoder")
    assert "your layers are lazy (nn.LazyLinear, as d2l 1.0 builds them" in said and "`attention.W_k.weight`" in said


def test_a_correct_own_attention_called_the_1_0_way_does_no_worse_than_the_course_s(zygote: Zygote,
                                                                                  tmp_path: Path) -> None:
    """The learner's own AdditiveAttention (the contract's, passing 02's tests) stands as the decoder's
    dependency: it gets 1.0's constructors too, so breaking it to have the course's stand in gains nothing."""
    source = changed("03_bahdanau", "AdditiveAttention(num_hiddens, num_hiddens, num_hiddens, dropout)",
                     "AdditiveAttention(num_hiddens, dropout)") + "\n\n" + inspect.getsource(attention_scoring.AdditiveAttention)
    result = grade(zygote, tmp_path, "03_bahdanau", source)
    assert failed_tests(result, "Seq2SeqAttentionDecoder") == ["test_decoder_contract_names"]
    [comp] = result.components
    assert [u.student for u in comp.dependencies if u.name == "AdditiveAttention"] == [True]


def test_an_encoder_block_building_the_course_s_multi_head_attention_the_1_0_way_loses_its_naming_test_only(
        tmp_path: Path) -> None:
    """In process (the catalogue's path, the same child code): the sandbox's wire is the decoder's test above."""
    path = tmp_path / "06_transformer.py"
    path.write_text(changed("06_transformer", """        self.attention = MultiHeadAttention(key_size, query_size, value_size, num_hiddens,
                                            num_heads, dropout, use_bias)""",
                            "        self.attention = MultiHeadAttention(num_hiddens, num_heads, dropout, use_bias)"))
    result = session.run_in_process("06_transformer", path, components=["EncoderBlock"])
    assert failed_tests(result, "EncoderBlock") == ["test_encoder_block_contract_names"]


def test_a_call_that_fits_neither_signature_names_the_course_s(zygote: Zygote, tmp_path: Path) -> None:
    """The file does not hand in AdditiveAttention, so the child holds the course's, whose signature the contract fixes."""
    source = changed("03_bahdanau", "AdditiveAttention(num_hiddens, num_hiddens, num_hiddens, dropout)",
                     "AdditiveAttention(num_hiddens, num_hiddens, dropout)")
    result = grade(zygote, tmp_path, "03_bahdanau", source)
    failed = texts(result, "Seq2SeqAttentionDecoder")
    called = [t for t in failed if "AdditiveAttention.__init__() missing 1 required positional argument" in t]
    assert called and all("AdditiveAttention here is the course's, which your code is graded with: its signature is "
                          "AdditiveAttention(key_size, query_size, num_hiddens, dropout)" in t for t in called)


def test_the_1_0_chapter_s_decoder_is_graded_on_what_it_does_around_the_course_s_block(zygote: Zygote) -> None:
    """d2l 1.0's TransformerDecoder builds `TransformerDecoderBlock(num_hiddens, ffn_num_hiddens, num_heads,
    dropout, i)`. That block is causal only in training mode (the contract's in every mode), so the course's
    DecoderBlock stands in for it, built from 1.0's arguments (every size num_hiddens): the decoder then loses
    what its own code gets wrong, the book's P[0] for every token decoded one at a time (one token or a chunk
    at a time), and its lazy layers' naming test. It had kept 0 of 6: the course's block refused 1.0's call."""
    result = session.grade_file(zygote, "06_transformer", LEARNERS / "d2l_v1_transformer.py")
    assert failed_tests(result, "TransformerDecoder") == [
        "test_TransformerDecoder_contract_signature", "test_decoder_chunks", "test_decoder_contract_names",
        "test_decoder_step_attention_weights", "test_decoder_step_by_step", "test_decoder_step_by_step_matches_reference"]
    decoder = next(c for c in result.components if c.name == "TransformerDecoder")
    assert [u.student for u in decoder.dependencies if u.name == "DecoderBlock"] == [False]
    assert not any("TypeError" in t for t in texts(result, "TransformerDecoder"))
    assert "test_decoder_block_causal_in_eval" in failed_tests(result, "DecoderBlock")
    assert failed_tests(result, "AddNorm") == []
    # The score a dependency's note quotes for the version kept is the score awarded (helper-52: the signature
    # and naming tests were left out of it: EncoderBlock "scores 3.7143 of 4 with the course's" for 3.25).
    quoted = [(comp.name, float(found.group(1)), comp.score) for comp in result.components for use in comp.dependencies
              if (found := re.search(r"scores ([\d.]+) of [\d.]+ with " + ("yours" if use.student else "the course's"),
                                     use.reason))]
    assert len(quoted) >= 5 and all(said == pytest.approx(awarded, abs=1e-4) for _, said, awarded in quoted), quoted


def test_an_own_block_called_the_1_0_way_fails_as_it_would_in_the_learner_s_notebook(zygote: Zygote,
                                                                                       tmp_path: Path) -> None:
    """Helper-51: the learner's own EncoderBlock, with the contract's signature and passing its tests, called by their
    TransformerEncoder with 1.0's arguments, raises a TypeError in their notebook; the grader had given their own
    block 1.0's constructor too (`_install_own`) and the encoder 4/4 in silence. A block is not given 1.0's
    constructors where it is the learner's own (the course's standing in for a failed one still is)."""
    source = changed("06_transformer", "EncoderBlock(key_size, query_size, value_size, num_hiddens, norm_shape,\n"
                                       "                             ffn_num_input, ffn_num_hiddens, num_heads, dropout, use_bias)",
                     "EncoderBlock(num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias)")
    result = grade(zygote, tmp_path, "06_transformer", source)
    scores = {c.name: c.score for c in result.components}
    assert scores["EncoderBlock"] == 4.0 and scores["TransformerEncoder"] == 0.0, scores
    assert any("missing 4 required positional arguments" in t for t in texts(result, "TransformerEncoder"))


NW_1_0 = """
import torch


def gaussian(x):
    return torch.exp(-x**2 / 2)


def nadaraya_watson(x_train, y_train, x_val, kernel):  # d2l 1.0's signature, the contract's maths
    k = kernel(x_val.reshape((-1, 1)) - x_train.reshape((1, -1)))  # (queries, keys)
    attention_w = k / k.sum(1, keepdim=True)
    return attention_w @ y_train, attention_w
"""


@pytest.mark.parametrize("kernel", ["gaussian", "rbf"])
def test_1_0_s_nadaraya_watson_gets_the_learner_s_gaussian_on_every_path(zygote: Zygote, tmp_path: Path,
                                                                          kernel: str) -> None:
    """d2l 1.0 calls `nadaraya_watson(x_train, y_train, x_val, gaussian)`: the grader gives the kernel parameter
    the learner's own `gaussian` (signatures.OwnFunction; the sandbox's child resolves it by name), so correct
    maths loses its signature test only, in the sandbox and in-process alike. A submission without a
    `gaussian` is told so, in those words, by every test (before: a TypeError at the missing kernel)."""
    path = tmp_path / "nw.py"
    path.write_text(NW_1_0.replace("def gaussian(", f"def {kernel}("))
    graded = [session.grade_file(zygote, "01_kernel_regression", path),
              session.run_in_process("01_kernel_regression", path)]
    said = [[(t.function, t.output) for t in r.components[0].tests if not t.passed] for r in graded]
    assert said[0] == said[1] and graded[0].components[0].score == graded[1].components[0].score
    if kernel == "gaussian":
        assert [f for f, _ in said[0]] == ["test_nadaraya_watson_contract_signature"]
    else:
        assert graded[0].components[0].score == 0
        assert all(text.startswith("`gaussian` is not defined in your submission: your code takes a `kernel`")
                   for f, text in said[0] if f != "test_nadaraya_watson_contract_signature")


FFN_IN_A_SEQUENTIAL = """
from torch import nn


class PositionWiseFFN(nn.Module):  # d2l 1.0's maths, its layers lazy and in an nn.Sequential (code-index 19700238154)
    def __init__(self, ffn_num_hiddens, ffn_num_outputs):
        super().__init__()
        self.ffn = nn.Sequential(nn.LazyLinear(ffn_num_hiddens), nn.ReLU(), nn.LazyLinear(ffn_num_outputs))

    def forward(self, X):
        return self.ffn(X)
"""


def test_1_0_s_lazy_layers_under_names_of_their_own_lose_only_the_naming_and_signature_tests(zygote: Zygote,
                                                                                             tmp_path: Path) -> None:
    """helper-75's D8: the 06 suite binds the course's weights before it calls the module, so lazy layers under other
    names (`ffn.0`, `ffn.2`) had no shapes to bind by, and every test failed (0 of 2 for right maths). They now bind
    by place and declared output size (testing._lazy_layers_in_order), in the sandbox as in-process."""
    path = tmp_path / "ffn.py"
    path.write_text(FFN_IN_A_SEQUENTIAL)
    graded = [session.grade_file(zygote, "06_transformer", path), session.run_in_process("06_transformer", path)]
    ffn = [next(c for c in r.components if c.name == "PositionWiseFFN") for r in graded]
    said = [[(t.function, t.output) for t in c.tests if not t.passed] for c in ffn]
    assert said[0] == said[1] and ffn[0].score == ffn[1].score
    assert [f for f, _ in said[0]] == ["test_ffn_contract_names", "test_PositionWiseFFN_contract_signature"]
    assert "your layers are lazy" in said[0][0][1]
