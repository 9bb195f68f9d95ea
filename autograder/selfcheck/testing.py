"""Helpers for the course's test suites (public and hidden).

Tests see a submission through the `student` fixture: `student.masked_softmax(X, lens)` returns
plain tensors, and `student.AdditiveAttention(...)` returns a module-like object. During grading
that object is a proxy to a sandboxed child process; during a notebook's self-check it is the
student's real object. The helpers below work the same on both, so one test file serves both.

This module must stay free of reference solutions: it ships to students with the public tests.
"""
from __future__ import annotations

import dataclasses
import hashlib
import inspect
import math
import re
import weakref
from contextvars import ContextVar
from typing import Any, Optional, TypeVar
from collections.abc import Callable, Collection, Iterable, Sequence

import torch
from hypothesis import control

from autograder.sandbox.runtime import procedures
from autograder.selfcheck.failures import NotImplementedYet
from autograder.selfcheck.i18n import _
from autograder.selfcheck.symptoms import WHERE_MARK

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


def type_name(value: Any) -> str:
    """The name of `value`'s class as a message says it: the student's class, also where the value is a sandboxed
    grader's proxy of an object in the child (`got ndarray`, never the proxy's own class)."""
    remote_type = getattr(value, "__remote_type__", None)
    return str(remote_type()) if callable(remote_type) else type(value).__name__


def describe_value(value: Any, max_numel: int = 24) -> str:
    """A short human description of an input: shape and dtype, and the values when small."""
    if isinstance(value, torch.Tensor):
        head = _("tensor of shape {shape}, {dtype}").format(shape=tuple(value.shape),
                                                             dtype=str(value.dtype).replace("torch.", ""))
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
        got = _("expected a tensor, got {type}").format(type=type_name(t))
        raise AssertionError(f"{what}: {got}" if what else got)
    return torch.Tensor.clone(torch.Tensor.detach(t)).cpu().as_subclass(torch.Tensor)


def check(condition: bool, message: str) -> None:
    """assert with a message that survives `python -O`."""
    if not condition:
        raise AssertionError(message)


def assert_shape(actual: Any, shape: Sequence[int], what: str) -> None:
    """Fail with a clear message unless `actual` is a tensor of this shape (a `Missing` fails with its reason)."""
    present(actual)
    check(isinstance(actual, torch.Tensor), f"{what}: " + _("expected a tensor, got {type}").format(
        type=type_name(actual)))
    check(tuple(actual.shape) == tuple(shape), f"{what}: " + _("expected shape {expected}, got {actual}").format(
        expected=tuple(shape), actual=tuple(actual.shape)))


@dataclasses.dataclass(frozen=True)
class Reproduced:
    """What reproduces a failed comparison: the catalogue's families (the evidence a diagnosis weighs) and
    the ids of the entries whose replay did (which member of a family the student's code behaves like);
    `replayed`: the catalogue's variants ran on the failed call at all (none may have reproduced it)."""

    families: frozenset[str] = frozenset()
    entries: frozenset[str] = frozenset()
    replayed: bool = False


#: Set by the grader's plugin while a test runs (None in a notebook's self-check):
#: (actual, expected, inputs, rtol, atol) -> the known misconceptions that reproduce `actual`.
DIAGNOSE: Optional[Callable[[Any, Any, dict[str, Any], float, float], Reproduced]] = None


class Crash(AssertionError):
    """The student's code raised where a test called it (`call`; the sandbox's StudentError too): a failure
    that shows nothing the code computed, so it earns no floor (grading/scoring.shares)."""


class Mismatch(AssertionError):
    """A failed comparison, with the known misconceptions (catalogue families and entries) that reproduce it.
    `on_values`: it failed on the numbers the code computed (shapes and dtypes agreed), or a replayed
    mistake reproduced them: a text that code cannot write without computing, unlike a crash's, a shape's
    or a fact's (the floor's evidence: Diagnosis.seen_in_values)."""

    def __init__(self, message: str, found: Reproduced = Reproduced(), on_values: bool = False) -> None:
        super().__init__(message)
        self.candidates, self.entries, self.replayed = found.families, found.entries, found.replayed
        self.on_values = on_values or bool(found.families and found.replayed)


class Ignores(AssertionError):
    """A failed dependence check (`assert_depends_like`): an output the course's moves when an input changes stays
    as it was. The code ignores an input the contract reads: unless a named realistic mistake explains its
    failures, its component is degenerate (grading/session.name_misconceptions)."""

    ignores_input = True


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


def present(value: Any) -> Any:
    """`value`, unless it is a `Missing` attribute: then the test fails with its reason (for a test that
    checks the attribute's type, which a Missing would fail with a message about the type)."""
    if isinstance(value, Missing):
        raise AssertionError(value.reason)
    return value


#: The attributes the contract defines as stored values (tensors, or lists of them), never as methods.
STORED_VALUES = frozenset({"attention_weights", "P"})


def one_slip(a: str, b: str) -> bool:
    """Whether `b` is `a` with one letter added, dropped or changed, or two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    if len(a) == len(b):
        return a[i + 1:] == b[i + 1:] or (a[i + 2:] == b[i + 2:] and a[i:i + 2] == b[i:i + 2][::-1])
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return longer[i + 1:] == shorter[i:]


def stored_spelling(name: str, names: Iterable[str]) -> Optional[str]:
    """The one of `names` that is the contract's stored value `name` (`attention_weights`) with one typing slip
    (`attention_weight`, `attetion_weights`; in any case, underscores aside: `one_slip`), else None (none, or
    several). Names shorter than eight letters have no slips: `P` is found by its shape (`stored_table`); a private
    name (`_attention_weights`, which a property may return) is none either."""
    key = name.lower().replace("_", "")
    if len(key) < 8:
        return None
    found = [n for n in names if n != name and not n.startswith("_")  # a private store (a property's) is no spelling
             and ((other := n.lower().replace("_", "")) == key or one_slip(key, other))]
    return found[0] if len(found) == 1 else None


def _attribute_names(obj: Any) -> list[str]:
    """The names of obj's instance attributes (a proxy of the grader's reads the child's)."""
    try:
        attributes = obj.__remote_attributes__() if _is_remote(obj) else vars(obj)
    except (Exception, NotImplementedYet):  # no __dict__, a proxy that fails, a stub: no names (a limit ends the test)
        return []
    return [k for k in attributes if isinstance(k, str)]


def attribute(obj: Any, name: str, what: str) -> Any:
    """obj.<name>, or a `Missing` that fails the test only where it is used: where `obj` has no such
    attribute. Where it has a method for a value the contract stores (`def attention_weights(self)` without
    @property; a submodule such as `dropout` may be a method), the method's result, or a `Missing` if calling
    it without arguments fails; where it stores such a value under a name with one typing slip (`stored_spelling`:
    `attention_weight`), that attribute."""
    try:
        value = getattr(obj, name)
    except (AttributeError, NotImplementedError, NotImplementedYet) as exc:
        # A stored value under a name with one typing slip is read there: the slip costs its own test
        # (signatures.attribute_tests, charged from the source), not every test that reads the value.
        other = stored_spelling(name, _attribute_names(obj)) if name in STORED_VALUES else None
        if other is not None:
            return _stored_value(getattr(obj, other), what, name)
        if isinstance(exc, AttributeError):
            return Missing(f"{what}: " + _("your module has no attribute `{name}` (the contract names it so)").format(name=name))
        # The given base classes (AttentionDecoder's attention_weights) raise it for a subclass to override.
        return Missing(f"{what}: " + _("reading `{name}` raised NotImplementedError: your class does not define "
                                       "`{name}` (the base class leaves it to you), or has not finished it"
                                       ).format(name=name))
    return value if name not in STORED_VALUES else _stored_value(value, what, name)


def _stored_value(value: Any, what: str, name: str) -> Any:
    """A stored value the contract names `name` as `attribute` reads it: a method's result where it is a method."""
    remote_is_method = getattr(value, "__remote_is_method__", None)  # a proxy of the grader's (grading/remote.py)
    if remote_is_method() if remote_is_method is not None else inspect.ismethod(value):
        # `def attention_weights(self)` without @property: read by calling it, so that its values are graded; the
        # slip costs its own test (signatures.attribute_tests, charged from the source)
        try:
            return value()
        except Exception:  # it needs arguments, or fails: as good as missing. A FailFast (a limit) ends the test
            return Missing(f"{what}: " + method_attribute_message(name))
    return value


def misspelt_attribute_message(name: str, theirs: str) -> str:
    """What a contract attribute stored under a name with one typing slip (`stored_spelling`) is told."""
    return _("your module stores `{theirs}`, and the contract reads `{name}`: the tests read your `{theirs}` in its "
             "place; rename it `{name}`").format(name=name, theirs=theirs)


def method_attribute_message(name: str) -> str:
    """What a contract attribute written as a method (no @property) is told."""
    return _("your module's `{name}` is a method, and the contract reads it as an attribute "
             "(`obj.{name}`, not `obj.{name}()`): put @property above `def {name}(self)`").format(name=name)


def reported() -> bool:
    """Whether a failure here is the one the test reports: always, except while hypothesis searches
    and shrinks, whose failures it only compares by where they were raised; it replays the minimal
    example once more (`is_final`) for the report. The diagnosis (its replays of known mistakes cost
    more than the comparison) is made for that replay only, with the same result."""
    return not control.currently_in_test_context() or control.current_build_context().is_final


