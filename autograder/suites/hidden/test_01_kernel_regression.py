"""Hidden tests for assignment 01: Nadaraya-Watson kernel regression.

Properties of attention pooling (normalized weights, predictions inside the range of the values,
invariance to reordering the training pairs and to shifting x, the two limits of the kernel
width) plus one comparison with the reference, and a short training run for the learnable width.
Each component is also compared with the reference on a few fixed problems at realistic sizes.

A comparison of predictions and attention weights scores each part separately (`part`), so that
weights never stored cost only the parts about them; the width's name `w` is checked once, by the
public suite's test_nwk_contract_names (students see it in their self-check), and the tests here set
the width through the course's model (T.copy_weights), so they use `ref` to build the model only and
are of kind "property".
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import pytest
import torch
from hypothesis import example, given, settings, strategies as st

from autograder.selfcheck import strategies as S
from autograder.selfcheck import testing as T
from autograder.selfcheck.hints import KERNEL_HINT, NWK_HINT
from autograder.selfcheck.i18n import _


@dataclass
class Case:
    """One drawn problem: sizes, dtype and a seed for the tensor values."""
    n: int
    m: int
    dtype: torch.dtype
    seed: int

    def __repr__(self) -> str:
        return f"Case(n={self.n}, m={self.m}, dtype={str(self.dtype).replace('torch.', '')}, seed={self.seed})"

    def gen(self) -> torch.Generator:
        return torch.Generator().manual_seed(self.seed)


@st.composite
def cases(draw, min_m: int = 1, dtype: Optional[torch.dtype] = None) -> Case:
    n = draw(st.integers(1, 5))
    m = draw(st.integers(min_m, 5))
    m = m + 1 if m >= n else m  # n != m catches a softmax over the wrong axis
    return Case(n, m, dtype or draw(S.FLOAT_DTYPES), draw(S.SEEDS))


def _pair_message(out):
    return _("nadaraya_watson must return a pair (y_hat, attention_weights), got {type_name}").format(
        type_name=T.type_name(out))


def _nw(fn, queries, keys, values):
    """(y_hat, attention_weights) of the student's function (predictions returned alone are compared, and the
    tests and parts about the weights fail on what it returned: T.returned_pair)."""
    out = T.call("nadaraya_watson(queries, keys, values)", fn, queries, keys, values, hint=KERNEL_HINT)
    y_hat, weights = T.returned_pair(out, _pair_message(out))
    return T.as_plain(y_hat, "y_hat"), weights if isinstance(weights, T.Missing) else T.as_plain(weights, "attention_weights")


def _predictions(out):
    """The predictions among what the student's nadaraya_watson returned (the dependence test reads them alone)."""
    return T.returned_pair(out, _pair_message(out))[0]


def _nw_data(case: Case, spread: float = 3.0):
    g = case.gen()
    queries = (torch.rand(case.n, generator=g, dtype=torch.float64) * 2 - 1) * spread
    keys = (torch.rand(case.m, generator=g, dtype=torch.float64) * 2 - 1) * spread
    values = torch.randn(case.m, generator=g, dtype=torch.float64)
    return queries.to(case.dtype), keys.to(case.dtype), values.to(case.dtype)


def _nwk_data(case: Case, spread: float = 3.0):
    g = case.gen()
    queries = (torch.rand(case.n, generator=g, dtype=torch.float64) * 2 - 1) * spread
    keys = (torch.rand(case.n, case.m, generator=g, dtype=torch.float64) * 2 - 1) * spread
    values = torch.randn(case.n, case.m, generator=g, dtype=torch.float64)
    return queries.to(case.dtype), keys.to(case.dtype), values.to(case.dtype)


#: The parts of a comparison scored separately: predictions and (stored) attention weights.
PARTS = ("y_hat", "attention_weights")
#: The dtypes a comparison with the course runs in, each scored apart (issue #23, one check one score: the book's
#: `.type(torch.float32)` cast, which raises on float64 inputs, costs the float64 half, not the float32 one).
DTYPES = (torch.float32, torch.float64)
DTYPE_IDS = ("float32", "float64")


