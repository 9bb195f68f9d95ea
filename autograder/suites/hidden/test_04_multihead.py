"""Hidden tests for assignment 04: multi-head attention (instructor only).

transpose_qkv / transpose_output are pure reshapes: compared exactly (torch.equal). MultiHeadAttention
is checked against independent computations from the course's weights copied into the student's
module (one head, a loop over per-head weight slices), against itself (one batch item or one query at
a time: property tests, which run it with a course's model's weights copied in too, `loaded`, so that it is
checked in the one state the comparisons check it in) and against the reference with its weights copied in. Its parameter names are checked once,
by the public suite's test_mha_contract_names (students see it in their self-check); every test that draws valid_lens
of any form scores each form (None, (B,), (B, Q)) separately (`per_form`), so a crash on one costs that form alone.
"""
import math

import pytest
import torch
from hypothesis import assume, example, given, settings, strategies as st

from autograder.selfcheck import strategies as S
from autograder.selfcheck import testing as T
from autograder.selfcheck.hints import MHA_SIZES_HINT
from autograder.selfcheck.i18n import N_, _


def values(seed, shape, dtype):
    """Distinct entries (exact in every dtype) so that any misplaced element shows."""
    n = math.prod(shape)
    g = torch.Generator().manual_seed(seed)
    return (torch.randperm(n, generator=g) + 1).to(dtype).reshape(shape)


@st.composite
def reshape_case(draw, dtypes=st.sampled_from([torch.float32, torch.float64, torch.int64])):
    B, L = draw(st.integers(1, 3), label="B"), draw(st.integers(1, 4), label="L")
    h, dh = draw(st.integers(1, 4), label="num_heads"), draw(st.integers(1, 3), label="d/h")
    return B, L, h, dh, draw(dtypes, label="dtype"), draw(S.SEEDS, label="seed")


def equal(actual, expected, what, inputs, hint):
    """Exact comparison (pure reshapes): same shape, dtype and every element."""
    T.assert_shape(actual, tuple(expected.shape), what)
    T.check(actual.dtype == expected.dtype, _("{what}: dtype {dtype}, expected {expected} "
                                              "(a reshape must not change the dtype)").format(what=what, dtype=actual.dtype, expected=expected.dtype))
    if not torch.equal(T.as_plain(actual), expected):
        T.assert_close(actual, expected, what=what, inputs=inputs, hint=hint, rtol=0, atol=0)
        raise AssertionError(_("{what}: not exactly equal to the expected rearrangement. hint: {hint}").format(what=what, hint=_(hint)))


QKV_HINT = N_("row b*h + i must be head i of batch item b (the order torch.repeat_interleave(valid_lens, h) "
              "gives the lengths in), holding features i*d/h .. (i+1)*d/h - 1: reshape to (B, L, h, d/h), "
              "permute to (B, h, L, d/h), reshape to (B*h, L, d/h)")
OUT_HINT = N_("row b*h + i is head i of batch item b; its features go to columns i*d/h .. (i+1)*d/h - 1 of "
              "batch item b: reshape to (B, h, L, d/h), permute to (B, L, h, d/h), reshape to (B, L, d)")


# ---------------------------------------------------------------- transpose_qkv

@pytest.mark.component("transpose_qkv")
@given(case=reshape_case())
def test_qkv_head_slices(student, case):
    """head i of batch item b is the i-th slice of b's features"""
    B, L, h, dh, dtype, seed = case
    X = values(seed, (B, L, h * dh), dtype)
    out = T.as_plain(student.transpose_qkv(X, h))
    T.assert_shape(out, (B * h, L, dh), _("transpose_qkv(X of shape {shape}, num_heads={h})").format(shape=(B, L, h * dh), h=h))
    for b in range(B):
        for i in range(h):
            equal(out[b * h + i], X[b, :, i * dh:(i + 1) * dh],
                  _("transpose_qkv(X, num_heads={h}) row {row} must be head {i} of batch item {b} "
                    "(features {first}..{last})").format(h=h, row=b * h + i, i=i, b=b, first=i * dh, last=(i + 1) * dh - 1), {"X": X}, QKV_HINT)


@pytest.mark.component("transpose_qkv")
@given(case=reshape_case(dtypes=st.just(torch.float32)))
def test_qkv_rows_follow_repeat_interleave(student, case):
    """row r of transpose_qkv's result belongs to batch item r // h, like repeat_interleave(valid_lens, h)"""
    # Kills the batch-minor mutant with the message that names the valid-lengths consequence.
    B, L, h, dh, dtype, _seed = case
    X = torch.arange(B, dtype=dtype).reshape(B, 1, 1).expand(B, L, h * dh).contiguous()  # item b is all b
    owner = T.as_plain(student.transpose_qkv(X, h))[:, 0, 0]
    expected = torch.repeat_interleave(torch.arange(B, dtype=dtype), h)
    equal(owner, expected, _("batch item of each row of transpose_qkv(X, num_heads={h}) for B={B}").format(h=h, B=B),
          {"X": X}, N_("MultiHeadAttention repeats the valid lengths with torch.repeat_interleave(valid_lens, h, "
                       "dim=0), so the h heads of batch item b must be the consecutive rows b*h .. b*h+h-1"))