def assert_close(actual: Any, expected: torch.Tensor, *, what: str,
                 inputs: Optional[dict[str, Any]] = None, hint: Optional[str] = None,
                 rtol: Optional[float] = None, atol: Optional[float] = None,
                 check_dtype: bool = True, sides: Optional[tuple[str, str]] = None) -> None:
    """Compare an output with the expected one; on failure explain what, on which input, how far off,
    and, where the grader finds the one known misconception that reproduces the output, name it.

    `hint` documents for the suite's readers what the test checks; it is not shown to students: a
    fixed hint names mistakes a student did not make (the diagnosis names the one they did).
    `sides` names both outputs when neither is the course's (a test of the student's code against
    itself: step by step against the whole sequence): (actual's name, expected's name). The failure
    then says which is which instead of calling the student's own output "expected".
    """
    lines = [f"{what}:"]
    if inputs:
        lines += ["  " + _("input {name} = {value}").format(name=k, value=describe_value(v)) for k, v in inputs.items()]
    raw_actual, raw_expected = actual, expected

    def fail(reason: str, on_values: bool = False) -> None:
        found = Reproduced()
        if DIAGNOSE is not None and isinstance(raw_actual, torch.Tensor) and reported():
            tol = tolerance(raw_expected.dtype) if isinstance(raw_expected, torch.Tensor) else (0.0, 0.0)
            rng = torch.random.get_rng_state()  # the diagnosis's replays leave the test's random stream as it was
            found = DIAGNOSE(as_plain(raw_actual), raw_expected, dict(inputs or {}),
                             rtol if rtol is not None else tol[0], atol if atol is not None else tol[1])
            torch.random.set_rng_state(rng)
        raise Mismatch("\n".join([lines[0], f"  {reason}"] + lines[1:]), found, on_values)

    if isinstance(actual, Missing):
        raise AssertionError(actual.reason)
    if not isinstance(actual, torch.Tensor):
        fail(_("expected a tensor, got {type}").format(type=type_name(actual)))
    actual = as_plain(actual)
    expected = as_plain(expected)
    if tuple(actual.shape) != tuple(expected.shape):
        shapes = dict(expected=tuple(expected.shape), actual=tuple(actual.shape))
        fail(_("expected shape {expected}, got {actual}").format(**shapes) if sides is None else
             _("{name} has shape {actual}, {other} {expected}").format(**shapes, name=sides[0], other=sides[1]))
    if check_dtype and actual.dtype != expected.dtype:
        dtypes = dict(expected=expected.dtype, actual=actual.dtype)
        fail(_("expected dtype {expected}, got {actual}").format(**dtypes) if sides is None else
             _("{name} has dtype {actual}, {other} {expected}").format(**dtypes, name=sides[0], other=sides[1]))
    dr, da = tolerance(expected.dtype)
    rtol = dr if rtol is None else rtol
    atol = da if atol is None else atol
    a, e = actual.to(torch.float64), expected.to(torch.float64)
    if not torch.isfinite(a).all() and torch.isfinite(e).all():
        fail(_("your output contains NaN or infinity"), on_values=True)
    if torch.equal(a.isnan(), e.isnan()) and torch.allclose(a.nan_to_num(), e.nan_to_num(), rtol=rtol, atol=atol):
        return
    err = (a - e).abs().nan_to_num(nan=math.inf)
    idx = tuple(int(i) for i in torch.unravel_index(torch.argmax(err), err.shape)) if err.numel() else ()
    numbers = dict(error=f"{float(err.max()):.3g}", index=list(idx), expected=f"{float(e[idx]):.6g}",
                   actual=f"{float(a[idx]):.6g}", tolerances=f"rtol={rtol:g}, atol={atol:g}")
    if sides is None:
        reason = (_("max abs error {error} at index {index}: expected {expected}, got {actual} ({tolerances})") if idx
                  else _("max abs error {error}: expected {expected}, got {actual} ({tolerances})")).format(**numbers)
    else:
        numbers |= dict(name=sides[0], other=sides[1])
        reason = (_("max abs difference {error} at index {index}: {name} {actual}, {other} {expected} ({tolerances})")
                  if idx else _("max abs difference {error}: {name} {actual}, {other} {expected} ({tolerances})")
                  ).format(**numbers)
    if actual.numel() <= 24:
        if sides is None:
            lines.append("  " + _("expected {values}").format(values=_round(e.tolist())))
            lines.append("  " + _("got      {values}").format(values=_round(a.tolist())))
        else:
            lines.append("  " + _("{name}: {values}").format(name=sides[1], values=_round(e.tolist())))
            lines.append("  " + _("{name}: {values}").format(name=sides[0], values=_round(a.tolist())))
    fail(reason, on_values=True)


def cloned(value: Any) -> Any:
    """`value` with every tensor in it cloned, inside lists, tuples and dicts too, and inside a NamedTuple (a decoder's
    state, as an in-process grading holds the student's own: helper-82's F3; a sandboxed grader's proxy of one is sent
    back as the child's object and is not copied here); other objects as they are."""
    if isinstance(value, torch.Tensor):
        return torch.Tensor.clone(value)
    if type(value) in (list, tuple):
        return type(value)(cloned(v) for v in value)
    if type(value) is dict:
        return {k: cloned(v) for k, v in value.items()}
    if _named_tuple(value):
        return type(value)._make(cloned(v) for v in tuple.__iter__(value))
    return value


def _named_tuple(value: Any) -> bool:
    """Whether `value` is a NamedTuple (the student's own state, in-process): a tuple whose class has `_fields` and
    `_make` (a sandboxed grader's proxy of one, remote.RemoteTuple, has neither)."""
    return isinstance(value, tuple) and hasattr(type(value), "_fields") and callable(getattr(type(value), "_make", None))


R = TypeVar("R")


class _Shared:
    """What `shared` computed in one component's grading: results by key, the grading they belong to (a
    weak reference: a new child, a new submission or a second grading starts afresh) and the test's chain."""

    def __init__(self) -> None:
        self.scope: Optional[weakref.ref[Any]] = None
        self.results: dict[bytes, tuple[Any, torch.Tensor, tuple[int, ...]]] = {}  # value, random state, guesses
        self.kept_bytes: dict[bytes, int] = {}  # per result, the bytes of its tensors (SHARED_BYTES)
        self.total = 0  # their sum
        self.chain = b""
        self.test = ""
        self.fruitless = 0  # this test's examples that no binding passed (with_candidate_bindings)


_SHARED = _Shared()


def begin_test(test: str) -> None:
    """Called by the grader before each test (`test`: its module and function, not its parameters): the
    keys of `shared` calls start from it."""
    _SHARED.chain = hashlib.sha256(test.encode()).digest()
    _SHARED.test = test
    _SHARED.fruitless = 0


def current_test() -> str:
    """The test `begin_test` named last (its parts share one name)."""
    return _SHARED.test


