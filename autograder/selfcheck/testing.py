"""Helpers for the course's test suites (public and hidden).

Tests see a submission through the `student` fixture: `student.masked_softmax(X, lens)` returns
plain tensors, and `student.AdditiveAttention(...)` returns a module-like object. During grading
that object is a proxy to a sandboxed child process; during a notebook's self-check it is the
student's real object. The helpers below work the same on both, so one test file serves both.

This module must stay free of reference solutions: it ships to students with the public tests.
"""
from __future__ import annotations

import math
import re
from typing import Any, Optional
from collections.abc import Callable, Iterable, Sequence

import torch

from autograder.sandbox.runtime import procedures

#: Relative and absolute tolerances per dtype (the contract: float32 around 1e-5 relative).
TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float16: (1e-3, 1e-3), torch.bfloat16: (1e-2, 1e-2),
    torch.float32: (1e-5, 1e-5), torch.float64: (1e-10, 1e-10),
}


def tolerance(dtype: torch.dtype) -> tuple[float, float]:
    """(rtol, atol) for comparing outputs of this dtype."""
    return TOLERANCES.get(dtype, (0.0, 0.0))


def _is_remote(obj: Any) -> bool:
    return hasattr(obj, "__remote_call__")


def describe_value(value: Any, max_numel: int = 24) -> str:
    """A short human description of an input: shape and dtype, and the values when small."""
    if isinstance(value, torch.Tensor):
        head = f"tensor of shape {tuple(value.shape)}, {str(value.dtype).replace('torch.', '')}"
        if value.numel() <= max_numel:
            body = torch.Tensor.tolist(value.detach())
            return f"{head}: {_round(body)}"
        return head
    if isinstance(value, (list, tuple)) and len(value) <= 8:
        return "(" + ", ".join(describe_value(v, max_numel) for v in value) + ")"
    return repr(value)[:200]


def _round(v: Any) -> Any:
    if isinstance(v, float):
        return float(f"{v:.4g}")
    if isinstance(v, list):
        return [_round(x) for x in v]
    return v


def as_plain(t: Any, what: Optional[str] = None) -> torch.Tensor:
    """A plain detached CPU tensor copy (strips subclasses in self-check mode too).

    Anything else fails the test: "<what>: expected a tensor, got <type>" (`what` names the value).
    """
    if isinstance(t, Missing):
        raise AssertionError(t.reason)
    if not isinstance(t, torch.Tensor):
        raise AssertionError(f"{what + ': ' if what else ''}expected a tensor, got {type(t).__name__}")
    return torch.Tensor.clone(torch.Tensor.detach(t)).cpu().as_subclass(torch.Tensor)


def check(condition: bool, message: str) -> None:
    """assert with a message that survives `python -O`."""
    if not condition:
        raise AssertionError(message)


def assert_shape(actual: Any, shape: Sequence[int], what: str) -> None:
    """Fail with a clear message unless `actual` is a tensor of this shape."""
    check(isinstance(actual, torch.Tensor), f"{what}: expected a tensor, got {type(actual).__name__}")
    check(tuple(actual.shape) == tuple(shape),
          f"{what}: expected shape {tuple(shape)}, got {tuple(actual.shape)}")


#: Set by the grader's plugin while a test runs (None in a notebook's self-check):
#: (actual, expected, inputs, rtol, atol) -> the known misconceptions that reproduce `actual`.
DIAGNOSE: Optional[Callable[[Any, Any, dict[str, Any], float, float], frozenset[str]]] = None


class Mismatch(AssertionError):
    """A failed comparison, with the known misconceptions (catalogue families) that reproduce it."""

    def __init__(self, message: str, candidates: frozenset[str] = frozenset()) -> None:
        super().__init__(message)
        self.candidates = candidates