@pytest.mark.component("transpose_qkv")
@given(case=reshape_case())
def test_qkv_matches_reference(student, ref, case):
    """transpose_qkv equals the course's rearrangement exactly"""
    check_qkv_matches_reference(student, ref, *case)


def check_qkv_matches_reference(student, ref, B: int, L: int, h: int, dh: int, dtype: torch.dtype, seed: int) -> None:
    """transpose_qkv on a (B, L, h * dh) input equals the course's exactly."""
    X = values(seed, (B, L, h * dh), dtype)
    equal(student.transpose_qkv(X, h), ref.transpose_qkv(X, h),
          _("transpose_qkv(X of shape {shape}, num_heads={h})").format(shape=(B, L, h * dh), h=h), {"X": X}, QKV_HINT)


@pytest.mark.component("transpose_qkv")
@given(case=reshape_case())
def test_qkv_is_inverted_by_transpose_output(student, ref, case):
    """transpose_output exactly undoes transpose_qkv"""
    B, L, h, dh, dtype, seed = case
    X = values(seed, (B, L, h * dh), dtype)
    equal(ref.transpose_output(student.transpose_qkv(X, h), h), X,
          _("transpose_output(transpose_qkv(X, {h}), {h}) must give X back").format(h=h), {"X": X}, QKV_HINT)


#: Fixed problems at realistic sizes, (B, L, num_heads, d/h, seed): batch 8, 32-64 steps, 32-64 features
#: (L differs from d, B and h so that swapped axes show).
REALISTIC_RESHAPES = [(8, 40, 4, 8, 101), (8, 64, 8, 6, 102), (8, 32, 4, 16, 103)]
REALISTIC_RESHAPE_IDS = [f"B{B}-L{L}-h{h}-d{h * dh}" for B, L, h, dh, _ in REALISTIC_RESHAPES]


@pytest.mark.component("transpose_qkv")
@pytest.mark.weight(1 / len(REALISTIC_RESHAPES))  # the cases share one test's weight
@pytest.mark.parametrize("B,L,h,dh,seed", REALISTIC_RESHAPES, ids=REALISTIC_RESHAPE_IDS)
def test_qkv_at_realistic_size(student, ref, B, L, h, dh, seed):
    """transpose_qkv equals the course's rearrangement exactly at realistic sizes (batch 8, 32-64 steps, 32-64 features)"""
    check_qkv_matches_reference(student, ref, B, L, h, dh, torch.float32, seed)


# ---------------------------------------------------------------- transpose_output

@pytest.mark.component("transpose_output")
@given(case=reshape_case())
def test_output_head_slices(student, case):
    """head i of batch item b goes back to the i-th slice of b's features"""
    B, L, h, dh, dtype, seed = case
    X = values(seed, (B * h, L, dh), dtype)
    out = T.as_plain(student.transpose_output(X, h))
    T.assert_shape(out, (B, L, h * dh), _("transpose_output(X of shape {shape}, num_heads={h})").format(shape=(B * h, L, dh), h=h))
    for b in range(B):
        for i in range(h):
            equal(out[b, :, i * dh:(i + 1) * dh], X[b * h + i],
                  _("transpose_output(X, num_heads={h}): features {first}..{last} of batch item {b} "
                    "must be row {row} (head {i} of item {b})").format(h=h, first=i * dh, last=(i + 1) * dh - 1, b=b, row=b * h + i, i=i), {"X": X}, OUT_HINT)


@pytest.mark.component("transpose_output")
@given(case=reshape_case())
def test_output_matches_reference(student, ref, case):
    """transpose_output equals the course's rearrangement exactly"""
    check_output_matches_reference(student, ref, *case)


def check_output_matches_reference(student, ref, B: int, L: int, h: int, dh: int, dtype: torch.dtype, seed: int) -> None:
    """transpose_output on a (B * h, L, dh) input equals the course's exactly."""
    X = values(seed, (B * h, L, dh), dtype)
    equal(student.transpose_output(X, h), ref.transpose_output(X, h),
          _("transpose_output(X of shape {shape}, num_heads={h})").format(shape=(B * h, L, dh), h=h), {"X": X}, OUT_HINT)


