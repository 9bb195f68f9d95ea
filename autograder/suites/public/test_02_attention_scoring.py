"""Public tests for assignment 02: masking, masked softmax, additive and scaled dot-product attention.

Run them in your notebook with the self-check cell, or read them to see what is checked.
Every expected number here can be worked out by hand.
"""
import math

import pytest
import torch

from autograder.selfcheck import testing as T
from autograder.selfcheck.hints import MASK_HINT
from autograder.selfcheck.i18n import _

LENS_1D_HINT = ("a 1-D valid_lens holds one length per batch item, shared by all of that item's queries: "
                "each length is repeated Q times in place (repeat_interleave), not the whole vector (repeat)")
LENS_2D_HINT = "a 2-D valid_lens (B, Q) holds one length per query: flatten it in (batch, query) order"
ADD_HINT = ("W_q acts on the queries (query_size -> num_hiddens) and W_k on the keys (key_size -> num_hiddens); "
            "features are W_q q + W_k k broadcast to (B, Q, K, num_hiddens), scores = w_v(tanh(features)) "
            "with only the last axis squeezed (squeeze(-1)), weights = masked_softmax(scores, valid_lens), "
            "output = weights @ values")
DOT_HINT = ("scores = Q K^T / sqrt(d), where d is the feature size of queries and keys (queries.shape[-1]) "
            "and K^T swaps the last two axes of keys (transpose(1, 2), not reshape); "
            "output = masked_softmax(scores, valid_lens) @ values")


# ---------------------------------------------------------------- sequence_mask

@pytest.mark.component("sequence_mask")
def test_sequence_mask_example(student):
    """worked example: entries at index >= valid length become 0, the others are kept"""
    X = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    lens = torch.tensor([1, 2])
    out = T.call("sequence_mask(X, valid_len)", student.sequence_mask, X, lens, returns=torch.Tensor)
    T.assert_close(out, torch.tensor([[1.0, 0.0, 0.0], [4.0, 5.0, 0.0]]), what="sequence_mask(X, valid_len)",
                   inputs={"X": X, "valid_len": lens},
                   hint="row i keeps its first valid_len[i] entries (index < valid_len[i]); the rest become the default value 0")


@pytest.mark.component("sequence_mask")
def test_sequence_mask_value(student):
    """the value argument is what masked entries become"""
    X = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    lens = torch.tensor([2, 3])
    out = T.call("sequence_mask(X, valid_len, value=-1)", student.sequence_mask, X, lens, -1,
                 returns=torch.Tensor)
    T.assert_close(out, torch.tensor([[1.0, 2.0, -1.0], [4.0, 5.0, 6.0]]), what="sequence_mask(X, valid_len, value=-1)",
                   inputs={"X": X, "valid_len": lens}, hint="use the value argument for masked entries, not a fixed 0")


# ---------------------------------------------------------------- masked_softmax

@pytest.mark.component("masked_softmax")
def test_masked_softmax_none(student):
    """valid_lens None: a plain softmax over the last axis"""
    X = torch.tensor([[[0.0, math.log(2.0), math.log(3.0)], [0.0, 0.0, 0.0]]])
    out = T.call("masked_softmax(X, None)", student.masked_softmax, X, None, returns=torch.Tensor,
                 hint="with valid_lens None, return the softmax over the last axis (dim=-1)")
    expected = torch.tensor([[[1 / 6, 2 / 6, 3 / 6], [1 / 3, 1 / 3, 1 / 3]]])
    T.assert_close(out, expected, what="masked_softmax(X, None)", inputs={"X": X},
                   hint="with valid_lens None, return the softmax over the last axis (dim=-1)")


@pytest.mark.component("masked_softmax")
def test_masked_softmax_1d(student):
    """1-D valid_lens: one length per batch item, shared by all its queries; the rest get weight 0"""
    X = torch.zeros(2, 2, 4)
    lens = torch.tensor([2, 3])
    out = T.call("masked_softmax(X, valid_lens)", student.masked_softmax, X, lens, hint=LENS_1D_HINT,
                 returns=torch.Tensor)
    expected = torch.tensor([[[1 / 2, 1 / 2, 0, 0], [1 / 2, 1 / 2, 0, 0]],
                             [[1 / 3, 1 / 3, 1 / 3, 0], [1 / 3, 1 / 3, 1 / 3, 0]]])
    T.assert_close(out, expected, what="masked_softmax(zeros(2, 2, 4), tensor([2, 3]))",
                   inputs={"valid_lens": lens}, hint=MASK_HINT + "; " + LENS_1D_HINT)


