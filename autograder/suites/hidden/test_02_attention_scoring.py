"""Hidden tests for assignment 02: masking, masked softmax, additive and scaled dot-product attention.

Each component is compared once with the reference (reference weights copied in) and otherwise
checked through properties (the additive attention with the course's weights copied in as well,
`_student_only`, so that it is checked in the one state the comparisons check it in): normalization, exact zeros past the valid length, invariances
(junk in masked positions, padding, shifts, batch items), gradients, and where dropout acts.
Each is also compared with the reference on a few fixed problems at realistic sizes.
Valid lengths are always >= 1 (rows with valid length 0 are outside the contract).

One check, one score: the comparisons with the reference score each form of valid_lens (None, (B,),
(B, Q)) separately, and a module's output and its stored attention_weights are separate parts
(`part`), so that a crash on one form or weights never stored cost only their own share. The
additive attention's parameter names are checked once, by the public suite's
test_additive_contract_names (students see it in their self-check).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pytest
import torch
import torch.nn.functional as F
from hypothesis import example, given, settings, strategies as st

from autograder.selfcheck import strategies as S
from autograder.selfcheck import testing as T
from autograder.selfcheck.hints import MASK_HINT
from autograder.selfcheck.i18n import N_, _

LENS_HINT = N_("a 1-D valid_lens holds one length per batch item, shared by all its queries (repeat_interleave); "
               "a 2-D valid_lens (B, Q) holds one length per query")
ADD_HINT = ("scores = w_v(tanh(W_q q + W_k k)) with W_q on the queries and W_k on the keys, broadcast to "
            "(B, Q, K, num_hiddens) and squeezed on the last axis only; weights = masked_softmax(scores, valid_lens); "
            "output = weights @ values; valid_lens as in masked_softmax (1-D: one length per batch item, "
            "2-D: one per query)")
DOT_HINT = ("scores = Q K^T / sqrt(d) with d = queries.shape[-1] (the query/key feature size, not the number of keys "
            "and not the value size) and K^T = keys.transpose(1, 2) (not a reshape); "
            "output = masked_softmax(scores, valid_lens) @ values; valid_lens as in masked_softmax (1-D: one "
            "length per batch item, 2-D: one per query)")
DROPOUT_HINT = N_("store self.attention_weights = masked_softmax(scores, valid_lens) (before dropout), then return "
                  "bmm(self.dropout(self.attention_weights), values): dropout acts on the attention weights, "
                  "not on the scores, the values or the output")


# ============================================================ drawing problems

@dataclass
class Case:
    """One drawn attention problem: sizes, valid lengths (None, (B,) or (B, Q)), dtype, value seed."""
    B: int
    Q: int
    K: int
    dq: int
    dk: int
    dv: int
    lens: Optional[torch.Tensor]
    dtype: torch.dtype
    seed: int

    def __repr__(self) -> str:
        lens = None if self.lens is None else self.lens.tolist()
        return (f"Case(B={self.B}, Q={self.Q}, K={self.K}, query_size={self.dq}, key_size={self.dk}, "
                f"value_size={self.dv}, valid_lens={lens}, dtype={str(self.dtype).replace('torch.', '')}, "
                f"seed={self.seed})")

    def gen(self) -> torch.Generator:
        return torch.Generator().manual_seed(self.seed)

    def data(self):
        """queries (B, Q, dq), keys (B, K, dk), values (B, K, dv)."""
        g = self.gen()
        return S.randn((self.B, self.Q, self.dq), g, self.dtype), S.randn((self.B, self.K, self.dk), g, self.dtype), \
            S.randn((self.B, self.K, self.dv), g, self.dtype)

    def lens2d(self) -> torch.Tensor:
        """Valid lengths per query (B, Q), whatever the form of `lens`."""
        if self.lens is None:
            return torch.full((self.B, self.Q), self.K)
        if self.lens.dim() == 1:
            return self.lens[:, None].expand(self.B, self.Q)
        return self.lens

    def valid(self) -> torch.Tensor:
        """Boolean (B, Q, K): which key positions each query may attend to."""
        return torch.arange(self.K)[None, None, :] < self.lens2d()[:, :, None]


@st.composite
def cases(draw, kinds=("none", "1d", "2d"), same_qk=False, min_B=1, min_K=1, dtypes=(torch.float32, torch.float64),
          wide=False):
    """Small cases (up to 5 keys: a failure's example stays readable); `wide`: or 6 to 64 keys, as many as the realistic
    sizes have, so that code which behaves right only on few keys fails a comparison of its own (helper-70's attack)."""
    B = draw(st.integers(min_B, 3))
    Q = draw(st.integers(1, 4))
    K = draw(st.integers(min_K, 5) | st.integers(6, 64)) if wide else draw(st.integers(min_K, 5))
    lens = S.valid_lens(draw, draw(st.sampled_from(kinds)), B, K, queries=Q)
    dq = draw(st.integers(1, 5))
    dk = dq if same_qk else draw(st.integers(1, 5))
    dv = draw(st.integers(1, 5))
    dtype = draw(st.sampled_from(dtypes))
    return Case(B, Q, K, dq, dk, dv, lens, dtype, draw(S.SEEDS))


def masked_cases(**kw):
    return cases(kinds=("1d", "2d"), **kw)


#: The forms of valid_lens, each scored separately (issue #23: code that crashes on one form keeps the others).
#: A test run per form draws about as many examples in all as it drew over every form before (max_examples
#: per form = that number / the forms), so that scoring apart costs a grading no more calls.
LENS_FORMS = ("none", "1d", "2d")
#: ... those that mask something.
MASKED_FORMS = ("1d", "2d")
#: The parts of an attention module's checks scored separately: its output and its stored weights.
PARTS = ("output", "attention_weights")


@st.composite
def dropout_cases(draw, same_qk=False):
    """Enough valid positions (at least 18) that dropout with p = 0.5 surely drops one of them."""
    B, Q, K = draw(st.integers(2, 3)), draw(st.integers(3, 4)), draw(st.integers(4, 5))
    lens = S.valid_lens(draw, "2d", B, K, queries=Q, low=K - 1)
    dq = draw(st.integers(1, 4))
    dk = dq if same_qk else draw(st.integers(1, 4))
    return Case(B, Q, K, dq, dk, K + 1, lens, draw(S.FLOAT_DTYPES), draw(S.SEEDS))


def realistic_case(Q: int, K: int, dq: int, dk: int, dv: int, kind: str, seed: int, B: int = 8) -> Case:
    """A fixed float32 problem at a realistic size, valid lengths ("none", "1d" or "2d") drawn from `seed`."""
    g = torch.Generator().manual_seed(seed + 1000)
    lens = None if kind == "none" else torch.randint(1, K + 1, (B,) if kind == "1d" else (B, Q), generator=g)
    return Case(B, Q, K, dq, dk, dv, lens, torch.float32, seed)


#: Fixed problems at realistic sizes: batch 8, Q != K, query, key and value sizes apart, each form of valid_lens.
REALISTIC = [realistic_case(40, 64, 32, 48, 56, "none", 201), realistic_case(64, 48, 56, 40, 32, "1d", 202),
             realistic_case(32, 56, 48, 64, 40, "2d", 203)]
#: ... with the query size equal to the key size (dot-product attention).
REALISTIC_SAME_QK = [realistic_case(40, 64, 48, 48, 56, "none", 211),
                     realistic_case(64, 48, 32, 32, 40, "1d", 212),
                     realistic_case(32, 56, 64, 64, 48, "2d", 213)]


def realistic_id(case: Case) -> str:
    """A short test id (a case's repr lists every valid length)."""
    lens = "none" if case.lens is None else f"{case.lens.dim()}d"
    return f"B={case.B}-Q={case.Q}-K={case.K}-sizes={case.dq},{case.dk},{case.dv}-valid_lens={lens}"


# ============================================================ calling the student's code

# The name the tests were written with. A derandomized hypothesis test draws its examples from a seed
# hashed from its own source: renaming a call inside a test's body would change the examples it sees.
_clone = T.cloned


def _weights(model, shape, what="model.attention_weights"):
    w = T.present(T.attribute(model, "attention_weights", what))  # a missing one is said to be missing
    T.check(isinstance(w, torch.Tensor), _("{what}: forward must store the attention weights in "
                                           "self.attention_weights, found {type_name}").format(what=what, type_name=T.type_name(w)))
    w = T.as_plain(w)
    T.assert_shape(w, shape, f"{what} (batch, queries, keys)")
    return w


def _inputs(case, q=None, k=None, v=None, **extra):
    out = {"case": case}
    if q is not None:
        out.update(queries=q, keys=k, values=v)
    out.update(extra)
    return out


def _check_distribution(w, case, what, hint):
    """Weights are non-negative, exactly 0 past the valid length, and sum to 1 over the keys."""
    valid = case.valid()
    bad = (~valid & (w != 0)).nonzero()
    if len(bad):
        b, q, k = (int(i) for i in bad[0])
        raise AssertionError(_("{what}: position [{b}, {q}, {k}] is past the valid length {valid_len} "
                               "but got weight {weight:.4g} instead of exactly 0\n  input {case!r}\n"
                               "  hint: {hint}").format(what=what, b=b, q=q, k=k, valid_len=int(case.lens2d()[b, q]), weight=float(w[b, q, k]), case=case, hint=_(hint)))
    T.check(bool((w >= 0).all()), _("{what}: weights must be non-negative\n  input {case!r}").format(what=what, case=case))
    T.assert_close(w.sum(-1), torch.ones(case.B, case.Q, dtype=case.dtype),
                   what=_("{what}: row sums (each query's weights must sum to 1 over the keys)").format(what=what),
                   inputs={"case": case}, hint=hint)


# ============================================================ sequence_mask

@pytest.mark.component("sequence_mask")
@settings(max_examples=15)
@given(N=st.integers(1, 4), L=st.integers(1, 6), data=st.data(),
       value=st.sampled_from([0, -1.5, 7.0, -1e6]), dtype=st.sampled_from([torch.float32, torch.float64]))
def test_sequence_mask_property(student, N, L, data, value, dtype):
    """entries at index >= valid_len[i] of row i become value; all others are kept (any N, L, value, dtype)"""
    lens = S.valid_lens(data.draw, "1d", N, L, low=0, label="valid_len")
    X = (torch.arange(N * L, dtype=torch.float64).reshape(N, L) + 1).to(dtype)
    out = T.call("sequence_mask(X, valid_len, value)", student.sequence_mask, X, lens, value, returns=torch.Tensor)
    keep = torch.arange(L)[None, :] < lens[:, None]
    expected = torch.where(keep, X, torch.tensor(value, dtype=dtype))
    T.assert_close(out, expected, what="sequence_mask(X, valid_len, value)",
                   inputs={"X": X, "valid_len": lens, "value": value},
                   hint="row i keeps the entries at index < valid_len[i] (the first valid_len[i] of them), "
                        "the rest become value; the result keeps X's shape and dtype")


@pytest.mark.component("sequence_mask")
@pytest.mark.kind("reference")  # the definition's positions, computed by the test
@settings(max_examples=10)
@given(N=st.integers(1, 4), L=st.integers(1, 6), data=st.data())
def test_sequence_mask_changes_exactly_the_positions_past_valid_len(student, N, L, data):
    """exactly the entries at index >= valid_len[i] of row i change, whatever they become (the fill has its own tests)"""
    lens = S.valid_lens(data.draw, "1d", N, L, low=0, label="valid_len")
    X = torch.arange(N * L, dtype=torch.float32).reshape(N, L) + 0.5  # no entry is 0 or a round fill value
    out = T.as_plain(T.call("sequence_mask(X, valid_len)", student.sequence_mask, X.clone(), lens,
                            returns=torch.Tensor))
    T.assert_shape(out, (N, L), "sequence_mask(X, valid_len)")
    masked = torch.arange(L)[None, :] >= lens[:, None]  # (N, L): the positions the contract replaces
    T.assert_close((out != X).to(torch.float32), masked.to(torch.float32),
                   what=_("which entries sequence_mask(X, valid_len) changes (1: changed, 0: kept)"),
                   inputs={"X": X, "valid_len": lens},
                   hint="row i keeps its first valid_len[i] entries (index < valid_len[i]) and replaces the rest: "
                        "mask = torch.arange(L)[None, :] < valid_len[:, None]")


@pytest.mark.component("sequence_mask")
@settings(max_examples=10)
@given(N=st.integers(1, 4), L=st.integers(1, 6), data=st.data(), value=st.sampled_from([None, -1e6]))
def test_sequence_mask_matches_reference(student, ref, N, L, data, value):
    """matches the reference on random rows, with the default value 0 and with the value masked_softmax passes"""
    lens = S.valid_lens(data.draw, "1d", N, L, low=0, label="valid_len")
    X = torch.randn(N, L, generator=torch.Generator().manual_seed(N * 7 + L))
    given = () if value is None else (value,)
    out = T.call("sequence_mask(X, valid_len)" if value is None else "sequence_mask(X, valid_len, value)",
                 student.sequence_mask, X, lens, *given, returns=torch.Tensor)
    T.assert_close(out, ref.sequence_mask(X.clone(), lens.clone(), *given),
                   what="sequence_mask(X, valid_len)" if value is None else "sequence_mask(X, valid_len, value)",
                   inputs={"X": X, "valid_len": lens} if value is None else {"X": X, "valid_len": lens, "value": value},
                   hint="masked entries become value (0 when no value is given)")


#: Fixed (rows, row length, seed, value; None: the default) at realistic sizes: 8 sequences; 8 x 40 queries of 64
#: keys, as masked_softmax flattens them and with the value it passes; 48 rows of 56.
SM_REALISTIC = [(8, 64, 221, None), (320, 40, 222, -1e6), (48, 56, 223, None)]


@pytest.mark.component("sequence_mask")
@pytest.mark.weight(1 / len(SM_REALISTIC))  # the cases share one test's weight
@pytest.mark.parametrize("N,L,seed,value", SM_REALISTIC, ids=[f"N={n}-L={m}" for n, m, _, _ in SM_REALISTIC])
def test_sequence_mask_at_realistic_size(student, ref, N, L, seed, value):
    """matches the reference at realistic sizes (8 to 320 rows of 40-64 entries, lengths 0 to L; value 0 or -1e6)"""
    g = torch.Generator().manual_seed(seed)
    lens = torch.randint(0, L + 1, (N,), generator=g)
    lens[:2] = torch.tensor([0, L])  # both ends: a row masked whole and a row kept whole
    X = torch.randn(N, L, generator=g)
    given = () if value is None else (value,)
    what = "sequence_mask(X, valid_len)" if value is None else "sequence_mask(X, valid_len, value)"
    out = T.call(what, student.sequence_mask, X, lens, *given, returns=torch.Tensor)
    T.assert_close(out, ref.sequence_mask(X.clone(), lens.clone(), *given), what=what,
                   inputs={"X": X, "valid_len": lens} if value is None else {"X": X, "valid_len": lens, "value": value},
                   hint="masked entries become value (0 when no value is given)")


# ============================================================ masked_softmax

def _scores(case, grid=False):
    g = case.gen()
    X = torch.randn(case.B, case.Q, case.K, generator=g, dtype=torch.float64) * 2
    if grid:  # multiples of 1/8: adding integers is exact in float32 and float64
        X = torch.round(X * 8) / 8
    return X.to(case.dtype)


def _ms(fn, X, lens, hint=None):
    return T.call("masked_softmax(X, valid_lens)", fn, X, lens, hint=hint, returns=torch.Tensor)


@pytest.mark.component("masked_softmax")
@pytest.mark.weight(2 / len(LENS_FORMS))  # the forms share one test's weight
@pytest.mark.parametrize("form", LENS_FORMS)
@settings(max_examples=7)
@given(data=st.data())
def test_ms_matches_reference(student, ref, form, data):
    """matches the reference for valid_lens None, (B,) and (B, Q), in float32 and float64, on 1 to 64 keys"""
    case = data.draw(cases(kinds=(form,), wide=True), label="case")
    X = _scores(case)
    out = _ms(student.masked_softmax, X, case.lens, hint=MASK_HINT)
    T.assert_close(out, ref.masked_softmax(X.clone(), _clone(case.lens)), what="masked_softmax(X, valid_lens)",
                   inputs={"case": case, "X": X},
                   hint=MASK_HINT + "; " + LENS_HINT + "; the output keeps X's dtype")


@pytest.mark.component("masked_softmax")
@pytest.mark.kind("dependence")
@settings(max_examples=5)
@given(case=cases())
@example(case=REALISTIC[2])  # and at a realistic size: code right only on small inputs shows
def test_ms_depends_on_its_inputs_as_the_course_does(student, ref, case):
    """each row depends on its scores at valid positions, and on no other score, as the course's does"""
    X = _scores(case)
    b, lens = case.B - 1, case.lens2d()
    changes = []
    i = case.seed % case.Q  # a query drawn from the seed, its first key (valid) and its last key
    for q, k in ((i, 0), (i, case.K - 1)):
        label = _("X[{b}, {q}, {k}] changes")
        moved = X.clone()
        moved[b, q, k] += 3.0
        valid = "" if k < int(lens[b, q]) else " " + _("(past the valid length)")
        changes.append((label.format(b=b, q=q, k=k) + valid, [moved, _clone(case.lens)]))
    T.assert_depends_like("masked_softmax(X, valid_lens)", student.masked_softmax, ref.masked_softmax,
                          [X, _clone(case.lens)], changes)


@pytest.mark.component("masked_softmax")
@pytest.mark.weight(1 / len(MASKED_FORMS))  # the forms share one test's weight
@pytest.mark.parametrize("form", MASKED_FORMS)
@settings(max_examples=5)
@given(data=st.data())
def test_ms_distribution(student, form, data):
    """every row sums to 1 and positions at index >= valid length get exactly 0"""
    case = data.draw(cases(kinds=(form,)), label="case")
    X = _scores(case)
    out = _ms(student.masked_softmax, X, case.lens, hint=MASK_HINT)
    T.assert_shape(out, (case.B, case.Q, case.K), "masked_softmax(X, valid_lens)")
    _check_distribution(out, case, "masked_softmax(X, valid_lens)", _(MASK_HINT) + _("; ") + _(LENS_HINT))
    T.check(bool((out[case.valid()] > 0).all()),
            _("masked_softmax: a position before the valid length got weight 0\n  input {case!r}\n  hint: {lens_hint}").format(case=case, lens_hint=_(LENS_HINT)))


@pytest.mark.component("masked_softmax")
@pytest.mark.weight(1 / len(LENS_FORMS))  # the forms share one test's weight
@pytest.mark.parametrize("form", LENS_FORMS)
@settings(max_examples=4)
@given(data=st.data(), shift=st.sampled_from([-1000.0, -200.0, 100.0, 1000.0]))
def test_ms_shift(student, form, data, shift):
    """adding the same constant to all scores of a row changes nothing (a numerically stable softmax)"""
    case = data.draw(cases(kinds=(form,)), label="case")
    X = _scores(case, grid=True)
    g = torch.Generator().manual_seed(case.seed + 1)
    c = (torch.randint(0, 2, (case.B, case.Q, 1), generator=g) * shift).to(case.dtype)
    base = _ms(student.masked_softmax, X, case.lens)
    shifted = _ms(student.masked_softmax, X + c, case.lens)
    # Loose tolerance: this checks for overflow/underflow (inf, NaN, all-zero rows); a correct softmax
    # computed as exp(x - logsumexp(x)) loses about |c| * eps of precision.
    tol = 1e-3 if case.dtype == torch.float32 else 1e-9
    T.assert_close(shifted, base, what=_("masked_softmax(X + c, valid_lens), c = 0 or {shift} per row").format(shift=shift),
                   inputs={"case": case, "X": X}, rtol=tol, atol=tol, sides=(_("shifted"), _("not shifted")),
                   hint="softmax(x + c) = softmax(x): use torch.softmax, or subtract the row maximum before exp, "
                        "so that large scores do not overflow to inf (and small ones do not all underflow to 0)")


@pytest.mark.component("masked_softmax")
@pytest.mark.weight(1 / len(MASKED_FORMS))  # the forms share one test's weight
@pytest.mark.parametrize("form", MASKED_FORMS)
@settings(max_examples=5)
@given(data=st.data())
def test_ms_junk_in_masked_positions(student, form, data):
    """values written into masked positions (even huge ones) change nothing"""
    case = data.draw(cases(kinds=(form,)), label="case")
    X = _scores(case)
    g = torch.Generator().manual_seed(case.seed + 2)
    junk = ((torch.rand(X.shape, generator=g, dtype=torch.float64) * 950 + 50)
            * (torch.randint(0, 2, X.shape, generator=g) * 2 - 1)).to(case.dtype)
    X_junk = torch.where(case.valid(), X, junk)
    base = _ms(student.masked_softmax, X, case.lens)
    out = _ms(student.masked_softmax, X_junk, case.lens)
    T.assert_close(out, base, what=_("masked_softmax with values between -1000 and 1000 written into masked positions"),
                   inputs={"case": case, "X": X, "X with junk": X_junk}, sides=(_("with junk"), _("without")),
                   hint="masked scores must be replaced (not scaled or renormalized away after a softmax over all "
                        "positions), so that whatever they held cannot matter")


@pytest.mark.component("masked_softmax")
@settings(max_examples=8)
@given(case=cases(kinds=("1d",)))
def test_ms_1d_equals_2d(student, case):
    """a 1-D valid_lens gives the same result as its (B, Q) broadcast"""
    X = _scores(case)
    out1 = _ms(student.masked_softmax, X, case.lens, hint=LENS_HINT)
    out2 = _ms(student.masked_softmax, X, case.lens2d().contiguous(), hint=LENS_HINT)
    T.assert_close(out1, out2, what=_("masked_softmax(X, lens) against masked_softmax(X, lens[:, None].expand(B, Q))"),
                   inputs={"case": case, "X": X}, hint=LENS_HINT, sides=(_("lens"), _("lens expanded to (B, Q)")))


@pytest.mark.component("masked_softmax")
@pytest.mark.weight(1 / len(MASKED_FORMS))  # the forms of the full lengths share one test's weight
@pytest.mark.parametrize("form", MASKED_FORMS)
@settings(max_examples=3)
@given(case=cases(kinds=("none",)))
def test_ms_none_equals_full(student, form, case):
    """valid_lens None gives the same result as every length equal to K"""
    X = _scores(case)
    full = torch.full((case.B, case.Q) if form == "2d" else (case.B,), case.K)
    out_none = _ms(student.masked_softmax, X, None, hint="valid_lens None means no masking: a softmax over the last axis")
    out_full = _ms(student.masked_softmax, X, full, hint=LENS_HINT)
    T.assert_close(out_none, out_full, what=_("masked_softmax(X, None) against masked_softmax(X, all lengths K)"),
                   inputs={"case": case, "X": X, "full lengths": full}, sides=(_("None"), _("all lengths K")),
                   hint="valid_lens None means no masking: the softmax over the last axis (dim=-1)")


@pytest.mark.component("masked_softmax")
@pytest.mark.weight(1 / len(MASKED_FORMS))  # the forms share one test's weight
@pytest.mark.parametrize("form", MASKED_FORMS)
@settings(max_examples=3)
@given(data=st.data())
def test_ms_input_unchanged(student, form, data):
    """does not modify the caller's X or valid_lens"""
    case = data.draw(cases(kinds=(form,)), label="case")
    X = _scores(case)
    _result, after = T.call_and_inputs(student.masked_softmax, X.clone(), case.lens.clone())
    T.check(torch.equal(T.as_plain(after[0]), X),
            _("masked_softmax modified the caller's X in place (masked entries of the caller's tensor were "
              "overwritten)\n  input {case!r}\n  hint: X.reshape(...) is a view of the caller's tensor, so "
              "X[mask] = value writes into it; mask a copy (masked_fill, torch.where, or clone first)").format(case=case))
    T.check(torch.equal(T.as_plain(after[1]), case.lens),
            _("masked_softmax modified the caller's valid_lens in place\n  input {case!r}").format(case=case))


@pytest.mark.component("masked_softmax")
@pytest.mark.weight(1 / len(LENS_FORMS))  # the forms share one test's weight
@pytest.mark.parametrize("form", LENS_FORMS)
@settings(max_examples=3)
@given(data=st.data())
def test_ms_gradient(student, ref, form, data):
    """gradients flow back to X and match the reference (float64)"""
    case = data.draw(cases(kinds=(form,), dtypes=(torch.float64,)), label="case")
    X = _scores(case)
    g = torch.randn(X.shape, generator=torch.Generator().manual_seed(case.seed + 3), dtype=torch.float64)
    try:
        (grad,) = T.vjp(student.masked_softmax, [X, _clone(case.lens)], g, wrt=(0,))
    except Exception as exc:
        raise AssertionError(_("back-propagating through masked_softmax raised {type_name}: {exc}\n"
                               "  input {case!r}\n  hint: the gradient cannot flow if X is detached (.detach(), .data, "
                               "torch.tensor(X)); in-place writes into X or a view of it break autograd too: "
                               "use masked_fill / torch.where").format(type_name=T.raised(exc)[0], exc=T.raised(exc)[1], case=case)) from None
    T.check(grad is not None, _("no gradient reaches X through masked_softmax\n  input {case!r}\n"
                                "  hint: do not detach X (.detach(), .data, torch.tensor(X), numpy)").format(case=case))
    (expected,) = T.vjp(ref.masked_softmax, [X, _clone(case.lens)], g, wrt=(0,))
    T.assert_close(grad, expected, what=_("gradient of <masked_softmax(X, valid_lens), G> with respect to X"),
                   inputs={"case": case}, hint="the gradient must flow through the softmax of the kept scores only")


@pytest.mark.component("masked_softmax")
@pytest.mark.weight(1 / len(REALISTIC))  # the cases share one test's weight
@pytest.mark.parametrize("case", REALISTIC, ids=realistic_id)
def test_ms_at_realistic_size(student, ref, case):
    """matches the reference at realistic sizes (batch 8, 32-64 queries and keys; valid_lens None, (B,) and (B, Q))"""
    X = _scores(case)
    out = _ms(student.masked_softmax, X, case.lens, hint=MASK_HINT)
    T.assert_close(out, ref.masked_softmax(X.clone(), _clone(case.lens)), what="masked_softmax(X, valid_lens)",
                   inputs={"case": case, "X": X},
                   hint=MASK_HINT + "; " + LENS_HINT + "; the output keeps X's dtype")


# ============================================================ attention modules: shared checks

def _build(student, ref, name, case, dropout=0.0, mode="eval"):
    """The student's module with the reference's weights, and the reference, both in eval mode (or both in
    train mode: `mode`; lazy layers get their shapes from one forward call on the case's inputs first)."""
    if name == "AdditiveAttention":
        args = (case.dk, case.dq, 6, dropout)
    else:
        args = (dropout,)
    model = getattr(student, name)(*args)
    reference = getattr(ref, name)(*args)
    if case.dtype == torch.float64:
        model.double()
        reference.double()
    model.train(mode == "train")
    reference.train(mode == "train")
    if name == "AdditiveAttention":
        T.with_lazy_parameters(lambda: T.copy_weights(model, reference), model, *case.data(), _clone(case.lens))
    return model, reference


def _student_only(student, ref, name, case, dropout=0.0):
    """The student's module for a property test, in eval mode, in the state the comparisons run it in: an
    AdditiveAttention holds the course's weights, copied in by `_build` (pass `ref`), so that code cannot
    behave one way with its own initial weights and another once the course's are loaded; where they do not
    bind to it (T.copy_weights fails: the comparisons fail too, and the gate pays the property tests in
    proportion to them), it keeps its own. DotProductAttention has no weights (`ref` None).

    Seeded per example (weights, dropout masks) so that hypothesis replays an example exactly;
    DotProductAttention is seeded only when dropout is on.
    """
    if name == "AdditiveAttention" or dropout:
        T.seed(student, case.seed)
    if ref is not None:
        try:
            return _build(student, ref, name, case, dropout)[0]
        except Exception:  # no binding; a FailFast (a limit, a stub) is no Exception and ends the test
            T.seed(student, case.seed)
    model = getattr(student, name)(*((case.dk, case.dq, 6, dropout) if name == "AdditiveAttention" else (dropout,)))
    if case.dtype == torch.float64:
        model.double()
    model.eval()
    return model


def _attend(model, name, q, k, v, lens):
    return T.call(f"{name}.forward(queries, keys, values, valid_lens)", model, q, k, v, lens,
                  hint=ADD_HINT if name == "AdditiveAttention" else DOT_HINT, returns=torch.Tensor)


def _hint(name):
    return ADD_HINT if name == "AdditiveAttention" else DOT_HINT


def check_matches_reference(student, ref, name, case, part, mode="eval"):
    """The module with the reference's weights against the reference, both in `mode` with dropout 0 (in train
    mode too, then, the same maths: code that computes otherwise while training shows): its output or its
    stored weights (both parts check one call: T.shared)."""
    q, k, v = case.data()

    def run():
        model, reference = _build(student, ref, name, case, mode=mode)
        out = _attend(model, name, q, k, v, case.lens)
        weights = T.Snapshot(lambda: _weights(model, (case.B, case.Q, case.K)))
        expected = reference(q.clone(), k.clone(), v.clone(), _clone(case.lens)).detach()
        return weights, out, expected, reference.attention_weights.detach()

    weights, out, expected, ref_weights = T.shared(student, run, name, case, mode)
    inputs = _inputs(case, q, k, v, **({"mode": _("train, dropout 0")} if mode == "train" else {}))
    if part == "attention_weights":
        T.assert_close(weights.get(), ref_weights,
                       what="model.attention_weights", inputs=inputs, hint=_hint(name))
    else:
        T.assert_close(out, expected, what=_("output"), inputs=inputs, hint=_hint(name))


def check_convex(student, ref, name, case, part):
    """The stored weights are a distribution over the valid keys that gives the output, or (`part` output) the
    output lies within the range of the valid values. Both parts check one call (T.shared)."""
    q, k, v = case.data()

    def run():
        model = _student_only(student, ref, name, case)
        out = _attend(model, name, q, k, v, case.lens)
        return T.Snapshot(lambda: _weights(model, (case.B, case.Q, case.K))), out

    weights, out = T.shared(student, run, name, case)
    T.assert_shape(out, (case.B, case.Q, case.dv), _("output (batch, queries, value size)"))
    if part == "attention_weights":
        w = weights.get()
        _check_distribution(w, case, "model.attention_weights",
                            _("{hint} (pass valid_lens to masked_softmax)").format(hint=_(MASK_HINT)))
        T.assert_close(out, torch.bmm(w, v), what=_("output against attention_weights @ values (eval mode)"),
                       inputs=_inputs(case, q, k, v), hint="the output is the weighted average of the values, "
                                                           "with the stored attention weights")
        return
    valid = case.valid()[..., None]  # (B, Q, K, 1)
    vv = v[:, None, :, :]  # (B, 1, K, dv)
    hi = torch.where(valid, vv, torch.tensor(float("-inf"), dtype=v.dtype)).amax(2)
    lo = torch.where(valid, vv, torch.tensor(float("inf"), dtype=v.dtype)).amin(2)
    eps = 10 * T.tolerance(case.dtype)[1]
    T.check(bool(((out <= hi + eps) & (out >= lo - eps)).all()),
            _("output leaves the range of the valid values (those at index < valid length)\n  input {case!r}\n"
              "  hint: {mask_hint}").format(case=case, mask_hint=_(MASK_HINT)))


def check_padding(student, ref, name, case, extra, part):
    """Junk keys/values past the valid length, and extra padded pairs appended, change neither the output nor
    (`part` attention_weights) the weights of the original keys (both parts check the same calls: T.shared)."""
    q, k, v = case.data()
    g = torch.Generator().manual_seed(case.seed + 5)
    # one length per batch item here (junk keys must be invisible to every query of the item)
    pad = ~(torch.arange(case.K)[None, :] < case.lens2d().max(dim=1).values[:, None])  # (B, K)
    k2 = torch.where(pad[..., None], torch.randn(k.shape, generator=g, dtype=torch.float64).to(k.dtype) * 5, k)
    v2 = torch.where(pad[..., None], torch.randn(v.shape, generator=g, dtype=torch.float64).to(v.dtype) * 100, v)
    k2 = torch.cat([k2, torch.randn(case.B, extra, case.dk, generator=g, dtype=torch.float64).to(k.dtype)], 1)
    v2 = torch.cat([v2, 100 * torch.randn(case.B, extra, case.dv, generator=g, dtype=torch.float64).to(v.dtype)], 1)
    lens = case.lens if case.lens is not None else torch.full((case.B,), case.K)

    def run() -> tuple:
        model = _student_only(student, ref, name, case)
        base = _attend(model, name, q, k, v, case.lens)
        w_base = T.Snapshot(lambda: _weights(model, (case.B, case.Q, case.K)))
        out = _attend(model, name, q, k2, v2, lens)
        return base, w_base, out, T.Snapshot(lambda: _weights(model, (case.B, case.Q, case.K + extra)))

    base, w_base, out, w = T.shared(student, run, case, extra, name)
    hint = "keys and values at index >= valid length must have no effect: " + MASK_HINT
    inputs = _inputs(case, q, k, v, extra_padded_pairs=extra)
    if part == "output":
        T.assert_close(out, base, what=_("output after changing the keys/values past the valid length and appending "
                                         "{extra} padded pairs").format(extra=extra), inputs=inputs, hint=hint)
        return
    w_base = w_base.get()  # read first, as after the first call
    T.assert_close(w.get()[..., :case.K], w_base, what=_("attention weights of the original keys after padding"),
                   inputs=inputs, hint=hint)


def check_identical_keys(student, ref, name, case):
    q, k, v = case.data()
    k = k[:, :1, :].expand(case.B, case.K, case.dk).contiguous()
    model = _student_only(student, ref, name, case)
    out = _attend(model, name, q, k, v, case.lens)
    valid = case.valid().to(v.dtype)  # (B, Q, K)
    expected = torch.bmm(valid / valid.sum(-1, keepdim=True), v)
    T.assert_close(out, expected, what=_("output when all keys of a batch item are identical (the mean of the valid "
                                         "values)"), inputs=_inputs(case, q, k, v),
                   hint="identical keys get identical scores and hence equal weights on the valid positions; " + MASK_HINT)


def check_batch_independent(student, ref, name, case):
    q, k, v = case.data()
    model = _student_only(student, ref, name, case)
    out = _attend(model, name, q, k, v, case.lens)
    for b in range(case.B):
        lens_b = None if case.lens is None else case.lens[b:b + 1]
        out_b = _attend(model, name, q[b:b + 1], k[b:b + 1], v[b:b + 1], lens_b)
        T.assert_close(out_b, out[b:b + 1], what=_("batch item {b} computed alone against its row of the batched output").format(b=b),
                       inputs=_inputs(case, q, k, v),
                       hint="batch items must not interact, and a batch of size 1 must work too (squeeze only the "
                            "last axis of the scores; use valid_lens of item b for item b)")


def _r4(t):
    return (torch.round(t.to(torch.float64) * 1e4) / 1e4).tolist()


def _dropout_case(case):
    """values = [identity | ones]: output[..., :K] are the dropped weights, output[..., K] their sum."""
    q, k, _ = case.data()
    eye = torch.eye(case.K, dtype=case.dtype).expand(case.B, case.K, case.K)
    v = torch.cat([eye, torch.ones(case.B, case.K, 1, dtype=case.dtype)], dim=2)
    return q, k, v


def check_dropout_stored_weights(student, ref, name, case):
    q, k, v = case.data()
    model = _student_only(student, ref, name, case, dropout=0.5)
    model.eval()
    _attend(model, name, q, k, v, case.lens)
    w_eval = _weights(model, (case.B, case.Q, case.K))
    model.train()
    _attend(model, name, q, k, v, case.lens)
    w_train = _weights(model, (case.B, case.Q, case.K), _("model.attention_weights in train mode"))
    model.eval()
    inputs = _inputs(case, q, k, v, dropout=0.5)
    T.assert_close(w_train.sum(-1), torch.ones(case.B, case.Q, dtype=case.dtype),
                   what=_("row sums of the stored attention_weights in train mode with dropout 0.5 (must be the "
                          "weights before dropout)"), inputs=inputs, hint=DROPOUT_HINT)
    T.assert_close(w_train, w_eval, what=_("stored attention_weights in train mode against eval mode (the weights "
                                           "before dropout do not depend on the mode)"), inputs=inputs, hint=DROPOUT_HINT)


def check_dropout_on_weights(student, ref, name, case):
    q, k, v = _dropout_case(case)
    model = _student_only(student, ref, name, case, dropout=0.5)
    model.train()
    out = _attend(model, name, q, k, v, case.lens)
    w = _weights(model, (case.B, case.Q, case.K))
    model.eval()
    T.assert_shape(out, (case.B, case.Q, case.K + 1), _("output for values of size K + 1"))
    inputs = _inputs(case, q, k, v, dropout=0.5)
    dropped, total = out[..., :case.K], out[..., case.K]
    rtol, atol = T.tolerance(case.dtype)
    kept = torch.isclose(dropped, 2 * w, rtol=rtol, atol=atol)
    zeroed = dropped.abs() <= atol
    T.check(bool((kept | zeroed).all()),
            _("in train mode with dropout 0.5 and values = [identity | ones], output[..., j] must be 0 or "
              "2 * attention_weights[..., j] (weight j dropped, or kept and rescaled by 1/(1 - p))\n"
              "  input {case!r}\n  got output[..., :K] = {output}\n  attention_weights = {weights}\n"
              "  hint: {dropout_hint}").format(case=case, output=_r4(dropped), weights=_r4(w), dropout_hint=_(DROPOUT_HINT)))
    T.assert_close(total, dropped.sum(-1), what=_("output[..., K] (the values' column of ones) against the sum of "
                                                  "output[..., :K]: one dropout mask on the weights must serve all "
                                                  "value columns"), inputs=inputs, hint=DROPOUT_HINT)
    T.check(bool(((w > 1e-3) & zeroed).any()),
            _("with dropout 0.5 in train mode no attention weight was dropped (dropout is not active in training)\n"
              "  input {case!r}\n  hint: {dropout_hint}; use nn.Dropout (it follows model.train()/eval())").format(case=case, dropout_hint=_(DROPOUT_HINT)))


def check_eval_no_dropout(student, ref, name, case):
    q, k, v = case.data()
    model = _student_only(student, ref, name, case, dropout=0.5)
    model.eval()
    out1 = _attend(model, name, q, k, v, case.lens)
    w = _weights(model, (case.B, case.Q, case.K))
    out2 = _attend(model, name, q, k, v, case.lens)
    inputs = _inputs(case, q, k, v, dropout=0.5)
    hint = ("in eval mode dropout must be off: use nn.Dropout (or F.dropout(x, p, training=self.training)); "
            "F.dropout(x, p) alone drops in eval mode too")
    T.assert_close(out1, torch.bmm(w, v), what=_("output in eval mode with dropout 0.5 against attention_weights @ values"),
                   inputs=inputs, hint=hint)
    T.assert_close(out2, out1, what=_("two eval-mode calls on the same inputs"), inputs=inputs, hint=hint)


def check_dependence(student, ref, name, case):
    """Which outputs move when one query, one valid key, one valid value (of the last batch item, at positions drawn
    from the case's seed, so that no index is special), the keys and values past every valid length, or the
    weights change: those the course's moves, and only those (T.assert_depends_like), in the case's dtype."""
    model, reference = _build(student, ref, name, case)
    q, k, v = case.data()
    b, lens = case.B - 1, case.lens2d()
    i, j = case.seed % case.Q, (case.seed // 7) % max(1, int(lens[b].min()))
    new, args = case.gen().manual_seed(case.seed + 11), [q, k, v, _clone(case.lens)]

    def changed(which, index):
        return S.changed_at(args, which, index, new)

    changes = [(_("query [{b}, {i}] changes").format(b=b, i=i), changed([0], (b, i))),
               (_("key [{b}, {j}] changes").format(b=b, j=j), changed([1], (b, j))),
               (_("value [{b}, {j}] changes").format(b=b, j=j), changed([2], (b, j)))]
    last = int(lens[b].max())
    if last < case.K:  # positions no query of item b may attend to
        changes.append((_("keys and values [{b}, {first}:] (past every valid length) change").format(b=b, first=last),
                        changed([1, 2], (b, slice(last, None)))))
    if name == "AdditiveAttention":  # outputs that ignore the module's weights ignore an input too
        changes.append((_("the weights change"), changed([], ()), *_build(student, ref, name, case)))
    T.assert_depends_like(_("{name}.forward on {case!r}").format(name=name, case=case), model, reference, args,
                          changes)


def check_gradient(student, ref, name, case):
    q, k, v = case.data()
    model, reference = _build(student, ref, name, case)
    g = torch.randn(case.B, case.Q, case.dv, generator=torch.Generator().manual_seed(case.seed + 7),
                    dtype=torch.float64)
    args = [q, k, v, _clone(case.lens)]
    try:
        grads = T.vjp(model, args, g, wrt=(0, 1, 2))
    except Exception as exc:
        raise AssertionError(_("back-propagating through {name} raised {type_name}: {exc}\n"
                               "  input {case!r}").format(name=name, type_name=T.raised(exc)[0], exc=T.raised(exc)[1], case=case)) from None
    expected = T.vjp(reference, [q, k, v, _clone(case.lens)], g, wrt=(0, 1, 2))
    for label, got, exp in zip((_("queries"), _("keys"), _("values")), grads, expected):
        if got is None:
            got = torch.zeros_like(exp)
        T.assert_close(got, exp, what=_("gradient of the output with respect to the {label}").format(label=label),
                       inputs=_inputs(case), hint="gradients must flow through the attention weights: do not "
                                                  "detach them (.detach(), .data) before multiplying by the values")


# ============================================================ AdditiveAttention

ADD = "AdditiveAttention"


@pytest.mark.component(ADD)
@pytest.mark.weight(2 / (len(LENS_FORMS) * len(PARTS)))  # the forms and parts share one test's weight
@pytest.mark.parametrize("part", PARTS)
@pytest.mark.parametrize("form", LENS_FORMS)
@settings(max_examples=5)
@given(data=st.data())
def test_add_matches_reference(student, ref, form, part, data):
    """output and attention_weights match the reference with the same weights (rectangular shapes, float32/64)"""
    check_matches_reference(student, ref, ADD, data.draw(cases(kinds=(form,)), label="case"), part)


@pytest.mark.component(ADD)
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@pytest.mark.weight(1 / len(PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", PARTS)
@settings(max_examples=5)
@given(case=cases())
def test_add_convex(student, ref, part, case):
    """weights are a distribution over the valid keys, and the output is their average of the values"""
    check_convex(student, ref, ADD, case, part)


@pytest.mark.component(ADD)
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@pytest.mark.weight(1 / len(PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", PARTS)
@settings(max_examples=5)
@given(case=cases(kinds=("none", "1d")), extra=st.integers(1, 2))
def test_add_padding(student, ref, part, case, extra):
    """keys and values past the valid length (changed or appended) change nothing"""
    check_padding(student, ref, ADD, case, extra, part)


@pytest.mark.component(ADD)
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@settings(max_examples=8)
@given(case=cases())
def test_add_identical_keys(student, ref, case):
    """identical keys give the mean of the valid values"""
    check_identical_keys(student, ref, ADD, case)


@pytest.mark.component(ADD)
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@settings(max_examples=8)
@given(case=cases(min_B=2))
def test_add_batch_independent(student, ref, case):
    """batch items are independent: each computed alone gives the same output"""
    check_batch_independent(student, ref, ADD, case)


@pytest.mark.component(ADD)
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@settings(max_examples=4)
@given(case=masked_cases(min_K=2))
def test_add_dropout_stored_weights(student, ref, case):
    """with dropout in train mode, the stored attention_weights are the weights before dropout"""
    check_dropout_stored_weights(student, ref, ADD, case)


@pytest.mark.component(ADD)
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@settings(max_examples=4)
@given(case=dropout_cases())
def test_add_dropout_on_weights(student, ref, case):
    """in train mode dropout acts on the attention weights (one mask for all value columns)"""
    check_dropout_on_weights(student, ref, ADD, case)


@pytest.mark.component(ADD)
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@settings(max_examples=4)
@given(case=cases())
def test_add_eval_no_dropout(student, ref, case):
    """in eval mode dropout is off: output = attention_weights @ values, the same on every call"""
    check_eval_no_dropout(student, ref, ADD, case)


@pytest.mark.component(ADD)
@settings(max_examples=6)
@given(case=cases(dtypes=(torch.float64,)))
def test_add_gradient(student, ref, case):
    """gradients with respect to queries, keys and values match the reference (float64)"""
    check_gradient(student, ref, ADD, case)


@pytest.mark.component(ADD)
@pytest.mark.kind("dependence")
@settings(max_examples=5)
@given(case=cases())
@example(case=REALISTIC[2])  # and at a realistic size: code right only on small inputs shows
def test_add_depends_on_its_inputs_as_the_course_does(student, ref, case):
    """the output depends on the queries, the valid keys and values, and not on keys and values past the valid lengths, as the course's does"""
    check_dependence(student, ref, ADD, case)


@pytest.mark.component(ADD)
@pytest.mark.weight(1 / len(PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", PARTS)
@settings(max_examples=5)
@given(case=cases())
def test_add_matches_reference_in_train_mode(student, ref, part, case):
    """in train mode with dropout 0, output and attention_weights match the reference with the same weights (training changes nothing else)"""
    check_matches_reference(student, ref, ADD, case, part, mode="train")


@pytest.mark.component(ADD)
@pytest.mark.weight(1 / (len(REALISTIC) * len(PARTS)))  # the cases and parts share one test's weight
@pytest.mark.parametrize("part", PARTS)
@pytest.mark.parametrize("case", REALISTIC, ids=realistic_id)
def test_add_at_realistic_size(student, ref, case, part):
    """output and attention_weights match the reference with the same weights at realistic sizes (batch 8, 32-64 queries and keys, 32-64 features)"""
    check_matches_reference(student, ref, ADD, case, part)


# ============================================================ DotProductAttention

DOT = "DotProductAttention"


@pytest.mark.component(DOT)
@pytest.mark.weight(2 / (len(LENS_FORMS) * len(PARTS)))  # the forms and parts share one test's weight
@pytest.mark.parametrize("part", PARTS)
@pytest.mark.parametrize("form", LENS_FORMS)
@settings(max_examples=5)
@given(data=st.data())
def test_dot_matches_reference(student, ref, form, part, data):
    """output and attention_weights match the reference (rectangular shapes, float32/64)"""
    check_matches_reference(student, ref, DOT, data.draw(cases(kinds=(form,), same_qk=True), label="case"), part)


@pytest.mark.component(DOT)
@settings(max_examples=8)
@given(case=cases(same_qk=True))
def test_dot_matches_sdpa(student, case):
    """output matches torch's scaled_dot_product_attention with the same mask"""
    q, k, v = case.data()
    model = _student_only(student, None, DOT, case)
    out = _attend(model, DOT, q, k, v, case.lens)
    mask = None if case.lens is None else case.valid()
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    rtol, atol = T.tolerance(case.dtype)
    T.assert_close(out, expected, what=_("output against torch.nn.functional.scaled_dot_product_attention"),
                   inputs=_inputs(case, q, k, v), rtol=4 * rtol, atol=4 * atol, hint=DOT_HINT)


@pytest.mark.component(DOT)
@pytest.mark.weight(1 / len(PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", PARTS)
@settings(max_examples=5)
@given(case=cases(same_qk=True))
def test_dot_convex(student, part, case):
    """weights are a distribution over the valid keys, and the output is their average of the values"""
    check_convex(student, None, DOT, case, part)


@pytest.mark.component(DOT)
@pytest.mark.weight(1 / len(PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", PARTS)
@settings(max_examples=5)
@given(case=cases(kinds=("none", "1d"), same_qk=True), extra=st.integers(1, 2))
def test_dot_padding(student, part, case, extra):
    """keys and values past the valid length (changed or appended) change nothing"""
    check_padding(student, None, DOT, case, extra, part)


@pytest.mark.component(DOT)
@settings(max_examples=8)
@given(case=cases(same_qk=True))
def test_dot_identical_keys(student, case):
    """identical keys give the mean of the valid values"""
    check_identical_keys(student, None, DOT, case)


@pytest.mark.component(DOT)
@settings(max_examples=8)
@given(case=cases(same_qk=True, min_B=2))
def test_dot_batch_independent(student, case):
    """batch items are independent: each computed alone gives the same output"""
    check_batch_independent(student, None, DOT, case)


@pytest.mark.component(DOT)
@settings(max_examples=4)
@given(case=masked_cases(same_qk=True, min_K=2))
def test_dot_dropout_stored_weights(student, case):
    """with dropout in train mode, the stored attention_weights are the weights before dropout"""
    check_dropout_stored_weights(student, None, DOT, case)


@pytest.mark.component(DOT)
@settings(max_examples=4)
@given(case=dropout_cases(same_qk=True))
def test_dot_dropout_on_weights(student, case):
    """in train mode dropout acts on the attention weights (one mask for all value columns)"""
    check_dropout_on_weights(student, None, DOT, case)


@pytest.mark.component(DOT)
@settings(max_examples=4)
@given(case=cases(same_qk=True))
def test_dot_eval_no_dropout(student, case):
    """in eval mode dropout is off: output = attention_weights @ values, the same on every call"""
    check_eval_no_dropout(student, None, DOT, case)


@pytest.mark.component(DOT)
@settings(max_examples=6)
@given(case=cases(same_qk=True, dtypes=(torch.float64,)))
def test_dot_gradient(student, ref, case):
    """gradients with respect to queries, keys and values match the reference (float64)"""
    check_gradient(student, ref, DOT, case)


@pytest.mark.component(DOT)
@pytest.mark.kind("dependence")
@settings(max_examples=5)
@given(case=cases(same_qk=True))
@example(case=REALISTIC_SAME_QK[2])  # and at a realistic size: code right only on small inputs shows
def test_dot_depends_on_its_inputs_as_the_course_does(student, ref, case):
    """the output depends on the queries, the valid keys and values, and not on keys and values past the valid lengths, as the course's does"""
    check_dependence(student, ref, DOT, case)


@pytest.mark.component(DOT)
@pytest.mark.weight(1 / len(PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", PARTS)
@settings(max_examples=5)
@given(case=cases(same_qk=True))
def test_dot_matches_reference_in_train_mode(student, ref, part, case):
    """in train mode with dropout 0, output and attention_weights match the reference (training changes nothing else)"""
    check_matches_reference(student, ref, DOT, case, part, mode="train")


@pytest.mark.component(DOT)
@pytest.mark.weight(1 / (len(REALISTIC_SAME_QK) * len(PARTS)))  # the cases and parts share one test's weight
@pytest.mark.parametrize("part", PARTS)
@pytest.mark.parametrize("case", REALISTIC_SAME_QK, ids=realistic_id)
def test_dot_at_realistic_size(student, ref, case, part):
    """output and attention_weights match the reference at realistic sizes (batch 8, 32-64 queries and keys, 32-64 features)"""
    check_matches_reference(student, ref, DOT, case, part)