@pytest.mark.component("transpose_output")
@given(case=reshape_case())
def test_output_inverts_transpose_qkv(student, ref, case):
    """transpose_output exactly undoes transpose_qkv, and the other way round"""
    B, L, h, dh, dtype, seed = case
    X = values(seed, (B, L, h * dh), dtype)
    equal(student.transpose_output(ref.transpose_qkv(X, h), h), X,
          _("transpose_output(transpose_qkv(X, {h}), {h}) must give X back").format(h=h), {"X": X}, OUT_HINT)
    Y = values(seed + 1, (B * h, L, dh), dtype)
    equal(ref.transpose_qkv(student.transpose_output(Y, h), h), Y,
          _("transpose_qkv(transpose_output(Y, {h}), {h}) must give Y back").format(h=h), {"Y": Y}, OUT_HINT)


@pytest.mark.component("transpose_output")
@pytest.mark.weight(1 / len(REALISTIC_RESHAPES))  # the cases share one test's weight
@pytest.mark.parametrize("B,L,h,dh,seed", REALISTIC_RESHAPES, ids=REALISTIC_RESHAPE_IDS)
def test_output_at_realistic_size(student, ref, B, L, h, dh, seed):
    """transpose_output equals the course's rearrangement exactly at realistic sizes (batch 8, 32-64 steps, 32-64 features)"""
    check_output_matches_reference(student, ref, B, L, h, dh, torch.float32, seed)


# ---------------------------------------------------------------- MultiHeadAttention

@st.composite
def mha_case(draw, heads=st.integers(1, 3), lens_kinds=("none", "1d", "2d"), bias=st.just(False),
             min_batch=1, distinct_sizes=False):
    """Sizes, valid lengths (None, (B,) or (B, Q), each >= 1), dtype, bias and a seed for the values.

    Each test varies what it is about and holds the rest at the contract's common setting, so that one
    mistake costs the tests about it and no others: query, key and value sizes all equal num_hiddens
    (self-attention, as 06 uses it) unless distinct_sizes (then 2, 3 and 5 in some order), and no bias
    unless the test asks for it."""
    B = draw(st.integers(min_batch, 3), label="B")
    Q, K = draw(st.integers(1, 3), label="Q"), draw(st.integers(1, 4), label="K")
    h, dh = draw(heads, label="num_heads"), draw(st.integers(1, 3), label="d/h")
    if distinct_sizes:
        qs, ks, vs = draw(st.permutations([2, 3, 5]), label="query, key, value sizes")
    else:
        qs = ks = vs = h * dh
    lens = S.valid_lens(draw, draw(st.sampled_from(lens_kinds), label="valid_lens kind"), B, K, queries=Q,
                        label="valid_lens")
    return dict(B=B, Q=Q, K=K, h=h, dh=dh, qs=qs, ks=ks, vs=vs, lens=lens, bias=draw(bias, label="bias"),
                dtype=draw(S.FLOAT_DTYPES, label="dtype"), seed=draw(S.SEEDS, label="seed"))


def make_inputs(c):
    q = S.randn((c["B"], c["Q"], c["qs"]), c["seed"], c["dtype"])
    k = S.randn((c["B"], c["K"], c["ks"]), c["seed"] + 1, c["dtype"])
    v = S.randn((c["B"], c["K"], c["vs"]), c["seed"] + 2, c["dtype"])
    return q, k, v


def build(student, c, dropout=0.0, mode="eval"):
    """The student's module for case c, in eval mode (or `mode`) and in the case's dtype (weights from a seed)."""
    T.seed(student, c["seed"])
    m = student.MultiHeadAttention(c["ks"], c["qs"], c["vs"], c["h"] * c["dh"], c["h"], dropout, c["bias"])
    m.train(mode == "train")
    if c["dtype"] == torch.float64:
        m.double()
    return m


def describe(c):
    return (f"MultiHeadAttention(key_size={c['ks']}, query_size={c['qs']}, value_size={c['vs']}, "
            f"num_hiddens={c['h'] * c['dh']}, num_heads={c['h']}, bias={c['bias']})")


def lens_text(lens):
    return "None" if lens is None else f"of shape {tuple(lens.shape)} {lens.tolist()}"


def run(m, c, q, k, v, lens):
    """The student's forward (T.call); a failure names the call and the likely cause."""
    hint = MHA_SIZES_HINT
    if lens is not None and lens.dim() == 2:
        hint = ("2-D valid_lens (B, Q) hold one length per query: repeat its rows along axis 0 only, "
                "torch.repeat_interleave(valid_lens, num_heads, dim=0) -> (B*h, Q); " + hint)
    return T.call(_("{module} on queries {q_shape}, keys {k_shape}, values {v_shape}, "
                    "valid_lens {lens}").format(module=describe(c), q_shape=tuple(q.shape), k_shape=tuple(k.shape), v_shape=tuple(v.shape), lens=lens_text(lens)), m, q, k, v, lens, hint=hint, show_args=False)


