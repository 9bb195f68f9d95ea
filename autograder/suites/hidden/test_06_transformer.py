"""Hidden tests for assignment 06 (the Transformer). Instructor only.

Property-based checks (post-norm statistics, padding, causality in every mode, step-by-step and
chunked decoding, caches, dropout placement) and comparisons with the reference, whose (randomized)
weights are copied into the student's modules by name. When an output differs from the
reference, a few known mistakes are re-enacted with the reference's own submodules and named in
the message if the student's output matches one of them.

Notes for maintainers:
- `student` objects may be proxies: a DecoderBlock's / TransformerDecoder's `state` comes back as
  data, so every test uses the *returned* state and builds a fresh state for every new sequence
  (in-process the student's code mutates the list we pass; through the sandbox it does not).
- Dropout is only checked through stream-independent properties (see the AddNorm tests).
- One check, one score: a comparison of outputs, caches and stored attention weights runs once per
  part (`part`, the component's *_PARTS), so that a cache never written or attention weights never
  stored cost only the parts about them. Tests that compare a module with itself (step by step or
  chunked against whole) are of kind "property" whatever fixtures they use: they earn credit only in
  proportion to the reference comparisons passed.
- Property tests run the student's module with the course's random weights copied in, as the comparisons
  do (`loaded`, through `paired`; its own weights only where they do not bind), so that code cannot pass
  them with behaviour it has only with its own initial weights. Post-norm statistics are checked with the
  last LayerNorm's (random) gain and bias taken out.
- Each module's parameter names are checked once, by its test_*_contract_names (kind "structure");
  every other test binds the course's weights with T.copy_weights and reads no name of the student's.
"""
from __future__ import annotations

import functools
import itertools
import math
from typing import Any, Optional
from collections.abc import Callable, Sequence

import pytest
import torch
from hypothesis import example, given, settings, strategies as st
from torch.nn import functional as F

from autograder.selfcheck import strategies as S
from autograder.selfcheck import testing as T
from autograder.selfcheck.hints import POST_NORM_HINT
from autograder.selfcheck.strategies import randn
from autograder.selfcheck.i18n import _

D, HEADS, FFN_H, VOCAB = 8, 2, 16, 11
# Whole models are compared a little more loosely than single layers (several LayerNorms deep).
MODEL_TOL = {torch.float32: (1e-4, 1e-4), torch.float64: (1e-7, 1e-7)}