def _digest(h: Any, value: Any) -> None:
    """Feed `value` (tensors, numbers, strings, dtypes, None, and lists, tuples, dicts and dataclasses of them)
    to `h`."""
    if isinstance(value, torch.Tensor):
        value = torch.Tensor.detach(value).cpu().contiguous()
        h.update(f"T{value.dtype}{tuple(value.shape)}".encode())
        h.update(value.reshape(-1).view(torch.uint8).numpy().tobytes() if value.numel() else b"")
    elif isinstance(value, (list, tuple)):
        h.update(f"{type(value).__name__}{len(value)}(".encode())
        for v in value:
            _digest(h, v)
        h.update(b")")
    elif isinstance(value, dict):
        h.update(f"dict{len(value)}(".encode())
        for k, v in value.items():
            _digest(h, k)
            _digest(h, v)
        h.update(b")")
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        h.update(type(value).__qualname__.encode())
        _digest(h, {f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
    elif value is None or isinstance(value, (bool, int, float, str, torch.dtype)):
        h.update(f"{type(value).__name__}:{value!r};".encode())
    else:
        raise TypeError(f"shared: cannot key on {type(value).__name__}")


def _scope(student: Any) -> Any:
    """The grading `student` belongs to (its child, or the names loaded in this process); None where
    nothing is shared (a notebook's self-check: the student may change the code between runs)."""
    scope = getattr(type(student), "__shared_scope__", None)
    return scope(student) if scope is not None else None


class Snapshot:
    """`Snapshot(read)`: what reading the student's objects gave (a value, its tensors copied, or the exception it raised),
    taken inside `shared`'s computation right after the call it follows. A part that checks it runs
    after other examples called the student's code again, which may have moved state the student
    shares between objects (a module-level buffer, a class attribute): the read must not see that."""

    def __init__(self, read: Callable[[], Any]) -> None:
        self.value: Any = None
        self.error: Optional[Exception] = None
        try:
            self.value = cloned(read())
        except Exception as exc:  # said by the part that reads it, and by it alone
            self.error = exc

    def get(self) -> Any:
        if self.error is not None:
            raise self.error
        return cloned(self.value)


def steps(step: Callable[[int], R], count: int) -> tuple[list[R], Optional[AssertionError]]:
    """`step(t)` for t = 0 .. count - 1 inside `shared`'s computation, until one fails: the steps' results and
    the failure that stopped the loop (None: every step ran). A part checks the results in order, then raises
    that failure, so it fails where a loop that checked each step as it went would have (a wrong step 0 is
    reported as such even when step 1 then crashes). Other exceptions propagate at once, as they would."""
    done: list[R] = []
    for t in range(count):
        try:
            done.append(step(t))
        except AssertionError as exc:  # T.call's and T.check's failures, the student's errors
            return done, exc
    return done, None


def shared(student: Any, compute: Callable[[], R], *inputs: Any) -> R:
    """`compute()`, run once for all the parts of one test (`@pytest.mark.parametrize("part", ...)`) on the
    same example: the student's and the reference's computation that every part checks a piece of.

    `inputs` are everything `compute` reads that varies between examples (the drawn inputs); the key
    is the test (`begin_test`), the `shared` calls before this one in the same run of the test (so a
    part reuses a result only when the same computations led to it) and the grader's torch random
    state, which a reuse leaves as `compute` would have. A failure is not kept: the next part runs
    `compute` again and fails the same way. Tensors are copied when kept and when given back (a part
    may change its own, the student's code may change what it returned); modules as they are, never
    to be called or read by a part: what a part checks of them (stored attention weights), `compute`
    reads right after its call, as a `Snapshot`. Results last for one component's grading (one child)
    and never reach another."""
    scope = _scope(student)
    if scope is None:
        return compute()
    if _SHARED.scope is None or _SHARED.scope() is not scope:
        _SHARED.scope, _SHARED.results, _SHARED.kept_bytes, _SHARED.total = weakref.ref(scope), {}, {}, 0
    h = hashlib.sha256(_SHARED.chain)
    h.update(f"{compute.__code__.co_filename}:{compute.__code__.co_firstlineno}".encode())
    _digest(h, list(inputs))
    rng = torch.random.get_rng_state()
    _digest(h, rng)
    guesses = _GUESSES.get()
    if guesses is not None and guesses.choice:  # another binding (with_candidate_bindings): other results
        h.update(f"binding {guesses.choice}".encode())
    key = _SHARED.chain = h.digest()
    found = _SHARED.results.get(key)
    if found is not None:
        torch.random.set_rng_state(found[1])
        if guesses is not None:  # the bindings `compute` guessed are this run's guesses too
            guesses.seen.extend(found[2])
        return cloned(found[0])
    before = len(guesses.seen) if guesses is not None else 0
    value = compute()
    _SHARED.results[key] = (cloned(value), torch.random.get_rng_state(),  # a copy: `value` is the part's
                            tuple(guesses.seen[before:]) if guesses is not None else ())
    _SHARED.kept_bytes[key] = _nbytes(value)
    _SHARED.total += _SHARED.kept_bytes[key]
    while _SHARED.total > SHARED_BYTES and len(_SHARED.kept_bytes) > 1:
        oldest = next(iter(_SHARED.kept_bytes))  # the earliest kept: a later part that needs it computes it again
        _SHARED.total -= _SHARED.kept_bytes.pop(oldest)
        del _SHARED.results[oldest]
    return value


#: The most bytes of tensors `shared` keeps for one grading (helper-82's F5: code returning 60 MiB per call grew a
#: grading to 3 GB, every reply kept to the end): beyond it the earliest results go, and a part that needs one again
#: runs its computation again, as after a failure. A correct submission's results stay far below it.
SHARED_BYTES = 256 << 20


def _nbytes(value: Any) -> int:
    """The bytes of the tensors in `value` (inside lists, tuples, their subclasses, dicts and Snapshots)."""
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, Snapshot):
        return _nbytes(value.value)
    if isinstance(value, (list, tuple)):  # any list or tuple, read as the container it is (no __iter__ of a subclass)
        return sum(_nbytes(v) for v in (tuple.__iter__(value) if isinstance(value, tuple) else list.__iter__(value)))
    if type(value) is dict:
        return sum(_nbytes(v) for v in value.values())
    return 0


def returned_pair(out: Any, message: str) -> tuple[Any, Any]:
    """(first, second) of what a function the contract has return a pair returned. A lone tensor is taken as the
    first (01's predictions without their weights: helper-78's F5), and the second is then a `Missing` that says
    `message`: the tests and parts about the second fail, those about the first compare it. Anything else
    that is not a pair fails with `message`."""
    if isinstance(out, torch.Tensor):
        return out, Missing(message)
    check(isinstance(out, (tuple, list)) and len(out) == 2, message)
    return out[0], out[1]


def _arg_text(value: Any) -> str:
    """An argument as a failure message shows it: tensors by their shape (and their dtype where it is a float
    other than float32: a test's float64 inputs explain a dtype error), containers element-wise."""
    if isinstance(value, torch.Tensor):
        shape = str(tuple(value.shape))
        float_other = value.is_floating_point() and value.dtype != torch.float32
        return f"{shape} {str(value.dtype).removeprefix('torch.')}" if float_other else shape
    if type(value) is list:
        return "[" + ", ".join(_arg_text(v) for v in value) + "]"
    if isinstance(value, tuple):  # a NamedTuple too, which a sandboxed grading holds as a remote.RemoteTuple
        return "(" + ", ".join(_arg_text(v) for v in tuple.__iter__(value)) + ("," if len(value) == 1 else "") + ")"
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    return type_name(value)


def _type_text(types: type | tuple[type, ...]) -> str:
    names = [(_("tensor") if t is torch.Tensor else t.__name__) for t in (types if isinstance(types, tuple) else (types,))]
    return _("a {types}").format(types=_(" or ").join(names))


def raised(exc: BaseException) -> tuple[str, str]:
    """The class name and message of the error the student's code raised: `exc`'s own, or, for an error
    that stands for one raised in the sandbox (the grader's StudentError), those it carries."""
    return str(getattr(exc, "raised_as", type(exc).__name__)), str(getattr(exc, "detail", exc))


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
        said = (_("{what} with arguments ({arguments}) raised {error}: {message}") if show_args else
                _("{what} raised {error}: {message}"))
        error, message = raised(exc)
        raise Crash(said.format(what=what, arguments=", ".join(shown), error=error, message=message)) from None
    if returns is not None:
        check(isinstance(out, returns), _("{what} must return {types}, got {type}").format(
            what=what, types=_type_text(returns), type=type_name(out)))
        if isinstance(out, torch.Tensor):
            return as_plain(out)
    return out


#: How alike the moves of the student's outputs and the course's must be (the cosine of the two, over the outputs
#: the course's moves clearly) for a dependence test to pass.
MOVES_AGREE = 0.2
#: ... over at least this many outputs: on a few (one query of one key) the cosine of two moves is chance (helper-74's
#: fakes score about 0.05 at the realistic sizes, the realistic slips 0.3-1).
MOVES_COUNTED = 16


def _position(index: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(i)) for i in index) + "]"


def assert_depends_like(what: str, mine: Callable[..., Any], theirs: Callable[..., Any], args: Sequence[Any],
                        changes: Sequence[tuple[Any, ...]], per_entry: bool = False) -> None:
    """The student's output depends on its inputs where the course's does, and only there.

    `mine(*args)` (the student's module, called through `call`) and `theirs(*args)` (the course's, with the
    same weights) are run on `args`, then on each of `changes` ((what was changed, the changed arguments), or
    (what was changed, the arguments, the student's and the course's modules with other weights)).
    Positions are an output's entries less its last axis (a feature vector), or each entry (`per_entry`: 01's
    predictions, one number per query). Where the course's output moves
    clearly (more than 1e-3 of its scale) the student's must move (by more than a thousandth of that); where it
    stays exactly as it was the student's must stay (within 1e-6 of its scale); positions that move only a little
    are not judged; and the student's outputs must move the course's way (the cosine of the two moves, over the
    outputs the course's moves clearly, at least `MOVES_AGREE` where there are `MOVES_COUNTED` of them). Two calls on the same arguments must agree exactly:
    the modules run in eval mode or with dropout 0, where an output that changes from call to call depends on
    something else than its inputs.

    This compares which outputs depend on which inputs, not their values: code with a wrong formula can pass
    it (its property tests then count: scoring's `dependence` kind), code whose outputs ignore an input the
    course's reads (constant outputs: `Ignores`), or read one it ignores (unmasked padding, mixed batch items),
    cannot."""
    def output(module: Callable[..., Any], arguments: Sequence[Any], like: torch.Tensor) -> torch.Tensor:
        out = as_plain(call(what, module, *arguments, show_args=False), what).to(torch.float64)
        check(tuple(out.shape) == tuple(like.shape), _("{what}: expected shape {expected}, got {actual}").format(
            what=what, expected=tuple(like.shape), actual=tuple(out.shape)))
        return out

    base_theirs = as_plain(theirs(*cloned(list(args)))).to(torch.float64)
    base_mine = output(mine, args, base_theirs)
    scale = 1.0 + float(base_theirs.abs().max()) if base_theirs.numel() else 1.0
    again = as_plain(call(what, mine, *args, show_args=False), what).to(torch.float64)
    if not torch.equal(again.nan_to_num(), base_mine.nan_to_num()):  # dropout 0, eval mode: a function of its inputs
        raise Ignores(_("{what}: two calls on the same inputs give different outputs: your output does not depend on "
                        "its inputs alone").format(what=what))
    for label, changed, *others in changes:
        mine_now, theirs_now = others if others else (mine, theirs)  # other weights: both modules rebuilt
        out_mine = output(mine_now, changed, base_mine)
        delta_theirs = as_plain(theirs_now(*cloned(list(changed)))).to(torch.float64) - base_theirs
        delta_mine = (out_mine - base_mine).nan_to_num(nan=math.inf)
        moved_theirs, moved_mine = delta_theirs.abs(), delta_mine.abs()
        reduce = (lambda t: t.amax(dim=-1)) if moved_theirs.dim() > 0 and not per_entry else (lambda t: t)
        theirs_moved, mine_moved = reduce(moved_theirs), reduce(moved_mine)
        # moving by a thousandth of what the course's moves is not moving (the mean of every output, say)
        clearly = theirs_moved > 1e-3 * scale
        missed = clearly & ~(mine_moved > 1e-3 * theirs_moved)
        extra = (theirs_moved == 0) & (mine_moved > 1e-6 * scale)
        if bool(missed.any()):
            index = [int(i) for i in missed.nonzero()[0]]
            # Ignored where it moves nowhere the course's does; a sharper or flatter attention that misses some
            # positions (it moves others: helper-74's B1) is a mistake, not a missing input
            failure = Ignores if bool((missed == clearly).all()) else AssertionError
            raise failure(_("{what}: when {change}, the course's output at {position} changes and yours does "
                            "not: your output does not depend on that input as it should").format(
                what=what, change=label, position=_position(index)))
        if bool(extra.any()):
            index = [int(i) for i in extra.nonzero()[0]]
            raise AssertionError(_("{what}: when {change}, your output at {position} changes and the course's does "
                                   "not: your output depends on an input it should ignore there").format(
                what=what, change=label, position=_position(index)))
        # ... and moves with it: a wrong formula of the same inputs (relu for tanh, another scale) moves its outputs
        # the course's way, a score made of anything else (sums of the features) does not (helper-74's fakes)
        where = (clearly[..., None].expand_as(delta_theirs) if delta_theirs.dim() > clearly.dim() else clearly)
        mine_d, theirs_d = delta_mine[where], delta_theirs[where]
        agreement = float(torch.nn.functional.cosine_similarity(mine_d, theirs_d, dim=0)) if mine_d.numel() else 1.0
        if mine_d.numel() >= MOVES_COUNTED and not agreement >= MOVES_AGREE:
            raise AssertionError(_("{what}: when {change}, your outputs move otherwise than the course's (the cosine "
                                   "of the two moves is {cosine:.2f}): your output does not depend on that input as "
                                   "the course's does").format(what=what, change=label, cosine=agreement))