@pytest.mark.component("masked_softmax")
def test_masked_softmax_2d(student):
    """2-D valid_lens: one length per query"""
    X = torch.zeros(2, 2, 4)
    lens = torch.tensor([[1, 3], [2, 4]])
    out = T.call("masked_softmax(X, valid_lens)", student.masked_softmax, X, lens, hint=LENS_2D_HINT,
                 returns=torch.Tensor)
    expected = torch.tensor([[[1, 0, 0, 0], [1 / 3, 1 / 3, 1 / 3, 0]],
                             [[1 / 2, 1 / 2, 0, 0], [1 / 4, 1 / 4, 1 / 4, 1 / 4]]])
    T.assert_close(out, expected, what="masked_softmax(zeros(2, 2, 4), tensor([[1, 3], [2, 4]]))",
                   inputs={"valid_lens": lens}, hint=MASK_HINT + "; " + LENS_2D_HINT)


@pytest.mark.component("masked_softmax")
def test_masked_softmax_large_masked_scores(student):
    """masked positions get weight exactly 0 even when their scores are the largest"""
    X = torch.tensor([[[0.0, 1.0, 50.0, 60.0]]])
    lens = torch.tensor([2])
    out = T.call("masked_softmax(X, valid_lens)", student.masked_softmax, X, lens, returns=torch.Tensor)
    e = math.e
    T.assert_close(out, torch.tensor([[[1 / (1 + e), e / (1 + e), 0.0, 0.0]]]), what="masked_softmax(X, tensor([2]))",
                   inputs={"X": X}, hint=MASK_HINT)


# ---------------------------------------------------------------- AdditiveAttention

def _book_example():
    """The book's example: 2 batch items, one query, 10 identical keys, values 0..39, valid lengths 2 and 6."""
    queries = torch.ones(2, 1, 2)
    keys = torch.ones(2, 10, 2)
    values = torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)
    lens = torch.tensor([2, 6])
    # identical keys: equal weights on the valid pairs, so the output is the mean of the first 2 (resp. 6) values
    expected = torch.tensor([[[2.0, 3.0, 4.0, 5.0]], [[10.0, 11.0, 12.0, 13.0]]])
    return queries, keys, values, lens, expected


#: The parts of a call's checks scored separately: a module that stores no attention weights keeps its output part.
PARTS = ("output", "attention_weights")


def _attend(what, model, queries, keys, values, lens, hint):
    """The model's output and its stored attention weights (a `T.Missing` where it stores none: only the
    checks of the weights fail)."""
    out = T.call(what, model, queries, keys, values, lens, hint=hint, returns=torch.Tensor)
    return out, T.attribute(model, "attention_weights", "model.attention_weights")


def _rectangular(key_size):
    """Rectangular inputs (Q != K, value size != feature sizes): queries (2, 3, 5), keys (2, 4, key_size),
    values (2, 4, 7), valid_lens [2, 4]."""
    g = torch.Generator().manual_seed(0)
    queries, keys = torch.randn(2, 3, 5, generator=g), torch.randn(2, 4, key_size, generator=g)
    return queries, keys, torch.randn(2, 4, 7, generator=g), torch.tensor([2, 4])


def _check_shapes(out, weights, part, key_size):
    if part == "attention_weights":
        T.assert_shape(T.as_plain(weights, "model.attention_weights"), (2, 3, 4),
                       "model.attention_weights (batch, queries, keys)")
    else:
        T.assert_shape(out, (2, 3, 7), _("output for queries (2, 3, 5), keys (2, 4, {key_size}), values (2, 4, 7)").format(key_size=key_size))


@pytest.mark.component("AdditiveAttention")
@pytest.mark.kind("structure")
def test_additive_contract_names(student):
    """has W_k, W_q and w_v: nn.Linear layers without bias, with the contract's shapes

    The one check of the names (the hidden suite does not check them again): the hidden tests bind the
    course's weights to yours by structure when the names differ."""
    model = student.AdditiveAttention(2, 3, 5, 0.0)
    T.assert_contract_names(model, T.contract({"W_k.weight": (5, 2), "W_q.weight": (5, 3), "w_v.weight": (1, 5)}),
                            "AdditiveAttention(key_size=2, query_size=3, num_hiddens=5, dropout=0): W_k = "
                            "nn.Linear(key_size, num_hiddens, bias=False), W_q = nn.Linear(query_size, num_hiddens, "
                            "bias=False), w_v = nn.Linear(num_hiddens, 1, bias=False)")