def reference_model(ref, c, dropout=0.0, mode="eval"):
    """The course's MultiHeadAttention for case c (random weights), in eval mode (or `mode`) and the case's dtype."""
    r = ref.MultiHeadAttention(c["ks"], c["qs"], c["vs"], c["h"] * c["dh"], c["h"], dropout, c["bias"])
    return r.train(mode == "train").to(c["dtype"])


def copy(m, r, c):
    """r's weights into the student's module m (T.copy_weights; lazy layers get their shapes from one
    forward call on the case's inputs first)."""
    T.with_lazy_parameters(lambda: T.copy_weights(m, r), m, *make_inputs(c), c["lens"])


def loaded(student, ref, c, dropout=0.0):
    """The student's module for a property test, in the state the comparisons run it in: built as `build`
    builds it, with a course's model of the same case (`reference_model`) copied in by `copy`, so that code
    cannot behave one way with its own initial weights and another once the course's are loaded. Where the
    course's weights do not bind to it (T.copy_weights fails: the comparisons fail too, and the gate pays
    this test in proportion to them), the module keeps its own weights."""
    m = build(student, c, dropout)
    try:
        copy(m, reference_model(ref, c, dropout), c)
    except Exception:  # no binding; a FailFast (a limit, a stub) is no Exception and ends the test
        m = build(student, c, dropout)
    return m


def weights(m, ref, c):
    """The course's projections, copied into the student's module (T.copy_weights: with bias=True every
    projection has a bias, with bias=False none), as plain tensors under the course's names."""
    r = reference_model(ref, c)
    copy(m, r, c)
    return T.state_dict(r)


def linear(sd, name, x, rows=slice(None)):
    y = x @ sd[f"{name}.weight"][rows].T
    if f"{name}.bias" in sd:
        y = y + sd[f"{name}.bias"][rows]
    return y


def key_mask(lens, B, Q, K):
    """(B, Q, K) bool: key j is visible to query i of item b."""
    if lens is None:
        return torch.ones(B, Q, K, dtype=torch.bool)
    lens = lens.reshape(B, 1) if lens.dim() == 1 else lens
    return torch.arange(K).reshape(1, 1, K) < lens.reshape(B, -1, 1).expand(B, Q, 1)


def attend(q, k, v, mask):
    scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
    return torch.softmax(scores.masked_fill(~mask, -math.inf), dim=-1) @ v


def loop_over_heads(sd, c, q, k, v):
    """The definition: head i projects with rows i*dh..(i+1)*dh-1 of W_q, W_k, W_v; concat; W_o."""
    mask = key_mask(c["lens"], c["B"], c["Q"], c["K"])
    dh = c["dh"]
    heads = []
    for i in range(c["h"]):
        rows = slice(i * dh, (i + 1) * dh)
        heads.append(attend(linear(sd, "W_q", q, rows), linear(sd, "W_k", k, rows), linear(sd, "W_v", v, rows), mask))
    return linear(sd, "W_o", torch.cat(heads, dim=-1))


#: The forms of valid_lens, each scored separately where a test draws them (issue #23, "one check, one score": a
#: MultiHeadAttention that crashes on None and is exact on (B,) and (B, Q) had failed every test that drew all three).
LENS_FORMS = ("none", "1d", "2d")
per_form = pytest.mark.parametrize("form", LENS_FORMS)


def of_form(c, form):
    """Go on with case `c` only where its valid_lens have `form` (hypothesis draws another case otherwise); an explicit
    @example of another form is skipped."""
    assume(("none" if c["lens"] is None else f"{c['lens'].dim()}d") == form)


MHA_HINT = ("project with W_q, W_k, W_v; split the features into h heads with transpose_qkv; repeat valid_lens "
            "with torch.repeat_interleave(valid_lens, h, dim=0); scaled dot-product attention per head (scale "
            "1/sqrt(d/h), the head's width, which DotProductAttention uses); put the heads back side by side in "
            "head order with transpose_output; finally apply W_o")


@pytest.mark.component("MultiHeadAttention")
@pytest.mark.weight(1 / len(LENS_FORMS))  # the forms share one test's weight
@per_form
@settings(max_examples=3)
@given(c=mha_case(heads=st.just(1)))
def test_mha_one_head_is_single_head_attention(student, ref, form, c):
    """with one head, the output is W_o(attention(W_q q, W_k k, W_v v)): queries use W_q, keys W_k, values W_v"""
    of_form(c, form)
    m = build(student, c)
    sd = weights(m, ref, c)
    q, k, v = make_inputs(c)
    expected = linear(sd, "W_o", attend(linear(sd, "W_q", q), linear(sd, "W_k", k), linear(sd, "W_v", v),
                                        key_mask(c["lens"], c["B"], c["Q"], c["K"])))
    T.assert_close(run(m, c, q, k, v, c["lens"]), expected, what=_("{module} vs single-head scaled dot-product "
                     "attention over the projections, followed by W_o").format(module=describe(c)),
                   inputs={"valid_lens": c["lens"]},
                   hint="queries go through W_q, keys through W_k, values through W_v, and the attention output "
                        "through W_o; masked keys get weight 0")