def assert_layer_normalized(Y: Any, what: str, hint: Optional[str] = None) -> None:
    """Fail unless every position of Y has mean 0 and variance 1 over its features (the last axis),
    as a LayerNorm with its default weights gives."""
    Y = as_plain(Y).double()
    mean, var = Y.mean(-1), Y.var(-1, unbiased=False)
    check(bool((mean.abs() < 1e-4).all()) and bool(((var - 1).abs() < 1e-2).all()),
          f"{what}: " + _("every position's output should be layer-normalized over its features (mean 0, variance 1 "
                          "with the LayerNorm's default weights), but means range over [{mean_min}, {mean_max}] "
                          "and variances over [{var_min}, {var_max}].").format(
              mean_min=f"{float(mean.min()):.3g}", mean_max=f"{float(mean.max()):.3g}",
              var_min=f"{float(var.min()):.3g}", var_max=f"{float(var.max()):.3g}"))


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
    return {k: as_plain(v) for k, v in dict(module.state_dict()).items()
            if isinstance(k, str) and isinstance(v, torch.Tensor)}  # a state_dict of the student's own may hold anything


def state_shapes(module: Any) -> dict[str, torch.Tensor]:
    """The module's state without its values: each entry a tensor of its shape and dtype on the meta
    device, which is all a binding reads (`bind`). The student's own `state_dict()` is called either
    way; a remote module sends no tensor data back (grading/remote.py)."""
    state = module.__remote_state_shapes__() if _is_remote(module) else module.state_dict()
    return {k: v if is_lazy(v) else torch.empty(v.shape, dtype=v.dtype, device="meta")
            for k, v in dict(state).items() if isinstance(k, str) and isinstance(v, torch.Tensor)}


def is_lazy(value: Any) -> bool:
    """Whether a state entry is a lazy layer's (nn.LazyLinear, as d2l 1.0 builds them): it has no shape
    until the layer's first call or until a state with shapes is loaded into it (torch's lazy load hook)."""
    return bool(torch.nn.parameter.is_lazy(value))


class LazyLayers(AssertionError):
    """Lazy entries a binding cannot place by name: their shapes, which binding by structure reads, come
    only with the module's first call (`with_lazy_parameters`)."""

    def __init__(self, message: str, keys: Sequence[str]) -> None:
        super().__init__(message)
        self.keys = list(keys)


_BLOCK = re.compile(r"(^|\.)block[ _-]?(\d+)(?=\.|$)")


def normalize_key(key: str) -> str:
    """`blks.block0.x`, `blks.block 0.x`, `blks.block_0.x` and `blks.0.x` name the same parameter
    (an nn.Sequential with named blocks, in the spellings learners use, or an nn.ModuleList)."""
    return _BLOCK.sub(r"\1\2", key)


def _loose(key: str) -> str:
    """A name with case, underscores and spaces ignored (`W_V` and `w_v`, `addNorm1` and `addnorm1`)."""
    return re.sub(r"[\s_-]", "", normalize_key(key)).lower()


_ROLES = {"q": "q", "query": "q", "queries": "q", "k": "k", "key": "k", "keys": "k", "v": "v",
          "value": "v", "values": "v", "o": "o", "out": "o", "output": "o",
          # a decoder's output layer (the contract's `dense`) and its token embedding: both (vocab, d)
          "dense": "o", "fc": "o", "logits": "o", "classifier": "o",
          "emb": "e", "embed": "e", "embedding": "e", "embeddings": "e", "tok": "e", "token": "e"}