@pytest.mark.component("AdditiveAttention")
@pytest.mark.weight(1 / len(PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", PARTS)
def test_additive_shapes(student, part):
    """rectangular inputs (Q != K, key_size != query_size != value size): output (B, Q, v), weights (B, Q, K)"""
    model = student.AdditiveAttention(6, 5, 8, 0.0)
    model.eval()
    out, weights = _attend("AdditiveAttention(key_size=6, query_size=5, num_hiddens=8)(queries, keys, values, "
                           "valid_lens)", model, *_rectangular(6), hint=ADD_HINT)
    _check_shapes(out, weights, part, 6)


@pytest.mark.component("AdditiveAttention")
def test_additive_book_example(student):
    """worked example (the book's): a single query (Q = 1) over identical keys gets the mean of the valid values"""
    model = student.AdditiveAttention(2, 2, 8, 0.1)
    model.eval()
    queries, keys, values, lens, expected = _book_example()
    out = T.call(_("AdditiveAttention(2, 2, 8, 0.1) in eval mode"), model, queries, keys, values, lens, hint=ADD_HINT,
                 returns=torch.Tensor)
    T.assert_close(out, expected, what=_("output for identical keys with valid lengths [2, 6]"),
                   hint="identical keys get identical scores, so the valid values are averaged and the others "
                        "(index >= valid length) ignored; in eval mode dropout must be off. " + ADD_HINT)


# ---------------------------------------------------------------- DotProductAttention

@pytest.mark.component("DotProductAttention")
@pytest.mark.weight(1 / len(PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", PARTS)
def test_dot_shapes(student, part):
    """rectangular inputs (Q != K, value size != d): output (B, Q, v), weights (B, Q, K)"""
    model = student.DotProductAttention(0.0)
    model.eval()
    out, weights = _attend("DotProductAttention(0)(queries, keys, values, valid_lens)", model, *_rectangular(5),
                           hint=DOT_HINT)
    _check_shapes(out, weights, part, 5)


@pytest.mark.component("DotProductAttention")
@pytest.mark.weight(1 / len(PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", PARTS)
def test_dot_scale_example(student, part):
    """worked example: scores are Q K^T / sqrt(d), with d the feature size of queries and keys"""
    model = student.DotProductAttention(0.0)
    model.eval()
    d = 4  # sqrt(d) = 2
    queries = torch.tensor([[[1.0, 0.0, 0.0, 0.0]]])
    keys = torch.tensor([[[0.0, 0.0, 0.0, 0.0], [2 * math.log(3.0), 0.0, 0.0, 0.0], [0.0, 5.0, 0.0, 0.0]]])
    values = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]])
    # scores 0, 2 ln 3 / 2 = ln 3, 0 over three keys: weights 1/5, 3/5, 1/5
    out, weights = _attend("DotProductAttention(0)(queries, keys, values)", model, queries, keys, values, None,
                           hint=DOT_HINT)
    if part == "attention_weights":
        T.assert_close(weights, torch.tensor([[[0.2, 0.6, 0.2]]]), what=f"model.attention_weights (d = {d})",
                       inputs={"queries": queries, "keys": keys}, hint=DOT_HINT)
    else:
        T.assert_close(out, torch.tensor([[[0.2, 0.6]]]), what=_("output (d = {d})").format(d=d),
                       inputs={"queries": queries, "keys": keys, "values": values}, hint=DOT_HINT)


@pytest.mark.component("DotProductAttention")
def test_dot_book_example(student):
    """worked example (the book's): identical keys give the mean of the valid values; valid_lens defaults to None"""
    model = student.DotProductAttention(0.5)
    model.eval()
    queries, keys, values, lens, expected = _book_example()
    out = T.call(_("DotProductAttention(0.5) in eval mode"), model, queries, keys, values, lens, hint=DOT_HINT,
                 returns=torch.Tensor)
    T.assert_close(out, expected, what=_("output for identical keys with valid lengths [2, 6]"),
                   hint="identical keys get identical scores, so the valid values are averaged and the others "
                        "(index >= valid length) ignored; in eval mode dropout must be off")
    out = T.call(_("DotProductAttention(0.5)(queries, keys, values) without valid_lens"), model, queries, keys, values,
                 hint="valid_lens is optional: forward(queries, keys, values, valid_lens=None)", returns=torch.Tensor)
    T.assert_close(out, values.mean(dim=1, keepdim=True), what=_("output without valid_lens (all 10 values averaged)"),
                   hint="valid_lens=None means every key is valid")
