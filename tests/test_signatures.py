"""Signature mistakes (issue #23, item 6): another order, a missing or an extra parameter is named as
such, once per component, from the submission's source; failed calls say what each parameter got;
and no misconception is diagnosed from the wrong values a mistaken order feeds the code.

The graded cases are the reference with one signature changed, graded in the real sandbox.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

import pytest
from kit_helpers import reference_source

from autograder import config
from autograder.grading import session, signatures
from autograder.grading.scoring import ComponentScore
from autograder.sandbox.forkserver import Zygote


def changed(assignment_id: str, old: str, new: str) -> str:
    """The assignment's reference with one piece of its source replaced (it must be there once)."""
    source = reference_source(assignment_id).replace("from solutions.attention_scoring import",
                                                     "from attention_support import")
    assert source.count(old) == 1, old
    return source.replace(old, new)


def grade(zygote: Zygote, tmp_path: Path, assignment_id: str, source: str) -> session.Result:
    path = tmp_path / f"{assignment_id}.py"
    path.write_text(source)
    return session.grade_file(zygote, assignment_id, path)


def component(result: session.Result, name: str) -> ComponentScore:
    return next(c for c in result.components if c.name == name)


def said_once(comp: ComponentScore, finding: str) -> str:
    """The one failed test's text that carries `finding` (no other test repeats it), with no diagnosis anywhere."""
    failed = [t.output for t in comp.tests if not t.passed]
    carrying = [t for t in failed if "signature: your" in t]
    assert len(carrying) == 1, failed[:2]
    assert finding in carrying[0], carrying[0]
    assert not comp.misconceptions and not any("diagnosis:" in t for t in failed), comp.misconceptions
    return carrying[0]


ADDITIVE_FORWARD = """    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                valid_lens: Optional[torch.Tensor]) -> torch.Tensor:
        \"\"\"queries (B, Q, q), keys (B, K, k), values (B, K, v) -> (B, Q, v).\"\"\"
"""
DOT_FORWARD = """    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                valid_lens: Optional[torch.Tensor] = None) -> torch.Tensor:
        \"\"\"queries (B, Q, d), keys (B, K, d), values (B, K, v) -> (B, Q, v).\"\"\"
"""


def test_a_permuted_forward_is_named_and_not_diagnosed_as_a_misconception(zygote: Zygote, tmp_path: Path) -> None:
    """`queries` and `q` both name the queries, so the names leave it open which parameter takes what
    (test_signature_adapter.py; before session 46 the case was `(keys, vals, queries, valid_len, scale=1.0)`, which
    the names now decide: the student's own option `scale` keeps its default, `vals` takes the values): a call by
    position, each failure saying what each parameter got."""
    source = changed("02_attention_scoring", ADDITIVE_FORWARD,
                     "    def forward(self, keys, queries, q, valid_len):\n"
                     "        valid_lens, values = valid_len, q\n")
    result = grade(zygote, tmp_path, "02_attention_scoring", source)
    comp = component(result, "AdditiveAttention")
    text = said_once(comp, "signature: your AdditiveAttention.forward takes (keys, queries, q, valid_len); "
                           "the contract is (queries, keys, values, valid_lens)\n  the tests pass the arguments by "
                           "position, in the contract's order: your keys gets the queries;")
    assert "fix: def forward(self, queries, keys, values, valid_lens) in class AdditiveAttention" in text
    # torch's error inside the student's forward, in the contract's terms: which argument, which shape
    raised = [t.output for t in comp.tests if not t.passed and "mat1 and mat2 shapes cannot be multiplied" in t.output]
    assert raised and all(re.search(r"your parameters got: keys = the queries \(\d+, \d+, \d+\), queries = the "
                                    r"keys \(\d+, \d+, \d+\)", t) for t in raised)
    assert comp.score < comp.points
    assert all(c.score == c.points for c in result.components if c.name != "AdditiveAttention")