@pytest.mark.component("MultiHeadAttention")
@pytest.mark.weight(1 / len(LENS_FORMS))  # the forms share one test's weight
@per_form
@settings(max_examples=3)
@given(c=mha_case(heads=st.integers(2, 3)))
def test_mha_equals_loop_over_heads(student, ref, form, c):
    """the output equals a loop over heads: head i uses the i-th slice of the projections, scaled by 1/sqrt(d/h), heads concatenated in order, then W_o"""
    of_form(c, form)
    m = build(student, c)
    sd = weights(m, ref, c)
    q, k, v = make_inputs(c)
    T.assert_close(run(m, c, q, k, v, c["lens"]), loop_over_heads(sd, c, q, k, v),
                   what=_("{module} vs an explicit loop over the {heads} heads").format(module=describe(c), heads=c['h']), inputs={"valid_lens": c["lens"]},
                   hint=MHA_HINT)


@pytest.mark.component("MultiHeadAttention")
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@given(c=mha_case(lens_kinds=("1d",), min_batch=2, heads=st.integers(2, 3)), data=st.data())
def test_mha_each_batch_item_uses_its_own_valid_length(student, ref, c, data):
    """each batch item uses its own valid length: the batch gives the same output as one item at a time"""
    lens = torch.tensor(data.draw(st.lists(st.integers(1, c["K"]), min_size=c["B"], max_size=c["B"], unique=True)
                                  if c["K"] >= c["B"] else st.just(list(range(c["B"], 0, -1))), label="valid_lens"))
    lens = lens.clamp(max=c["K"])
    m = loaded(student, ref, c)
    q, k, v = make_inputs(c)
    alone = torch.cat([T.as_plain(run(m, c, q[b:b + 1], k[b:b + 1], v[b:b + 1], lens[b:b + 1]))
                       for b in range(c["B"])])
    T.assert_close(run(m, c, q, k, v, lens), alone,
                   what=_("{module} on the whole batch vs one batch item at a time").format(module=describe(c)),
                   inputs={"valid_lens": lens}, sides=(_("whole batch"), _("one item at a time")),
                   hint="the heads of batch item b are rows b*h .. b*h+h-1, so the lengths must be repeated in place: "
                        "torch.repeat_interleave(valid_lens, num_heads, dim=0) gives [l0, l0, l1, l1], while "
                        "valid_lens.repeat(num_heads) gives [l0, l1, l0, l1] (wrong)")


@pytest.mark.component("MultiHeadAttention")
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@given(c=mha_case(lens_kinds=("2d",), heads=st.integers(2, 3)))
def test_mha_2d_valid_lens_per_query(student, ref, c):
    """2-D valid_lens (B, Q) give each query its own valid length: the same as one query at a time"""
    m = loaded(student, ref, c)
    q, k, v = make_inputs(c)
    lens = c["lens"]
    alone = []
    for j in range(c["Q"]):
        lens_j = lens[:, j].clone(memory_format=torch.contiguous_format)  # (B,): query j's lengths
        alone.append(T.as_plain(run(m, c, q[:, j:j + 1], k, v, lens_j)))
    alone = torch.cat(alone, dim=1)
    T.assert_close(run(m, c, q, k, v, lens), alone, what=_("{module} with 2-D valid_lens (one length per query) "
                     "vs one query at a time with 1-D valid_lens").format(module=describe(c)), inputs={"valid_lens": lens},
                   sides=(_("2-D valid_lens"), _("one query at a time")),
                   hint="repeat the rows of a 2-D valid_lens along axis 0 only: torch.repeat_interleave(valid_lens, "
                        "num_heads, dim=0) gives (B*h, Q); without dim=0 it flattens the lengths")