# ------------------------------------------------------------------------------------- helpers
def randint(high: int, shape, seed: int, low: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(int(seed))
    return torch.randint(low, high, tuple(shape), generator=g)


def randomize_(module: torch.nn.Module, seed: int) -> torch.nn.Module:
    """Random reference weights (LayerNorm gains near 1), so that mis-wired submodules show."""
    g = torch.Generator().manual_seed(int(seed) + 7919)
    with torch.no_grad():
        for name, p in module.named_parameters():
            noise = torch.randn(p.shape, generator=g, dtype=torch.float64).to(p.dtype)
            if name.endswith("ln.weight"):
                p.copy_(1 + 0.3 * noise)
            elif "embedding" in name:
                p.copy_(noise)
            else:
                p.copy_(0.5 * noise)
    return module


def set_dtype(module: Any, dtype: torch.dtype) -> Any:
    if dtype == torch.float64:
        module.double()
    return module


def block_args(dropout: float = 0.0) -> tuple:
    return (D, D, D, D, [D], D, FFN_H, HEADS, dropout)


def model_args(num_layers: int, dropout: float = 0.0, vocab: int = VOCAB) -> tuple:
    return (vocab, D, D, D, D, [D], D, FFN_H, HEADS, num_layers, dropout)


def paired(student_cls: Any, ref_cls: Any, args: tuple, dtype: torch.dtype, seed: int,
           student: Any, mode: str = "eval") -> tuple[Any, Any]:
    """(student module, reference module) with the reference's random weights copied in, eval mode (or `mode`)."""
    T.seed(student, seed)
    mine = set_dtype(student_cls(*args), dtype)
    theirs = randomize_(ref_cls(*args), seed).to(dtype)
    T.copy_weights(mine, theirs)
    mine.train(mode == "train")
    theirs.train(mode == "train")
    return mine, theirs


def loaded(student_cls: Any, ref_cls: Any, args: tuple, dtype: torch.dtype, seed: int,
           student: Any) -> tuple[Any, Optional[torch.nn.Module]]:
    """The student's module for a property test, in the state the comparisons run it in: built and loaded by
    `paired` (the course's random weights copied in, eval mode; the test sets the mode it needs), so that code
    cannot behave one way with its own initial weights and another once the course's are loaded. Returns the
    course's module too, whose weights the student's now holds (a test that needs a LayerNorm's gain reads it
    there, under the contract's names). Where the course's weights do not bind to the student's module
    (T.copy_weights fails: the comparisons fail too, and the gate pays this test in proportion to them), the
    module keeps its own weights, built as before, and the course's module is None."""
    try:
        return paired(student_cls, ref_cls, args, dtype, seed, student)
    except Exception:  # no binding; a FailFast (a limit, a stub) is no Exception and ends the test
        T.seed(student, seed)
        mine = set_dtype(student_cls(*args), dtype)
        mine.eval()
        return mine, None


def layer_norm_affine(theirs: Optional[torch.nn.Module], mine: Any, name: str) -> tuple[Any, Any]:
    """The (weight, bias) of the LayerNorm `name` (`ln`, `addnorm2.ln`) the student's module holds: the course's
    values where `loaded` copied them in, else its own under the contract's names (None where it has none)."""
    state = T.state_dict(theirs if theirs is not None else mine)
    return state.get(f"{name}.weight"), state.get(f"{name}.bias")


def check_normalized_by(Y: Any, affine: tuple[Any, Any], what: str) -> None:
    """check_normalized on Y with the LayerNorm's gain and bias taken out: (Y - bias) / weight."""
    weight, bias = affine
    Y = T.as_plain(Y).double()
    if bias is not None:
        Y = Y - bias.double()
    if weight is not None:
        Y = Y / weight.double()
    check_normalized(Y, what)


def check_contract_names(student_cls: Any, ref_cls: Any, args: tuple, student: Any, what: str) -> None:
    """The student's module built with `args` has the course's parameter and buffer names."""
    T.seed(student, 0)
    T.assert_contract_names(student_cls(*args), ref_cls(*args), what)


def close(a: Any, b: torch.Tensor, dtype: torch.dtype, tol: Optional[dict] = None) -> bool:
    rtol, atol = (tol or MODEL_TOL)[dtype]
    a = T.as_plain(a)
    return tuple(a.shape) == tuple(b.shape) and bool(torch.allclose(a.double(), b.double(), rtol=rtol, atol=atol))


def compare(actual: Any, expected: torch.Tensor, *, what: str, dtype: torch.dtype,
            inputs: Optional[dict] = None, hint: Optional[str] = None,
            known: Optional[dict[str, Callable[[], torch.Tensor]]] = None,
            tol: Optional[dict] = None, sides: Optional[tuple[str, str]] = None) -> None:
    """assert_close; on failure, name the known mistake (re-enacted by `known`) the output matches.
    `sides` names both outputs when both are the student's (T.assert_close)."""
    rtol, atol = (tol or MODEL_TOL)[dtype]
    try:
        T.assert_close(actual, expected, what=what, inputs=inputs, hint=hint, rtol=rtol, atol=atol, sides=sides)
    except AssertionError as exc:
        matches = []
        for mistake, variant in (known or {}).items():
            try:
                with torch.no_grad():
                    candidate = variant()
            except Exception:
                continue
            if isinstance(actual, torch.Tensor) and close(actual, candidate, dtype, tol):
                matches.append(mistake)
        if matches:  # the same failure (a Mismatch keeps its evidence for the diagnosis), one line longer
            exc.args = (_("{failure}\n  likely cause: your output matches {mistakes}").format(
                failure=exc, mistakes=_("; or ").join(matches)),)
        raise


check_normalized = functools.partial(T.assert_layer_normalized, hint=POST_NORM_HINT)


def distinct_blocks(student_module: Any, ref_module: torch.nn.Module, num_layers: int, what: str,
                    *inputs: Any) -> None:
    """Each block has its own parameters: the same module appended num_layers times shares them. Lazy
    layers (d2l 1.0's) get their shapes from one call of the student's module on `inputs` first."""
    # By count, not by name (named_parameters() lists a shared parameter once): names are the naming test's.
    total_mine, total_theirs = T.trainable_numbers(student_module, *inputs), T.trainable_numbers(ref_module)
    T.check(total_mine == total_theirs,
            _("{what} with num_layers={num_layers} should have {num_layers} blocks with their own "
              "weights ({total_theirs} trainable numbers in all), but named_parameters() lists "
              "{total_mine}\n"
              "  hint: create a new block in every iteration of the loop; appending the same block "
              "object num_layers times (or [Block(...)] * num_layers) shares one set of weights").format(what=what, num_layers=num_layers, total_theirs=total_theirs, total_mine=total_mine))


@st.composite
def lens_for(draw, batch: int, length: int) -> Optional[torch.Tensor]:
    """valid lengths (batch,) in 1..length, or None"""
    return S.valid_lens(draw, "none" if draw(st.booleans()) else "1d", batch, length)


@st.composite
def chunking(draw, length: int) -> list[int]:
    """chunk sizes that add up to length"""
    sizes, left = [], length
    while left:
        size = draw(st.integers(1, left))
        sizes.append(size)
        left -= size
    return sizes


# Realistic sizes for the *_at_realistic_size tests: batch 8, 32-64 steps, num_hiddens 32 or 64 with 4
# or 8 heads, FFN hidden size 64, whole models with 2 blocks and a vocabulary small enough to stay fast.
# Two cases per component: between them, both widths, both head counts, both valid_lens forms and dropout
# on and off (in eval mode); a third case caught no further mutant and cost about 10% of the suite's time
# (the reference in-process, median of 3: 0.86 s with three, 0.78 s with two).
REAL_B, REAL_FFN_H, REAL_VOCAB, REAL_LAYERS = 8, 64, 50, 2


def sized_block_args(d: int, heads: int, dropout: float = 0.0) -> tuple:
    """block_args() at num_hiddens d with `heads` heads and the realistic FFN hidden size."""
    return (d, d, d, d, [d], d, REAL_FFN_H, heads, dropout)


def sized_model_args(d: int, heads: int, dropout: float = 0.0) -> tuple:
    """model_args() at num_hiddens d with `heads` heads, REAL_LAYERS blocks and the realistic vocabulary."""
    return (REAL_VOCAB, d, d, d, d, [d], d, REAL_FFN_H, heads, REAL_LAYERS, dropout)


def realistic_paired(student_cls: Any, ref_cls: Any, args: tuple, seed: int, student: Any) -> tuple[Any, Any]:
    """paired() in float32 for a realistic width: the reference's random weight matrices are then scaled by
    sqrt(D / fan_in) and copied into the student's module again, so that every layer amplifies as much as at
    the suite's width D (randomize_'s 0.5 * noise at width 64 saturates the attention and blows float32
    rounding, such as an exp/log positional encoding's, up far past MODEL_TOL)."""
    mine, theirs = paired(student_cls, ref_cls, args, torch.float32, seed, student)
    with torch.no_grad():
        for name, p in theirs.named_parameters():
            if p.dim() == 2 and "embedding" not in name:
                p.mul_(math.sqrt(D / p.shape[1]))
    T.copy_weights(mine, theirs)
    return mine, theirs


def realistic_lens(kind: str, batch: int, length: int, seed: int) -> Optional[torch.Tensor]:
    """Seeded valid lengths: None ("none") or (batch,) in 1..length ("1d"), the forms lens_for draws."""
    return None if kind == "none" else randint(length + 1, (batch,), seed, low=1)


# ------------------------------------------------------------------------------ PositionWiseFFN
def check_dependence(student_cls: Any, ref_cls: Any, init: tuple, args: list[Any],
                     changes: Sequence[tuple[str, list[Any]]], seed: int, student: Any, what: str,
                     output: Callable[[Any], Callable[..., Any]] = lambda module: module,
                     dtype: torch.dtype = torch.float64) -> None:
    """The student's module (`dtype`, eval mode, the course's weights) moves its outputs where the course's does
    for each (what changed, the changed arguments) of `changes` (`S.changed_at`): T.assert_depends_like.
    `output(module)` is what is called with the arguments (a decoder's logits, from a fresh state each call).
    Last, every weight changes (both modules built again with other random weights): outputs that ignore the
    module's weights ignore an input too."""
    mine, theirs = paired(student_cls, ref_cls, init, dtype, seed, student)
    other_mine, other_theirs = paired(student_cls, ref_cls, init, dtype, seed + 1000, student)
    T.assert_depends_like(what, output(mine), output(theirs), args,
                          [*changes, (_("the weights change"), args, output(other_mine), output(other_theirs))])


def check_ffn_call(ffn: Any, r: torch.nn.Module, X: torch.Tensor, dtype: torch.dtype, what: str) -> None:
    """The student's PositionWiseFFN on X against the course's with the same weights (`what` names the output)."""
    with torch.no_grad():
        expected = r(X)
    compare(ffn(X), expected, what=what, dtype=dtype, tol={dtype: T.tolerance(dtype)}, inputs={"X": X},
            hint="dense1, then ReLU, then dense2 (no activation on the output)",
            known={_("dense2(dense1(X)) without the ReLU"): lambda: r.dense2(r.dense1(X)),
                   _("a ReLU applied after dense2 as well (the output must be able to be negative)"):
                       lambda: torch.relu(r(X)),
                   _("relu(dense2(dense1(X))): the ReLU after dense2 instead of between the layers"):
                       lambda: torch.relu(r.dense2(r.dense1(X)))})


@pytest.mark.component("PositionWiseFFN")
@pytest.mark.weight(2)
@settings(max_examples=10)
@given(B=st.integers(1, 3), steps=st.integers(1, 4), n_in=st.integers(1, 6), n_hid=st.integers(1, 8),
       n_out=st.integers(1, 6), dtype=S.FLOAT_DTYPES, seed=S.SEEDS)
def test_ffn_matches_reference(student, ref, B, steps, n_in, n_hid, n_out, dtype, seed):
    """matches the course's dense2(relu(dense1(X))) with the same weights"""
    args = (n_in, n_hid, n_out)
    ffn, r = paired(student.PositionWiseFFN, ref.PositionWiseFFN, args, dtype, seed, student)
    check_ffn_call(ffn, r, randn((B, steps, n_in), seed, dtype, 2.0), dtype, _("PositionWiseFFN{args} output").format(args=args))


@pytest.mark.component("PositionWiseFFN")
@settings(max_examples=4)
@given(B=st.integers(1, 3), steps=st.integers(1, 4), n_in=st.integers(1, 6), n_hid=st.integers(1, 8),
       n_out=st.integers(1, 6), dtype=S.FLOAT_DTYPES, seed=S.SEEDS)
def test_ffn_matches_reference_in_train_mode(student, ref, B, steps, n_in, n_hid, n_out, dtype, seed):
    """in train mode it matches the course's dense2(relu(dense1(X))) too: the contract's FFN has no dropout"""
    args = (n_in, n_hid, n_out)
    ffn, r = paired(student.PositionWiseFFN, ref.PositionWiseFFN, args, dtype, seed, student, mode="train")
    check_ffn_call(ffn, r, randn((B, steps, n_in), seed, dtype, 2.0), dtype,
                   _("PositionWiseFFN{args} output in train mode").format(args=args))


@pytest.mark.component("PositionWiseFFN")
@pytest.mark.kind("dependence")
@settings(max_examples=4)
@given(B=st.integers(1, 3), steps=st.integers(1, 4), n_in=st.integers(1, 6), n_hid=st.integers(1, 8),
       n_out=st.integers(1, 6), dtype=S.FLOAT_DTYPES, seed=S.SEEDS)
@example(B=REAL_B, steps=40, n_in=32, n_hid=64, n_out=48, dtype=torch.float32, seed=5)  # and at a realistic size
def test_ffn_depends_on_its_inputs_as_the_course_does(student, ref, B, steps, n_in, n_hid, n_out, dtype, seed):
    """the output at each position depends on that position's input, and on no other, as the course's does"""
    b, t = B - 1, seed % steps  # a position drawn from the seed: no index is special
    args = [randn((B, steps, n_in), seed, dtype, 2.0)]
    check_dependence(student.PositionWiseFFN, ref.PositionWiseFFN, (n_in, n_hid, n_out), args,
                     [(_("X[{b}, {t}] changes").format(b=b, t=t), S.changed_at(args, 0, (b, t), seed + 50))], seed, student,
                     _("PositionWiseFFN{args}").format(args=(n_in, n_hid, n_out)), dtype=dtype)


@pytest.mark.component("PositionWiseFFN")
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@pytest.mark.keep("the contract's position-wise property; no realistic FFN mutant mixes positions")
@settings(max_examples=5)
@given(B=st.integers(2, 3), steps=st.integers(2, 4), data=st.data(), seed=S.SEEDS)
def test_ffn_position_wise(student, ref, B, steps, data, seed):
    """each (batch item, position) is transformed on its own: changing one changes only its output"""
    # Guards against mixing positions/batch items (e.g. normalizing or reshaping across them); no
    # realistic FFN mutant in the zoo does that, the reference comparison catches the rest.
    ffn, _r = loaded(student.PositionWiseFFN, ref.PositionWiseFFN, (D, FFN_H, 5), torch.float32, seed, student)
    X = randn((B, steps, D), seed)
    b, t = data.draw(st.integers(0, B - 1), "b"), data.draw(st.integers(0, steps - 1), "t")
    X2 = X.clone()
    X2[b, t] += randn((D,), seed + 1, scale=3.0)
    Y, Y2 = T.as_plain(ffn(X)), T.as_plain(ffn(X2))
    keep = torch.ones(B, steps, dtype=torch.bool)
    keep[b, t] = False
    T.assert_close(Y2[keep], Y[keep], what=_("outputs at every other position after changing X[{b}, {t}]").format(b=b, t=t),
                   hint="the FFN is position-wise: the same MLP applied to each position separately")


@pytest.mark.component("PositionWiseFFN")
@pytest.mark.kind("structure")
@pytest.mark.keep("the contract's names: no mutant misnames a parameter; the other tests bind by structure")
def test_ffn_contract_names(student, ref):
    """the FFN's parameters carry the contract's names (dense1, dense2)"""
    check_contract_names(student.PositionWiseFFN, ref.PositionWiseFFN, (D, FFN_H, 5), student,
                         "PositionWiseFFN(8, 16, 5)")


#: (steps, ffn_num_input, ffn_num_outputs, seed): sizes that differ, and the Transformer's own use (outputs =
#: inputs = num_hiddens), which an FFN written without ffn_num_outputs (The Annotated Transformer's
#: PositionwiseFeedForward(d_model, d_ff), yhli00/my-d2l-code's) gets right (helper-69: 0.07 of 2).
REALISTIC_FFN = [(40, 32, 64, 401), (64, 64, 32, 402), (48, 32, 32, 403)]


@pytest.mark.component("PositionWiseFFN")
@pytest.mark.weight(1 / len(REALISTIC_FFN))  # the cases share one test's weight
@pytest.mark.parametrize("steps,n_in,n_out,seed", REALISTIC_FFN,
                         ids=[f"T{t}-{i}to{o}" for t, i, o, _ in REALISTIC_FFN])
def test_ffn_at_realistic_size(student, ref, steps, n_in, n_out, seed):
    """matches the course's dense2(relu(dense1(X))) at realistic sizes (batch 8, 40-64 steps, 32-64 features, hidden 64)"""
    dtype = torch.float32
    args = (n_in, REAL_FFN_H, n_out)
    ffn, r = paired(student.PositionWiseFFN, ref.PositionWiseFFN, args, dtype, seed, student)
    X = randn((REAL_B, steps, n_in), seed, dtype, 2.0)
    check_ffn_call(ffn, r, X, dtype, _("PositionWiseFFN{args} output on X of shape {shape}").format(args=args, shape=tuple(X.shape)))


# ------------------------------------------------------------------------------------- AddNorm
def check_addnorm_call(addnorm: Any, r: torch.nn.Module, X: torch.Tensor, Y: torch.Tensor, dtype: torch.dtype,
                       what: str) -> None:
    """The student's AddNorm (eval mode) on X, Y against the course's with the same LayerNorm weights."""
    with torch.no_grad():
        expected = r(X, Y)
    compare(addnorm(X, Y), expected, what=what, dtype=dtype, tol={dtype: T.tolerance(dtype)}, inputs={"X": X, "Y": Y},
            hint="ln(dropout(Y) + X); in eval mode nn.Dropout is the identity (F.dropout needs "
                 "training=self.training)",
            known={_("ln(X) + Y: the residual added after the LayerNorm (post-norm: ln comes last)"):
                       lambda: r.ln(X) + Y,
                   _("X + ln(Y): a pre-norm residual (the Transformer here is post-norm)"):
                       lambda: X + r.ln(Y),
                   _("ln(Y) without the residual X"): lambda: r.ln(Y)})


@pytest.mark.component("AddNorm")
@settings(max_examples=10)
@given(B=st.integers(1, 3), steps=st.integers(1, 4), d=st.integers(2, 8),
       p=st.sampled_from([0.0, 0.5]), dtype=S.FLOAT_DTYPES, seed=S.SEEDS)
def test_addnorm_eval_matches_reference(student, ref, B, steps, d, p, dtype, seed):
    """in eval mode (dropout off) the output equals ln(X + Y) with the same LayerNorm weights"""
    addnorm, r = paired(student.AddNorm, ref.AddNorm, ([d], p), dtype, seed, student)
    X, Y = randn((B, steps, d), seed, dtype, 2.0), randn((B, steps, d), seed + 1, dtype)
    check_addnorm_call(addnorm, r, X, Y, dtype, f"AddNorm([{d}], {p}) in eval mode")


@pytest.mark.component("AddNorm")
@pytest.mark.kind("dependence")
@settings(max_examples=4)
@given(B=st.integers(1, 3), steps=st.integers(1, 4), d=st.integers(2, 8), dtype=S.FLOAT_DTYPES, seed=S.SEEDS)
@example(B=REAL_B, steps=40, d=32, dtype=torch.float32, seed=5)  # and at a realistic size
def test_addnorm_depends_on_its_inputs_as_the_course_does(student, ref, B, steps, d, dtype, seed):
    """the output at each position depends on that position's X and Y, and on no other, as the course's does"""
    b, t = B - 1, seed % steps  # a position drawn from the seed: no index is special
    args = [randn((B, steps, d), seed, dtype, 2.0), randn((B, steps, d), seed + 1, dtype)]
    check_dependence(student.AddNorm, ref.AddNorm, ([d], 0.0), args,
                     [(_("X[{b}, {t}] changes").format(b=b, t=t), S.changed_at(args, 0, (b, t), seed + 50)),
                      (_("Y[{b}, {t}] changes").format(b=b, t=t), S.changed_at(args, 1, (b, t), seed + 51))],
                     seed, student, f"AddNorm([{d}], 0)", dtype=dtype)


@pytest.mark.component("AddNorm")
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@settings(max_examples=6)
@given(B=st.integers(1, 3), steps=st.integers(1, 4), d=st.integers(2, 8), seed=S.SEEDS)
def test_addnorm_statistics(student, ref, B, steps, d, seed):
    """every position of the output is normalized on its own: mean 0, variance 1 over its features (its LayerNorm's gain and bias taken out)"""
    addnorm, r = loaded(student.AddNorm, ref.AddNorm, ([d], 0.0), torch.float32, seed, student)
    X = randn((B, steps, d), seed, scale=3.0) + randn((B, steps, 1), seed + 2, scale=5.0)
    Y = randn((B, steps, d), seed + 1)
    check_normalized_by(addnorm(X, Y), layer_norm_affine(r, addnorm, "ln"),
                        _("AddNorm([{d}], 0) on inputs of shape {shape}, its LayerNorm's gain and bias taken out").format(d=d, shape=(B, steps, d)))


@pytest.mark.component("AddNorm")
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@settings(max_examples=6)
@given(B=st.integers(2, 3), steps=st.integers(2, 4), data=st.data(), seed=S.SEEDS)
def test_addnorm_position_wise(student, ref, B, steps, data, seed):
    """each position is normalized on its own: changing one position changes only its output"""
    addnorm, _r = loaded(student.AddNorm, ref.AddNorm, ([D], 0.0), torch.float32, seed, student)
    X, Y = randn((B, steps, D), seed), randn((B, steps, D), seed + 1)
    b, t = data.draw(st.integers(0, B - 1), "b"), data.draw(st.integers(0, steps - 1), "t")
    X2 = X.clone()
    X2[b, t] = X2[b, t] * 4 + 3
    out, out2 = T.as_plain(addnorm(X, Y)), T.as_plain(addnorm(X2, Y))
    keep = torch.ones(B, steps, dtype=torch.bool)
    keep[b, t] = False
    T.assert_close(out2[keep], out[keep], what=_("outputs at every other position after changing X[{b}, {t}]").format(b=b, t=t),
                   hint="LayerNorm normalizes over the last (feature) axis of each position only, "
                        "not over positions or batch items")


@pytest.mark.component("AddNorm")
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@settings(max_examples=5)
@given(steps=st.integers(2, 5), seed=S.SEEDS)
def test_addnorm_dropout_not_on_x(student, ref, steps, seed):
    """in training mode dropout acts on Y only: with Y = 0 the output is exactly ln(X)"""
    addnorm, r = loaded(student.AddNorm, ref.AddNorm, ([D], 0.5), torch.float32, seed, student)
    addnorm.train()
    # A large offset on X makes dropout on X (or on X + Y, or after the LayerNorm) unmissable.
    X = randn((4, steps, D), seed) + 10.0
    Y = torch.zeros(4, steps, D)
    w, b = layer_norm_affine(r, addnorm, "ln")
    expected = F.layer_norm(X, (D,), w, b)
    T.assert_close(addnorm(X, Y), expected, what=_("AddNorm([8], 0.5) in training mode with Y = 0"),
                   rtol=1e-4, atol=1e-4,
                   hint="dropout must be applied to Y (the sublayer's output) only: ln(dropout(Y) + X); "
                        "dropping entries of the residual X, of the sum, or of the normalized output "
                        "is a different model")


@pytest.mark.component("AddNorm")
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@settings(max_examples=5)
@given(seed=S.SEEDS, p=st.sampled_from([0.25, 0.5]))
def test_addnorm_dropout_on_y(student, ref, seed, p):
    """in training mode the output is ln(X + dropout(Y)): some entries of Y dropped, the rest scaled by 1/(1-p)"""
    d, rows = 6, 24
    addnorm, r = loaded(student.AddNorm, ref.AddNorm, ([d], p), torch.float32, seed, student)
    addnorm.train()
    X = randn((rows, 1, d), seed, scale=2.0)
    Y = randn((rows, 1, d), seed + 1).abs() + 0.5
    out = T.as_plain(addnorm(X, Y)).double().reshape(rows, d)
    w, b = layer_norm_affine(r, addnorm, "ln")
    masks = torch.tensor(list(itertools.product([0.0, 1.0], repeat=d)), dtype=torch.float64)  # (64, d)
    z = X.double().reshape(rows, 1, d) + masks * Y.double().reshape(rows, 1, d) / (1 - p)  # (rows, 64, d)
    cand = F.layer_norm(z, (d,), None if w is None else w.double(), None if b is None else b.double())
    err = (cand - out.unsqueeze(1)).abs().amax(-1)  # (rows, 64)
    best = err.argmin(-1)
    fits = err.gather(1, best.unsqueeze(1)).squeeze(1) < 1e-4
    T.check(bool(fits.all()),
            _("AddNorm([{d}], {p}) in training mode: {bad} of {rows} positions are not "
              "ln(X + dropout(Y)) for any dropout mask of Y.\n"
              "  hint: nn.Dropout(p) zeroes entries of Y and scales the kept ones by 1/(1-p) "
              "(a hand-made mask needs that scaling too); dropout acts on Y only").format(d=d, p=p, bad=int((~fits).sum()), rows=rows))
    dropped = 1 - masks[best].mean()
    T.check(0.05 < float(dropped) < 0.95,
            _("AddNorm([{d}], {p}) in training mode: a fraction {fraction:.2f} of Y's entries was "
              "dropped, expected about {p}.\n  hint: apply the dropout layer to Y in forward "
              "(and let it follow the module's training mode)").format(d=d, p=p, fraction=float(dropped)))


@pytest.mark.component("AddNorm")
@pytest.mark.kind("structure")
@pytest.mark.keep("the contract's names: no mutant misnames a parameter; the other tests bind by structure")
def test_addnorm_contract_names(student, ref):
    """AddNorm's parameters carry the contract's names (ln.weight, ln.bias)"""
    check_contract_names(student.AddNorm, ref.AddNorm, ([D], 0.0), student, "AddNorm([8], 0)")


REALISTIC_ADDNORM = [(40, 32, 0.0, 411), (64, 64, 0.5, 412)]  # (steps, d, dropout, seed)


@pytest.mark.component("AddNorm")
@pytest.mark.weight(1 / len(REALISTIC_ADDNORM))  # the cases share one test's weight
@pytest.mark.parametrize("steps,d,p,seed", REALISTIC_ADDNORM,
                         ids=[f"T{t}-d{d}-p{p}" for t, d, p, _ in REALISTIC_ADDNORM])
def test_addnorm_at_realistic_size(student, ref, steps, d, p, seed):
    """in eval mode the output equals ln(X + Y) with the same LayerNorm weights at realistic sizes (batch 8, 40-64 steps, 32-64 features)"""
    dtype = torch.float32
    addnorm, r = paired(student.AddNorm, ref.AddNorm, ([d], p), dtype, seed, student)
    X, Y = randn((REAL_B, steps, d), seed, dtype, 2.0), randn((REAL_B, steps, d), seed + 1, dtype)
    check_addnorm_call(addnorm, r, X, Y, dtype, f"AddNorm([{d}], {p}) in eval mode on X, Y of shape {tuple(X.shape)}")


def sublayers_silenced(student_cls: Any, ref_cls: Any, args: tuple, dtype: torch.dtype, seed: int, student: Any,
                       silenced: tuple[str, ...]) -> Any:
    """The student's block with the course's random weights, but the output layers of its sublayers (`silenced`:
    the course's names, `attention.W_o`, `ffn.dense2`) zero, so that every sublayer adds exactly 0: an AddNorm
    that applies dropout to the sublayer's output then gives the same values in train mode as in eval mode, one
    that applies it to the residual stream does not, whatever the random stream. The weights are bound as the
    comparisons bind them (T.copy_weights); where they do not bind, the test fails (the gate pays it in
    proportion to the comparisons, which fail too)."""
    T.seed(student, seed)
    mine = set_dtype(student_cls(*args), dtype)
    theirs = randomize_(ref_cls(*args), seed).to(dtype)
    with torch.no_grad():
        for layer in silenced:
            for parameter in theirs.get_submodule(layer).parameters():
                parameter.zero_()
    T.copy_weights(mine, theirs)
    return mine


def check_dropout_spares_the_residual(blk: Any, call: Callable[[], Any], dtype: torch.dtype, seed: int,
                                      student: Any, what: str) -> None:
    """`call()` (the block's output) in eval mode, then in train mode (dropout 0.5): the same, as every sublayer
    adds 0 and dropout acts on what the sublayers add, never on the residual X the AddNorm adds it to."""
    blk.eval()
    expected = T.as_plain(call())
    blk.train()
    T.seed(student, seed)
    compare(call(), expected, what=what, dtype=dtype, inputs={},
            hint="AddNorm(X, Y) = ln(dropout(Y) + X) with X the residual (the sublayer's input) and Y the sublayer's "
                 "output: call addnorm(X, sublayer(X)), not addnorm(sublayer(X), X)")


# -------------------------------------------------------------------------------- EncoderBlock
@st.composite
def enc_case(draw, max_b: int = 3, max_t: int = 5):
    B, steps = draw(st.integers(1, max_b), "B"), draw(st.integers(1, max_t), "steps")
    return B, steps, draw(lens_for(B, steps), "valid_lens"), draw(S.FLOAT_DTYPES, "dtype"), draw(S.SEEDS, "seed")


def check_encoder_block_call(blk: Any, r: torch.nn.Module, X: torch.Tensor, lens: Optional[torch.Tensor],
                             dtype: torch.dtype, what: str) -> None:
    """The student's EncoderBlock (eval mode) on X, valid_lens against the course's with the same weights."""
    with torch.no_grad():
        expected = r(X, lens)

    def variant(ffn_in: str = "Y", residual2: str = "Y", norm2: str = "addnorm2") -> Callable:
        def run() -> torch.Tensor:
            Y = r.addnorm1(X, r.attention(X, X, X, lens))
            inner = {"X": X, "Y": Y}
            return getattr(r, norm2)(inner[residual2], r.ffn(inner[ffn_in]))
        return run

    compare(blk(X, lens), expected, what=what, dtype=dtype,
            inputs={"valid_lens": lens},
            hint="Y = addnorm1(X, attention(X, X, X, valid_lens)); output = addnorm2(Y, ffn(Y))",
            known={_("the FFN applied to the block's input X instead of Y = addnorm1(...)"):
                       variant(ffn_in="X"),
                   _("addnorm2's residual taken from the block's input X instead of Y"): variant(residual2="X"),
                   _("addnorm1 used twice (addnorm2 is never used)"): variant(norm2="addnorm1")})


@pytest.mark.component("EncoderBlock")
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@settings(max_examples=6)
@given(case=enc_case())
def test_encoder_block_statistics(student, ref, case):
    """post-norm: every position of the output is layer-normalized (mean 0, variance 1, its last LayerNorm's gain and bias taken out)"""
    B, steps, lens, dtype, seed = case
    blk, r = loaded(student.EncoderBlock, ref.EncoderBlock, block_args(), dtype, seed, student)
    X = randn((B, steps, D), seed, dtype, 3.0) + 2
    check_normalized_by(blk(X, lens), layer_norm_affine(r, blk, "addnorm2.ln"),
                        _("EncoderBlock output for X of shape {shape}, addnorm2's LayerNorm gain and bias taken out").format(shape=(B, steps, D)))


@pytest.mark.component("EncoderBlock")
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@settings(max_examples=6)
@given(case=enc_case(max_t=5))
def test_encoder_block_padding(student, ref, case):
    """the content of padded positions (>= valid_len) does not change the outputs at valid positions"""
    B, steps, lens, dtype, seed = case
    if lens is None:
        lens = torch.tensor([max(1, steps - b) for b in range(B)])
    blk, _r = loaded(student.EncoderBlock, ref.EncoderBlock, block_args(), dtype, seed, student)
    X = randn((B, steps, D), seed, dtype)
    pad = torch.arange(steps).unsqueeze(0) >= lens.unsqueeze(1)  # (B, steps)
    X2 = torch.where(pad.unsqueeze(-1), randn((B, steps, D), seed + 1, dtype, 5.0), X)
    Y, Y2 = T.as_plain(blk(X, lens)), T.as_plain(blk(X2, lens))
    T.assert_close(Y2[~pad], Y[~pad], what=_("outputs at valid positions after changing the padded ones"),
                   inputs={"valid_lens": lens}, rtol=MODEL_TOL[dtype][0], atol=MODEL_TOL[dtype][1],
                   hint="pass valid_lens to the self-attention so that no query attends to padding")


@pytest.mark.component("EncoderBlock")
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@settings(max_examples=4)
@given(B=st.integers(2, 3), steps=st.integers(1, 4), seed=S.SEEDS)
def test_encoder_block_batch_independence(student, ref, B, steps, seed):
    """each sequence of the batch is encoded on its own"""
    # Guards against batch mixing (e.g. one sequence's valid length used for all); the zoo's
    # mutants are caught earlier, this keeps the property explicit.
    blk, _r = loaded(student.EncoderBlock, ref.EncoderBlock, block_args(), torch.float32, seed, student)
    X = randn((B, steps, D), seed)
    lens = torch.tensor([max(1, steps - b) for b in range(B)])
    Y = T.as_plain(blk(X, lens))
    for b in range(B):
        T.assert_close(blk(X[b:b + 1], lens[b:b + 1]), Y[b:b + 1], what=_("sequence {b} encoded alone vs in the batch").format(b=b),
                       inputs={"valid_lens": lens}, rtol=1e-4, atol=1e-5,
                       hint="nothing may mix batch items; valid_lens[b] belongs to sequence b")


@pytest.mark.component("EncoderBlock")
@pytest.mark.kind("property")  # `ref` only gives the weights it loads
@settings(max_examples=3)
@given(case=enc_case())
def test_encoder_block_dropout_spares_the_residual(student, ref, case):
    """in training, dropout acts on what each sublayer adds, never on the residual stream (addnorm(X, sublayer(X)))"""
    B, steps, lens, dtype, seed = case
    blk = sublayers_silenced(student.EncoderBlock, ref.EncoderBlock, block_args(0.5), dtype, seed, student,
                             ("attention.W_o", "ffn.dense2"))
    X = randn((B, steps, D), seed, dtype, 2.0)
    check_dropout_spares_the_residual(blk, lambda: blk(X, lens), dtype, seed, student,
                                      _("EncoderBlock output in train mode (dropout 0.5), both sublayers adding 0, "
                                        "vs eval mode"))


@pytest.mark.component("EncoderBlock")
@pytest.mark.weight(2)
@settings(max_examples=8)
@given(case=enc_case(), p=st.sampled_from([0.0, 0.3]))
def test_encoder_block_matches_reference(student, ref, case, p):
    """matches the course's EncoderBlock with the same weights (eval mode)"""
    B, steps, lens, dtype, seed = case
    blk, r = paired(student.EncoderBlock, ref.EncoderBlock, block_args(p), dtype, seed, student)
    check_encoder_block_call(blk, r, randn((B, steps, D), seed, dtype, 2.0), lens, dtype,
                             f"EncoderBlock output (dropout={p}, eval mode)")


@pytest.mark.component("EncoderBlock")
@pytest.mark.kind("dependence")
@settings(max_examples=4)
@given(case=enc_case())
@example(case=(REAL_B, 40, torch.arange(33, 41), torch.float32, 5))  # and at a realistic size
def test_encoder_block_depends_on_its_inputs_as_the_course_does(student, ref, case):
    """the outputs depend on every valid position of their sequence, and not on padded ones or other sequences, as the course's do"""
    B, steps, lens, dtype, seed = case
    b, args = B - 1, [randn((B, steps, D), seed, dtype, 2.0), lens]
    t = seed % (steps if lens is None else int(lens[b]))  # a valid position drawn from the seed: no index is special
    changes = [(_("X[{b}, {t}] changes").format(b=b, t=t), S.changed_at(args, 0, (b, t), seed + 50))]
    if lens is not None and int(lens[b]) < steps:
        changes.append((_("X[{b}, {t}] (past the valid length) changes").format(b=b, t=int(lens[b])),
                        S.changed_at(args, 0, (b, int(lens[b])), seed + 51)))
    check_dependence(student.EncoderBlock, ref.EncoderBlock, block_args(0.0), args, changes, seed, student,
                     _("EncoderBlock (valid_lens {lens})").format(lens=None if lens is None else lens.tolist()),
                     dtype=dtype)


@pytest.mark.component("EncoderBlock")
@settings(max_examples=5)
@given(case=enc_case())
def test_encoder_block_matches_reference_in_train_mode(student, ref, case):
    """in train mode with dropout 0 the block matches the course's with the same weights (training changes nothing else)"""
    B, steps, lens, dtype, seed = case
    blk, r = paired(student.EncoderBlock, ref.EncoderBlock, block_args(0.0), dtype, seed, student, mode="train")
    check_encoder_block_call(blk, r, randn((B, steps, D), seed, dtype, 2.0), lens, dtype,
                             _("EncoderBlock output (dropout=0, train mode)"))


@pytest.mark.component("EncoderBlock")
@pytest.mark.kind("structure")
@pytest.mark.keep("the contract's names: no mutant misnames a parameter; the other tests bind by structure")
def test_encoder_block_contract_names(student, ref):
    """the block's parameters carry the contract's names (attention.W_q, addnorm1, ffn.dense1, addnorm2, ...)"""
    check_contract_names(student.EncoderBlock, ref.EncoderBlock, block_args(), student,
                         "EncoderBlock(8, 8, 8, 8, [8], 8, 16, 2, 0)")


#: (steps, num_hiddens, num_heads, valid_lens kind, dropout, seed)
REALISTIC_ENCODER_BLOCK = [(40, 32, 4, "none", 0.0, 421), (64, 64, 8, "1d", 0.3, 422)]


@pytest.mark.component("EncoderBlock")
@pytest.mark.weight(1 / len(REALISTIC_ENCODER_BLOCK))  # the cases share one test's weight
@pytest.mark.parametrize("steps,d,heads,lens_kind,p,seed", REALISTIC_ENCODER_BLOCK,
                         ids=[f"T{t}-d{d}-h{h}-lens_{k}-p{p}" for t, d, h, k, p, _ in REALISTIC_ENCODER_BLOCK])
def test_encoder_block_at_realistic_size(student, ref, steps, d, heads, lens_kind, p, seed):
    """matches the course's EncoderBlock with the same weights (eval mode) at realistic sizes (batch 8, 40-64 steps, 32-64 features, 4-8 heads)"""
    dtype = torch.float32
    blk, r = realistic_paired(student.EncoderBlock, ref.EncoderBlock, sized_block_args(d, heads, p), seed, student)
    X = randn((REAL_B, steps, d), seed, dtype, 2.0)
    check_encoder_block_call(blk, r, X, realistic_lens(lens_kind, REAL_B, steps, seed + 1), dtype,
                             f"EncoderBlock(num_hiddens={d}, num_heads={heads}) output on X of shape "
                             f"{tuple(X.shape)} (dropout={p}, eval mode)")


# -------------------------------------------------------------------------- TransformerEncoder
#: The parts of an encoder comparison scored separately.
ENCODER_PARTS = ("output", "attention_weights")


def check_encoder_call(student: Any, paired_up: Callable[[], tuple[Any, torch.nn.Module]], key: tuple,
                       X: torch.Tensor, lens: Optional[torch.Tensor], layers: int,
                       num_hiddens: int, dtype: torch.dtype, what: str, part: str) -> None:
    """The student's TransformerEncoder (eval mode) on tokens X against the course's with the same weights
    (`paired_up()`, built from `key`): the output (`what`) or every block's attention weights (`part`).
    Both parts check one call (T.shared)."""
    def run() -> tuple:
        enc, r = paired_up()
        with torch.no_grad():
            expected = r(X, lens)
        Y = enc(X, lens)
        weights = T.Snapshot(lambda: T.attribute(enc, "attention_weights", "TransformerEncoder"))
        return weights, r, expected, [T.as_plain(w) for w in r.attention_weights], Y

    weights_read, r, expected, ref_weights, Y = T.shared(student, run, X, lens, *key)
    if part == "attention_weights":
        weights = weights_read.get()
        T.check(len(weights) == layers, _("attention_weights should have one entry per block ({layers}), "
                                          "got {count}").format(layers=layers, count=len(weights)))
        for i in range(layers):  # their values, in the model's dtype: the output part checks the dtype
            mine = T.as_plain(weights[i], f"attention_weights[{i}]").to(ref_weights[i].dtype)
            compare(mine, ref_weights[i], what=_("attention_weights[{i}] (block {i}'s self-attention weights)").format(i=i),
                    dtype=dtype, hint="entry i is blks[i].attention.attention.attention_weights, stored "
                                      "right after block i ran")
        return

    def variant(scale: str) -> Callable:
        def run() -> torch.Tensor:
            E = r.embedding(X)
            if scale == "after":
                H = r.pos_encoding(E) * math.sqrt(num_hiddens)
            else:
                H = r.pos_encoding(E * (1 if scale == "none" else math.sqrt(num_hiddens)))
            for blk in r.blks:
                H = blk(H, lens)
            return H
        return run

    compare(Y, expected, what=what, dtype=dtype, inputs={"X": X, "valid_lens": lens},
            hint="X = pos_encoding(embedding(X) * sqrt(num_hiddens)), then every block in order with valid_lens",
            known={_("embeddings NOT multiplied by sqrt(num_hiddens) before adding the positional encoding"):
                       variant("none"),
                   _("sqrt(num_hiddens) applied after adding the positional encoding"): variant("after")})


@pytest.mark.component("TransformerEncoder")
@pytest.mark.kind("structure")  # a count of parameters; `ref` gives the expected count
def test_encoder_blocks_have_own_weights(student, ref):
    """each of the encoder's num_layers blocks has its own weights (no block shared)"""
    enc = student.TransformerEncoder(*model_args(3))
    distinct_blocks(enc, ref.TransformerEncoder(*model_args(3)), 3, "TransformerEncoder", torch.tensor([[1, 2, 3]]), None)


@pytest.mark.component("TransformerEncoder")
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@settings(max_examples=5)
@given(case=enc_case(max_t=5))
def test_encoder_padding(student, ref, case):
    """padded tokens (positions >= valid_len) do not change the outputs at valid positions"""
    B, steps, lens, dtype, seed = case
    if lens is None:
        lens = torch.tensor([max(1, steps - b) for b in range(B)])
    enc, _r = loaded(student.TransformerEncoder, ref.TransformerEncoder, model_args(2), dtype, seed, student)
    X = randint(VOCAB, (B, steps), seed)
    pad = torch.arange(steps).unsqueeze(0) >= lens.unsqueeze(1)
    X2 = torch.where(pad, randint(VOCAB, (B, steps), seed + 1), X)
    Y, Y2 = T.as_plain(enc(X, lens)), T.as_plain(enc(X2, lens))
    T.assert_close(Y2[~pad], Y[~pad], what=_("encoder outputs at valid positions after changing padded tokens"),
                   inputs={"X": X, "X changed": X2, "valid_lens": lens},
                   rtol=MODEL_TOL[dtype][0], atol=MODEL_TOL[dtype][1],
                   hint="pass valid_lens to every block")


@pytest.mark.component("TransformerEncoder")
@pytest.mark.weight(3 / len(ENCODER_PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", ENCODER_PARTS)
@settings(max_examples=8)
@given(case=enc_case(), layers=st.integers(1, 3), p=st.sampled_from([0.0, 0.2]))
def test_encoder_matches_reference(student, ref, part, case, layers, p):
    """matches the course's encoder (embeddings scaled by sqrt(num_hiddens)), weights included"""
    B, steps, lens, dtype, seed = case
    args = model_args(layers, p)
    check_encoder_call(student, lambda: paired(student.TransformerEncoder, ref.TransformerEncoder, args, dtype, seed,
                                               student), (args, dtype, seed),
                       randint(VOCAB, (B, steps), seed), lens, layers, D, dtype,
                       f"TransformerEncoder output ({layers} blocks, eval mode)", part)


def token_changed(X: torch.Tensor, index: tuple, vocab: int) -> torch.Tensor:
    """X with the token at `index` replaced by another (the next id)."""
    out = X.clone()
    out[index] = (out[index] + 1) % vocab
    return out


@pytest.mark.component("TransformerEncoder")
@pytest.mark.kind("dependence")
@settings(max_examples=4)
@given(case=enc_case(), layers=st.integers(1, 2))
@example(case=(REAL_B, 40, torch.arange(33, 41), torch.float32, 5), layers=2)  # and at a realistic size
def test_encoder_depends_on_its_inputs_as_the_course_does(student, ref, case, layers):
    """the outputs depend on every valid token of their sequence, and not on padded ones or other sequences, as the course's do"""
    B, steps, lens, dtype, seed = case
    b, X = B - 1, randint(VOCAB, (B, steps), seed)
    t = seed % (steps if lens is None else int(lens[b]))  # a valid position drawn from the seed: no index is special
    changes = [(_("token X[{b}, {t}] changes").format(b=b, t=t), [token_changed(X, (b, t), VOCAB), lens])]
    if lens is not None and int(lens[b]) < steps:
        changes.append((_("token X[{b}, {t}] (past the valid length) changes").format(b=b, t=int(lens[b])),
                        [token_changed(X, (b, int(lens[b])), VOCAB), lens]))
    check_dependence(student.TransformerEncoder, ref.TransformerEncoder, model_args(layers, 0.0), [X, lens], changes,
                     seed, student, _("TransformerEncoder ({layers} blocks, valid_lens {lens})").format(
                         layers=layers, lens=None if lens is None else lens.tolist()), dtype=dtype)


@pytest.mark.component("TransformerEncoder")
@pytest.mark.weight(1 / len(ENCODER_PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", ENCODER_PARTS)
@settings(max_examples=4)
@given(case=enc_case(), layers=st.integers(1, 2))
def test_encoder_matches_reference_in_train_mode(student, ref, part, case, layers):
    """in train mode with dropout 0 the encoder matches the course's with the same weights, weights included (training changes nothing else)"""
    B, steps, lens, dtype, seed = case
    args = model_args(layers, 0.0)
    check_encoder_call(student, lambda: paired(student.TransformerEncoder, ref.TransformerEncoder, args, dtype, seed,
                                               student, mode="train"), (args, dtype, seed, "train"),
                       randint(VOCAB, (B, steps), seed), lens, layers, D, dtype,
                       _("TransformerEncoder output ({layers} blocks, dropout=0, train mode)").format(layers=layers), part)


@pytest.mark.component("TransformerEncoder")
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
def test_encoder_weights_from_last_call(student, ref):
    """attention_weights holds one entry per block, from the last forward call only"""
    enc, _r = loaded(student.TransformerEncoder, ref.TransformerEncoder, model_args(2), torch.float32, 0, student)
    enc(randint(VOCAB, (2, 5), 0), torch.tensor([5, 3]))
    enc(randint(VOCAB, (1, 3), 1), torch.tensor([2]))
    weights = T.attribute(enc, "attention_weights", "TransformerEncoder")
    T.check(len(weights) == 2, _("after two forward calls, attention_weights should still have one entry "
                                 "per block (2), got {count}: reset the list in every forward call").format(count=len(weights)))
    for i in range(2):
        T.assert_shape(weights[i], (HEADS, 3, 3), _("attention_weights[{i}] after a call on a (1, 3) input").format(i=i))


@pytest.mark.component("TransformerEncoder")
@pytest.mark.kind("structure")
@pytest.mark.keep("the contract's names: no mutant misnames a parameter; the other tests bind by structure")
def test_encoder_contract_names(student, ref):
    """the encoder's parameters carry the contract's names (embedding, blks.<i>.attention..., blks.<i>.addnorm1, ...)"""
    check_contract_names(student.TransformerEncoder, ref.TransformerEncoder, model_args(2), student,
                         "TransformerEncoder(11, 8, 8, 8, 8, [8], 8, 16, 2, 2, 0)")


#: (steps, num_hiddens, num_heads, valid_lens kind, dropout, seed); REAL_LAYERS blocks
REALISTIC_ENCODER = [(40, 32, 4, "1d", 0.0, 431), (64, 64, 8, "none", 0.2, 432)]


@pytest.mark.component("TransformerEncoder")
@pytest.mark.weight(1 / (len(REALISTIC_ENCODER) * len(ENCODER_PARTS)))  # the cases and parts share one test's weight
@pytest.mark.parametrize("part", ENCODER_PARTS)
@pytest.mark.parametrize("steps,d,heads,lens_kind,p,seed", REALISTIC_ENCODER,
                         ids=[f"T{t}-d{d}-h{h}-lens_{k}-p{p}" for t, d, h, k, p, _ in REALISTIC_ENCODER])
def test_encoder_at_realistic_size(student, ref, steps, d, heads, lens_kind, p, seed, part):
    """matches the course's encoder (2 blocks, eval mode), attention weights included, at realistic sizes (batch 8, 40-64 steps, 32-64 features, 4-8 heads)"""
    dtype, layers, args = torch.float32, REAL_LAYERS, sized_model_args(d, heads, p)
    X = randint(REAL_VOCAB, (REAL_B, steps), seed)
    check_encoder_call(student, lambda: realistic_paired(student.TransformerEncoder, ref.TransformerEncoder, args, seed,
                                                         student), (args, seed), X, realistic_lens(lens_kind, REAL_B, steps, seed + 1), layers, d, dtype,
                       f"TransformerEncoder output ({layers} blocks, num_hiddens={d}, num_heads={heads}, "
                       f"eval mode) on X of shape {tuple(X.shape)}", part)


# -------------------------------------------------------------------------------- DecoderBlock
@st.composite
def dec_case(draw, min_t: int = 1, max_t: int = 5):
    B, steps = draw(st.integers(1, 3), "B"), draw(st.integers(min_t, max_t), "steps")
    T_enc = draw(st.integers(1, 4), "T_enc")
    return (B, steps, T_enc, draw(lens_for(B, T_enc), "enc_valid_lens"), draw(S.FLOAT_DTYPES, "dtype"),
            draw(S.SEEDS, "seed"))


#: A state's cache is bookkeeping (what each block keeps of its inputs, not a value computed from them): its
#: part is a structure check, counted in proportion to the reference comparisons passed.
CACHE = pytest.param("cache", marks=pytest.mark.kind("structure"), id="cache")
#: The parts of a decoder block's checks scored separately.
BLOCK_PARTS = ("output", CACHE)
#: BLOCK_PARTS of a test that compares a module with itself and uses `ref` only for the weights it loads (`loaded`):
#: its output part is a property (the cache part stays a structure check).
SELF_PARTS = (pytest.param("output", marks=pytest.mark.kind("property"), id="output"), CACHE)


def fresh_state(enc: torch.Tensor, lens: Optional[torch.Tensor], n: int = 1) -> list:
    return [enc, lens, [None] * n]


def check_decoder_block_call(student: Any, paired_up: Callable[[], tuple[Any, torch.nn.Module]], key: tuple,
                             X: torch.Tensor, enc: torch.Tensor,
                             lens: Optional[torch.Tensor], dtype: torch.dtype, what: str, part: str) -> None:
    """One call of the student's DecoderBlock (eval mode, empty cache) against the course's with the same
    weights (`paired_up()`, built from `key`): the output (`what`) or the cache it leaves (`part`). Both
    parts check one call (T.shared)."""
    def run() -> tuple:
        blk, r = paired_up()
        with torch.no_grad():
            expected, _state = r(X, fresh_state(enc, lens))
        Y, state = blk(X, fresh_state(enc, lens))
        return r, expected, Y, state

    r, expected, Y, state = T.shared(student, run, X, enc, lens, *key)
    if part == "cache":
        T.assert_close(state[2][0], X, what=_("state[2][0] after one call on an empty cache"),
                       hint="the cache holds the block's inputs X")
        return
    compare(Y, expected, what=what, dtype=dtype,
            inputs={"enc_valid_lens": lens},
            hint="Y = addnorm1(X, attention1(X, kv, kv, causal lens)); Z = addnorm2(Y, attention2(Y, "
                 "enc_outputs, enc_outputs, enc_valid_lens)); output = addnorm3(Z, ffn(Z))",
            known={_("the encoder-decoder attention queried with X instead of Y = addnorm1(...)"):
                       lambda: ref_block_variant(r, X, enc, lens, cross_query="X"),
                   _("self-attention without the causal mask"): lambda: ref_block_variant(r, X, enc, lens, causal=False),
                   _("the encoder-decoder attention ignoring enc_valid_lens"):
                       lambda: ref_block_variant(r, X, enc, lens, use_lens=False),
                   _("the FFN reads Y (after the self-attention) instead of Z = addnorm2(...)"):
                       lambda: ref_block_variant(r, X, enc, lens, ffn_in="Y")})


def student_block(student: Any, ref: Any, dtype: torch.dtype, seed: int, dropout: float = 0.0, i: int = 0) -> Any:
    """The student's DecoderBlock for a property test, the course's weights loaded (`loaded`), in eval mode."""
    return loaded(student.DecoderBlock, ref.DecoderBlock, block_args(dropout) + (i,), dtype, seed, student)[0]


def ref_block_variant(r: Any, X: torch.Tensor, enc: torch.Tensor, lens: Optional[torch.Tensor],
                      cross_query: str = "Y", causal: bool = True, use_lens: bool = True,
                      ffn_in: str = "Z") -> torch.Tensor:
    """The reference block's forward on an empty cache, with one known mistake switched on."""
    B, steps = X.shape[0], X.shape[1]
    dec_lens = torch.arange(1, steps + 1).repeat(B, 1) if causal else None
    Y = r.addnorm1(X, r.attention1(X, X, X, dec_lens))
    Y2 = r.attention2(X if cross_query == "X" else Y, enc, enc, lens if use_lens else None)
    Z = r.addnorm2(Y, Y2)
    return r.addnorm3(Z, r.ffn(Y if ffn_in == "Y" else Z))


@pytest.mark.component("DecoderBlock")
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@settings(max_examples=4)
@given(case=dec_case(), i=st.integers(0, 2))
def test_decoder_block_own_cache_slot(student, ref, case, i):
    """block i reads and appends to its own cache slot state[2][i] only"""
    B, steps, T_enc, lens, dtype, seed = case
    blk = student_block(student, ref, dtype, seed, i=i)
    blk.eval()
    X, enc = randn((B, steps, D), seed, dtype), randn((B, T_enc, D), seed + 1, dtype)
    Y, _state = blk(X, fresh_state(enc, lens, 3))
    others = [randn((B, 2 + j, D), seed + 2 + j, dtype) for j in range(3)]
    state = fresh_state(enc, lens, 3)
    for j in range(3):
        state[2][j] = None if j == i else others[j]
    Y2, state = blk(X, state)
    T.assert_close(Y2, Y, what=_("block {i}'s output when the other blocks' cache slots are filled").format(i=i),
                   rtol=MODEL_TOL[dtype][0], atol=MODEL_TOL[dtype][1],
                   hint="block i reads state[2][self.i] (self.i is the i passed to __init__), not another slot")
    cache = state[2]
    T.check(len(cache) == 3, _("state[2] should keep one slot per block (3 here), got {count}").format(count=len(cache)))
    for j in range(3):
        if j == i:
            T.assert_close(cache[j], X, what=_("state[2][{i}] (this block's cache) after the call").format(i=i),
                           hint="append X to state[2][self.i]")
        else:
            T.assert_close(cache[j], others[j], what=_("state[2][{j}] (another block's cache slot)").format(j=j),
                           hint="a block only writes state[2][self.i]")


@pytest.mark.component("DecoderBlock")
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@pytest.mark.weight(2)
@settings(max_examples=8)
@given(case=dec_case(min_t=2), mode=st.sampled_from(["eval", "train"]), data=st.data())
def test_decoder_block_causal(student, ref, case, mode, data):
    """self-attention is causal in train and eval mode: changing step t changes no output before t"""
    B, steps, T_enc, lens, dtype, seed = case
    t = data.draw(st.integers(1, steps - 1), "t")
    blk = student_block(student, ref, dtype, seed, dropout=0.0 if mode == "train" else 0.3)
    blk.train() if mode == "train" else blk.eval()
    X, enc = randn((B, steps, D), seed, dtype), randn((B, T_enc, D), seed + 1, dtype)
    X2 = X.clone()
    X2[:, t] += randn((B, D), seed + 2, dtype, 5.0)
    Y, _state = blk(X, fresh_state(enc, lens))
    Y2, _state = blk(X2, fresh_state(enc, lens))
    T.assert_close(T.as_plain(Y2)[:, :t], T.as_plain(Y)[:, :t],
                   what=_("outputs at steps 0..{last} after changing step {t} ({mode} mode, whole sequence fed at once)").format(last=t - 1, t=t, mode=mode),
                   rtol=MODEL_TOL[dtype][0], atol=MODEL_TOL[dtype][1], sides=(_("after the change"), _("before it")),
                   hint="self-attention must be causal in every mode: the query at step p sees steps "
                        "0..p only, so no output may depend on a future step; the mask (valid lengths "
                        "t+1 .. t+T for a cache of t) is needed in eval mode too")


@pytest.mark.component("DecoderBlock")
@pytest.mark.weight(2 / len(BLOCK_PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", SELF_PARTS)
@settings(max_examples=8)
@given(case=dec_case(), mode=st.sampled_from(["eval", "train"]))
def test_decoder_block_step_by_step(student, ref, part, case, mode):
    """one step at a time with the cache gives the whole-sequence outputs; the cache grows by one per step"""
    B, steps, T_enc, lens, dtype, seed = case
    X, enc = randn((B, steps, D), seed, dtype), randn((B, T_enc, D), seed + 1, dtype)

    def run() -> tuple:  # the whole sequence's outputs; each step's outputs and state
        blk = student_block(student, ref, dtype, seed)
        blk.train() if mode == "train" else blk.eval()
        whole, _state = blk(X, fresh_state(enc, lens))
        state = fresh_state(enc, lens)

        def step(t: int) -> tuple:
            nonlocal state
            Y, state = blk(X[:, t:t + 1], state)
            return T.as_plain(Y), T.Snapshot(lambda: state[2][0])  # the cache as it is now (a list may be reused)
        return T.as_plain(whole), T.steps(step, steps)

    whole, (done, stopped) = T.shared(student, run, case, mode)
    for t, (_Y, cache) in enumerate(done):
        if part == "output":
            compare(torch.cat([Y for Y, _state in done[:t + 1]], 1), whole[:, :t + 1], dtype=dtype,
                    what=_("outputs of steps 0..{t} fed one at a time ({mode} mode) vs the whole sequence").format(t=t, mode=mode),
                    sides=(_("one at a time"), _("whole sequence")),
                    hint="at each step, attend over cat(cache, X): the new token sees every cached step "
                         "and itself (valid length t+1); with one new token there is nothing to mask")
            continue
        cache = cache.get()
        T.assert_shape(cache, (B, t + 1, D), _("state[2][0] after {next} steps (the cache grows by one per step)").format(next=t + 1))
        T.assert_close(cache, X[:, :t + 1], what=_("state[2][0] after {next} steps").format(next=t + 1),
                       hint="the cache holds the block's inputs X seen so far (not its outputs): "
                            "cat(cache, X) on the time axis")
    if stopped is not None:
        raise stopped


@pytest.mark.component("DecoderBlock")
@pytest.mark.weight(2 / len(BLOCK_PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", SELF_PARTS)
@settings(max_examples=10)
@given(data=st.data(), case=dec_case(min_t=2, max_t=6), mode=st.sampled_from(["eval", "train"]))
def test_decoder_block_chunks(student, ref, part, data, case, mode):
    """feeding the sequence in chunks of any sizes gives the same outputs and cache as feeding it at once"""
    B, steps, T_enc, lens, dtype, seed = case
    sizes = data.draw(chunking(steps), "chunk sizes")
    X, enc = randn((B, steps, D), seed, dtype), randn((B, T_enc, D), seed + 1, dtype)

    def run() -> tuple:  # both parts check these calls (T.shared)
        blk = student_block(student, ref, dtype, seed)
        blk.train() if mode == "train" else blk.eval()
        whole, _state = blk(X, fresh_state(enc, lens))
        state, outs, start = fresh_state(enc, lens), [], 0
        for size in sizes:
            Y, state = blk(X[:, start:start + size], state)
            outs.append(T.as_plain(Y))
            start += size
        return whole, state, outs

    whole, state, outs = T.shared(student, run, case, mode, sizes)
    if part == "cache":
        T.assert_close(state[2][0], X, what=_("state[2][0] after chunks of sizes {sizes}").format(sizes=sizes),
                       hint="every call appends its X to the cache")
        return
    compare(torch.cat(outs, 1), T.as_plain(whole), dtype=dtype,
            what=_("outputs for chunks of sizes {sizes} ({mode} mode) vs the whole sequence").format(sizes=sizes, mode=mode),
            sides=(_("in chunks"), _("whole sequence")),
            hint="the new tokens X sit at positions t .. t+T-1 of cat(cache, X): the query at position "
                 "t+j must see exactly positions 0..t+j, i.e. valid lengths t+1 .. t+T (not 1 .. T, "
                 "and not None when several tokens arrive on a non-empty cache)")


@pytest.mark.component("DecoderBlock")
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@settings(max_examples=6)
@given(case=dec_case(), mode=st.sampled_from(["eval", "train"]))
def test_decoder_block_encoder_padding(student, ref, case, mode):
    """encoder outputs past enc_valid_lens have no effect"""
    B, steps, T_enc, lens, dtype, seed = case
    if lens is None or T_enc == 1:
        T_enc = max(T_enc, 2)
        lens = torch.tensor([max(1, T_enc - 1 - b % 2) for b in range(B)])
    blk = student_block(student, ref, dtype, seed)
    blk.train() if mode == "train" else blk.eval()
    X, enc = randn((B, steps, D), seed, dtype), randn((B, T_enc, D), seed + 1, dtype)
    pad = (torch.arange(T_enc).unsqueeze(0) >= lens.unsqueeze(1)).unsqueeze(-1)
    enc2 = torch.where(pad, randn((B, T_enc, D), seed + 2, dtype, 5.0), enc)
    Y, _state = blk(X, fresh_state(enc, lens))
    Y2, _state = blk(X, fresh_state(enc2, lens))
    T.assert_close(Y2, Y, what=_("outputs after changing encoder outputs past enc_valid_lens"),
                   inputs={"enc_valid_lens": lens}, rtol=MODEL_TOL[dtype][0], atol=MODEL_TOL[dtype][1],
                   hint="pass enc_valid_lens (state[1]) to the encoder-decoder attention, so that "
                        "padded source positions get no weight")


@pytest.mark.component("DecoderBlock")
@pytest.mark.kind("property")  # `ref` only gives the weights it loads
@settings(max_examples=3)
@given(case=dec_case())
def test_decoder_block_dropout_spares_the_residual(student, ref, case):
    """in training, dropout acts on what each sublayer adds, never on the residual stream (addnorm(X, sublayer(X)))"""
    B, steps, T_enc, lens, dtype, seed = case
    blk = sublayers_silenced(student.DecoderBlock, ref.DecoderBlock, block_args(0.5) + (0,), dtype, seed, student,
                             ("attention1.W_o", "attention2.W_o", "ffn.dense2"))
    X, enc = randn((B, steps, D), seed, dtype, 2.0), randn((B, T_enc, D), seed + 1, dtype)
    check_dropout_spares_the_residual(blk, lambda: blk(X, fresh_state(enc, lens))[0], dtype, seed, student,
                                      _("DecoderBlock output in train mode (dropout 0.5), every sublayer adding 0, "
                                        "vs eval mode"))


@pytest.mark.component("DecoderBlock")
@pytest.mark.kind("dependence")
@settings(max_examples=4)
@given(case=dec_case(min_t=2))
@example(case=(REAL_B, 40, 48, torch.arange(41, 49), torch.float32, 5))  # and at a realistic size
def test_decoder_block_depends_on_its_inputs_as_the_course_does(student, ref, case):
    """each output depends on the inputs up to its own step and on the valid encoder outputs of its sequence, and on nothing else, as the course's does"""
    B, steps, T_enc, lens, dtype, seed = case
    b, args = B - 1, [randn((B, steps, D), seed, dtype, 2.0), randn((B, T_enc, D), seed + 1, dtype), lens]
    e = seed % (T_enc if lens is None else int(lens[b]))  # positions drawn from the seed: no index is special
    changes = [(_("X[{b}, {t}] changes").format(b=b, t=t), S.changed_at(args, 0, (b, t), seed + 50 + t))
               for t in sorted({seed % (steps - 1), steps - 1})]
    changes.append((_("enc_outputs[{b}, {t}] changes").format(b=b, t=e), S.changed_at(args, 1, (b, e), seed + 60)))
    if lens is not None and int(lens[b]) < T_enc:
        changes.append((_("enc_outputs[{b}, {t}] (past enc_valid_lens) changes").format(b=b, t=int(lens[b])),
                        S.changed_at(args, 1, (b, int(lens[b])), seed + 61)))
    check_dependence(student.DecoderBlock, ref.DecoderBlock, block_args(0.0) + (0,), args, changes, seed, student,
                     _("DecoderBlock on a whole sequence, empty cache (enc_valid_lens {lens})").format(
                         lens=None if lens is None else lens.tolist()),
                     output=lambda blk: lambda X, enc, lens: blk(X, fresh_state(enc, lens))[0], dtype=dtype)


@pytest.mark.component("DecoderBlock")
@pytest.mark.weight(1 / len(BLOCK_PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", BLOCK_PARTS)
@settings(max_examples=4)
@given(case=dec_case())
def test_decoder_block_matches_reference_in_train_mode(student, ref, part, case):
    """in train mode with dropout 0 the block matches the course's with the same weights (training changes nothing else)"""
    B, steps, T_enc, lens, dtype, seed = case
    args = block_args(0.0) + (0,)
    X, enc = randn((B, steps, D), seed, dtype, 2.0), randn((B, T_enc, D), seed + 1, dtype)
    check_decoder_block_call(student, lambda: paired(student.DecoderBlock, ref.DecoderBlock, args, dtype, seed, student,
                                                     mode="train"),
                             (args, dtype, seed, "train"), X, enc, lens, dtype,
                             _("DecoderBlock output (dropout=0, train mode)"), part)


@pytest.mark.component("DecoderBlock")
@pytest.mark.weight(2 / len(BLOCK_PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", BLOCK_PARTS)
@settings(max_examples=8)
@given(case=dec_case(), p=st.sampled_from([0.0, 0.3]))
def test_decoder_block_matches_reference(student, ref, part, case, p):
    """matches the course's DecoderBlock with the same weights (eval mode)"""
    B, steps, T_enc, lens, dtype, seed = case
    args = block_args(p) + (0,)
    X, enc = randn((B, steps, D), seed, dtype, 2.0), randn((B, T_enc, D), seed + 1, dtype)
    check_decoder_block_call(student, lambda: paired(student.DecoderBlock, ref.DecoderBlock, args, dtype, seed, student),
                             (args, dtype, seed), X, enc, lens, dtype, f"DecoderBlock output (dropout={p}, eval mode)",
                             part)


@pytest.mark.component("DecoderBlock")
@pytest.mark.kind("structure")
@pytest.mark.keep("the contract's names: no mutant misnames a parameter; the other tests bind by structure")
def test_decoder_block_contract_names(student, ref):
    """the block's parameters carry the contract's names (attention1, addnorm1, attention2, addnorm2, ffn, addnorm3)"""
    check_contract_names(student.DecoderBlock, ref.DecoderBlock, block_args() + (0,), student,
                         "DecoderBlock(8, 8, 8, 8, [8], 8, 16, 2, 0, 0)")


#: (target steps, source steps, num_hiddens, num_heads, enc_valid_lens kind, dropout, seed)
REALISTIC_DECODER_BLOCK = [(40, 64, 32, 4, "1d", 0.0, 441), (64, 40, 64, 8, "none", 0.3, 442)]


@pytest.mark.component("DecoderBlock")
@pytest.mark.weight(1 / (len(REALISTIC_DECODER_BLOCK) * len(BLOCK_PARTS)))  # the cases and parts share one test's weight
@pytest.mark.parametrize("part", BLOCK_PARTS)
@pytest.mark.parametrize("steps,T_enc,d,heads,lens_kind,p,seed", REALISTIC_DECODER_BLOCK,
                         ids=[f"T{t}-Tenc{e}-d{d}-h{h}-lens_{k}-p{p}" for t, e, d, h, k, p, _ in REALISTIC_DECODER_BLOCK])
def test_decoder_block_at_realistic_size(student, ref, steps, T_enc, d, heads, lens_kind, p, seed, part):
    """matches the course's DecoderBlock with the same weights (eval mode) at realistic sizes (batch 8, 40-64 target and source steps, 32-64 features, 4-8 heads)"""
    dtype, args = torch.float32, sized_block_args(d, heads, p) + (0,)
    X, enc = randn((REAL_B, steps, d), seed, dtype, 2.0), randn((REAL_B, T_enc, d), seed + 1, dtype)
    check_decoder_block_call(student, lambda: realistic_paired(student.DecoderBlock, ref.DecoderBlock, args, seed,
                                                               student), (args, seed), X, enc, realistic_lens(lens_kind, REAL_B, T_enc, seed + 2), dtype,
                             f"DecoderBlock(num_hiddens={d}, num_heads={heads}) output on X of shape {tuple(X.shape)}, "
                             f"enc_outputs of shape {tuple(enc.shape)} (dropout={p}, eval mode)", part)


# -------------------------------------------------------------------------- TransformerDecoder
def ref_decoder_run(r: Any, X: torch.Tensor, state: list, offset: Optional[int], scale: bool = True):
    """The reference decoder's forward with positions starting at `offset` (None: the true ones)."""
    cached = 0 if state[2][0] is None else state[2][0].shape[1]
    start = cached if offset is None else offset
    H = r.embedding(X) * (math.sqrt(D) if scale else 1.0) + r.pos_encoding.P[:, start:start + X.shape[1]].to(r.embedding.weight.dtype)
    for blk in r.blks:
        H, state = blk(H, state)
    return r.dense(H), state


@st.composite
def model_case(draw, min_t: int = 1, max_t: int = 5):
    B, steps = draw(st.integers(1, 3), "B"), draw(st.integers(min_t, max_t), "steps")
    T_enc = draw(st.integers(1, 4), "T_enc")
    return (B, steps, T_enc, draw(lens_for(B, T_enc), "enc_valid_lens"), draw(st.integers(1, 2), "num_layers"),
            draw(S.FLOAT_DTYPES, "dtype"), draw(S.SEEDS, "seed"))


def student_decoder(student: Any, ref: Any, layers: int, dtype: torch.dtype, seed: int, dropout: float = 0.0) -> Any:
    """The student's TransformerDecoder for a property test, the course's weights loaded (`loaded`), in eval mode."""
    return loaded(student.TransformerDecoder, ref.TransformerDecoder, model_args(layers, dropout), dtype, seed,
                  student)[0]


@pytest.mark.component("TransformerDecoder")
@pytest.mark.kind("structure")  # a count of parameters; `ref` gives the expected count
def test_decoder_blocks_have_own_weights(student, ref):
    """each of the decoder's num_layers blocks has its own weights (no block shared)"""
    dec = student.TransformerDecoder(*model_args(3))
    distinct_blocks(dec, ref.TransformerDecoder(*model_args(3)), 3, "TransformerDecoder", torch.tensor([[1, 2, 3]]),
                    dec.init_state(torch.zeros(1, 4, D), None))


#: The parts of a decoder's checks scored separately.
DECODER_PARTS = ("logits", CACHE, "attention_weights")


def check_decoder_call(student: Any, paired_up: Callable[[], tuple[Any, torch.nn.Module]], key: tuple,
                       X: torch.Tensor, enc: torch.Tensor,
                       lens: Optional[torch.Tensor], layers: int, dtype: torch.dtype, what: str,
                       without_lens: Callable[[Any], torch.Tensor], part: str) -> None:
    """One whole-sequence call of the student's decoder against the course's with the same weights
    (`paired_up()`, built from `key`): logits (`what`), caches or attention weights (`part`); every part
    checks one call (T.shared). `without_lens(course's decoder)` gives the course's logits with
    enc_valid_lens dropped (a known mistake)."""
    def run() -> tuple:
        dec, r = paired_up()
        with torch.no_grad():
            expected, ref_state = r(X, r.init_state(enc, lens))
        ref_self, ref_cross = ([T.as_plain(w) for w in ws] for ws in r.attention_weights)
        logits, state = dec(X, dec.init_state(enc, lens))
        weights = T.Snapshot(lambda: T.attribute(dec, "attention_weights", "TransformerDecoder"))
        return weights, r, expected, ref_state, ref_self, ref_cross, logits, state

    weights, r, expected, ref_state, ref_self, ref_cross, logits, state = T.shared(student, run, X, enc, lens, *key)
    if part == "cache":
        T.check(len(state) == 3 and len(state[2]) == layers,
                _("the returned state should be [enc_outputs, enc_valid_lens, cache] with {layers} cache slots").format(layers=layers))
        for i in range(layers):
            T.assert_close(state[2][i], ref_state[2][i], what=_("state[2][{i}] (block {i}'s cache) after the call").format(i=i),
                           rtol=MODEL_TOL[dtype][0], atol=MODEL_TOL[dtype][1],
                           hint="each block appends its own input to its cache slot")
        return
    if part == "attention_weights":
        check_decoder_weights(weights.get(), ref_self, ref_cross, layers, dtype)
        return
    compare(logits, expected, what=what, dtype=dtype,
            inputs={"X": X, "enc_valid_lens": lens},
            hint="embedding(X) * sqrt(num_hiddens) + P at the true positions, dropout, the blocks in "
                 "order, then dense",
            known={_("embeddings NOT multiplied by sqrt(num_hiddens)"):
                       lambda: ref_decoder_run(r, X, r.init_state(enc, lens), None, scale=False)[0],
                   _("enc_valid_lens dropped from the state (padded source positions attended)"):
                       lambda: without_lens(r)})


def check_decoder_weights(weights: Any, ref_self: list, ref_cross: list, layers: int, dtype: torch.dtype) -> None:
    """The decoder's stored attention_weights against the course's ([self, cross], one per block)."""
    T.check(len(weights) == 2 and all(len(w) == layers for w in weights),
            _("attention_weights should be [self-attention weights, cross-attention weights], "
              "each a list of {layers} (one per block)").format(layers=layers))
    for i in range(layers):
        compare(weights[0][i], ref_self[i], dtype=dtype, what=f"attention_weights[0][{i}] (block {i}'s self-attention)",
                hint="attention_weights[0][i] is blks[i].attention1.attention.attention_weights "
                     "(B*h, T, t+T); [1][i] is attention2's (B*h, T, T_enc)",
                known={_("block i's encoder-decoder (attention2) weights: self and cross swapped or "
                         "stored from the wrong attention"): lambda i=i: ref_cross[i]})
        compare(weights[1][i], ref_cross[i], dtype=dtype,
                what=_("attention_weights[1][{i}] (block {i}'s encoder-decoder attention)").format(i=i),
                hint="attention_weights[1][i] is blks[i].attention2.attention.attention_weights",
                known={_("block i's self-attention (attention1) weights: stored from the wrong attention"):
                           lambda i=i: ref_self[i]})


@pytest.mark.component("TransformerDecoder")
@pytest.mark.kind("dependence")
@settings(max_examples=4)
@given(case=model_case(min_t=2))
@example(case=(REAL_B, 40, 48, torch.arange(41, 49), 2, torch.float32, 5))  # and at a realistic size
def test_decoder_depends_on_its_inputs_as_the_course_does(student, ref, case):
    """each step's logits depend on the tokens up to that step and on the valid encoder outputs of its sequence, and on nothing else, as the course's do"""
    B, steps, T_enc, lens, layers, dtype, seed = case
    b = B - 1
    args = [randint(VOCAB, (B, steps), seed), randn((B, T_enc, D), seed + 1, dtype), lens]
    e = seed % (T_enc if lens is None else int(lens[b]))  # positions drawn from the seed: no index is special
    changes = [(_("token X[{b}, {t}] changes").format(b=b, t=t), [token_changed(args[0], (b, t), VOCAB), *args[1:]])
               for t in sorted({seed % (steps - 1), steps - 1})]
    changes.append((_("enc_outputs[{b}, {t}] changes").format(b=b, t=e), S.changed_at(args, 1, (b, e), seed + 60)))
    if lens is not None and int(lens[b]) < T_enc:
        changes.append((_("enc_outputs[{b}, {t}] (past enc_valid_lens) changes").format(b=b, t=int(lens[b])),
                        S.changed_at(args, 1, (b, int(lens[b])), seed + 61)))
    check_dependence(student.TransformerDecoder, ref.TransformerDecoder, model_args(layers, 0.0), args, changes, seed,
                     student, _("TransformerDecoder ({layers} blocks) on a whole sequence (enc_valid_lens {lens})").format(
                         layers=layers, lens=None if lens is None else lens.tolist()),
                     output=lambda dec: lambda X, enc, lens: dec(X, dec.init_state(enc, lens))[0], dtype=dtype)


@pytest.mark.component("TransformerDecoder")
@pytest.mark.weight(1 / len(DECODER_PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", DECODER_PARTS)
@settings(max_examples=4)
@given(case=model_case())
def test_decoder_matches_reference_in_train_mode(student, ref, part, case):
    """in train mode with dropout 0 the decoder matches the course's on a whole sequence with the same weights: logits, caches and attention weights (training changes nothing else)"""
    B, steps, T_enc, lens, layers, dtype, seed = case
    args = model_args(layers, 0.0)
    X, enc = randint(VOCAB, (B, steps), seed), randn((B, T_enc, D), seed + 1, dtype)
    check_decoder_call(student, lambda: paired(student.TransformerDecoder, ref.TransformerDecoder, args, dtype, seed,
                                               student, mode="train"), (args, dtype, seed, "train"),
                       X, enc, lens, layers, dtype,
                       _("TransformerDecoder logits ({layers} blocks, dropout=0, train mode)").format(layers=layers),
                       lambda r: ref_decoder_run(r, X, r.init_state(enc, None), None)[0], part)


@pytest.mark.component("TransformerDecoder")
@pytest.mark.weight(2 / len(DECODER_PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", DECODER_PARTS)
@settings(max_examples=8)
@given(case=model_case(), p=st.sampled_from([0.0, 0.2]))
def test_decoder_matches_reference(student, ref, part, case, p):
    """matches the course's decoder on a whole sequence: logits, caches and attention weights"""
    B, steps, T_enc, lens, layers, dtype, seed = case
    args = model_args(layers, p)
    X, enc = randint(VOCAB, (B, steps), seed), randn((B, T_enc, D), seed + 1, dtype)
    check_decoder_call(student, lambda: paired(student.TransformerDecoder, ref.TransformerDecoder, args, dtype, seed,
                                               student), (args, dtype, seed),
                       X, enc, lens, layers, dtype, f"TransformerDecoder logits ({layers} blocks, eval mode)",
                       lambda r: ref_decoder_run(r, X, r.init_state(enc, None), None)[0], part)


@pytest.mark.component("TransformerDecoder")
@pytest.mark.kind("property")  # the decoder against itself; `ref` only re-enacts a known mistake
@pytest.mark.weight(3 / len(BLOCK_PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", BLOCK_PARTS)
@settings(max_examples=8)
@given(case=model_case(), mode=st.sampled_from(["eval", "train"]))
def test_decoder_step_by_step(student, ref, part, case, mode):
    """decoding one token at a time equals decoding the whole sequence (true positions); caches grow by one"""
    B, steps, T_enc, lens, layers, dtype, seed = case
    X, enc = randint(VOCAB, (B, steps), seed), randn((B, T_enc, D), seed + 1, dtype)

    def run() -> tuple:  # the whole sequence's logits; each step's logits, caches and the book's variant's logits
        dec, r = paired(student.TransformerDecoder, ref.TransformerDecoder, model_args(layers), dtype, seed, student)
        dec.train() if mode == "train" else dec.eval()
        whole, _state = dec(X, dec.init_state(enc, lens))
        state, ref_state = dec.init_state(enc, lens), r.init_state(enc, lens)

        def step(t: int) -> tuple:
            nonlocal state, ref_state
            logits, state = dec(X[:, t:t + 1], state)
            with torch.no_grad():
                variant, ref_state = ref_decoder_run(r, X[:, t:t + 1], ref_state, offset=0)
            return T.as_plain(logits), T.Snapshot(lambda: list(state[2])), variant  # the caches as they are now
        return T.as_plain(whole), T.steps(step, steps)

    whole, (done, stopped) = T.shared(student, run, case, mode)
    for t, (_logits, caches, _variant) in enumerate(done):
        if part == "cache":
            caches = caches.get()
            T.check(len(caches) == layers, _("state[2] should keep one cache slot per block ({layers})").format(layers=layers))
            for i in range(layers):
                T.assert_shape(caches[i], (B, t + 1, D),
                               _("state[2][{i}] after {next} one-token steps (each block's cache grows by one per step)").format(i=i, next=t + 1))
            continue
        got = torch.cat([logits for logits, _caches, _variant in done[:t + 1]], 1)
        compare(got, whole[:, :t + 1], dtype=dtype, inputs={"X": X},
                what=_("logits of steps 0..{t} decoded one token at a time ({mode} mode, dropout 0) vs "
                       "the whole sequence").format(t=t, mode=mode), sides=(_("one at a time"), _("whole sequence")),
                hint="the token after t cached ones is at position t: its positional encoding is P[t] "
                     "(use the cache length as the offset)",
                known={_("P[0] added at every step: the positional encoding ignores the tokens already "
                         "in the cache (the book's decoder)"):
                           lambda t=t: torch.cat([variant for _logits, _caches, variant in done[:t + 1]], 1)})
    if stopped is not None:
        raise stopped


@pytest.mark.component("TransformerDecoder")
@pytest.mark.weight(2 / len(DECODER_PARTS))  # as much as the whole sequence's logits
@settings(max_examples=6)
@given(case=model_case())
def test_decoder_step_by_step_matches_reference(student, ref, case):
    """decoding one token at a time (eval mode) gives the course's decoder's logits at every step"""
    # The course compares both ways of decoding: on whole sequences alone, a decoder wrong only one token at a
    # time (the book's P[0]) kept what passes its self-consistency tests, and its mirror lost it.
    B, steps, T_enc, lens, layers, dtype, seed = case
    dec, r = paired(student.TransformerDecoder, ref.TransformerDecoder, model_args(layers), dtype, seed, student)
    X, enc = randint(VOCAB, (B, steps), seed), randn((B, T_enc, D), seed + 1, dtype)
    state, ref_state, outs, expected = dec.init_state(enc, lens), r.init_state(enc, lens), [], []
    for t in range(steps):
        logits, state = dec(X[:, t:t + 1], state)
        outs.append(T.as_plain(logits))
        with torch.no_grad():
            ref_logits, ref_state = ref_decoder_run(r, X[:, t:t + 1], ref_state, None)
        expected.append(ref_logits)
        compare(torch.cat(outs, 1), torch.cat(expected, 1), dtype=dtype, inputs={"X": X},
                what=_("logits of steps 0..{t} decoded one token at a time (eval mode) vs the course's "
                       "decoder's").format(t=t),
                hint="the token after t cached ones is at position t: its positional encoding is P[t] "
                     "(use the cache length as the offset)")


@pytest.mark.component("TransformerDecoder")
@pytest.mark.weight(2 / len(BLOCK_PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", SELF_PARTS)
@settings(max_examples=8)
@given(data=st.data(), case=model_case(min_t=2, max_t=6), mode=st.sampled_from(["eval", "train"]))
def test_decoder_chunks(student, ref, part, data, case, mode):
    """feeding the target in chunks of any sizes gives the whole-sequence logits and caches"""
    B, steps, T_enc, lens, layers, dtype, seed = case
    sizes = data.draw(chunking(steps), "chunk sizes")
    X, enc = randint(VOCAB, (B, steps), seed), randn((B, T_enc, D), seed + 1, dtype)

    def run() -> tuple:  # both parts check these calls (T.shared)
        dec = student_decoder(student, ref, layers, dtype, seed)
        dec.train() if mode == "train" else dec.eval()
        whole, whole_state = dec(X, dec.init_state(enc, lens))
        state, outs, start = dec.init_state(enc, lens), [], 0
        for size in sizes:
            logits, state = dec(X[:, start:start + size], state)
            outs.append(T.as_plain(logits))
            start += size
        return whole, whole_state, state, outs

    whole, whole_state, state, outs = T.shared(student, run, case, mode, sizes)
    if part == "cache":
        for i in range(layers):
            T.assert_close(state[2][i], whole_state[2][i],
                           what=_("state[2][{i}] after the chunks vs after the whole sequence").format(i=i),
                           rtol=MODEL_TOL[dtype][0], atol=MODEL_TOL[dtype][1], sides=(_("in chunks"), _("whole sequence")))
        return
    compare(torch.cat(outs, 1), T.as_plain(whole), dtype=dtype, inputs={"X": X},
            what=_("logits for chunks of sizes {sizes} ({mode} mode, dropout 0) vs the whole sequence").format(sizes=sizes, mode=mode),
            sides=(_("in chunks"), _("whole sequence")),
            hint="new tokens after t cached ones sit at positions t .. t+T-1 and get P[t .. t+T-1] "
                 "(the same path, embedding * sqrt(d) + P then dropout, for any number of new tokens)")


@pytest.mark.component("TransformerDecoder")
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@settings(max_examples=5)
@given(case=model_case(min_t=2), mode=st.sampled_from(["eval", "train"]), data=st.data())
def test_decoder_causal(student, ref, case, mode, data):
    """changing target token t changes no logits before t (train mode with dropout 0, and eval mode)"""
    # Block-level causality is graded in DecoderBlock (the reference block is used here); this checks
    # that the decoder itself adds nothing that looks ahead or depends on earlier calls.
    B, steps, T_enc, lens, layers, dtype, seed = case
    t = data.draw(st.integers(1, steps - 1), "t")
    dec = student_decoder(student, ref, layers, dtype, seed, dropout=0.0 if mode == "train" else 0.3)
    dec.train() if mode == "train" else dec.eval()
    X, enc = randint(VOCAB, (B, steps), seed), randn((B, T_enc, D), seed + 1, dtype)
    X2 = X.clone()
    X2[:, t] = (X2[:, t] + 1 + randint(VOCAB - 1, (B,), seed + 2)) % VOCAB
    Y, _state = dec(X, dec.init_state(enc, lens))
    Y2, _state = dec(X2, dec.init_state(enc, lens))
    T.assert_close(T.as_plain(Y2)[:, :t], T.as_plain(Y)[:, :t], inputs={"X": X, "X changed": X2},
                   what=_("logits at steps 0..{last} after changing token {t} ({mode} mode)").format(last=t - 1, t=t, mode=mode),
                   rtol=MODEL_TOL[dtype][0], atol=MODEL_TOL[dtype][1], sides=(_("after the change"), _("before it")),
                   hint="no logit may depend on a later target token")


@pytest.mark.component("TransformerDecoder")
@pytest.mark.kind("property")  # `ref` only gives the weights the comparisons load
@settings(max_examples=5)
@given(case=model_case(), mode=st.sampled_from(["eval", "train"]))
def test_decoder_encoder_padding(student, ref, case, mode):
    """encoder outputs past enc_valid_lens have no effect on the logits"""
    B, steps, T_enc, lens, layers, dtype, seed = case
    if lens is None or T_enc == 1:
        T_enc = max(T_enc, 2)
        lens = torch.tensor([max(1, T_enc - 1 - b % 2) for b in range(B)])
    dec = student_decoder(student, ref, layers, dtype, seed)
    dec.train() if mode == "train" else dec.eval()
    X, enc = randint(VOCAB, (B, steps), seed), randn((B, T_enc, D), seed + 1, dtype)
    pad = (torch.arange(T_enc).unsqueeze(0) >= lens.unsqueeze(1)).unsqueeze(-1)
    enc2 = torch.where(pad, randn((B, T_enc, D), seed + 2, dtype, 5.0), enc)
    Y, _state = dec(X, dec.init_state(enc, lens))
    Y2, _state = dec(X, dec.init_state(enc2, lens))
    T.assert_close(Y2, Y, what=_("logits after changing encoder outputs past enc_valid_lens"),
                   inputs={"enc_valid_lens": lens}, rtol=MODEL_TOL[dtype][0], atol=MODEL_TOL[dtype][1],
                   hint="init_state must keep enc_valid_lens in the state: [enc_outputs, enc_valid_lens, "
                        "[None] * num_layers]")


@pytest.mark.component("TransformerDecoder")
@pytest.mark.part("attention_weights")  # a stored side output: the scoring gate weighs the outputs
@settings(max_examples=4)
@given(case=model_case(min_t=2))
def test_decoder_step_attention_weights(student, ref, case):
    """in step-by-step decoding, attention_weights are those of the last step: (B*h, 1, t+1) and (B*h, 1, T_enc)"""
    B, steps, T_enc, lens, layers, dtype, seed = case
    dec, r = paired(student.TransformerDecoder, ref.TransformerDecoder, model_args(layers), dtype, seed, student)
    X, enc = randint(VOCAB, (B, steps), seed), randn((B, T_enc, D), seed + 1, dtype)
    state, ref_state = dec.init_state(enc, lens), r.init_state(enc, lens)
    for t in range(steps):
        _logits, state = dec(X[:, t:t + 1], state)
        with torch.no_grad():
            _logits, ref_state = r(X[:, t:t + 1], ref_state)
        weights = T.attribute(dec, "attention_weights", "TransformerDecoder")
        T.check(len(weights) == 2 and all(len(w) == layers for w in weights),
                _("after step {t}, attention_weights should be [self weights, cross weights] with "
                  "{layers} entries each (from the last call only), got lengths "
                  "{lengths}").format(t=t, layers=layers, lengths=[len(w) for w in weights] if len(weights) == 2 else len(weights)))
        for kind in range(2):
            for i in range(layers):
                compare(weights[kind][i], T.as_plain(r.attention_weights[kind][i]), dtype=dtype,
                        what=_("attention_weights[{kind}][{i}] after step {t} (one token on a cache of {t})").format(kind=kind, i=i, t=t),
                        hint="store blks[i].attention1 / attention2 .attention.attention_weights of the "
                             "last forward call")


@pytest.mark.component("TransformerDecoder")
@pytest.mark.weight(2)
@pytest.mark.keep("end-to-end sanity of the decoder in a whole model; the zoo's decoder mutants are caught earlier")
def test_transformer_trains(student):
    """a tiny encoder-decoder Transformer learns to copy short sequences (the loss falls)"""
    # No double jeopardy: TransformerEncoder is among TransformerDecoder's `needs` in course.yml,
    # so the encoder here is the reference one (with num_layers=0: embedding and positions only).
    vocab, B, L = 8, 16, 4
    src = randint(vocab, (B, L), 3, low=2)
    lens = torch.tensor([L - (b % 2) for b in range(B)])
    src = torch.where(torch.arange(L).unsqueeze(0) < lens.unsqueeze(1), src, torch.zeros_like(src))
    dec_in = torch.cat([torch.ones(B, 1, dtype=torch.long), src[:, :-1]], 1)  # 1 = <bos>
    batch = {"inputs": [src, lens, dec_in, src, lens]}
    T.seed(student, 0)
    enc = student.TransformerEncoder(*model_args(0, 0.0, vocab))
    net = student.EncoderDecoder(enc, student.TransformerDecoder(*model_args(1, 0.0, vocab)))

    def measure() -> float:
        net.eval()
        logits, _ = net(src, dec_in, lens)
        mask = torch.arange(L).unsqueeze(0) < lens.unsqueeze(1)
        ce = F.cross_entropy(T.as_plain(logits).permute(0, 2, 1), src, reduction="none")
        return float((ce * mask).sum() / mask.sum())

    before = measure()
    T.fit(net, [batch], loss="masked_ce", lr=0.03, steps=20)
    after = measure()
    T.check(after < 0.5 * before,
            _("after 20 Adam steps on a tiny copy task, the masked cross-entropy went from {before:.3f} "
              "to {after:.3f} (expected it to at least halve).\n"
              "  hint: check that the logits come from dense(X) after all blocks and that every layer "
              "is registered as a submodule (so that its parameters are trained)").format(before=before, after=after))


@pytest.mark.component("TransformerDecoder")
@pytest.mark.kind("structure")
@pytest.mark.keep("the contract's names: no mutant misnames a parameter; the other tests bind by structure")
def test_decoder_contract_names(student, ref):
    """the decoder's parameters carry the contract's names (embedding, blks.<i>.attention1, ..., dense)"""
    check_contract_names(student.TransformerDecoder, ref.TransformerDecoder, model_args(2), student,
                         "TransformerDecoder(11, 8, 8, 8, 8, [8], 8, 16, 2, 2, 0)")


#: (target steps, source steps, num_hiddens, num_heads, enc_valid_lens kind, dropout, seed); REAL_LAYERS blocks
REALISTIC_DECODER = [(40, 64, 32, 4, "1d", 0.0, 451), (64, 40, 64, 8, "none", 0.2, 452)]


@pytest.mark.component("TransformerDecoder")
@pytest.mark.weight(1 / (len(REALISTIC_DECODER) * len(DECODER_PARTS)))  # the cases and parts share one test's weight
@pytest.mark.parametrize("part", DECODER_PARTS)
@pytest.mark.parametrize("steps,T_enc,d,heads,lens_kind,p,seed", REALISTIC_DECODER,
                         ids=[f"T{t}-Tenc{e}-d{d}-h{h}-lens_{k}-p{p}" for t, e, d, h, k, p, _ in REALISTIC_DECODER])
def test_decoder_at_realistic_size(student, ref, steps, T_enc, d, heads, lens_kind, p, seed, part):
    """matches the course's decoder (2 blocks, eval mode) on a whole sequence at realistic sizes (batch 8, 40-64 target and source steps, 32-64 features, 4-8 heads): logits, caches and attention weights"""
    dtype, layers, args = torch.float32, REAL_LAYERS, sized_model_args(d, heads, p)
    X, enc = randint(REAL_VOCAB, (REAL_B, steps), seed), randn((REAL_B, T_enc, d), seed + 1, dtype)
    lens = realistic_lens(lens_kind, REAL_B, T_enc, seed + 2)
    # ref_decoder_run's scaling uses the suite's D = 8: the known mistake without enc_valid_lens runs the course's decoder.
    check_decoder_call(student, lambda: realistic_paired(student.TransformerDecoder, ref.TransformerDecoder, args, seed,
                                                         student), (args, seed), X, enc, lens, layers, dtype,
                       f"TransformerDecoder logits ({layers} blocks, num_hiddens={d}, num_heads={heads}, eval mode) "
                       f"on X of shape {tuple(X.shape)}, enc_outputs of shape {tuple(enc.shape)}",
                       lambda r: r(X, r.init_state(enc, None))[0], part)