def test_dot_product_forward_keys_values_queries_is_not_keys_as_values(zygote: Zygote, tmp_path: Path) -> None:
    """Before: 'your DotProductAttention behaves exactly like one that multiplies the weights with the keys'.
    Now the names say which argument is which: called by name, it loses its signature test only."""
    source = changed("02_attention_scoring", DOT_FORWARD, "    def forward(self, keys, values, queries, valid_lens=None):\n")
    result = grade(zygote, tmp_path, "02_attention_scoring", source)
    comp = component(result, "DotProductAttention")
    said_once(comp, "signature: your DotProductAttention.forward takes (keys, values, queries, valid_lens); "
                    "the contract is (queries, keys, values, valid_lens)")
    assert [t.function for t in comp.tests if not t.passed] == ["test_DotProductAttention_contract_signature"]
    assert not any("with the keys" in t.output for t in comp.tests)
    assert all(c.score == c.points for c in result.components if c.name != "DotProductAttention")


@pytest.mark.parametrize("defined_as", ["renamed", "aliased"])
def test_the_forward_of_a_class_under_another_name_is_called_by_name_on_both_paths(
        zygote: Zygote, tmp_path: Path, defined_as: str) -> None:
    """A learner's `ScaledDotProductAttention.forward(keys, values, queries, valid_len)` (graded in
    DotProductAttention's place), and the same class bound as `DotProductAttention = ScaledDotProductAttention`:
    an object's type says its own name, so the sandbox looked the adapter up as
    "ScaledDotProductAttention.forward", found none and called by position (0.68 of 4 and a wrong diagnosis,
    "multiplies the weights with the keys", while the message said "passed by name")."""
    source = changed("02_attention_scoring", DOT_FORWARD, "    def forward(self, keys, values, queries, valid_lens=None):\n")
    source = re.sub(r"\bDotProductAttention\b", "ScaledDotProductAttention", source)
    if defined_as == "aliased":
        source += "\n\nDotProductAttention = ScaledDotProductAttention\n"
    path = tmp_path / f"{defined_as}.py"
    path.write_text(source)
    sandboxed = session.grade_file(zygote, "02_attention_scoring", path)
    in_process = session.run_in_process("02_attention_scoring", path)
    expected = ["test_DotProductAttention_contract_signature"] + (
        ["test_DotProductAttention_contract_name"] if defined_as == "renamed" else [])
    for result in (sandboxed, in_process):
        comp = component(result, "DotProductAttention")
        assert [t.function for t in comp.tests if not t.passed] == expected, [t.output[:300] for t in comp.tests]
        assert not comp.misconceptions
    assert [(t.function, t.output) for t in component(sandboxed, "DotProductAttention").tests] == \
        [(t.function, t.output) for t in component(in_process, "DotProductAttention").tests]


def test_a_constructor_in_another_order_is_called_by_name(zygote: Zygote, tmp_path: Path) -> None:
    """Before: 'dropout probability has to be between 0 and 1, but got 5' and nothing else. `k_size` is
    the contract's key_size by its loose name (signatures.identify), so the grader calls by name: the
    signature test costs the order, and the rest is graded on what the code does."""
    source = changed("04_multihead", """    def __init__(self, key_size: int, query_size: int, value_size: int, num_hiddens: int,
                 num_heads: int, dropout: float, bias: bool = False, **kwargs: object) -> None:""",
                     "    def __init__(self, num_hiddens, num_heads, dropout, k_size, query_size, value_size, "
                     "bias=False, **kwargs):\n        key_size = k_size")
    result = grade(zygote, tmp_path, "04_multihead", source)
    comp = component(result, "MultiHeadAttention")
    said_once(comp, "signature: your MultiHeadAttention takes (num_hiddens, num_heads, dropout, k_size, "
                    "query_size, value_size, bias); the contract is (key_size, query_size, value_size, "
                    "num_hiddens, num_heads, dropout, bias)")
    assert "the key_size as your k_size" in "".join(t.output for t in comp.tests)
    assert [t.function for t in comp.tests if not t.passed] == ["test_MultiHeadAttention_contract_signature"]