class Missing:
    """An attribute the student's object lacks, read by a test that may not need it: any use fails
    with `reason`, so only the tests that check that attribute lose points."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise AssertionError(self.reason)

    def _fail(self, *args: Any) -> Any:
        raise AssertionError(self.reason)

    __getitem__ = __lt__ = __le__ = __gt__ = __ge__ = __add__ = __sub__ = __mul__ = __truediv__ = _fail
    __matmul__ = __radd__ = __rsub__ = __rmul__ = __neg__ = __abs__ = __len__ = __iter__ = __float__ = _fail


def attribute(obj: Any, name: str, what: str) -> Any:
    """obj.<name>, or a `Missing` that fails the test only where it is used."""
    try:
        return getattr(obj, name)
    except AttributeError:
        return Missing(f"{what}: your module has no attribute `{name}` (the contract names it so)")


def assert_close(actual: Any, expected: torch.Tensor, *, what: str,
                 inputs: Optional[dict[str, Any]] = None, hint: Optional[str] = None,
                 rtol: Optional[float] = None, atol: Optional[float] = None,
                 check_dtype: bool = True) -> None:
    """Compare an output with the expected one; on failure explain what, on which input, how far off,
    and, where the grader finds the one known misconception that reproduces the output, name it.

    `hint` documents for the suite's readers what the test checks; it is not shown to students: a
    fixed hint names mistakes a student did not make (the diagnosis names the one they did).
    """
    lines = [f"{what}:"]
    if inputs:
        lines += [f"  input {k} = {describe_value(v)}" for k, v in inputs.items()]
    raw_actual, raw_expected = actual, expected

    def fail(reason: str) -> None:
        found: frozenset[str] = frozenset()
        if DIAGNOSE is not None and isinstance(raw_actual, torch.Tensor):
            tol = tolerance(raw_expected.dtype) if isinstance(raw_expected, torch.Tensor) else (0.0, 0.0)
            found = DIAGNOSE(as_plain(raw_actual), raw_expected, dict(inputs or {}),
                             rtol if rtol is not None else tol[0], atol if atol is not None else tol[1])
        raise Mismatch("\n".join([lines[0], f"  {reason}"] + lines[1:]), found)

    if isinstance(actual, Missing):
        raise AssertionError(actual.reason)
    if not isinstance(actual, torch.Tensor):
        fail(f"expected a tensor, got {type(actual).__name__}")
    actual = as_plain(actual)
    expected = as_plain(expected)
    if tuple(actual.shape) != tuple(expected.shape):
        fail(f"expected shape {tuple(expected.shape)}, got {tuple(actual.shape)}")
    if check_dtype and actual.dtype != expected.dtype:
        fail(f"expected dtype {expected.dtype}, got {actual.dtype}")
    dr, da = tolerance(expected.dtype)
    rtol = dr if rtol is None else rtol
    atol = da if atol is None else atol
    a, e = actual.to(torch.float64), expected.to(torch.float64)
    if not torch.isfinite(a).all() and torch.isfinite(e).all():
        fail("your output contains NaN or infinity")
    if torch.equal(a.isnan(), e.isnan()) and torch.allclose(a.nan_to_num(), e.nan_to_num(), rtol=rtol, atol=atol):
        return
    err = (a - e).abs().nan_to_num(nan=math.inf)
    idx = tuple(int(i) for i in torch.unravel_index(torch.argmax(err), err.shape)) if err.numel() else ()
    where = f" at index {list(idx)}" if idx else ""
    reason = (f"max abs error {float(err.max()):.3g}{where}: expected {float(e[idx]):.6g}, "
              f"got {float(a[idx]):.6g} (rtol={rtol:g}, atol={atol:g})")
    if actual.numel() <= 24:
        lines.append(f"  expected {_round(e.tolist())}")
        lines.append(f"  got      {_round(a.tolist())}")
    fail(reason)


def cloned(value: Any) -> Any:
    """`value` with every tensor in it cloned, inside lists, tuples and dicts too; other objects as they are."""
    if isinstance(value, torch.Tensor):
        return torch.Tensor.clone(value)
    if type(value) in (list, tuple):
        return type(value)(cloned(v) for v in value)
    if type(value) is dict:
        return {k: cloned(v) for k, v in value.items()}
    return value


def _arg_text(value: Any) -> str:
    """An argument as a failure message shows it: tensors by their shape, containers element-wise."""
    if isinstance(value, torch.Tensor):
        return str(tuple(value.shape))
    if type(value) is list:
        return "[" + ", ".join(_arg_text(v) for v in value) + "]"
    if type(value) is tuple:
        return "(" + ", ".join(_arg_text(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    return type(value).__name__


def _type_text(types: type | tuple[type, ...]) -> str:
    names = [("tensor" if t is torch.Tensor else t.__name__) for t in (types if isinstance(types, tuple) else (types,))]
    return "a " + " or ".join(names)


def call(what: str, fn: Callable[..., Any], *args: Any, hint: Optional[str] = None,
         returns: Optional[type | tuple[type, ...]] = None, show_args: bool = True, **kwargs: Any) -> Any:
    """Call the student's `fn(*args, **kwargs)` (a function, a module, a method) and return its result.

    Tensors among the arguments are passed as copies (`cloned`), so the caller's inputs stay as
    they are. An exception becomes a failure that says what was called and why:
    "<what> with arguments (<shapes>) raised <Error>: <message>" (`hint` is for the suite's readers:
    a crash never gets a misconception hint); `show_args=False` leaves out the arguments when `what`
    already spells them out.
    `returns`: the type (or types) the result must have; a tensor result then comes back as a
    plain detached copy (`as_plain`).
    """
    try:
        out = fn(*cloned(args), **cloned(kwargs))
    except Exception as exc:  # the student's code may raise anything
        shown = [_arg_text(a) for a in args] + [f"{k}={_arg_text(v)}" for k, v in kwargs.items()]
        given = f" with arguments ({', '.join(shown)})" if show_args else ""
        raise AssertionError(f"{what}{given} raised {type(exc).__name__}: {exc}") from None
    if returns is not None:
        check(isinstance(out, returns), f"{what} must return {_type_text(returns)}, got {type(out).__name__}")
        if isinstance(out, torch.Tensor):
            return as_plain(out)
    return out


def assert_layer_normalized(Y: Any, what: str, hint: Optional[str] = None) -> None:
    """Fail unless every position of Y has mean 0 and variance 1 over its features (the last axis),
    as a LayerNorm with its default weights gives."""
    Y = as_plain(Y).double()
    mean, var = Y.mean(-1), Y.var(-1, unbiased=False)
    check(bool((mean.abs() < 1e-4).all()) and bool(((var - 1).abs() < 1e-2).all()),
          f"{what}: every position's output should be layer-normalized over its features "
          f"(mean 0, variance 1 with the LayerNorm's default weights), but means range over "
          f"[{float(mean.min()):.3g}, {float(mean.max()):.3g}] and variances over "
          f"[{float(var.min()):.3g}, {float(var.max()):.3g}].")


def call_and_inputs(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, list[Any]]:
    """Call fn and return (result, args as they are after the call), to check inputs are unchanged."""
    if _is_remote(fn):
        remote: Any = fn  # a proxy of the grader's (grading/remote.py)
        result, args_after = remote.__remote_call__(args, kwargs, return_args=True)
        return result, list(args_after)
    args_copy = [torch.Tensor.clone(a) if isinstance(a, torch.Tensor) else a for a in args]
    result = fn(*args_copy, **kwargs)
    return result, args_copy


def vjp(fn: Callable[..., Any], args: Sequence[Any], grad_output: torch.Tensor,
        wrt: Sequence[int] = (0,), output_index: Optional[int] = None,
        kwargs: Optional[dict[str, Any]] = None) -> list[Optional[torch.Tensor]]:
    """Gradients of <fn(*args)[output_index], grad_output> with respect to args[i] for i in wrt."""
    kwargs = kwargs or {}
    if _is_remote(fn):
        remote: Any = fn  # a proxy of the grader's (grading/remote.py)
        return remote.__remote_vjp__(list(args), kwargs, grad_output, list(wrt), output_index)
    grads = procedures.vjp(fn, args, kwargs, grad_output, wrt, output_index)
    return [None if g is None else as_plain(g) for g in grads]


def fit(model: Any, batches: list[dict[str, Any]], *, loss: str, lr: float, steps: int,
        optimizer: str = "adam") -> list[float]:
    """Train `model` with the course's fixed loop (`procedures.fit`) where the model lives; returns
    the losses per step. Never score the returned numbers: re-measure the model afterwards."""
    if _is_remote(model):
        return model.__remote_fit__(batches, loss, lr, steps, optimizer)
    return procedures.fit(model, batches, loss, lr, steps, optimizer)


def seed(student: Any, value: int) -> None:
    """Seed the random number generators where the student's code runs."""
    if _is_remote(student):
        student.__remote_seed__(value)
    else:
        procedures.seed_everything(value)

