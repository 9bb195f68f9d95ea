"""Public tests for assignment 04: multi-head attention.

These run in your notebook's self-check and in the grader. They check shapes, small worked
examples you can verify by hand, and properties of the contract; the grader runs more tests.
"""
import pytest
import torch

from autograder.selfcheck import testing as T
from autograder.selfcheck.hints import MHA_SIZES_HINT
from autograder.selfcheck.i18n import _

HEAD_HINT = ("row b*h + i of the result must be head i of batch item b, and head i holds features "
             "i*d/h .. (i+1)*d/h - 1 of every position (reshape to (B, L, h, d/h), then move the head axis "
             "in front of the positions)")

# The worked example: one batch item, two positions, four features, two heads.
WORKED_X = torch.arange(8, dtype=torch.float32).reshape(1, 2, 4)  # [[[0, 1, 2, 3], [4, 5, 6, 7]]]
WORKED_HEADS = torch.tensor([[[0., 1.], [4., 5.]],   # head 0: features 0-1 of each position
                             [[2., 3.], [6., 7.]]])  # head 1: features 2-3 of each position


@pytest.mark.component("transpose_qkv")
def test_qkv_shape(student):
    """transpose_qkv turns (B, L, d) into (B*h, L, d/h)"""
    for B, L, d, h in [(2, 3, 6, 3), (1, 4, 8, 2), (3, 1, 5, 1)]:
        X = torch.randn(B, L, d, generator=torch.Generator().manual_seed(B * 100 + L))
        T.assert_shape(student.transpose_qkv(X, h), (B * h, L, d // h),
                       _("transpose_qkv(X of shape {shape}, num_heads={h})").format(shape=(B, L, d), h=h))


@pytest.mark.component("transpose_qkv")
def test_qkv_worked_example(student):
    """transpose_qkv puts head i of each batch item in its own row (worked example)"""
    T.assert_close(student.transpose_qkv(WORKED_X, 2), WORKED_HEADS,
                   what=_("transpose_qkv(X, num_heads=2): head 0 must get features 0-1, head 1 features 2-3"),
                   inputs={"X": WORKED_X}, hint=HEAD_HINT)


@pytest.mark.component("transpose_qkv")
def test_qkv_two_batch_items(student):
    """transpose_qkv keeps the heads of one batch item together, batch item by batch item"""
    X = torch.stack([WORKED_X[0], WORKED_X[0] + 10])  # (2, 2, 4): item 1 is item 0 plus 10
    expected = torch.cat([WORKED_HEADS, WORKED_HEADS + 10])  # rows: item 0 head 0, item 0 head 1, item 1 ...
    T.assert_close(student.transpose_qkv(X, 2), expected,
                   what=_("transpose_qkv(X, num_heads=2) on two batch items: rows must be "
                          "(item 0, head 0), (item 0, head 1), (item 1, head 0), (item 1, head 1)"),
                   inputs={"X": X}, hint=HEAD_HINT + "; this is the order torch.repeat_interleave(valid_lens, h) "
                                                     "gives the valid lengths in")


@pytest.mark.component("transpose_output")
def test_output_shape(student):
    """transpose_output turns (B*h, L, d/h) back into (B, L, d)"""
    for B, L, dh, h in [(2, 3, 2, 3), (1, 4, 4, 2), (3, 1, 5, 1)]:
        X = torch.randn(B * h, L, dh, generator=torch.Generator().manual_seed(B * 100 + L))
        T.assert_shape(student.transpose_output(X, h), (B, L, dh * h),
                       _("transpose_output(X of shape {shape}, num_heads={h})").format(shape=(B * h, L, dh), h=h))


@pytest.mark.component("transpose_output")
def test_output_worked_example(student):
    """transpose_output concatenates the heads of each position back in head order (worked example)"""
    T.assert_close(student.transpose_output(WORKED_HEADS, 2), WORKED_X,
                   what=_("transpose_output(heads, num_heads=2) must undo transpose_qkv"),
                   inputs={"heads": WORKED_HEADS},
                   hint="row b*h + i is head i of batch item b; its features go to columns i*d/h .. (i+1)*d/h - 1 "
                        "of batch item b (reshape to (B, h, L, d/h), move the head axis behind the positions, "
                        "then merge the last two axes)")


@pytest.mark.component("transpose_output")
def test_output_two_batch_items(student):
    """transpose_output reads rows batch item by batch item (worked example)"""
    X = torch.cat([WORKED_HEADS, WORKED_HEADS + 10])
    expected = torch.stack([WORKED_X[0], WORKED_X[0] + 10])
    T.assert_close(student.transpose_output(X, 2), expected,
                   what=_("transpose_output(heads, num_heads=2) on two batch items: rows 0-1 are the heads of "
                          "item 0, rows 2-3 those of item 1"),
                   inputs={"heads": X},
                   hint="row b*h + i is head i of batch item b (the inverse of transpose_qkv)")


#: Every size equal to num_hiddens, as in 06's self-attention: the tests that are not about the sizes
#: use it, so that a module right only when they are equal loses the shape test alone.
SELF_ATTENTION = dict(key_size=6, query_size=6, value_size=6)


def inputs(*shapes):
    """Queries, keys and values of these shapes, the same on every run and path (not from the process's
    random stream, which the student's code shares where it runs in this process: check())."""
    g = torch.Generator().manual_seed(4)
    return [torch.randn(shape, generator=g) for shape in shapes]


def _mha(student, key_size=3, query_size=4, value_size=5, num_hiddens=6, num_heads=2, dropout=0.0, bias=False):
    T.seed(student, 0)
    m = student.MultiHeadAttention(key_size, query_size, value_size, num_hiddens, num_heads, dropout, bias)
    m.eval()
    return m


@pytest.mark.component("MultiHeadAttention")
@pytest.mark.kind("structure")
def test_mha_contract_names(student):
    """MultiHeadAttention has the projections W_q, W_k, W_v, W_o with the right shapes (with biases when bias=True)

    The one check of the names (the hidden suite does not check them again): the hidden tests bind the
    course's weights to yours by structure when the names differ."""
    sizes = {"W_q": (6, 4), "W_k": (6, 3), "W_v": (6, 5), "W_o": (6, 6)}  # nn.Linear stores (out, in)
    for bias in (False, True):
        entries = {f"{name}.weight": shape for name, shape in sizes.items()}
        entries |= {f"{name}.bias": (6,) for name in sizes} if bias else {}
        T.assert_contract_names(_mha(student, bias=bias), T.contract(entries),
                                f"MultiHeadAttention(key_size=3, query_size=4, value_size=5, num_hiddens=6, "
                                f"num_heads=2, dropout=0, bias={bias}): W_q, W_k, W_v, W_o = nn.Linear(in_features, "
                                f"num_hiddens, bias=bias)")


@pytest.mark.component("MultiHeadAttention")
@pytest.mark.weight(1 / 2)  # each form of valid_lens its half: a crash on one costs that one
@pytest.mark.parametrize("lens", [[2, 5], None], ids=["1d", "none"])
def test_mha_shape(student, lens):
    """MultiHeadAttention returns (B, Q, num_hiddens), with valid_lens of shape (B,) and None"""
    m = _mha(student)
    q, k, v = inputs((2, 3, 4), (2, 5, 3), (2, 5, 5))
    what = ("MultiHeadAttention(key_size=3, query_size=4, value_size=5, num_hiddens=6, num_heads=2)"
            "(queries (2, 3, 4), keys (2, 5, 3), values (2, 5, 5), valid_lens)")
    if lens is None:
        what = _("{call} with valid_lens=None").format(call=what)
    valid_lens = None if lens is None else torch.tensor(lens)
    T.assert_shape(T.call(what, m, q, k, v, valid_lens, hint=MHA_SIZES_HINT, show_args=False), (2, 3, 6), what)


@pytest.mark.component("MultiHeadAttention")
def test_mha_masked_pairs_ignored(student):
    """keys and values beyond each batch item's valid length do not change the output"""
    m = _mha(student, **SELF_ATTENTION)
    q, k, v = inputs((2, 3, 6), (2, 5, 6), (2, 5, 6))
    lens = torch.tensor([2, 4])
    k2, v2 = k.clone(), v.clone()
    k2[0, 2:], v2[0, 2:] = 100.0, -100.0  # masked for item 0
    k2[1, 4:], v2[1, 4:] = -50.0, 50.0  # masked for item 1
    T.assert_close(m(q, k2, v2, lens), m(q, k, v, lens),
                   what=_("output after changing keys/values beyond the valid lengths [2, 4]"),
                   hint="every head of batch item b must use b's valid length: repeat each length num_heads "
                        "times in place (torch.repeat_interleave(valid_lens, num_heads, dim=0)), and pass it on "
                        "to the attention")


@pytest.mark.component("MultiHeadAttention")
def test_mha_eval_is_deterministic(student):
    """in eval mode dropout is off: two calls give the same output"""
    m = _mha(student, dropout=0.5, **SELF_ATTENTION)
    q, k, v = inputs((2, 3, 6), (2, 5, 6), (2, 5, 6))
    lens = torch.tensor([2, 4])  # a form every MultiHeadAttention takes: this test is about dropout, not masking
    T.assert_close(m(q, k, v, lens), m(q, k, v, lens), what=_("two eval-mode calls with dropout=0.5"),
                   hint="use nn.Dropout (through DotProductAttention) so that .eval() switches it off")