@pytest.mark.component("MultiHeadAttention")
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@given(c=mha_case(lens_kinds=("1d",), heads=st.integers(2, 3)))
def test_mha_1d_and_2d_valid_lens_agree(student, ref, c):
    """1-D valid_lens and the same lengths given per query (2-D) give the same output"""
    m = loaded(student, ref, c)
    q, k, v = make_inputs(c)
    lens2 = c["lens"].reshape(-1, 1).expand(c["B"], c["Q"]).contiguous()
    T.assert_close(run(m, c, q, k, v, lens2), run(m, c, q, k, v, c["lens"]),
                   what=_("{module} with valid_lens of shape (B, Q) repeating the (B,) lengths vs the (B,) lengths").format(module=describe(c)),
                   inputs={"valid_lens": c["lens"]}, sides=(_("(B, Q) valid_lens"), _("(B,) valid_lens")),
                   hint="torch.repeat_interleave(valid_lens, num_heads, dim=0) handles both the (B,) and (B, Q) forms")


@pytest.mark.component("MultiHeadAttention")
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@given(c=mha_case(lens_kinds=("1d",)), data=st.data())  # one length per batch item: the same for every query
def test_mha_permuting_queries_permutes_outputs(student, ref, c, data):
    """reordering the queries reorders the outputs the same way (valid_lens of shape (B,))"""
    m = loaded(student, ref, c)
    q, k, v = make_inputs(c)
    perm = torch.tensor(data.draw(st.permutations(list(range(c["Q"]))), label="query order"))
    T.assert_close(run(m, c, q[:, perm], k, v, c["lens"]), T.as_plain(run(m, c, q, k, v, c["lens"]))[:, perm],
                   what=_("{module} on reordered queries vs the reordered output").format(module=describe(c)), inputs={"order": perm},
                   sides=(_("reordered queries"), _("reordered output")),
                   hint="each query's output may depend only on that query and the keys/values: when merging the "
                        "heads with transpose_output, keep each position's heads together")


@pytest.mark.component("MultiHeadAttention")
@pytest.mark.weight(1 / len(LENS_FORMS))  # the forms share one test's weight
@per_form
@settings(max_examples=3)
@given(c=mha_case(distinct_sizes=True))
def test_mha_distinct_sizes_match_reference(student, ref, form, c):
    """query, key and value sizes may all differ (W_q for queries, W_k for keys, W_v for values)"""
    of_form(c, form)
    m = build(student, c)
    r = reference_model(ref, c)
    copy(m, r, c)
    q, k, v = make_inputs(c)
    T.assert_close(run(m, c, q, k, v, c["lens"]), r(q, k, v, c["lens"]), what=_("{module} vs the course's model "
                     "with the same weights").format(module=describe(c)), inputs={"valid_lens": c["lens"]},
                   hint="W_q maps query_size, W_k key_size and W_v value_size to num_hiddens; " + MHA_HINT)


@pytest.mark.component("MultiHeadAttention")
@pytest.mark.weight(1 / len(LENS_FORMS))  # the forms share one test's weight
@per_form
@settings(max_examples=3)
@given(c=mha_case(bias=st.just(True)))
def test_mha_bias_matches_reference(student, ref, form, c):
    """with bias=True all four projections have a bias, and the output matches the course's model"""
    of_form(c, form)
    m = build(student, c)
    r = reference_model(ref, c)
    copy(m, r, c)
    q, k, v = make_inputs(c)
    T.assert_close(run(m, c, q, k, v, c["lens"]), r(q, k, v, c["lens"]), what=_("{module} vs the course's model "
                     "with the same weights").format(module=describe(c)), inputs={"valid_lens": c["lens"]}, hint=MHA_HINT)


@pytest.mark.component("MultiHeadAttention")
@pytest.mark.weight(1 / len(LENS_FORMS))  # the forms share one test's weight
@per_form
@settings(max_examples=5)
@given(data=st.data())
def test_mha_matches_reference_in_eval_mode(student, ref, form, data):
    """in eval mode (dropout 0.5 switched off) the output matches the course's model with the same weights"""
    check_eval_mode_matches_reference(student, ref, data.draw(mha_case(lens_kinds=(form,)), label="c"))


def check_eval_mode_matches_reference(student, ref, c):
    """The student's model built with dropout 0.5, in eval mode, against the course's with the same weights."""
    m = build(student, c, dropout=0.5)
    r = reference_model(ref, c, dropout=0.5)
    copy(m, r, c)
    q, k, v = make_inputs(c)
    T.assert_close(run(m, c, q, k, v, c["lens"]), r(q, k, v, c["lens"]),
                   what=_("{module}, dropout=0.5, eval mode, vs the course's model with the same weights").format(module=describe(c)),
                   inputs={"valid_lens": c["lens"]},
                   hint="in eval mode dropout must be off (use nn.Dropout, via DotProductAttention); " + MHA_HINT)