def _words(name: str) -> set[str]:
    """The words of a name in lower case (`query_proj`, `queryProj`, `W_q1`: query/proj, query/proj, w/q/1)."""
    return {w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", name)}


def _role(key: str) -> str:
    """Which projection a parameter's module name says it is (`query_proj` and `W_q`: "q"; `out` and `dense`:
    "o"; `emb` and `embedding`: "e"), if one."""
    roles = {_ROLES[w] for w in _words(key.rsplit(".", 1)[0]) if w in _ROLES}
    return roles.pop() if len(roles) == 1 else ""


#: The sublayer each of the contract's block submodules belongs to (docs/course-api.md): an EncoderBlock's
#: `attention`, `addnorm1` / `ffn`, `addnorm2`; a DecoderBlock's `attention1`, `addnorm1` (masked self-attention) /
#: `attention2`, `addnorm2` (cross attention) / `ffn`, `addnorm3`. `addnorm2` is the FFN's where the block has no
#: `attention2` (`_sublayer`).
_SUBLAYER_OF_CONTRACT = {"attention": "self", "attention1": "self", "addnorm1": "self", "attention2": "cross",
                         "ffn": "ffn", "addnorm3": "ffn"}
_CROSS_WORDS = frozenset({"cross", "enc", "encoder", "encdec", "memory", "src", "context"})
_SELF_WORDS = frozenset({"self", "masked", "mask", "causal"})
#: Not `fc`: a decoder's output layer is often `fc_out` (`_ROLES`: the contract's `dense`).
_FFN_WORDS = frozenset({"ffn", "ff", "ffwd", "feed", "forward", "feedforward", "positionwise", "mlp", "pff", "pwff"})
_ATTENTION_WORDS = frozenset({"attn", "attention", "mha", "multihead"})


def _said(part: str) -> str:
    """The sublayer a student's module name says (`cross_attn`: "cross"; `self_attn`, `attn_norm`: "self";
    `ffn_norm`, `feed_forward`: "ffn"), or "": cross and self words together say nothing; an attention not said
    to be cross is the self-attention (an EncoderBlock's only one)."""
    words = _words(part)
    cross, self_ = bool(words & _CROSS_WORDS), bool(words & _SELF_WORDS)
    if cross or self_:
        return "" if cross and self_ else "cross" if cross else "self"
    return "ffn" if words & _FFN_WORDS else "self" if words & _ATTENTION_WORDS else ""


def _sublayer(key: str, contract: Collection[str] = ()) -> str:
    """Which sublayer of a transformer block the innermost module name of a key that says one puts it in: "self",
    "cross" or "ffn" (`_said`, or the contract's names: `_SUBLAYER_OF_CONTRACT`), else "". The contract's
    `addnorm2` is "cross" where the course's keys `contract` have an `attention2` beside it, else "ffn"."""
    parts = key.split(".")[:-1]
    for i in reversed(range(len(parts))):
        if parts[i] == "addnorm2":
            beside = ".".join(parts[:i] + ["attention2"]) + "."
            return "cross" if any(k.startswith(beside) for k in contract) else "ffn"
        said = _SUBLAYER_OF_CONTRACT.get(parts[i]) or _said(parts[i])
        if said:
            return said
    return ""


def _numbers(path: str) -> tuple[int, ...]:
    """The numbers that end the names of a module path, in order (`blks.0.norm2.ln`: (0, 2); `ln_1`: (1,))."""
    return tuple(int(m.group()) for part in normalize_key(path).split(".") if (m := re.search(r"\d+$", part)))


def _in_numbered_order(layers: Iterable[str]) -> list[str]:
    """The student's layers (or entries) in registration order, except that those whose names end in numbers
    (`_numbers`) fill the numbered ones' places in the order of their numbers: `norm2` registered before `norm1`
    comes after it, and so binds to the later of the course's interchangeable layers (addnorm2: the course
    registers its numbered layers in the order of their numbers). Only the order counts: `norm0`, `norm1` and
    `layer1.norm1` are as good."""
    layers = list(layers)
    numbered = iter(sorted((layer for layer in layers if _numbers(layer)), key=_numbers))
    return [next(numbered) if _numbers(layer) else layer for layer in layers]


def _preferred(candidates: Sequence[str], key: str, contract: Collection[str] = ()) -> str:
    """Of the course's entries `candidates` (in registration order), the one for the student's `key`: the
    first that agrees most with what its names say: which sublayer of a block first (`_sublayer`), then which
    projection (`_role`). `contract`: the course's keys."""
    return _best(candidates, key, contract)[0]


def _best(candidates: Sequence[str], key: str, contract: Collection[str] = ()) -> list[str]:
    """The course's entries of `candidates` that agree most with what the student's `key` says (`_preferred`), in
    registration order: more than one where the names do not tell them apart."""
    sublayer, role = _sublayer(key), _role(key)

    def agrees(candidate: str) -> int:
        return 2 * bool(sublayer and sublayer == _sublayer(candidate, contract)) + bool(role and role == _role(candidate))
    top = max(agrees(c) for c in candidates)
    return [c for c in candidates if agrees(c) == top]


@dataclasses.dataclass
class _Guesses:
    """Where a binding by structure guessed (several of the course's layers of one layout fit a student's layer and
    its names do not tell them apart: `W1`, `W2` at a query size equal to the key size), which alternative each guess
    takes: `choice` read as a number whose digits are the guesses, in the order they are made (`seen`: how many
    alternatives each had)."""

    choice: int = 0
    seen: list[int] = dataclasses.field(default_factory=list)

    def take(self, alternatives: int) -> int:
        """The alternative this guess takes, of `alternatives`."""
        digit = (self.choice // math.prod(self.seen)) % alternatives
        self.seen.append(alternatives)
        return digit

    def count(self) -> int:
        """How many bindings the guesses made so far allow."""
        return math.prod(self.seen)


_GUESSES: ContextVar[Optional[_Guesses]] = ContextVar("binding_guesses", default=None)

#: The most bindings one example of a test tries (`with_candidate_bindings`).
MAX_BINDINGS = 6
#: The examples of one test whose other bindings all failed too, after which its examples try only the first: code
#: that fails under every binding fails the test whichever binding its other examples keep, so this bounds what a
#: buggy module's failing examples cost (hypothesis reruns them while it shrinks) and changes no test's outcome.
MAX_FRUITLESS = 2


def _guessed(best: Sequence[str]) -> str:
    """The one of `best` (`_best`: names do not tell them apart) that the example's guesses take: the first, unless
    `with_candidate_bindings` is trying another binding."""
    guesses = _GUESSES.get()
    return best[guesses.take(len(best)) if guesses is not None and len(best) > 1 else 0]


def with_candidate_bindings(run: Callable[[], R], again: Callable[[], None] = lambda: None) -> R:
    """Run one example of a test (`run`); where it fails after a binding by structure guessed (`_guessed`), run it
    again with the other bindings the guesses allow, at most MAX_BINDINGS runs in all: the binding the behaviour
    confirms is kept, and the example passes. Every run starts from the random state the first started from; the
    failure of the first is raised where none passes. A test's examples may keep different bindings: at sizes where
    the course's layers differ in shape there is nothing to guess, so a module whose same-shaped layers play other
    parts than the course's fails there (helper-79's A6; a correct AdditiveAttention registering a query projection
    `W1` before a key projection `W2` kept 1.73 of 4). `again` is called before each run after the first (a test's
    draws from `st.data()` replay the first run's: plugin's `_Draws`)."""
    if _GUESSES.get() is not None or _SHARED.fruitless >= MAX_FRUITLESS:  # nested (the outer run tries), or bound
        return run()
    guesses = _Guesses()
    token = _GUESSES.set(guesses)
    rng, chain = torch.random.get_rng_state(), _SHARED.chain
    try:
        try:
            return run()
        except AssertionError as first:
            for choice in range(1, min(guesses.count(), MAX_BINDINGS)):
                guesses.choice, guesses.seen = choice, []
                again()
                torch.random.set_rng_state(rng)
                _SHARED.chain = chain
                try:
                    return run()
                except AssertionError:
                    continue
            if guesses.count() > 1:
                _SHARED.fruitless += 1
            raise first
    finally:
        _GUESSES.reset(token)


def _leaf(key: str) -> str:
    return key.rsplit(".", 1)[-1]


#: Leaf names that say a LayerNorm's scale or shift (a hand-written one's `gamma`, `beta`; the Annotated
#: Transformer's `a_2`, `b_2`) or a bias (`b_1`), by their kind in torch's layers (`_loose`, less a trailing number).
_KINDS = {"gamma": "weight", "g": "weight", "a": "weight", "alpha": "weight", "scale": "weight", "gain": "weight",
          "weight": "weight", "beta": "bias", "b": "bias", "shift": "bias", "bias": "bias"}


def _kind(key: str) -> str:
    """The kind of entry a key's leaf says (`norm.gamma`: "weight", `ln.b_2` and `b1`: "bias"; else the leaf itself)."""
    return _KINDS.get(re.sub(r"\d+$", "", _loose(_leaf(key))), _leaf(key))


def _kinds(layout: dict[str, tuple[int, ...]]) -> dict[str, tuple[int, ...]]:
    """A layer's entries by kind (`_kind`), with shapes; by leaf where two leaves say one kind."""
    kinds = {_kind(leaf): shape for leaf, shape in layout.items()}
    return kinds if len(kinds) == len(layout) else dict(layout)


class Binding:
    """Which of the student's parameters and buffers holds which of the course's.

    `pairs` maps the student's key to the contract's key. Names are matched first (after
    `normalize_key`, then ignoring case and underscores); what is left is matched by structure:
    entries of the same shape and kind (`weight`, `bias`, ...; `_kind`: a LayerNorm's `gamma` is a `weight`)
    in the order the modules registered them, numbered layers in the order of their numbers (`_in_numbered_order`:
    `norm1` before `norm2`), where the names say nothing else (`_preferred`: `cross_attn` is a decoder block's
    `attention2`, `ffn_norm` an EncoderBlock's `addnorm2`, `query_proj` a `W_q`); last, what is left on both sides
    pairs by shape where that pairs all of it (`_paired_by_shape`: `bandwidth` for `w`). `renamed` lists the pairs whose names differ (what a naming test reports). `zeroed` lists the
    student's biases of layers the contract has without one (`bias=False`): they are set to 0, so
    that the rest is compared on its maths, and the naming test reports them. `extra` lists the student's
    entries left over once every one of the course's is bound (a layer the contract's module does not have,
    such as an unused output layer): they keep their own values, the behaviour tests say whether they
    change anything, and the naming test reports them. `shared` lists the course's submodules that none of
    the student's entries holds, each with its bound twin (`_shared_submodules`: one AddNorm used for both
    sublayers where the contract has `addnorm1` and `addnorm2`): the student's holds the twin's values, the
    comparisons fail where the two differ (and a known mistake may be named), and the naming test reports them."""

    def __init__(self, pairs: dict[str, str], renamed: list[tuple[str, str]], zeroed: Sequence[str] = (),
                 extra: Sequence[str] = (), shared: Sequence[tuple[str, str]] = ()) -> None:
        self.pairs = pairs
        self.renamed = renamed
        self.zeroed = list(zeroed)
        self.extra = list(extra)
        self.shared = list(shared)

    def describe(self, limit: int = 6) -> str:
        shown = _(", ").join(_("your `{mine}` as the contract's `{theirs}`").format(mine=mine, theirs=theirs)
                             for mine, theirs in self.renamed[:limit])
        more = " " + _("(+{count} more)").format(count=len(self.renamed) - limit) if len(self.renamed) > limit else ""
        return shown + more


def same_layout(mine: tuple[int, ...], contract: tuple[int, ...]) -> bool:
    """Whether a student's entry of shape `mine` holds a contract's entry of shape `contract` value for
    value: the same shape, or one number or one vector either way (a 0-d `w` for the contract's (1,), a
    (h, 1) `w_v` for (1, h)), which a reshape carries over in order (`copy_weights`, `bound_state`). The
    shape itself is the structure tests' to judge."""
    return mine == contract or (_same_axes(mine, contract) and len(_sizes(mine)) <= 1)


def bind(student_state: dict[str, torch.Tensor], reference_state: dict[str, torch.Tensor],
         declared: Optional[dict[str, int]] = None) -> Binding:
    """Bind the student's entries to the reference's by name, else by structure (see `Binding`). `declared`: the
    output sizes the student's lazy layers declare, by layer (`_declared_sizes`).

    Fails, naming the entries, when no binding covers both sides with the same shapes."""
    reference = {normalize_key(k): v for k, v in reference_state.items()}
    # What a binding reads is bounded by the contract's state, not by what a module claims to hold.
    if len(student_state) > 10 * len(reference) + 1000:
        raise AssertionError(_("your module's state holds {count} entries, far more than the contract's {expected}: "
                               "{contract}").format(count=len(student_state), expected=len(reference),
                                                    contract=_shapes(reference)))
    pairs: dict[str, str] = {}
    misfits: dict[str, str] = {}  # the student's entries under a contract name of another shape, with the error
    for key, value in student_state.items():  # 1. the contract's names (block spellings aside)
        norm = normalize_key(key)
        if norm in reference:
            # a lazy one takes the contract's shape when the reference's state is loaded
            if not is_lazy(value) and not same_layout(tuple(value.shape), tuple(reference[norm].shape)):
                misfits[key] = _misfit_message(key, tuple(value.shape), tuple(reference[norm].shape))
                continue  # bound by structure below if the names are only swapped (`W_q` applied to the keys)
            pairs[key] = norm
    free = [k for k in reference if k not in pairs.values()]
    loose = {_loose(k): k for k in free}
    if len(loose) == len(free):  # 2. the same name in another case or spelling (`W_V`, `add_norm1`)
        for key, value in student_state.items():
            match = loose.get(_loose(key)) if key not in pairs else None
            if match is not None and (is_lazy(value) or same_layout(tuple(value.shape), tuple(reference[match].shape))):
                pairs[key] = loose.pop(_loose(key))
    # 3. structure: the rest, by shape and kind, in registration order
    left_mine = [k for k in student_state if k not in pairs]
    # A lazy entry has no shape: it binds to a reference entry that ends the same way (`attn.W_k.weight` and
    # `attention.W_k.weight`: a course class built the d2l 1.0 way under another attribute), the first left
    # in registration order (what the names say first: `_preferred`); loading the reference's gives it that entry's shape.
    loose_reference = {k: "." + _loose(k) for k in reference}
    for key in [k for k in left_mine if is_lazy(student_state[k])]:
        tail = "." + _loose(".".join(key.split(".")[-2:]))
        bound = set(pairs.values())
        same = [k for k, lk in loose_reference.items() if lk.endswith(tail) and k not in bound]
        if same:
            pairs[key] = _preferred(same, key, reference)
    left_mine = [k for k in left_mine if k not in pairs]
    lazy = [k for k in left_mine if is_lazy(student_state[k])]  # no shape: bound by name or not at all
    left_theirs = [k for k in reference if k not in pairs.values()]
    # Whole layers first: a layer of the student's whose entries (kinds and shapes: `_kinds`, a `gamma` is a
    # `weight`) are those of one of the course's binds to it as a whole, the first such in registration order (what
    # the names say first: `_preferred`), so that a LayerNorm's bias never takes an FFN layer's of the same shape
    # (helper-70: a correct EncoderBlock registering `norm1`, `norm2` before its `feed_forward` got the FFN's bias
    # in `norm2`, 0 of 4). The student's layers bind in the order their numbers say (`_in_numbered_order`: helper-72,
    # `norm2` registered before `norm1` in a correct EncoderBlock took addnorm1, 0 of 4).
    theirs_layers = _layers(left_theirs, reference)
    mine_layers = _layers([k for k in left_mine if k not in lazy], student_state)
    for layer in _in_numbered_order(mine_layers):
        layout = mine_layers[layer]
        same = [other for other, theirs in theirs_layers.items() if _kinds(theirs) == _kinds(layout)]
        if layer and same:
            first = next(iter(layout))
            chosen = _guessed(_best([f"{other}.{first}" for other in same], f"{layer}.{first}", reference)).rsplit(".", 1)[0]
            leaves = theirs_layers.pop(chosen)
            by_kind = {_kind(leaf): leaf for leaf in leaves}
            pairs.update({f"{layer}.{leaf}": f"{chosen}.{leaf if leaf in leaves else by_kind[_kind(leaf)]}" for leaf in layout})
    if not _A_CALL_GIVES_SHAPES.get():
        pairs.update(_lazy_layers_in_order(lazy, theirs_layers, reference, declared or {}))
    lazy = [k for k in lazy if k not in pairs]
    left_mine = [k for k in left_mine if k not in pairs]
    left_theirs = [k for k in left_theirs if k not in pairs.values()]

    def signature(key: str, value: torch.Tensor) -> tuple[str, tuple[int, ...]]:
        return _kind(key), tuple(value.shape)

    groups: dict[tuple[str, tuple[int, ...]], list[str]] = {}
    for key in left_theirs:
        groups.setdefault(signature(key, reference[key]), []).append(key)
    unmatched = list(lazy)  # a lazy bias of a bound layer is zeroed below; the rest are extra or fail
    for key in _in_numbered_order(k for k in left_mine if k not in lazy):  # `b_1` before `b_2`, as layers
        queue = groups.get(signature(key, student_state[key]))
        if queue:
            pairs[key] = _preferred(queue, key, reference)
            queue.remove(pairs[key])
        else:
            unmatched.append(key)
    held = set(pairs.values())
    missing = [k for k in left_theirs if k not in held]
    # Last, what is left on both sides pairs by shape, in the same order, where that pairs all of it (helper-72:
    # a correct NWKernelRegression's one parameter `bandwidth` (1,) for the contract's `w` (1,) had no binding, 0 of 6)
    leftover = _paired_by_shape(unmatched, missing, student_state, reference) if not set(unmatched) & set(lazy) else {}
    if leftover:
        pairs.update(leftover)
        unmatched, missing = [], []
    # Names on the wrong entries bind by structure only where that binds every one of them and leaves nothing
    # of the course's unheld: labels swapped between two layers of the contract's (helper-70: a learner's `W_q`
    # built with key_size and applied to the keys, `W_k` the other way round, 0 of 4 for right maths). Else the
    # first one's shape is the error, as it says what to fix (`dense2` built with the input size).
    unbound = [k for k in misfits if k not in pairs]
    if misfits and (unbound or missing):
        check(False, misfits[(unbound or list(misfits))[0]])
    # A bias the contract's layer does not have (its weight is bound): 0 is the contract's maths.
    bound_layers = {k.rsplit(".", 1)[0] for k in pairs if "." in k and _leaf(k) == "weight"}
    zeroed = [k for k in unmatched if _leaf(k) == "bias" and "." in k and k.rsplit(".", 1)[0] in bound_layers]
    unmatched = [k for k in unmatched if k not in zeroed]
    shared = _shared_submodules(missing, reference, set(pairs.values())) if missing and not unmatched else []
    if shared:  # the student's module uses one submodule where the course's has two of the same: bound as one
        missing = []
    if missing:  # a course entry nothing holds: no binding; lazy entries may hold it once they have shapes
        if [k for k in unmatched if k in lazy]:
            raise LazyLayers(_("your layers are lazy (nn.LazyLinear, as d2l 1.0 builds them) and their names are not "
                               "the contract's: {keys}").format(keys=", ".join(f"`{k}`" for k in lazy[:8])), lazy)
        if unmatched:
            misfit = _misfit_in_order(unmatched, missing, student_state, reference)
            if misfit is not None:
                check(False, misfit)
            key = unmatched[0]
            raise AssertionError(_("your module has a parameter or buffer '{key}' of shape {shape} that matches none "
                                   "of the course's (the contract's: {contract})").format(
                key=key, shape=tuple(student_state[key].shape), contract=_shapes(reference)))
        raise AssertionError(_("your module has nothing that matches the course's parameters {missing} (the "
                               "contract's: {contract})").format(missing=missing[:8], contract=_shapes(reference)))
    renamed = [(k, v) for k, v in pairs.items() if normalize_key(k) != v]
    return Binding(pairs, renamed, zeroed, extra=[k for k in student_state if k in unmatched],  # registration order
                   shared=shared)


def _misfit_message(key: str, actual: Any, expected: tuple[int, ...]) -> str:
    """The one wording of an entry of the wrong shape: a catalogue entry's failure text, which a mistake made under
    other names must repeat word for word to be named (`_misfit_in_order`)."""
    return _("parameter '{key}' has shape {actual}, expected {expected}").format(key=key, actual=actual, expected=expected)


def _misfit_in_order(mine: Sequence[str], theirs: Sequence[str], student_state: dict[str, torch.Tensor],
                     reference: dict[str, torch.Tensor]) -> Optional[str]:
    """Where the student's entries left unbound pair one to one with the course's left unheld in registration order,
    each of the same kind (its leaf's: weight, bias) and rank, the first pair whose shapes differ said as its
    contract name would say it ("parameter 'dense2.weight' has shape ..."), the student's own name after the
    failure's `where` (symptoms.WHERE_MARK), which its signature leaves out: a mistake in a module under names of
    its own fails with the words the catalogue's entry fails with, so the diagnosis can name it (helper-78's F6: an
    FFN built for the wrong output size as `nn.Sequential` layers kept 0.23 of 2, 0.92 under the contract's names).
    None where they do not pair so."""
    if not mine or len(mine) != len(theirs):
        return None
    pairs = list(zip(mine, theirs))
    if any(_leaf(a) != _leaf(b) or student_state[a].dim() != reference[b].dim() for a, b in pairs):
        return None
    for a, b in pairs:
        actual, expected = tuple(student_state[a].shape), tuple(reference[b].shape)
        if actual != expected:
            return _misfit_message(b, actual, expected) + WHERE_MARK + _(
                "your `{mine}` in its place, by registration order (your names are not the contract's)").format(mine=a)
    return None


def _paired_by_shape(mine: Sequence[str], theirs: Sequence[str], student_state: dict[str, torch.Tensor],
                     reference: dict[str, torch.Tensor]) -> dict[str, str]:
    """{student key: course key} pairing every one of `mine` with one of `theirs` of the same layout (`same_layout`),
    each the first left in registration order that its names agree with most (`_preferred`); {} where some entry
    on either side would be left without a pair."""
    if not mine or len(mine) != len(theirs):
        return {}
    left, pairs = list(theirs), {}
    for key in mine:
        same = [k for k in left if same_layout(tuple(student_state[key].shape), tuple(reference[k].shape))]
        if not same:
            return {}
        pairs[key] = _preferred(same, key, reference)
        left.remove(pairs[key])
    return pairs


#: Set while `with_lazy_parameters` binds before its call: lazy layers under other names then wait for the shapes
#: that call gives (binding by structure is exact) instead of binding in order (`_lazy_layers_in_order`).
_A_CALL_GIVES_SHAPES: ContextVar[bool] = ContextVar("a_call_gives_shapes", default=False)


def _lazy_layers_in_order(lazy: Sequence[str], theirs_layers: dict[str, dict[str, tuple[int, ...]]],
                          reference: dict[str, torch.Tensor], declared: dict[str, int]) -> dict[str, str]:
    """{student's lazy entry: course entry} binding the student's lazy layers (nn.LazyLinear under names of its own:
    d2l 1.0's FFN `nn.Sequential(LazyLinear, ReLU, LazyLinear)`) as whole layers to the course's linear layers left
    (a 2-d `weight`, entries of the same kinds), each to one of the output size it `declared` (`out_features`), in
    the order their numbers say and as their names say (`_in_numbered_order`, `_preferred`), where there are exactly
    as many of each: a lazy layer has no input size before its first call, so only its output size and its place can
    bind it (helper-75's D8: a correct d2l 1.0 FFN had 0 of 2). Used where no call can give the shapes first
    (`with_lazy_parameters`). {} where the counts differ: the lazy entries are then not bound (LazyLayers)."""
    mine: dict[str, list[str]] = {}  # layer: its leaves, both in registration order
    for key in lazy:
        mine.setdefault(key.rsplit(".", 1)[0] if "." in key else "", []).append(_leaf(key))
    if not mine or "" in mine:
        return {}
    kinds = {layer: frozenset(_kind(leaf) for leaf in leaves) for layer, leaves in mine.items()}
    def weights(entries: dict[str, tuple[int, ...]]) -> list[tuple[int, ...]]:
        return [shape for leaf, shape in entries.items() if _kind(leaf) == "weight"]
    linear = {layer: entries for layer, entries in theirs_layers.items()
              if layer and [len(shape) for shape in weights(entries)] == [2]}
    if sorted(map(sorted, kinds.values())) != sorted(sorted(map(_kind, entries)) for entries in linear.values()):
        return {}
    pairs: dict[str, str] = {}
    for layer in _in_numbered_order(mine):
        same = [other for other, entries in linear.items() if frozenset(map(_kind, entries)) == kinds[layer]]
        sized = [other for other in same if [shape[0] for shape in weights(linear[other])] == [declared.get(layer)]]
        same = sized or same  # a wrong declared size is `_check_lazy_sizes`'s to fail
        first = mine[layer][0]
        chosen = _preferred([f"{other}.{first}" for other in same], f"{layer}.{first}", reference).rsplit(".", 1)[0]
        by_kind = {_kind(leaf): leaf for leaf in linear.pop(chosen)}
        pairs.update({f"{layer}.{leaf}": f"{chosen}.{by_kind[_kind(leaf)]}" for leaf in mine[layer]})
    return pairs


def _layers(keys: Sequence[str], state: dict[str, torch.Tensor]) -> dict[str, dict[str, tuple[int, ...]]]:
    """The layers that hold `keys` (each key's path less its last name; "" for an entry of the module itself),
    in registration order, each with its entries' kinds and shapes: {"ffn.dense2": {"weight": (8, 16), "bias": (8,)}}."""
    out: dict[str, dict[str, tuple[int, ...]]] = {}
    for key in keys:
        out.setdefault(key.rsplit(".", 1)[0] if "." in key else "", {})[_leaf(key)] = tuple(state[key].shape)
    return out


def _subtree(state: dict[str, torch.Tensor], prefix: str) -> dict[str, tuple[int, ...]]:
    """The entries of `state` inside the submodule `prefix`, by the rest of their path (".ln.weight"), with shapes."""
    return {k[len(prefix):]: tuple(v.shape) for k, v in state.items() if k.startswith(prefix + ".")}


def _shared_submodules(missing: Sequence[str], reference: dict[str, torch.Tensor], bound: set[str]
                       ) -> list[tuple[str, str]]:
    """[(the course's submodule, its twin)] where every course entry in `missing` lies in a submodule of the
    course's that nothing of the student's holds as a whole (`addnorm2`), and that has a bound twin: a
    submodule of the same entries and shapes whose path differs in that one name (`addnorm1`; `blks.1` and
    `blks.0`), every entry of which is `bound`. [] where some missing entry is not so explained (then there is
    no binding): a layer without its bias, or a submodule of its own that the student lacks."""
    found: dict[str, str] = {}
    for key in missing:
        parts = key.split(".")
        twin = None
        for i in range(len(parts) - 1):  # the submodule parts[:i + 1], missing as a whole, with a bound twin
            prefix = ".".join(parts[:i + 1])
            inside = _subtree(reference, prefix)
            if any(prefix + rest not in missing for rest in inside):
                continue
            for other in {".".join(k.split(".")[:i + 1]) for k in reference
                          if k.split(".")[:i] == parts[:i] and len(k.split(".")) > i + 1} - {prefix}:
                theirs = _subtree(reference, other)
                if theirs == inside and all(other + rest in bound for rest in theirs):
                    twin = (prefix, other)
                    break
            if twin:
                break
        if twin is None:
            return []
        found.setdefault(*twin)
    return list(found.items())


def _shapes(state: dict[str, torch.Tensor], limit: int = 12) -> str:
    items = [f"{k} {tuple(v.shape)}" for k, v in list(state.items())[:limit]]
    return ", ".join(items) + (", ..." if len(state) > limit else "")


def _bound(student_module: Any, reference_module: Any, skip: Iterable[str], values: bool = False
           ) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor], Binding]:
    """The student's entries (their values only with `values`, else shapes: `state_shapes`), the
    reference's under the contract's names as the binding's pairs give them (`normalize_key`; both without
    `skip`) and their `bind`ing."""
    skip = set(skip)
    reference = {normalize_key(k): v for k, v in reference_module.state_dict().items() if _leaf(k) not in skip}
    widths, taken = _table_widths(reference_module, skip), {tuple(v.shape) for v in reference.values()}
    theirs = {k: v for k, v in (state_dict if values else state_shapes)(student_module).items()
              if _leaf(k) not in skip and (is_lazy(v) or not _is_table(tuple(v.shape), widths, taken))}
    declared = _declared_sizes(student_module, theirs)
    try:
        binding = bind(theirs, reference, declared)
    except LazyLayers:
        raise
    except AssertionError as exc:
        assert_holds(student_module, reference, theirs, str(exc))
        raise
    _check_lazy_sizes(theirs, reference, binding, declared)
    return theirs, reference, binding