def test_positional_encoding_with_max_len_first(zygote: Zygote, tmp_path: Path) -> None:
    source = changed("05_positional_encoding",
                     "    def __init__(self, num_hiddens: int, dropout: float, max_len: int = 1000) -> None:",
                     "    def __init__(self, max_len, num_hiddens, dropout):")
    result = grade(zygote, tmp_path, "05_positional_encoding", source)
    comp = component(result, "PositionalEncoding")
    text = said_once(comp, "signature: your PositionalEncoding takes (max_len, num_hiddens, dropout); "
                           "the contract is (num_hiddens, dropout, max_len)")
    assert "fix: def __init__(self, num_hiddens, dropout, max_len=1000) in class PositionalEncoding" in text
    # called by name, with the contract's max_len=1000 where a test leaves it out: only the signature fails
    assert [t.function for t in comp.tests if not t.passed] == ["test_PositionalEncoding_contract_signature"]
    assert 0 < comp.score < comp.points


# --- reading and matching signatures (no sandbox: nothing of a submission runs here either) -------

def found(source: str) -> dict[str, list[signatures.Mismatch]]:
    return signatures.mismatches(config.default(), [("cell 1", source)])


@pytest.mark.parametrize("assignment_id", [a.id for a in config.default().assignments])
def test_the_reference_has_the_contracts_signatures(assignment_id: str) -> None:
    assert found(reference_source(assignment_id)) == {}


@pytest.mark.parametrize("forward", [
    "def forward(self, queries, keys, values, valid_len)",  # d2l's spelling of valid_lens
    "def forward(self, q, k, v, mask=None)",  # other names in the same places: a call by position works
    "def forward(self, queries, keys, values, valid_lens=None, *, scale=None)",  # an optional extra
    "def forward(self, Queries, Keys, Values, *rest)",
])
def test_the_same_parameters_in_the_same_places_are_no_mistake(forward: str) -> None:
    assert found(f"class AdditiveAttention:\n    {forward}:\n        pass\n") == {}


def test_missing_extra_and_default_less_parameters_are_named() -> None:
    # `vals` is no contract name, but the one required parameter left for the one the contract requires
    paired = found("class DotProductAttention:\n    def forward(self, queries, keys, vals):\n        pass\n")
    paired = paired["DotProductAttention"][0]
    assert paired.missing == ("values", "valid_lens") and paired.adapter is not None
    assert paired.adapter.names == ("queries", "keys", "vals", None)
    # ... and a required keyword-only `mask` no test gives: no call by name
    missing = found("class DotProductAttention:\n    def forward(self, queries, keys, vals, *, mask):\n        pass\n")
    missing = missing["DotProductAttention"][0]
    assert missing.missing == ("values", "valid_lens") and not missing.wrong_values and missing.adapter is None
    assert "it has no values, valid_lens: the tests pass them by position" in missing.message()
    extra = found("class DotProductAttention:\n    def forward(self, queries, keys, values, valid_lens, mask):\n"
                  "        pass\n")["DotProductAttention"][0]
    assert extra.extra == ("mask",) and "no test passes your mask" in extra.message()
    assert extra.no_default == (3,) and "the contract's valid_lens has a default (None)" in extra.message()
    ctor = found("class NWKernelRegression:\n    def __init__(self, w):\n        pass\n")["NWKernelRegression"][0]
    assert ctor.kind == "constructor" and ctor.extra == ("w",)


def test_the_definition_loading_binds_is_read() -> None:
    """The last definition wins; an alias binds its target's; a method may come from a base class."""
    source = ("class Base:\n    def forward(self, keys, queries, values, valid_lens):\n        pass\n"
              "class MyAttention(Base):\n    pass\n"
              "def DotProductAttention(): pass\n"
              "DotProductAttention = MyAttention\n")
    mismatch = found(source)["DotProductAttention"][0]
    assert mismatch.target == "DotProductAttention.forward" and mismatch.misplaced == (0, 1)
    assert mismatch.adapter is not None and not mismatch.wrong_values  # the names say which is which
    assert found(source + "class DotProductAttention:\n    def forward(self, queries, keys, values, valid_lens=None):"
                          "\n        pass\n") == {}
    assert found("def masked_softmax(X):\n  return (\n") == {}  # unparseable: nothing to say
    # d2l 1.0's `@d2l.add_to_class(C)` makes a method of C and binds the name to None: no definition of it
    method = "class MultiHeadAttention:\n    pass\n@d2l.add_to_class(MultiHeadAttention)\ndef transpose_qkv(self, X):\n  pass\n"
    assert found(method) == {} and "transpose_qkv" in found(method.replace("@d2l.add_to_class(MultiHeadAttention)\n", ""))