#: Fixed problems at realistic sizes: batch 8, 40 queries and 64 keys (or the other way round, so that
#: swapped query/key axes show), query/key/value sizes 32-64 that all differ (in the first, all equal
#: num_hiddens, 06's self-attention), num_hiddens 32 or 64 with 4 or 8 heads, valid_lens None, (B,) and
#: (B, Q), float32.
REALISTIC_MHA = [
    dict(B=8, Q=40, K=64, h=4, dh=8, qs=32, ks=32, vs=32, lens="none", bias=False, seed=201),
    dict(B=8, Q=64, K=40, h=8, dh=8, qs=32, ks=64, vs=48, lens="1d", bias=True, seed=202),
    dict(B=8, Q=40, K=64, h=4, dh=16, qs=64, ks=48, vs=32, lens="2d", bias=False, seed=203),
]


def realistic_mha_case(spec):
    """A case like mha_case's from a fixed spec: seeded valid lengths (each in 1..K) of the spec's kind."""
    c = dict(spec, dtype=torch.float32)
    shape = {"none": None, "1d": (c["B"],), "2d": (c["B"], c["Q"])}[spec["lens"]]
    c["lens"] = None if shape is None else torch.randint(1, c["K"] + 1, shape, generator=S.generator(c["seed"] + 3))
    return c


@pytest.mark.component("MultiHeadAttention")
@pytest.mark.weight(1 / len(REALISTIC_MHA))  # the cases share one test's weight
@pytest.mark.parametrize("spec", REALISTIC_MHA,
                         ids=[f"Q{s['Q']}-K{s['K']}-d{s['h'] * s['dh']}-h{s['h']}-lens_{s['lens']}" for s in REALISTIC_MHA])
def test_mha_at_realistic_size(student, ref, spec):
    """matches the course's model in eval mode at realistic sizes (batch 8, 40 and 64 steps, 32-64 features, 4-8 heads)"""
    check_eval_mode_matches_reference(student, ref, realistic_mha_case(spec))


@pytest.mark.component("MultiHeadAttention")
@pytest.mark.weight(1 / len(LENS_FORMS))  # the forms share one test's weight
@per_form
@settings(max_examples=2)
@given(c=mha_case())
def test_mha_matches_reference_in_train_mode(student, ref, form, c):
    """in train mode with dropout 0 the output matches the course's model with the same weights (training changes nothing else)"""
    of_form(c, form)
    m, r = build(student, c, mode="train"), reference_model(ref, c, mode="train")
    copy(m, r, c)
    q, k, v = make_inputs(c)
    T.assert_close(run(m, c, q, k, v, c["lens"]), r(q, k, v, c["lens"]),
                   what=_("{module}, dropout=0, train mode, vs the course's model with the same weights").format(module=describe(c)),
                   inputs={"valid_lens": c["lens"]},
                   hint="with dropout 0 the model computes in train mode exactly what it computes in eval mode: "
                        "mask, scale and project the same way whatever self.training is; " + MHA_HINT)