def _model(student, ref, dtype, w):
    """The student's model with width w, copied from the course's model (T.copy_weights), in eval mode."""
    model = student.NWKernelRegression()
    reference = ref.NWKernelRegression()
    if dtype == torch.float64:
        model.double()
        reference.double()
    reference.load_state_dict({"w": torch.tensor([float(w)], dtype=dtype)})
    T.copy_weights(model, reference)
    model.eval()
    return model


def _nwk(model, queries, keys, values):
    """The model's output and its stored weights (read by the tests that check them; T.Missing if absent)."""
    return _got(_nwk_read(model, queries, keys, values))


def _nwk_read(model, queries, keys, values):
    """The output, and the stored weights as a T.Snapshot (inside T.shared's computation, a part that checks them
    reads them with .get(): the weights or the error reading them, as right after the call)."""
    y_hat = T.as_plain(T.call("model(queries, keys, values)", model, queries, keys, values, hint=NWK_HINT), _("the output"))
    return y_hat, T.Snapshot(lambda: _nwk_weights(model))


def _nwk_weights(model):
    weights = T.attribute(model, "attention_weights", "model.attention_weights")
    return weights if isinstance(weights, T.Missing) else T.as_plain(weights, "model.attention_weights")


def _got(read: tuple) -> tuple:
    """`_nwk_read`'s results with each snapshot's value taken out (an error reading it raises here)."""
    return tuple(r.get() if isinstance(r, T.Snapshot) else r for r in read)


def _check_shapes(y_hat, weights, n, m, who):
    """Shapes of the predictions and, unless None (a test about predictions only) or missing, of the weights."""
    T.assert_shape(y_hat, (n,), _("{who}: predictions for {n} queries").format(who=who, n=n))
    if weights is not None and not isinstance(weights, T.Missing):  # a test that reads the weights fails when it does
        T.assert_shape(weights, (n, m), _("{who}: attention weights for {n} queries and {m} keys").format(who=who, n=n, m=m))


# ============================================================ nadaraya_watson