# --- a component spelled otherwise (signatures.renamed) --------------------------------------------

def renames(source: str) -> dict[str, str]:
    return signatures.renamed(config.default(), [("cell 1", source)])


@pytest.mark.parametrize("source, expected", [
    ("class TransformerEncoderBlock(nn.Module): pass", {"EncoderBlock": "TransformerEncoderBlock"}),  # d2l 1.0
    ("class Transformer_Encoder(nn.Module): pass", {"TransformerEncoder": "Transformer_Encoder"}),
    ("class Multiheadattention(nn.Module): pass", {"MultiHeadAttention": "Multiheadattention"}),
    ("def mask_sequence(X, valid_len, value=0): pass", {"sequence_mask": "mask_sequence"}),
    ("class ScaledDotProductAttention(nn.Module): pass", {"DotProductAttention": "ScaledDotProductAttention"}),
    ("AddNormBlock = 1\nclass MyAddNorm(nn.Module): pass", {"AddNorm": "MyAddNorm"}),
    ("def mask_softmax(X, valid_lens): pass", {"masked_softmax": "mask_softmax"}),  # found by audit 35
    ("class PositionEncoding(nn.Module): pass", {"PositionalEncoding": "PositionEncoding"}),
    # its words run together, with an ending or abbreviated (helper-75's D4: `addnormal` scored 0 of 2 while the
    # message asked "did you mean `addnormal`?")
    ("class addnormal(nn.Module): pass", {"AddNorm": "addnormal"}),
    ("class multiheadattn(nn.Module): pass", {"MultiHeadAttention": "multiheadattn"}),
    ("def masksoftmax(X, valid_lens): pass", {"masked_softmax": "masksoftmax"}),
    # the inverse of the function it undoes (helper-78's F3, learner code-index 11206529761: `untranspose_qkv`), never
    # that function: `inverse_transpose_qkv` ends in transpose_qkv's words and is not transpose_qkv
    ("def transpose_qkv(X, num_heads): pass\ndef untranspose_qkv(X, num_heads): pass",
     {"transpose_output": "untranspose_qkv"}),
    ("def inverse_transpose_qkv(X, num_heads): pass", {"transpose_output": "inverse_transpose_qkv"}),
    ("def reverse_transpose_qkv(X, num_heads): pass", {"transpose_output": "reverse_transpose_qkv"}),
])
def test_a_component_spelled_otherwise_is_graded_as_that_definition(source: str, expected: dict[str, str]) -> None:
    assert renames(source) == expected


_NESTED = "def masked_softmax(X, valid_lens):\n{inner}\n    return _sequence_mask(X, valid_lens)\n"


@pytest.mark.parametrize("inner, expected", [
    # d2l 1.0's form: graded in sequence_mask's place, at the cost of its naming test
    ("    def _sequence_mask(X, valid_len, value=0):\n        return X", "masked_softmax.<locals>._sequence_mask"),
    ("    def sequence_mask(X, valid_len, value=-1e6):\n        return X", "masked_softmax.<locals>.sequence_mask"),
    # not the same function at the top level: it reads the enclosing function's names, a default that is no literal,
    # a decorator, other parameters, or two definitions
    ("    fill = 0\n    def _sequence_mask(X, valid_len, value=0):\n        return X + fill", None),
    ("    def _sequence_mask(X, valid_len, value=X.min()):\n        return X", None),
    ("    @torch.no_grad()\n    def _sequence_mask(X, valid_len, value=0):\n        return X", None),
    ("    def _sequence_mask(X, value, valid_len):\n        return X", None),
    ("    def _sequence_mask(X, valid_lens):\n        return X", None),  # fewer: another job (helper-83's F10)
    ("    def _sequence_mask(X, valid_len, value=0):\n        return X\n    def _sequence_mask(X, valid_len, value=0):\n        return X", None),
])
def test_a_contract_function_written_inside_another_is_graded_where_it_reads_nothing_of_it(
        inner: str, expected: Optional[str]) -> None:
    """Helper-81's F6: d2l 1.0 writes `_sequence_mask` inside `masked_softmax`; a learner's copy kept 0 of 2 for
    sequence_mask ("not defined"). Such a function is graded in the contract function's place (signatures.NestedForm)
    where it computes at the top level exactly what it computes inside."""
    assert renames(_NESTED.format(inner=inner)).get("sequence_mask") == expected