def state_dict(module: Any) -> dict[str, torch.Tensor]:
    """The module's state as plain tensors."""
    return {k: as_plain(v) for k, v in dict(module.state_dict()).items() if isinstance(v, torch.Tensor)}


_BLOCK = re.compile(r"(^|\.)block[ _-]?(\d+)(?=\.|$)")


def normalize_key(key: str) -> str:
    """`blks.block0.x`, `blks.block 0.x`, `blks.block_0.x` and `blks.0.x` name the same parameter
    (an nn.Sequential with named blocks, in the spellings learners use, or an nn.ModuleList)."""
    return _BLOCK.sub(r"\1\2", key)


def copy_weights(student_module: Any, reference_module: Any, *, skip: Iterable[str] = ("P",)) -> None:
    """Load the reference module's parameters and buffers into the student's module by name.

    Names are matched after `normalize_key`; the positional-encoding table `P` is not copied
    (it may be a plain attribute or a buffer). A missing or misshapen parameter fails the test
    with a message naming it.
    """
    skip = set(skip)
    reference = {normalize_key(k): v for k, v in reference_module.state_dict().items()
                 if k.split(".")[-1] not in skip}
    theirs = state_dict(student_module)
    loaded: dict[str, torch.Tensor] = {}
    for key, value in theirs.items():
        if key.split(".")[-1] in skip:
            continue
        norm = normalize_key(key)
        if norm not in reference:
            raise AssertionError(f"your module has a parameter or buffer '{key}' that the course's "
                                 f"model does not (expected names: {sorted(reference)[:12]})")
        if tuple(value.shape) != tuple(reference[norm].shape):
            raise AssertionError(f"parameter '{key}' has shape {tuple(value.shape)}, "
                                 f"expected {tuple(reference[norm].shape)}")
        loaded[key] = as_plain(reference[norm]).to(value.dtype)
    missing = sorted(set(reference) - {normalize_key(k) for k in loaded})
    if missing:
        raise AssertionError(f"your module is missing parameters named {missing[:8]} "
                             f"(the contract fixes these names)")
    student_module.load_state_dict(loaded, strict=False)


def param_names(module: Any) -> list[str]:
    """Names of the module's trainable parameters."""
    return [name for name, _ in module.named_parameters()]