def assert_holds(student_module: Any, names: Iterable[str], state: Collection[str], failure: str) -> None:
    """Fail with `failure` and why the module holds none of the contract's entries `names` in its `state` (its
    entries' names), where that can be said; return where it cannot (helper-75's D1: a constructor spelled `__int__`
    never runs, and the feedback named a plain-tensor `w` the module never had, as both failed in the same words).
    A plain tensor under a contract name of the module's own (`w`), which nn.Module does not register, is a failure
    of the module's structure; a module with no state at all, whose constructor did not run, computes nothing the
    course's weights can be given to: a `Crash`, which earns no floor (grading/scoring.shares), as code that raises
    on every call earns none, typo or not. One attribute read per name of the module's own."""
    plain = [key for key in names if "." not in key and key not in state
             and isinstance(attribute(student_module, key, key), torch.Tensor)]
    if plain:
        raise AssertionError(f"{failure}: " + _(
            "your {names} is a plain tensor, not an nn.Parameter: nn.Module registers only parameters and buffers "
            "(so parameters() and state_dict() miss it, and no optimizer trains it)").format(
                names=", ".join(f"`{k}`" for k in plain)))
    if not state:
        raise Crash(f"{failure}: " + _(
            "your module has no parameters or buffers at all: does its constructor run? (it must be "
            "`def __init__(self, ...)`, spelled so: a method of another name, such as `__int__`, is never "
            "called, and nn.Module's own constructor runs instead)"))


