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


def as_plain(t: Any) -> torch.Tensor:
    """A plain detached CPU tensor copy (strips subclasses in self-check mode too)."""
    if not isinstance(t, torch.Tensor):
        raise AssertionError(f"expected a tensor, got {type(t).__name__}")
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


def assert_close(actual: Any, expected: torch.Tensor, *, what: str,
                 inputs: Optional[dict[str, Any]] = None, hint: Optional[str] = None,
                 rtol: Optional[float] = None, atol: Optional[float] = None,
                 check_dtype: bool = True) -> None:
    """Compare an output with the expected one; on failure explain what, on which input, how far off."""
    lines = [f"{what}:"]
    if inputs:
        lines += [f"  input {k} = {describe_value(v)}" for k, v in inputs.items()]

    def fail(reason: str) -> None:
        if hint:
            lines.append(f"  hint: {hint}")
        raise AssertionError("\n".join([lines[0], f"  {reason}"] + lines[1:]))

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


def call_and_inputs(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, list[Any]]:
    """Call fn and return (result, args as they are after the call), to check inputs are unchanged."""
    if _is_remote(fn):
        result, args_after = fn.__remote_call__(args, kwargs, return_args=True)
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
        return fn.__remote_vjp__(list(args), kwargs, grad_output, list(wrt), output_index)
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


_BLOCK = re.compile(r"(^|\.)block(\d+)(?=\.|$)")


def normalize_key(key: str) -> str:
    """`blks.block0.x` and `blks.0.x` name the same parameter (Sequential vs ModuleList)."""
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