@pytest.mark.parametrize("source, expected", [
    ("class PositionalEmbedding(nn.Module): pass", {"PositionalEncoding": "PositionalEmbedding"}),
    ("class PositionwiseFeedForward(nn.Module): pass", {"PositionWiseFFN": "PositionwiseFeedForward"}),
    ("class AddAndNorm(nn.Module): pass", {"AddNorm": "AddAndNorm"}),
    ("class MultiHeadSelfAttention(nn.Module): pass", {"MultiHeadAttention": "MultiHeadSelfAttention"}),
    ("def masked_softmax_my(X, valid_lens): pass", {"masked_softmax": "masked_softmax_my"}),
    ("class NadarayaWatsonRegression(nn.Module): pass", {"NWKernelRegression": "NadarayaWatsonRegression"}),
    ("class FFN(nn.Module): pass", {"PositionWiseFFN": "FFN"}),  # its head noun, its own (helper-76)
    # one spelled like it comes first
    ("class PositionalEmbedding(nn.Module): pass\nclass PositionalEncodding(nn.Module): pass",
     {"PositionalEncoding": "PositionalEncodding"}),
    # each named plainly for one component
    ("class PositionwiseFeedForward(nn.Module): pass\nclass PositionEmbedding(nn.Module): pass",
     {"PositionWiseFFN": "PositionwiseFeedForward", "PositionalEncoding": "PositionEmbedding"}),
])
def test_a_component_named_plainly_otherwise_is_graded_as_that_definition(source: str,
                                                                          expected: dict[str, str]) -> None:
    """Names real learners give (helper-72's F8): half of the contract's words or more, one of them the
    component's own. Before, each scored 0 ("`PositionalEncoding` is not defined ... did you mean")."""
    assert renames(source) == expected


@pytest.mark.parametrize("source, expected", [
    ("class AttentionGRUDecoder(AttentionDecoder):\n"
     "    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0, **kwargs): pass",
     {"Seq2SeqAttentionDecoder": "AttentionGRUDecoder"}),
    ("class BahdanauAttention(nn.Module):\n    def __init__(self, key_size, query_size, hidden_size, dropout): pass",
     {"AdditiveAttention": "BahdanauAttention"}),
    ("class Base(nn.Module):\n    def __init__(self, key_size, query_size, num_hiddens, dropout): pass\n"
     "class BahdanauAttn(Base): pass", {"AdditiveAttention": "BahdanauAttn"}),  # a base class's constructor
    # a given class's name, shadowed by the learner's decoder (helper-83's F4: 0 of 10, "not defined")
    ("class Decoder(nn.Module):\n    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0): pass",
     {"Seq2SeqAttentionDecoder": "Decoder"}),
])
def test_a_class_whose_words_name_several_components_is_graded_as_the_one_its_constructor_takes(
        source: str, expected: dict[str, str]) -> None:
    """Helper-81's F1: AcmeV/DL_acme's correct `AttentionGRUDecoder` kept 0 of 10 ("did you mean
    `AttentionGRUDecoder`?"): attention and decoder each name several components. A class that ends in a component's
    head noun and whose constructor takes that component's parameters is graded in its place (its naming test costs
    it), where it is the only one and fits no other missing component."""
    assert renames(source) == expected


@pytest.mark.parametrize("source", [
    "class AttentionGRUDecoder(nn.Module):\n    def __init__(self): pass",  # takes nothing of the contract's
    "class GRUDecoder(nn.Module):\n    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0): pass\n"
    "class AttnDecoder(nn.Module):\n    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers): pass",  # which?
    "class MyAttention(nn.Module):\n    def __init__(self, dropout): pass",  # DotProductAttention's, spelled like none
    "class Decoder(nn.Module):\n    def __init__(self, **kwargs): pass",  # the book's base class, copied
])
def test_no_class_stands_in_by_its_constructor_where_it_takes_another_s_or_the_choice_is_not_one(source: str) -> None:
    found = renames(source)
    assert "Seq2SeqAttentionDecoder" not in found and "AdditiveAttention" not in found, found