def _table_widths(reference_module: Any, skip: set[str]) -> set[int]:
    """The widths of the tables the course's module keeps under the skipped names (`P`: (1, max_len, d) gives d)."""
    widths: set[int] = set()
    modules = getattr(reference_module, "modules", None)
    for module in modules() if callable(modules) else ():
        for name in skip:
            table = getattr(module, name, None)
            sizes = [n for n in table.shape if n != 1] if isinstance(table, torch.Tensor) else []
            if len(sizes) == 2:
                widths.add(sizes[1])
    return widths


def _is_table(shape: tuple[int, ...], widths: set[int], taken: set[tuple[int, ...]]) -> bool:
    """Whether a student's entry of this shape is such a table under another name (a persistent buffer
    `pe` of shape (1, 5000, d) or (5000, 1, d)): not bound, as `P` is not; a shape that a course entry
    has (an embedding's (vocab, d)) is never taken for one."""
    sizes = [n for n in shape if n != 1]
    return len(sizes) == 2 and sizes[1] in widths and shape not in taken


def _declared_sizes(student_module: Any, theirs: dict[str, torch.Tensor]) -> dict[str, int]:
    """{layer: the output size it declares} for the student's lazy layers (`out_features`; one attribute read per lazy
    layer, none for other code)."""
    sizes: dict[str, int] = {}
    for layer in dict.fromkeys(k.rsplit(".", 1)[0] for k, v in theirs.items() if "." in k and is_lazy(v)):
        try:
            module: Any = student_module
            for name in layer.split("."):
                module = getattr(module, name)
            declared = getattr(module, "out_features", None)
        except AttributeError:
            continue
        if type(declared) is int:
            sizes[layer] = declared
    return sizes


def _check_lazy_sizes(theirs: dict[str, torch.Tensor], reference: dict[str, torch.Tensor], binding: Binding,
                      declared: dict[str, int]) -> None:
    """A lazy layer bound to a course entry must declare that entry's output size (`declared`: `_declared_sizes`):
    loading would give it the course's shape whatever it declares, and a wrong size must cost what it costs an
    nn.Linear."""
    if not declared:  # no lazy layer: nothing to check (every binding of eager code passes here)
        return
    for mine, contract in binding.pairs.items():
        size, expected = declared.get(mine.rsplit(".", 1)[0]), tuple(reference[contract].shape)
        if is_lazy(theirs[mine]) and size is not None and expected and size != expected[0]:
            raise AssertionError(_misfit_message(mine, f"({size}, ...)", expected))


def copy_weights(student_module: Any, reference_module: Any, *, skip: Iterable[str] = ("P",)) -> Binding:
    """Load the reference module's parameters and buffers into the student's module.

    Entries are bound by `bind`: by the contract's names, else by structure, so that code whose
    maths is right but whose names differ is compared on its behaviour (the naming test,
    `assert_contract_names`, costs the names). The positional-encoding table `P` is not copied
    (it may be a plain attribute or a buffer). No binding of equal shapes fails the test with a
    message naming the entries."""
    theirs, reference, binding = _bound(student_module, reference_module, skip)
    loaded = {mine: _laid_out(as_plain(reference[contract]).to(theirs[mine].dtype), theirs[mine])
              for mine, contract in binding.pairs.items()}
    for mine in binding.zeroed:  # a lazy bias has no shape yet: its layer's bound weight gives it
        shape = ((reference[binding.pairs[f"{mine.rsplit('.', 1)[0]}.weight"]].shape[0],) if is_lazy(theirs[mine])
                 else theirs[mine].shape)
        loaded[mine] = torch.zeros(shape, dtype=theirs[mine].dtype)
    student_module.load_state_dict(loaded, strict=False)
    return binding


def bound_state(student_module: Any, reference_module: Any, *, skip: Iterable[str] = ("P",)) -> dict[str, torch.Tensor]:
    """The student's parameters and buffers under the contract's names (bound as `copy_weights` does)."""
    theirs, reference, binding = _bound(student_module, reference_module, skip, values=True)
    return {contract: _laid_out(theirs[mine], reference[contract]) for mine, contract in binding.pairs.items()}