@pytest.mark.component("nadaraya_watson")
@pytest.mark.weight(2 / (len(PARTS) * len(DTYPES)))  # the parts and dtypes share one test's weight
@pytest.mark.parametrize("part", PARTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@settings(max_examples=10)
@given(data=st.data())
def test_nw_matches_reference(student, ref, part, dtype, data):
    """predictions and weights match the Gaussian-kernel reference (float32 and float64)"""
    _check_nw_matches_reference(student, ref, data.draw(cases(dtype=dtype), label="case"), part)


def _check_nw_matches_reference(student, ref, case: Case, part: str) -> None:
    """The student's predictions or weights (`part`) against the reference's on the case's data (both parts
    check one call: T.shared)."""
    queries, keys, values = _nw_data(case)
    y_hat, weights, y_ref, w_ref = T.shared(student, lambda: _nw(student.nadaraya_watson, queries, keys, values)
                                            + _nw(ref.nadaraya_watson, queries, keys, values), queries, keys, values)
    inputs = {"queries": queries, "keys": keys, "values": values}
    if part == "attention_weights":
        T.assert_close(weights, w_ref, what="attention_weights", inputs=inputs, hint=KERNEL_HINT)
    else:
        T.assert_close(y_hat, y_ref, what="y_hat", inputs=inputs, hint=KERNEL_HINT)


# The property tests vary what they check and hold the rest at the contract's common setting, float32: the dtypes are
# the comparisons' to check (DTYPES: the book's float32 cast costs the float64 half of each, not every property test
# that happened to draw float64: helper-76). A property of the predictions and one of the weights are each a part
# of its own (PARTS: d2l 1.0's weights in (keys, queries) layout cost the weights' parts, not the predictions').
COMMON = torch.float32
BY_PART = pytest.mark.parametrize("part", PARTS)


@pytest.mark.component("nadaraya_watson")
@settings(max_examples=10)
@given(data=st.data())
def test_nw_normalized(student, data):
    """attention weights are non-negative and each row sums to 1 over the keys (n != m)"""
    case = data.draw(cases(dtype=COMMON), label="case")
    queries, keys, values = _nw_data(case)
    y_hat, weights = _nw(student.nadaraya_watson, queries, keys, values)
    _check_shapes(y_hat, weights, case.n, case.m, "nadaraya_watson")
    T.check(bool((weights >= 0).all()), _("attention weights must be non-negative (they come out of a softmax)"))
    T.assert_close(weights.sum(dim=1), torch.ones(case.n, dtype=case.dtype),
                   what=_("row sums of attention_weights (each query's weights must sum to 1 over the keys)"),
                   inputs={"queries": queries, "keys": keys},
                   hint="normalize with a softmax over the keys (dim=1 of the (n, m) matrix)")


@pytest.mark.component("nadaraya_watson")
@settings(max_examples=10)
@given(data=st.data())
def test_nw_within_range(student, data):
    """predictions lie between the smallest and the largest training value"""
    case = data.draw(cases(dtype=COMMON), label="case")
    queries, keys, values = _nw_data(case)
    y_hat, _weights = _nw(student.nadaraya_watson, queries, keys, values)
    _check_shapes(y_hat, None, case.n, case.m, "nadaraya_watson")
    eps = 10 * T.tolerance(case.dtype)[1]
    T.check(bool((y_hat >= values.min() - eps).all() and (y_hat <= values.max() + eps).all()),
            _("y_hat = {predictions} leaves the range [{low:.4g}, {high:.4g}] "
              "of the values: a prediction is a weighted sum with weights that sum to 1 (not a mean "
              "of weighted values, not unnormalized kernel values)").format(predictions=y_hat.tolist(), low=float(values.min()), high=float(values.max())))


@pytest.mark.component("nadaraya_watson")
@pytest.mark.weight(1 / len(PARTS))  # the parts share one test's weight
@BY_PART
@settings(max_examples=8)
@given(data=st.data())
def test_nw_permutation(student, part, data):
    """reordering the training pairs (keys with their values) changes no prediction"""
    case = data.draw(cases(min_m=2, dtype=COMMON), label="case")
    queries, keys, values = _nw_data(case)
    perm = torch.tensor(data.draw(st.permutations(range(case.m)), label="permutation"))
    y1, w1 = _nw(student.nadaraya_watson, queries, keys, values)
    y2, w2 = _nw(student.nadaraya_watson, queries, keys[perm], values[perm])
    _check_shapes(y1, w1 if part == "attention_weights" else None, case.n, case.m, "nadaraya_watson")
    inputs = {"queries": queries, "keys": keys, "values": values, "permutation": perm}
    if part == "y_hat":
        T.assert_close(y2, y1, what=_("y_hat after permuting the (key, value) pairs together"), inputs=inputs,
                       hint="each key must stay paired with its own value")
    else:
        T.assert_close(w2, w1[:, perm], what=_("attention_weights after permuting the keys (columns move with their keys)"),
                       inputs=inputs)


@pytest.mark.component("nadaraya_watson")
@pytest.mark.weight(1 / len(PARTS))  # the parts share one test's weight
@BY_PART
@settings(max_examples=8)
@given(data=st.data(), shift=st.sampled_from([-4.0, -1.5, 2.0, 8.0]))
def test_nw_shift(student, part, data, shift):
    """shifting every query and key by the same amount changes nothing (the kernel depends on x - x_j)"""
    case = data.draw(cases(dtype=COMMON), label="case")
    queries, keys, values = _nw_data(case)
    y1, w1 = _nw(student.nadaraya_watson, queries, keys, values)
    y2, w2 = _nw(student.nadaraya_watson, queries + shift, keys + shift, values)
    _check_shift_invariant((y1, w1), (y2, w2), case, "nadaraya_watson", "y_hat",
                           {"queries": queries, "keys": keys, "shift": shift},
                           hint="the kernel must depend on the difference query - key only", part=part)


def _check_shift_invariant(first: tuple, shifted: tuple, case: Case, who: str, output: str, inputs: dict,
                           hint: str, part: str = "") -> None:
    """Predictions (`output`) and weights unchanged by shifting queries and keys together (`part`: only
    the predictions, "y_hat", or only the weights)."""
    (y1, w1), (y2, w2) = first, shifted
    _check_shapes(y1, None if part == "y_hat" else w1, case.n, case.m, who)
    rtol, atol = (1e-4, 1e-5) if case.dtype == torch.float32 else (1e-9, 1e-10)
    if part != "y_hat":
        T.assert_close(w2, w1, what=_("attention_weights after shifting queries and keys"), inputs=inputs,
                       rtol=rtol, atol=atol, hint=hint)
    if part != "attention_weights":
        T.assert_close(y2, y1, what=_("{output} after shifting queries and keys").format(output=output), inputs=inputs, rtol=rtol, atol=atol)


@pytest.mark.component("nadaraya_watson")
@pytest.mark.weight(1 / len(PARTS))  # the parts share one test's weight
@BY_PART
@settings(max_examples=8)
@given(data=st.data())
def test_nw_interpolates_far_keys(student, part, data):
    """keys far apart: a query placed on a key gets that key's value (weight 1 on it)"""
    case = data.draw(cases(min_m=2, dtype=COMMON), label="case")
    g = case.gen()
    keys = (torch.arange(case.m, dtype=torch.float64) * 20.0).to(case.dtype)  # exp(-200) is 0 for both dtypes
    values = torch.randn(case.m, generator=g, dtype=torch.float64).to(case.dtype)
    picks = torch.tensor(data.draw(st.lists(st.integers(0, case.m - 1), min_size=case.n, max_size=case.n),
                                   label="key chosen by each query"))
    y_hat, weights = _nw(student.nadaraya_watson, keys[picks], keys, values)
    _check_shapes(y_hat, weights if part == "attention_weights" else None, case.n, case.m, "nadaraya_watson")
    inputs = {"queries": keys[picks], "keys": keys, "values": values}
    if part == "attention_weights":
        T.assert_close(weights, torch.nn.functional.one_hot(picks, case.m).to(case.dtype),
                       what=_("attention_weights when each query sits on a key and other keys are 20+ away"),
                       inputs=inputs, hint="the nearest key must get (almost) all the weight: " + KERNEL_HINT)
    else:
        T.assert_close(y_hat, values[picks], what=_("y_hat for queries on the keys"), inputs=inputs, hint=KERNEL_HINT)


@pytest.mark.component("nadaraya_watson")
@settings(max_examples=8)
@given(data=st.data())
def test_nw_mean_for_close_keys(student, data):
    """keys (almost) all at the same x: every prediction is the mean of the values"""
    case = data.draw(cases(dtype=COMMON), label="case")
    g = case.gen()
    queries = (torch.rand(case.n, generator=g, dtype=torch.float64) * 4 - 2).to(case.dtype)
    keys = (torch.rand(case.m, generator=g, dtype=torch.float64) * 1e-6 + 0.25).to(case.dtype)
    values = torch.randn(case.m, generator=g, dtype=torch.float64).to(case.dtype)
    y_hat, _weights = _nw(student.nadaraya_watson, queries, keys, values)
    _check_shapes(y_hat, None, case.n, case.m, "nadaraya_watson")
    rtol, atol = (1e-4, 1e-4) if case.dtype == torch.float32 else (1e-5, 1e-5)
    T.assert_close(y_hat, values.mean().expand(case.n), what=_("y_hat when all keys are (nearly) equal"),
                   inputs={"queries": queries, "keys": keys, "values": values}, rtol=rtol, atol=atol,
                   hint="equal keys get equal weights, so the prediction is the plain mean of the values; "
                        "the weights must be normalized over the keys")


#: Fixed problems at realistic sizes (n queries != m keys, float32): mistakes that only show on larger inputs.
NW_REALISTIC = [Case(40, 64, torch.float32, 101), Case(64, 48, torch.float32, 102), Case(32, 56, torch.float32, 103)]


def _changed(data: tuple, which: int, index: Any, seed: int) -> list[torch.Tensor]:
    """The problem's (queries, keys, values) in float64, with new values at `index` of the one `which` names."""
    out = [t.to(torch.float64).clone() for t in data]
    out[which][index] = S.randn(tuple(out[which][index].shape), seed, torch.float64, 2.0)
    return out


def _dependence_changes(data: tuple, seed: int, rows: bool) -> list[tuple[str, list[torch.Tensor]]]:
    """One query, one key and one value changed (the last query's row of keys and values where they are per query)."""
    at = (-1, 0) if rows else 0
    return [(_("queries[0] changes"), _changed(data, 0, 0, seed + 1)),
            (_("keys[{at}] changes").format(at=", ".join(map(str, at)) if rows else 0), _changed(data, 1, at, seed + 2)),
            (_("values[{at}] changes").format(at=", ".join(map(str, at)) if rows else 0), _changed(data, 2, at, seed + 3))]


@pytest.mark.component("nadaraya_watson")
@pytest.mark.kind("dependence")
@settings(max_examples=5)
@given(case=cases(dtype=torch.float64))
@example(case=NW_REALISTIC[0])  # and at a realistic size
def test_nw_depends_on_its_inputs_as_the_course_does(student, ref, case):
    """each prediction depends on its own query and on every key and value, as the course's does"""
    data = [t.to(torch.float64) for t in _nw_data(case)]
    T.assert_depends_like("nadaraya_watson(queries, keys, values)", lambda q, k, v: _predictions(student.nadaraya_watson(q, k, v)),
                          lambda q, k, v: ref.nadaraya_watson(q, k, v)[0], data,
                          _dependence_changes(tuple(data), case.seed, rows=False), per_entry=True)


@pytest.mark.component("nadaraya_watson")
@pytest.mark.weight(1 / (len(NW_REALISTIC) * len(PARTS)))  # the cases and parts share one test's weight
@pytest.mark.parametrize("part", PARTS)
@pytest.mark.parametrize("case", NW_REALISTIC, ids=repr)
def test_nw_at_realistic_size(student, ref, case, part):
    """predictions and weights match the reference at realistic sizes (32-64 queries and keys, float32)"""
    _check_nw_matches_reference(student, ref, case, part)


# ============================================================ NWKernelRegression

W_VALUES = st.sampled_from([-1.5, -0.7, 0.3, 1.0, 2.5])


@pytest.mark.component("NWKernelRegression")
@pytest.mark.weight(2 / (len(PARTS) * len(DTYPES)))  # the parts and dtypes share one test's weight
@pytest.mark.parametrize("part", PARTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@settings(max_examples=10)
@given(data=st.data(), w=W_VALUES)
def test_nwk_matches_reference(student, ref, part, dtype, data, w):
    """output and attention_weights match the reference for a given w (float32 and float64)"""
    _check_nwk_matches_reference(student, ref, data.draw(cases(dtype=dtype), label="case"), w, part)


def _check_nwk_matches_reference(student, ref, case, w, part):
    """The student's model and the course's, both with w, on the case's data: the output or the stored
    weights (`part`; both parts check one call: T.shared)."""
    queries, keys, values = _nwk_data(case)

    def run() -> tuple:
        reference = ref.NWKernelRegression()
        if case.dtype == torch.float64:
            reference.double()
        reference.load_state_dict({"w": torch.tensor([w], dtype=case.dtype)})
        model = _model(student, ref, case.dtype, w)
        return _nwk_read(model, queries, keys, values) + _nwk(reference, queries, keys, values)

    y_hat, weights, y_ref, w_ref = T.shared(student, run, queries, keys, values, w)
    weights = weights.get()
    inputs = {"w": w, "queries": queries, "keys": keys, "values": values}
    if part == "attention_weights":
        T.assert_close(weights, w_ref, what="model.attention_weights", inputs=inputs, hint=NWK_HINT)
    else:
        T.assert_close(y_hat, y_ref, what=_("output"), inputs=inputs, hint=NWK_HINT)


@pytest.mark.component("NWKernelRegression")
@pytest.mark.kind("dependence")
@settings(max_examples=5)
@given(case=cases(dtype=torch.float64), w=W_VALUES)
@example(case=Case(40, 64, torch.float64, 111), w=1.0)  # and at a realistic size
def test_nwk_depends_on_its_inputs_as_the_course_does(student, ref, case, w):
    """each prediction depends on its own query and its own row of keys and values, and on no other, as the course's does"""
    data = [t.to(torch.float64) for t in _nwk_data(case)]
    reference = ref.NWKernelRegression().double()
    reference.load_state_dict({"w": torch.tensor([w], dtype=torch.float64)})
    T.assert_depends_like(_("NWKernelRegression with w = {w}").format(w=w), _model(student, ref, torch.float64, w),
                          reference, data, _dependence_changes(tuple(data), case.seed, rows=True), per_entry=True)


@pytest.mark.component("NWKernelRegression")
@pytest.mark.kind("property")  # `ref` only builds the model
@settings(max_examples=10)
@given(case=cases(), w=W_VALUES)
def test_nwk_normalized(student, ref, case, w):
    """stored attention_weights are non-negative and each row sums to 1 over its keys (n != m)"""
    queries, keys, values = _nwk_data(case)
    model = _model(student, ref, case.dtype, w)
    y_hat, weights = _nwk(model, queries, keys, values)
    _check_shapes(y_hat, weights, case.n, case.m, "NWKernelRegression")
    T.check(bool((weights >= 0).all()), _("model.attention_weights must be non-negative (store them after the softmax)"))
    T.assert_close(weights.sum(dim=1), torch.ones(case.n, dtype=case.dtype),
                   what=_("row sums of model.attention_weights (each query's weights must sum to 1 over its keys)"),
                   inputs={"w": w, "queries": queries, "keys": keys},
                   hint="softmax over the keys (dim=1), stored in self.attention_weights")


@pytest.mark.component("NWKernelRegression")
@pytest.mark.kind("property")  # `ref` only builds the model
@settings(max_examples=10)
@given(case=cases(), w=W_VALUES)
def test_nwk_within_range(student, ref, case, w):
    """each prediction lies between the smallest and the largest value of its own row"""
    queries, keys, values = _nwk_data(case)
    model = _model(student, ref, case.dtype, w)
    y_hat, _weights = _nwk(model, queries, keys, values)
    _check_shapes(y_hat, None, case.n, case.m, "NWKernelRegression")
    eps = 10 * T.tolerance(case.dtype)[1]
    lo, hi = values.min(dim=1).values, values.max(dim=1).values
    bad = ((y_hat < lo - eps) | (y_hat > hi + eps)).nonzero().flatten().tolist()
    if bad:
        i = bad[0]
        raise AssertionError(
            _("prediction {i} = {prediction:.4g} leaves the range [{low:.4g}, {high:.4g}] "
              "of its row of values {row}: prediction i is the weighted sum of values[i] with "
              "weights that sum to 1 over the keys of row i").format(i=i, prediction=float(y_hat[i]), low=float(lo[i]), high=float(hi[i]), row=values[i].tolist()))


@pytest.mark.component("NWKernelRegression")
@pytest.mark.kind("property")  # `ref` only builds the model
@pytest.mark.weight(1 / len(PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", PARTS)
@settings(max_examples=8)
@given(case=cases(min_m=2), w=W_VALUES, data=st.data())
def test_nwk_permutation(student, ref, part, case, w, data):
    """reordering each row's (key, value) pairs together changes no prediction"""
    queries, keys, values = _nwk_data(case)
    perm = torch.tensor(data.draw(st.permutations(range(case.m)), label="permutation"))

    def run() -> tuple:
        model = _model(student, ref, case.dtype, w)
        return _nwk_read(model, queries, keys, values) + _nwk_read(model, queries, keys[:, perm], values[:, perm])

    y1, w1, y2, w2 = _got(T.shared(student, run, queries, keys, values, w, perm))
    _check_shapes(y1, w1 if part == "attention_weights" else None, case.n, case.m, "NWKernelRegression")
    inputs = {"w": w, "queries": queries, "keys": keys, "values": values, "permutation": perm}
    if part == "y_hat":
        T.assert_close(y2, y1, what=_("output after permuting the (key, value) pairs of every row"), inputs=inputs,
                       hint="each key must stay paired with its own value")
    else:
        T.assert_close(w2, w1[:, perm], what=_("attention_weights after permuting the keys"), inputs=inputs)


@pytest.mark.component("NWKernelRegression")
@pytest.mark.kind("property")  # `ref` only builds the model
@pytest.mark.weight(1 / len(PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", PARTS)
@settings(max_examples=8)
@given(case=cases(), w=W_VALUES, shift=st.sampled_from([-4.0, -1.5, 2.0, 8.0]))
def test_nwk_shift(student, ref, part, case, w, shift):
    """shifting queries and keys by the same amount changes nothing"""
    queries, keys, values = _nwk_data(case)

    def run() -> tuple:
        model = _model(student, ref, case.dtype, w)
        return _nwk_read(model, queries, keys, values) + _nwk_read(model, queries + shift, keys + shift, values)

    y1, w1, y2, w2 = _got(T.shared(student, run, queries, keys, values, w, shift))
    _check_shift_invariant((y1, w1), (y2, w2), case, "NWKernelRegression", _("output"),
                           {"w": w, "queries": queries, "keys": keys, "shift": shift},
                           hint="the kernel must depend on (query - key) * w only", part=part)


@pytest.mark.component("NWKernelRegression")
@pytest.mark.kind("property")  # `ref` only builds the model
@pytest.mark.weight(1 / len(PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", PARTS)
@settings(max_examples=8)
@given(case=cases(min_m=2), data=st.data())
def test_nwk_large_w_interpolates(student, ref, part, case, data):
    """large w: a query sitting on one of its keys (others at least 1 away) gets that key's value"""
    g = case.gen()
    base = torch.arange(case.m, dtype=torch.float64) * 1.5
    keys = torch.stack([base[torch.randperm(case.m, generator=g)] for _ in range(case.n)])
    values = torch.randn(case.n, case.m, generator=g, dtype=torch.float64)
    picks = torch.tensor(data.draw(st.lists(st.integers(0, case.m - 1), min_size=case.n, max_size=case.n),
                                   label="key chosen by each query"))
    queries = keys[torch.arange(case.n), picks]
    queries, keys, values = queries.to(case.dtype), keys.to(case.dtype), values.to(case.dtype)
    y_hat, weights = _got(T.shared(student, lambda: _nwk_read(_model(student, ref, case.dtype, 40.0), queries, keys, values),
                                   queries, keys, values))
    _check_shapes(y_hat, weights if part == "attention_weights" else None, case.n, case.m, "NWKernelRegression")
    inputs = {"w": 40.0, "queries": queries, "keys": keys, "values": values}
    if part == "attention_weights":
        T.assert_close(weights, torch.nn.functional.one_hot(picks, case.m).to(case.dtype),
                       what=_("attention_weights with w = 40 (a very narrow kernel)"), inputs=inputs,
                       hint="with a large w the key equal to the query must get all the weight: " + NWK_HINT)
    else:
        T.assert_close(y_hat, values[torch.arange(case.n), picks], what=_("output with w = 40"), inputs=inputs,
                       hint=NWK_HINT)


@pytest.mark.component("NWKernelRegression")
@pytest.mark.kind("property")  # `ref` only builds the model
@settings(max_examples=8)
@given(case=cases())
def test_nwk_small_w_mean(student, ref, case):
    """small w (a very wide kernel): each prediction is the mean of its row of values"""
    queries, keys, values = _nwk_data(case)
    model = _model(student, ref, case.dtype, 1e-4)
    y_hat, _weights = _nwk(model, queries, keys, values)
    _check_shapes(y_hat, None, case.n, case.m, "NWKernelRegression")
    T.assert_close(y_hat, values.mean(dim=1), what=_("output with w = 1e-4"), rtol=1e-4, atol=1e-4,
                   inputs={"queries": queries, "keys": keys, "values": values},
                   hint="with w close to 0 all keys weigh the same, so the output is the row mean of the values: "
                        + NWK_HINT)


def _training_data(dtype):
    """The book's setup: 30 noisy samples of 2 sin(x) + x**0.8, each input attending to all the others."""
    g = torch.Generator().manual_seed(7)
    n = 30
    x = torch.sort(torch.rand(n, generator=g, dtype=torch.float64) * 5).values
    y = 2 * torch.sin(x) + x ** 0.8 + 0.3 * torch.randn(n, generator=g, dtype=torch.float64)
    others = ~torch.eye(n, dtype=torch.bool)
    keys = x.repeat(n, 1)[others].reshape(n, n - 1)
    values = y.repeat(n, 1)[others].reshape(n, n - 1)
    return x.to(dtype), keys.to(dtype), values.to(dtype), y.to(dtype)


@pytest.mark.component("NWKernelRegression")
@pytest.mark.kind("property")  # `ref` only builds the model
@pytest.mark.parametrize("dtype", [torch.float32])
def test_nwk_training_lowers_loss(student, ref, dtype):
    """training w by gradient descent lowers the loss (w must receive gradients)"""
    x, keys, values, y = _training_data(dtype)
    model = _model(student, ref, dtype, 0.05)  # a far too wide kernel: predictions near the overall mean

    def loss() -> float:
        model.eval()
        return float(((_nwk(model, x, keys, values)[0] - y) ** 2).mean())

    before = loss()
    try:
        T.fit(model, [{"inputs": [x, keys, values], "target": y}], loss="mse", lr=0.5, steps=15, optimizer="adam")
    except Exception as exc:
        raise AssertionError(
            _("training w (15 Adam steps on the mean squared error) failed: {exc}\n  hint: the output must depend "
              "on the parameter w through autograd: use self.w as a tensor in forward (no .item(), float(), "
              ".detach() or .data)").format(exc=exc)) from None
    after = loss()
    w_after = [round(float(v.reshape(-1)[0]), 4) for v in T.state_dict(model).values()]
    T.check(after < 0.8 * before,
            _("training (15 Adam steps, lr 0.5, mean squared error) did not lower the loss enough: "
              "{before:.4g} before, {after:.4g} after, w went from 0.05 to {w_after}. "
              "w must be an nn.Parameter used as a tensor in forward (no .item(), float() or .detach()), "
              "so that gradients reach it").format(before=before, after=after, w_after=w_after))


#: Fixed problems at realistic sizes (n queries, each with its own row of m != n keys; float32) and a w each.
NWK_REALISTIC = [(Case(40, 64, torch.float32, 111), 0.7), (Case(64, 48, torch.float32, 112), -1.5),
                 (Case(32, 56, torch.float32, 113), 2.5)]


@pytest.mark.component("NWKernelRegression")
@pytest.mark.weight(1 / (len(NWK_REALISTIC) * len(PARTS)))  # the cases and parts share one test's weight
@pytest.mark.parametrize("part", PARTS)
@pytest.mark.parametrize("case,w", NWK_REALISTIC, ids=[f"{c!r}-w={w}" for c, w in NWK_REALISTIC])
def test_nwk_at_realistic_size(student, ref, case, w, part):
    """output and attention_weights match the reference at realistic sizes (32-64 queries, 32-64 keys each, float32)"""
    _check_nwk_matches_reference(student, ref, case, w, part)