@pytest.mark.parametrize("source", [
    "class DecoderBlock(nn.Module): pass",  # another component's name never stands in for one
    "class TransformerEncoderBlock(nn.Module): pass\nclass MyEncoderBlock(nn.Module): pass",  # which one?
    "def transformer_encoder_block(): pass",  # a function for a class
    "class SequenceMask(nn.Module): pass",  # a class for a function
    "def _sequence_mask(X, valid_len): pass",  # private
    "EncoderBlock = None\nclass TransformerEncoderBlock(nn.Module): pass",  # bound, whatever to (as loading runs it)
    "class EncoderBlock(nn.Module): pass\nclass TransformerEncoderBlock(nn.Module): pass",
    "class Block(nn.Module): pass\nclass Encoder(nn.Module): pass",  # one word of two
    "class AdditiveAttention(nn.Module): pass\nclass Additive_Attention(nn.Module): pass",
    "class encoderblocks(nn.Module): pass\nclass encoder_block(nn.Module): pass",  # which one?
    "class BahdanauAttention(nn.Module): pass",  # attention names four components: none of them plainly
    "class TransformerEncoderLayer(nn.Module): pass",  # transformer and encoder each name two
    "class AdditiveAttention(nn.Module): pass\nclass Add_Attention(nn.Module): pass\nclass Norm(nn.Module): pass",
    "class PositionalEmbedding(nn.Module): pass\nclass PositionalEmbeddingLayer(nn.Module): pass",  # which one?
])
def test_nothing_stands_in_where_the_contract_s_name_is_bound_or_the_choice_is_not_one(source: str) -> None:
    assert renames(source) == {}


def test_torch_s_multihead_attention_names_are_read_as_the_contract_s() -> None:
    """TullyMonster/d2l-learning (helper-55, session 41) writes MultiHeadAttention(embed_dim, num_heads, dropout,
    bias, kdim, vdim), as torch's nn.MultiheadAttention names them: the contract's call reached none of them
    (a TypeError in every test, 0 of 6). They are now read as num_hiddens, key_size and value_size."""
    source = ("class MultiHeadAttention(nn.Module):\n"
              "    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=False, kdim=None, vdim=None):\n"
              "        pass\n")
    [mismatch] = found(source)["MultiHeadAttention"]
    assert mismatch.adapter is not None
    assert dict(zip(mismatch.adapter.contract, mismatch.adapter.names)) == {
        "key_size": "kdim", "query_size": None, "value_size": "vdim", "num_hiddens": "embed_dim",
        "num_heads": "num_heads", "dropout": "dropout", "bias": "bias"}


# --- a contract function written as a method (signatures.methods_as_functions) ---------------------

MHA_HEAD = "class MultiHeadAttention(nn.Module):\n    def __init__(self, num_heads):\n        self.num_heads = num_heads\n"
AS_METHOD = "    def transpose_qkv(self, X):\n        return X.reshape(X.shape[0], X.shape[1], self.num_heads, -1)\n"


def as_methods(source: str) -> dict[str, tuple[str, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]]:
    found = signatures.methods_as_functions(config.default(), [("cell 1", source)])
    return {name: (form.qualname, form.from_self, form.positional) for name, form in found.items()}


QKV = ("MultiHeadAttention.transpose_qkv", (("num_heads", "num_heads"),), (("X", "X"),))