def _laid_out(value: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """`value` in the shape of the entry it is bound to (`same_layout`; a lazy entry takes any)."""
    if is_lazy(value) or is_lazy(like) or tuple(value.shape) == tuple(like.shape):
        return value
    return value.reshape(like.shape)


def assert_contract_names(student_module: Any, reference_module: Any, what: str, *,
                          skip: Iterable[str] = ("P",)) -> None:
    """Fail unless the student's parameters and buffers carry the contract's names (block spellings
    aside): the one test that costs a naming difference; the others compare the bound weights. Lazy
    layers (nn.LazyLinear, as d2l 1.0 builds them) have no shapes to check: said so, in the contract's terms."""
    try:
        theirs, _reference, binding = _bound(student_module, reference_module, skip)
    except LazyLayers as exc:
        raise AssertionError(_lazy_layers(what, exc.keys)) from None
    except Exception as exc:  # torch's own words, from the student's process or this one
        if _LAZY not in str(exc):
            raise
        raise AssertionError(_lazy_layers(what, [])) from None
    lazy = [k for k in binding.pairs if is_lazy(theirs[k])]
    if lazy:
        raise AssertionError(_lazy_layers(what, lazy))
    problems = []
    twins = tuple(f"{twin}." for _missing, twin in binding.shared)  # said below, as one submodule used for two
    renamed = [(mine, theirs) for mine, theirs in binding.renamed if not theirs.startswith(twins or ("\0",))]
    if renamed:
        problems.append(f"{what}: " + _("your names differ from the contract's, so the grader matched them by spelling, "
                                        "shape and registration order: {binding}. Your module's behaviour was graded "
                                        "with these weights; the contract fixes the names (docs/course-api.md): use "
                                        "the contract's names").format(binding=Binding(binding.pairs, renamed).describe()))
    if binding.extra:
        problems.append(_("{what}: your module has parameters or buffers the contract's does not have: {keys}. The "
                          "grader left them as they are and graded your module's behaviour with the course's weights "
                          "in the rest; the contract's module has none of them (docs/course-api.md)").format(
                              what=what, keys=", ".join(f"`{k}`" for k in binding.extra[:8])))
    if binding.shared:
        problems.append(_("{what}: your module has no {missing}: the contract's module has its own {pairs}, the same "
                          "layers with weights of their own, where yours uses one for both. The grader gave yours "
                          "the course's {twins} and graded your module's behaviour with it (docs/course-api.md)").format(
                              what=what, missing=", ".join(f"`{m}`" for m, _t in binding.shared),
                              pairs=", ".join(_("`{mine}` beside `{twin}`").format(mine=m, twin=t)
                                              for m, t in binding.shared),
                              twins=", ".join(f"`{t}`" for _m, t in binding.shared)))
    if binding.zeroed:
        problems.append(_("{what}: your layers have biases the contract's do not have (bias=False): {biases}. The "
                          "grader set them to 0 to grade the rest of your module's behaviour; the contract's layers "
                          "have no bias (docs/course-api.md)").format(
                              what=what, biases=", ".join(f"`{k}`" for k in binding.zeroed[:8])))
    check(not problems, "\n".join(problems))


def _lazy_layers(what: str, keys: Sequence[str]) -> str:
    """The naming test's message for lazy layers (`keys`: the lazy entries, where known)."""
    shown = ", ".join(f"`{k}`" for k in keys[:8])
    return _("{what}: your layers are lazy (nn.LazyLinear, as d2l 1.0 builds them; the grader builds the course's "
             "classes that way where your code calls them with d2l 1.0's arguments, such as "
             "AdditiveAttention(num_hiddens, dropout) or MultiHeadAttention(num_hiddens, num_heads, dropout)){keys}: "
             "they have no shapes until their first call, so the "
             "grader cannot check them. The contract's constructor gives every layer its sizes: "
             "nn.Linear(in_features, out_features) (docs/course-api.md)").format(
                 what=what, keys=f" ({shown})" if shown else "")


#: What torch says, in every version, when an uninitialized (lazy) parameter is read.
_LAZY = "uninitialized parameter"


def with_lazy_parameters(step: Callable[[], Any], module: Any, *inputs: Any) -> Any:
    """`step()` (a binding of the student's weights: copy_weights, assert_contract_names), run again
    after one forward call of `module` on the test's own `inputs` when it failed on a lazy parameter
    (nn.LazyLinear, as d2l 1.0 builds its layers, has no shape before its first call). Code without
    lazy parameters is bound once, with no extra call."""
    waiting = _A_CALL_GIVES_SHAPES.set(True)
    try:
        return step()
    except Exception as exc:  # LazyLayers, or torch's message from the student's process or this one
        if not isinstance(exc, LazyLayers) and _LAZY not in str(exc):
            raise
    finally:
        _A_CALL_GIVES_SHAPES.reset(waiting)
    call(_("its first forward call (which gives lazy parameters their shapes)"), module, *inputs)
    return step()


def parameter_shapes(module: Any) -> list[tuple[str, torch.Tensor]]:
    """`named_parameters()` (a shared parameter once) without the values: a remote module sends each as its
    shape and dtype (a lazy layer's as uninitialized), as `state_shapes` does for a state."""
    found = module.__remote_parameter_shapes__() if _is_remote(module) else module.named_parameters()
    return [(k, v) for k, v in found if isinstance(k, str) and isinstance(v, torch.Tensor)]


def trainable_numbers(module: Any, *inputs: Any) -> int:
    """How many numbers the module's parameters hold, a shared parameter counted once. Lazy layers
    (nn.LazyLinear, as d2l 1.0 builds them) get their shapes from one call on `inputs` first; a lazy
    layer that call does not reach (a layer the module never uses) holds none."""
    shapes = parameter_shapes(module)
    if any(is_lazy(p) for _, p in shapes):
        call(_("its first forward call (which gives lazy parameters their shapes)"), module, *inputs)
        shapes = parameter_shapes(module)
    return sum(math.prod(tuple(p.shape)) for _, p in shapes if not is_lazy(p))


def param_names(module: Any) -> list[str]:
    """Names of the module's trainable parameters."""
    return [name for name, _ in module.named_parameters()]


class _Contract:
    """What `copy_weights`, `bound_state` and `assert_contract_names` read of a reference module (its
    `state_dict()`), built from the contract's names instead: the public suites have no reference."""

    def __init__(self, state: dict[str, torch.Tensor]) -> None:
        self._state = state

    def state_dict(self) -> dict[str, torch.Tensor]:
        return dict(self._state)


def contract(entries: dict[str, torch.Tensor | tuple[int, ...]]) -> Any:
    """The contract's parameters and buffers by name (docs/course-api.md), in place of a reference module:
    a shape stands for an entry of that shape (zeros: enough for `assert_contract_names`), a tensor for
    hand-set weights (`copy_weights(module, contract({...}))` binds them by name, else by structure)."""
    return _Contract({k: v if isinstance(v, torch.Tensor) else torch.zeros(v) for k, v in entries.items()})


def _plain_tensors(module: Any) -> dict[str, torch.Tensor]:
    """The module's tensors kept as plain attributes and its buffers, non-persistent ones included
    (`register_buffer(..., persistent=False)`: `state_dict` has neither), by name."""
    try:  # a proxy of the grader's reads the child's (grading/remote.py)
        attributes = module.__remote_attributes__() if _is_remote(module) else vars(module)
    except TypeError:  # no __dict__
        return {}
    buffers = attributes.get("_buffers")
    pairs = [*attributes.items(), *(buffers.items() if isinstance(buffers, dict) else ())]
    return {k: v for k, v in pairs if isinstance(k, str) and isinstance(v, torch.Tensor)}


def _sizes(shape: Sequence[int]) -> list[int]:
    """A shape's sizes other than 1, in order."""
    return [n for n in shape if n != 1]


def _same_axes(actual: Sequence[int], wanted: Sequence[int]) -> bool:
    """Whether a tensor of shape `actual` holds a `wanted` one with its size-1 axes elsewhere or
    dropped ((max_len, 1, d) or (max_len, d) for (1, max_len, d)): a reshape, not a transpose."""
    return _sizes(actual) == _sizes(wanted)


def stored_table(module: Any, name: str, shape: Sequence[int], what: str, *, as_stored: bool = False,
                 after_call: Optional[Callable[[], Any]] = None) -> Any:
    """module.<name>, else the module's one tensor of this shape (a table stored under another name, as
    a parameter, a buffer or a plain attribute: the naming test charges the name), else a `Missing` that
    fails where it is used. A table whose size-1 axes are elsewhere or dropped ((max_len, d) for
    (1, max_len, d)) comes back in the contract's shape, whatever its name, unless `as_stored` (the shape
    test reads it so, and charges the layout alone). Where the module holds no table until forward runs
    (`self.P = None` in __init__, built on the first call), `after_call` (one forward call) is made once
    and the table read after it: the values are graded, the naming test charges when it is built."""
    table = _stored_table(module, name, shape, what, as_stored)
    if after_call is not None and (table is None or isinstance(table, Missing)):
        try:
            after_call()
        except Exception:  # a forward that fails: the table stays as it was, and fails where it is used
            return table
        return _stored_table(module, name, shape, what, as_stored)
    return table


def _stored_table(module: Any, name: str, shape: Sequence[int], what: str, as_stored: bool) -> Any:
    """stored_table without the call: the table as the module holds it now."""
    table = attribute(module, name, what)
    if not isinstance(table, Missing):
        if isinstance(table, torch.Tensor) and not as_stored and tuple(table.shape) != tuple(shape) \
                and _same_axes(tuple(table.shape), shape):
            return as_plain(table).reshape(tuple(shape))
        return table
    others: dict[str, tuple[int, ...]] = {}  # tables of the same width and another length, by name
    sizes = _sizes(shape)
    for found in (state_dict(module), _plain_tensors(module)):  # the attribute tensors only if no entry fits
        shaped = [v for v in found.values() if _same_axes(tuple(v.shape), shape)]
        if len(shaped) == 1:
            return shaped[0] if as_stored else as_plain(shaped[0]).reshape(tuple(shape))
        if shaped:
            break
        others.update((key, tuple(v.shape)) for key, v in found.items()
                      if len(theirs := _sizes(v.shape)) == len(sizes) and theirs[1:] == sizes[1:])
    if len(others) == 1:  # a misnamed table of another length: say that, not only that the name is missing
        [(key, found_shape)] = others.items()
        return Missing(f"{what}: " + _("your module has no `{name}`, and its table `{key}` has shape {found} where "
                                       "{expected} is expected: the table for another max_len").format(
                                           name=name, key=key, found=found_shape, expected=tuple(shape)))
    return table