@pytest.mark.component("MultiHeadAttention")
@pytest.mark.weight(1 / len(LENS_FORMS))  # the forms share one test's weight
@per_form
@settings(max_examples=2)
@pytest.mark.kind("dependence")
@given(c=mha_case(heads=st.integers(1, 3)))
@example(c=realistic_mha_case(REALISTIC_MHA[1]))  # and at a realistic size: code right only on small inputs shows
def test_mha_depends_on_its_inputs_as_the_course_does(student, ref, form, c):
    """the output depends on the queries, the valid keys and values, and not on keys and values past the valid lengths, as the course's does"""
    of_form(c, form)
    m, r = build(student, c), reference_model(ref, c)
    copy(m, r, c)
    q, k, v = make_inputs(c)
    b, lens = c["B"] - 1, c["lens"]
    first = c["K"] if lens is None else int(lens[b].min())  # keys every query of item b attends to
    i, j = c["seed"] % c["Q"], (c["seed"] // 7) % max(1, first)  # drawn from the seed: no index is special
    new, args = S.generator(c["seed"] + 11), [q, k, v, lens]

    def changed(which, index):
        return S.changed_at(args, which, index, new)

    changes = [(_("query [{b}, {i}] changes").format(b=b, i=i), changed([0], (b, i))),
               (_("key [{b}, {j}] changes").format(b=b, j=j), changed([1], (b, j))),
               (_("value [{b}, {j}] changes").format(b=b, j=j), changed([2], (b, j)))]
    last = c["K"] if lens is None else int(lens[b].max())
    if last < c["K"]:  # positions no query of item b may attend to
        changes.append((_("keys and values [{b}, {first}:] (past every valid length) change").format(b=b, first=last),
                        changed([1, 2], (b, slice(last, None)))))
    other_m, other_r = build(student, dict(c, seed=c["seed"] + 1000)), reference_model(ref, c)
    copy(other_m, other_r, c)  # outputs that ignore the module's weights ignore an input too
    changes.append((_("the weights change"), changed([], ()), other_m, other_r))
    T.assert_depends_like(describe(c), m, r, args, changes)


@pytest.mark.component("MultiHeadAttention")
@pytest.mark.weight(1 / len(LENS_FORMS))  # the forms share one test's weight
@per_form
@settings(max_examples=2)
@given(c=mha_case(heads=st.integers(1, 3)))
def test_mha_gradient_matches_reference(student, ref, form, c):
    """in train mode (dropout 0), gradients with respect to queries, keys and values match the course's model with the same weights (they flow through every projection)"""
    of_form(c, form)
    c = dict(c, dtype=torch.float64)
    m, r = build(student, c, mode="train"), reference_model(ref, c, mode="train")
    copy(m, r, c)
    q, k, v = make_inputs(c)
    g = S.randn((c["B"], c["Q"], c["h"] * c["dh"]), c["seed"] + 7, torch.float64)
    what = _("back-propagating through {module}").format(module=describe(c))
    grads = T.call(what, T.vjp, m, [q, k, v, c["lens"]], g, wrt=(0, 1, 2), hint=MHA_HINT, show_args=False)
    expected = T.vjp(r, [q, k, v, c["lens"]], g, wrt=(0, 1, 2))
    for label, got, exp in zip((_("queries"), _("keys"), _("values")), grads, expected):
        T.assert_close(torch.zeros_like(exp) if got is None else got, exp,
                       what=_("gradient of the output with respect to the {label}").format(label=label),
                       inputs={"valid_lens": c["lens"]},
                       hint="gradients must flow through W_q, W_k, W_v, the attention weights and W_o: do not "
                            "detach anything (.detach(), .data, torch.no_grad()) in forward")


# ---------------------------------------------------------------- for 06 (not scored)
# The 06 contract reads blks[i].attention.attention.attention_weights as every head's weights at once,
# (B*h, Q, K). Assignment 04's contract does not ask for it, so these tests cost nothing here; they
# trigger the dependency rule: 06 grades the Transformer built on a MultiHeadAttention that fails one
# with the course's too and keeps the better score, instead of costing 06 points for code that 04 accepted.

def head_weights(sd, c, q, k):
    """(B*h, Q, K): row b*h + i holds head i of batch item b's attention weights (transpose_qkv's order)."""
    mask = key_mask(c["lens"], c["B"], c["Q"], c["K"])
    dh, rows = c["dh"], []
    for b in range(c["B"]):
        for i in range(c["h"]):
            cols = slice(i * dh, (i + 1) * dh)
            scores = linear(sd, "W_q", q[b:b + 1], cols) @ linear(sd, "W_k", k[b:b + 1], cols).transpose(1, 2)
            rows.append(torch.softmax((scores / math.sqrt(dh)).masked_fill(~mask[b:b + 1], -math.inf), dim=-1))
    return torch.cat(rows)


#: Two fixed cases (no search: a contract check, and a failing example needs no shrinking): 2 and 3
#: heads, 1-D and 2-D valid_lens, every size distinct so that a transposed layout shows.
FOR_06_MHA = [dict(B=2, Q=3, K=4, h=2, dh=2, qs=3, ks=4, vs=5, lens=torch.tensor([2, 4]), bias=False,
                   dtype=torch.float32, seed=7),
              dict(B=3, Q=2, K=5, h=3, dh=1, qs=2, ks=3, vs=4, lens=torch.tensor([[1, 5], [3, 2], [5, 4]]),
                   bias=True, dtype=torch.float32, seed=8)]


@pytest.mark.component("MultiHeadAttention")
@pytest.mark.weight(0)  # not scored: decides which MultiHeadAttention 06 grades with (see above)
@pytest.mark.keep("06's contract, not 04's: a correct loop over heads fails it and keeps its 04 points")
@pytest.mark.parametrize("c", FOR_06_MHA, ids=["h2-lens_1d", "h3-lens_2d"])
def test_mha_attention_weights_hold_every_head_for_06(student, ref, c):
    """for 06, not scored: after a forward call, attention.attention_weights holds every head's weights at once, (batch*heads, queries, keys)"""
    m = build(student, c)
    sd = weights(m, ref, c)
    q, k, v = make_inputs(c)
    run(m, c, q, k, v, c["lens"])
    what = (_("{module}: attention.attention_weights after a forward call (not scored in 04; 06's "
              "Transformer reads it, and while yours fails this, 06 grades with the course's MultiHeadAttention too and keeps the better score)").format(module=describe(c)))
    held = T.attribute(T.attribute(m, "attention", describe(c)), "attention_weights", describe(c) + ".attention")
    T.assert_shape(held, (c["B"] * c["h"], c["Q"], c["K"]), what)
    T.assert_close(held, head_weights(sd, c, q, k), what=what, inputs={"valid_lens": c["lens"]})