@pytest.mark.parametrize("source, expected", [
    (MHA_HEAD + AS_METHOD, {"transpose_qkv": QKV}),  # modifiededition/NLP_Accelerator (helper-54)
    # d2l 1.0's book: `@d2l.add_to_class(MultiHeadAttention) def transpose_qkv(self, X)`, which binds the name to None
    (MHA_HEAD + "@d2l.add_to_class(MultiHeadAttention)\ndef transpose_qkv(self, X):\n"
     "    return X.reshape(X.shape[0], X.shape[1], self.num_heads, -1)\n", {"transpose_qkv": QKV}),
    (MHA_HEAD + AS_METHOD.replace("transpose_qkv", "transpose_QKV"),  # spelled otherwise too
     {"transpose_qkv": ("MultiHeadAttention.transpose_QKV", QKV[1], QKV[2])}),
    (MHA_HEAD + "    @staticmethod\n    def transpose_qkv(X, num_heads):\n        return X\n",
     {"transpose_qkv": ("MultiHeadAttention.transpose_qkv", (), (("X", "X"), ("num_heads", "num_heads")))}),
    ("class Attention(nn.Module):\n    def masked_softmax(self, X, valid_lens):\n        return self._mask(X)\n"
     "    def _mask(self, X):\n        return X\n",  # calling the class's own methods is fine
     {"masked_softmax": ("Attention.masked_softmax", (), (("X", "X"), ("valid_lens", "valid_lens")))}),
])
def test_a_contract_function_written_as_a_method_is_graded_as_that_method(source: str, expected: dict) -> None:
    assert as_methods(source) == expected
    assert signatures.renamed(config.default(), [("cell 1", source)]) == {n: q for n, (q, _, _) in expected.items()}


@pytest.mark.parametrize("source", [
    "def transpose_qkv(X, num_heads):\n    return X\n" + MHA_HEAD + AS_METHOD,  # the function is there
    MHA_HEAD + AS_METHOD.replace("self.num_heads", "self.h"),  # reads state the arguments do not give
    MHA_HEAD + AS_METHOD.replace("self.num_heads", "self.num_heads, self.W_q.weight"),
    MHA_HEAD + AS_METHOD.replace("return X", "return helper(self, X)"),  # hands on the instance
    MHA_HEAD + AS_METHOD.replace("(self, X)", "(self, num_heads, X)"),  # the contract's parameters in another order
    MHA_HEAD + AS_METHOD + "class Other(nn.Module):\n" + AS_METHOD,  # which one?
    MHA_HEAD + AS_METHOD.replace("transpose_qkv", "split"),  # not named like it
    # class data the body binds after a `def` of the same name is no method (helper-57)
    MHA_HEAD + "    def h(self):\n        pass\n    h = 2\n" + AS_METHOD.replace("self.num_heads", "self.num_heads, self.h"),
    "class TransposeQKV(nn.Module):\n    def forward(self, X):\n        return X\n",  # a class for a function
])
def test_no_method_stands_in_where_the_function_is_defined_or_the_method_needs_its_instance(source: str) -> None:
    assert as_methods(source) == {}


def test_the_stand_in_s_signature_is_read_as_the_component_s() -> None:
    """d2l 1.0's TransformerEncoderBlock(num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias): the
    contract's EncoderBlock takes other parameters, said in EncoderBlock's terms."""
    source = ("class TransformerEncoderBlock(nn.Module):\n"
              "    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias=False):\n"
              "        pass\n")
    [mismatch] = found(source)["EncoderBlock"]
    assert mismatch.target == "EncoderBlock" and mismatch.kind == "constructor"


def test_a_missing_name_never_suggests_another_component_of_the_contract() -> None:
    """helper-76: a submission with the contract's TransformerDecoder and an encoder under a name of its own was
    told "`TransformerEncoder` is not defined in your submission; did you mean `TransformerDecoder`?": a definition
    under another contract name is the student's code for that name. A close spelling of no contract name is still
    suggested."""
    from autograder.grading.remote import missing_name
    contract = {"TransformerEncoder", "TransformerDecoder", "EncoderBlock"}
    said = str(missing_name("TransformerEncoder", ["FeatureEncoder", "TransformerDecoder"], [], contract))
    assert "did you mean" not in said and "TransformerDecoder" not in said, said
    said = str(missing_name("TransformerEncoder", ["TransformerEncodr", "TransformerDecoder"], [], contract))
    assert "did you mean `TransformerEncodr`?" in said, said


def test_the_machine_s_warnings_filter_never_makes_a_cell_unparsable() -> None:
    """helper-77: under PYTHONWARNINGS=error (or `python -W error`, or a filter left by earlier code in a Dask worker)
    an invalid escape (`'\\d+'`) made ast.parse raise in the grader, which then read no definition of the cell (a
    misspelt class, graded in its place, lost its whole score: 5.73 -> 0 of 6), while the sandbox's child ran it."""
    import warnings

    from autograder.grading.submission import parse_student_code
    from autograder.sandbox.runtime import loader
    cell = "import torch\nPATTERN = '\\d+'\nassert (PATTERN, 'never empty')\n\nclass NWKernelRegresion(torch.nn.Module):\n    pass\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert parse_student_code(cell) is not None
        namespace: dict = {}
        report = loader.load([("cell 1", cell)], namespace)
        assert "NWKernelRegresion" in namespace, report
        assert renames(cell) == {"NWKernelRegression": "NWKernelRegresion"}


def test_a_forward_taking_the_state_s_parts_is_told_to_take_state_and_unpack_it() -> None:
    """Helper-78's F9: `forward(self, X, enc_outputs, hidden_state, enc_valid_lens)` was told "no test passes your
    hidden_state, enc_valid_lens: remove them or give them a default", which breaks the decoder. It is told to take
    `state` and unpack it; another extra parameter keeps the old words."""
    contract = signatures.Params(("X", "state"), (None, None))
    parts = signatures.compare("Seq2SeqAttentionDecoder", "Seq2SeqAttentionDecoder.forward", "method",
                               signatures.Params(("X", "enc_outputs", "hidden_state", "enc_valid_lens"), (None,) * 4),
                               contract)
    assert parts is not None and parts.unpacks_state
    said = parts.message()
    assert "take `state` and unpack it inside (enc_outputs, hidden_state, enc_valid_lens = state)" in said, said
    assert "remove them" not in said
    other = signatures.compare("MultiHeadAttention", "MultiHeadAttention.forward", "method",
                               signatures.Params(("queries", "keys", "values", "valid_lens", "extra"), (None,) * 5),
                               signatures.Params(("queries", "keys", "values", "valid_lens"), (None,) * 4))
    assert other is not None and not other.unpacks_state and "remove it or give it a default" in other.message()


def test_the_grader_s_own_code_is_known_by_its_real_path_when_imported_through_a_link(tmp_path: Path) -> None:
    """Helper-80's F2: the in-process adapter of a decoder taking the state's parts answers the suites' calls, found by
    the calling frame's file; through a linked checkout that file's name is the link's and every call went unadapted
    in-process (0.41 of 10 against the sandbox's 7.14). The file is compared by its real path."""
    suites = Path(signatures.__file__).resolve().parents[1] / "suites"
    link = tmp_path / "linked_suites"
    link.symlink_to(suites, target_is_directory=True)
    assert signatures._is_grader_code(str(link / "hidden" / "test_03_bahdanau.py"))
    assert signatures._is_grader_code(str(suites / "hidden" / "test_03_bahdanau.py"))
    assert not signatures._is_grader_code(str(tmp_path / "course_given.py"))
    assert not signatures._is_grader_code(str(suites) + "_extra/x.py")  # a sibling folder is not the suites


def test_a_forward_taking_the_state_s_parts_is_called_with_them_whatever_it_calls_its_input() -> None:
    """Helper-80's F9: `forward(self, inputs, enc_outputs, hidden_state, enc_valid_lens)` was told to remove its parts, and
    every call failed; and a forward that takes `state` itself beside more parameters is no unpacking."""
    contract = signatures.Params(("X", "state"), (None, None))
    found = signatures.compare("Seq2SeqAttentionDecoder", "Seq2SeqAttentionDecoder.forward", "method",
                               signatures.Params(("inputs", "enc_outputs", "hidden_state", "enc_valid_lens"), (None,) * 4),
                               contract)
    assert found is not None and found.unpacks_state and found.adapter is not None
    assert found.adapter.translate(["x", [1, 2, 3]], {}).args == ["x", 1, 2, 3]
    own = signatures.compare("Seq2SeqAttentionDecoder", "Seq2SeqAttentionDecoder.forward", "method",
                             signatures.Params(("X", "state", "extra"), (None, None, None)), contract)
    assert own is not None and not own.unpacks_state and (own.adapter is None or not own.adapter.unpacked)
