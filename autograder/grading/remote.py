"""Proxies through which tests use a submission that lives in a sandboxed child.

`RemoteNamespace` stands for the submission's top-level names; `RemoteObject` for any object
that has no data form (a module, a class, a bound method). Calls and attribute reads become
messages; replies are decoded into plain Python values and plain tensors, never executed.
"""
from __future__ import annotations

import difflib
import re
import time
from collections.abc import Collection, Sequence
from typing import Any, Optional
from collections.abc import Callable

from autograder.grading import bounded, signatures
from autograder.grading.signatures import Mismatch, spelled_like
from autograder.selfcheck import symptoms
from autograder.selfcheck.testing import Crash
from autograder.selfcheck.i18n import _
from autograder.sandbox.forkserver import Child, ChildDied, Stop
from autograder.sandbox.runtime import loader, wire
from autograder.selfcheck.failures import FailFast, NotImplementedYet
from autograder.selfcheck.plugin import STUDENT_REPR


#: The most of an exception's message and traceback from the student's code that a test shows.
MESSAGE_CHARS = 4000
#: The callable a TypeError's message names: "AdditiveAttention.__init__() missing ...", "masked_softmax() got ...".
_CALLED = re.compile(r"^(\w+)(?:\.(\w+))?\(\) ")


class StudentError(Crash):
    """The student's code raised an exception (shown with the student's own traceback): `message` says
    so ("your code raised NameError: ..."); a test that says itself what raised it shows `raised_as` and
    `detail` instead (selfcheck.testing.raised), so that the student reads their own error's class."""

    def __init__(self, message: str, kind: str = "Exception", detail: Optional[str] = None) -> None:
        super().__init__(message)
        self.kind = kind  # the exception's class name in the child, e.g. "NameError"
        self.detail = message if detail is None else detail  # the child's message, traceback and notes

    @property
    def raised_as(self) -> str:
        return self.kind


class StudentAttributeError(StudentError, AttributeError):
    """The student's object has no such attribute (an AttributeError too, so getattr(o, n, d) works)."""


class MissingName(FailFast):
    """A contract name the submission does not define."""


class SandboxLimit(FailFast):
    """A resource limit tripped or the child died; the message says which."""


class Connection:
    """A child plus the per-test deadline the provider sets."""

    def __init__(self, child: Child, deadline: Callable[[], float],
                 mismatches: Sequence[Mismatch] = (), past_deadline: Optional[Callable[[], str]] = None,
                 course_parts: Optional[dict[str, str]] = None) -> None:
        self.child = child
        self.deadline = deadline
        self.past_deadline = past_deadline  # which limit the deadline was, said when a call runs past it
        # The submission's signature mistakes in the component under test, by what a call reaches;
        # those whose names say what each parameter is are called by name (signatures.Adapter).
        self.mismatches = {target: m for m in mismatches for target in m.reached_as}
        self.adapters = {target: m.adapter for target, m in self.mismatches.items() if m.adapter is not None}
        # The course's components the child holds in place of the student's (dependencies.job's inject),
        # by what a call reaches ("AdditiveAttention", "AdditiveAttention.forward"): the contract's signature.
        self.course_parts = course_parts or {}
        self.handle_names: dict[int, str] = {}  # handle id -> the contract name it was looked up as
        # (type name, attribute) pairs known to be methods: calling them takes one round trip.
        self.methods: set[tuple[str, str]] = set()
        self.names: dict[str, wire.Handle] = {}  # top-level functions and classes already looked up
        self.seed: Optional[int] = None  # applied by the child before the next message: no round trip of its own

    def request(self, msg: dict[str, Any]) -> Any:
        """Send one message and decode its reply; a failure in the student's code raises StudentError."""
        if self.adapters:  # none for a submission whose signatures are the contract's: no cost
            adapted = self._adapt(msg)
            if adapted is not None:
                return adapted
        return self._request(msg)

    def _adapt(self, msg: dict[str, Any]) -> Any:
        """A call in the contract's order to a callable whose signature the grader adapts, sent in the
        student's order and by the student's names (signatures.Adapter); None for any other message.
        The arguments a call returns (call_return_args) come back in the contract's order."""
        op = msg.get("op")
        adapter = self.adapters.get(self._target(msg) or "") if op in ("call", "call_return_args", "vjp") else None
        if adapter is None:
            return None
        args = list(msg.get("args") or [])
        call = signatures.resolve_own(adapter.translate(args, dict(msg.get("kwargs") or {})), self._own_function)
        if op == "vjp":
            wrt = [call.where[i] if 0 <= i < len(call.where) else None for i in msg.get("wrt") or []]
            if any(i is None for i in wrt):
                return None  # a gradient with respect to an argument passed by keyword: as the contract says
            return self._request({**msg, "args": call.args, "kwargs": call.kwargs, "wrt": wrt})
        reply = self._request({**msg, "args": call.args, "kwargs": call.kwargs})
        if op == "call_return_args" and isinstance(reply, list) and len(reply) == 2 and isinstance(reply[1], list):
            after = reply[1]
            back = [after[i] if i is not None and i < len(after) else a for i, a in zip(call.where, args)]
            return [reply[0], back]
        return reply

    def lookup(self, name: str) -> Any:
        """The submission's top-level `name`: a function or class keeps its handle (`names`), so that it is
        looked up once; a name the child does not hold raises StudentError with kind "NameError"."""
        cached = self.names.get(name)
        if cached is not None:
            self.handle_names[cached.id] = name
            return RemoteObject(self, cached)
        value = self.request({"op": "get", "name": name})
        if isinstance(value, RemoteObject):
            if value._handle.type_name in ("function", "type"):
                self.names[name] = value._handle
            self.handle_names[value._handle.id] = name
        return value

    def named_method(self, method: Any, type_name: str, name: str) -> Any:
        """`method`, a bound method read as `obj.name` of an object of `type_name`, known by that name: a call to it
        later (`f = dec.init_state; f(...)`) reaches "Class.name" as a call `dec.init_state(...)` does, adapted alike."""
        if isinstance(method, RemoteObject):
            self.handle_names[method._handle.id] = f"{type_name}.{name}"
        return method

    def _own_function(self, own: signatures.OwnFunction) -> Any:
        """The submission's own top-level function (signatures.OwnFunction: d2l 1.0's kernel), as a handle the
        child resolves."""
        try:
            return self.lookup(own.name)
        except StudentError as exc:
            if exc.kind != "NameError":
                raise
            raise own.missing() from None

    def _request(self, msg: dict[str, Any]) -> Any:
        if self.seed is not None:
            msg = {**msg, "seed_first": self.seed}
        try:
            reply = self.child.request(msg, self.deadline() - time.monotonic(),
                                       to_handle=self._to_handle, from_handle=self._from_handle)
        except ChildDied as exc:
            reason = self.past_deadline() if exc.limit == Stop.TIME and self.past_deadline else exc.reason
            raise SandboxLimit(_("your code was stopped: {reason}").format(reason=reason)) from None
        self.seed = None
        if not isinstance(reply, dict):
            raise SandboxLimit(_("the sandbox sent a malformed reply"))
        if "error" in reply:
            err = reply["error"] if isinstance(reply["error"], dict) else {}
            kind = bounded.text(str(err.get("type", "Exception")), 200)
            message = bounded.text(str(err.get("message", "")), MESSAGE_CHARS)  # the child sends at most
            tb = bounded.text(str(err.get("traceback", "")).strip(), MESSAGE_CHARS)  # 2000 of each
            if kind in ("MemoryError",) or "can't allocate memory" in message or "DefaultCPUAllocator" in message:
                raise SandboxLimit(_("your code ran out of memory (limit: {limit} MB above the interpreter): "
                                     "{message}").format(limit=self.child.limits.memory_mb, message=message[:300]))
            if err.get("returned") is True:  # the child could not encode what the code returned (wire.encode)
                raise StudentError(_("your code returned a value the grader cannot read ({message}): return tensors, "
                                     "numbers, None, and lists, tuples or dicts of them, as the contract says").format(
                                         message=message), kind, message)
            if kind == "NotImplementedError":
                raise NotImplementedYet(_("not implemented yet (your code raised NotImplementedError: {message})").format(
                    message=message) if message else _("not implemented yet (your code raised NotImplementedError)"))
            detail = message
            if tb:
                detail += "\n  " + _(symptoms.CRASH_HEADING) + "\n    " + tb.replace("\n", "\n    ")
            said = _("your code raised {error}: {message}")
            if kind == "AttributeError" and msg.get("op") == "getattr":
                raise StudentAttributeError(said.format(error=kind, message=detail), kind, detail)
            mismatch = self._called(msg)
            if mismatch is not None:
                detail += mismatch.call_note(msg.get("args") or [])
            detail += self._course_part_note(kind, message)
            raise StudentError(said.format(error=kind, message=detail), kind, detail)
        return reply.get("ok")

    def _course_part_note(self, kind: str, message: str) -> str:
        """Where the student's code called one of the course's components with arguments its signature
        does not take (d2l 1.0's `AdditiveAttention(num_hiddens, dropout)`): that it is the course's, and
        the contract's signature. Python's TypeError names the callable: `AdditiveAttention.__init__()`."""
        found = _CALLED.match(message) if kind == "TypeError" and self.course_parts else None
        if found is None:
            return ""
        name, method = found.group(1), found.group(2)
        shown = self.course_parts.get(name if method in (None, "__init__") else f"{name}.{method}")
        if shown is None:
            return ""
        return "\n  " + _("{name} here is the course's, which your code is graded with: its signature is {signature} "
                          "(docs/course-api.md)").format(name=name, signature=shown)

    def _called(self, msg: dict[str, Any]) -> Optional[Mismatch]:
        """The signature mistake of what a call message reaches, if it has one."""
        if msg.get("op") not in ("call", "call_return_args", "vjp"):
            return None
        return self.mismatches.get(self._target(msg) or "")

    def _target(self, msg: dict[str, Any]) -> Optional[str]:
        """What a message calls, as signatures names it: a contract class (its constructor), its
        forward or another method ("MultiHeadAttention.forward"), a contract function."""
        handle = msg.get("obj")
        if not isinstance(handle, wire.Handle):
            return None
        method = msg.get("name")
        if isinstance(method, str):
            return f"{handle.type_name}.{method}"
        name = self.handle_names.get(handle.id)  # the class or function looked up by its contract name
        return name if name is not None else f"{handle.type_name}.forward"

    def _to_handle(self, obj: Any) -> wire.Handle | list[Any] | tuple[Any, ...]:
        if isinstance(obj, (RemoteTuple, RemoteList)) and _snapshot(obj) != obj.as_sent:
            return list(obj) if isinstance(obj, list) else tuple(obj)  # a test changed what it holds: by value
        if isinstance(obj, (RemoteTuple, RemoteList)):
            obj = obj.remote
        if isinstance(obj, RemoteObject):
            if object.__getattribute__(obj, "_conn").child is not self.child:
                raise wire.WireError("an object from another submission")
            return object.__getattribute__(obj, "_handle")
        raise wire.WireError(f"cannot send a {type(obj).__name__} to the submission")

    def _from_handle(self, handle: wire.Handle) -> RemoteObject | RemoteTuple | RemoteList:
        if handle.items is None:
            return RemoteObject(self, handle)
        remote = RemoteObject(self, wire.Handle(handle.id, handle.type_name, handle.is_callable))
        return RemoteTuple(handle.items, remote) if isinstance(handle.items, tuple) else RemoteList(handle.items, remote)


def _snapshot(value: Any) -> Any:
    """What a container holds, down through its lists and tuples, by identity: a test that changed any of it
    (`state[2][0] = None`) changed what the student's object holds."""
    if isinstance(value, (list, tuple)):
        return (isinstance(value, list), tuple(_snapshot(v) for v in value))
    return id(value)


class _RemoteItems:
    """What `RemoteTuple` and `RemoteList` share: the student's object in the child (`remote`), whose other attributes
    are read there, and its items as they came (`as_sent`, a `_snapshot`)."""

    remote: RemoteObject
    as_sent: Any

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return getattr(self.remote, name)

    def __remote_type__(self) -> str:
        """The class of the student's object (what a message names)."""
        return self.remote.__remote_type__()


class RemoteTuple(_RemoteItems, tuple[Any, ...]):
    """A tuple subclass's instance in the child (a NamedTuple a decoder keeps its state in): a tuple of its items,
    as in-process grading sees it (`len`, indexing, unpacking), that is sent back as the child's own object (its
    handle), so that the student's code gets its NamedTuple again, while the test has not changed what it holds (else
    as a tuple of its items now); other attributes (`state.enc_outputs`) are read in the child."""

    def __new__(cls, items: tuple[Any, ...], remote: RemoteObject) -> RemoteTuple:
        made = super().__new__(cls, items)
        made.remote, made.as_sent = remote, _snapshot(items)
        return made

    def __repr__(self) -> str:  # no memory address: hypothesis shows it in a failing example
        return repr(tuple(self))


class RemoteList(_RemoteItems, list[Any]):
    """A list subclass's instance in the child (a state with a property for one of its parts): a list of its items,
    as in-process grading sees it, sent back as the child's own object while the test has not changed it (else as a
    list of its items now); other attributes are read in the child."""

    def __init__(self, items: list[Any], remote: RemoteObject) -> None:
        super().__init__(items)
        self.remote, self.as_sent = remote, _snapshot(items)

    def __repr__(self) -> str:  # no memory address
        return repr(list(self))


class RemoteObject:
    """An object in the child. Supports calls, attribute reads and method calls."""

    __slots__ = ("_conn", "_handle")

    def __init__(self, conn: Connection, handle: wire.Handle) -> None:
        object.__setattr__(self, "_conn", conn)
        object.__setattr__(self, "_handle", handle)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if (self._handle.type_name, name) in self._conn.methods:
            return _BoundMethod(self, name)
        value = self._conn.request({"op": "getattr", "obj": self._handle, "name": name})
        if isinstance(value, RemoteObject) and value._handle.type_name == "method":
            self._conn.methods.add((self._handle.type_name, name))
            self._conn.named_method(value, self._handle.type_name, name)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError("tests may not set attributes on the student's objects")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._conn.request({"op": "call", "obj": self._handle, "args": list(args), "kwargs": kwargs})

    def __remote_call__(self, args: tuple, kwargs: dict, return_args: bool = False) -> Any:
        if not return_args:
            return self(*args, **kwargs)
        return self._conn.request({"op": "call_return_args", "obj": self._handle, "args": list(args),
                                   "kwargs": kwargs})

    def __remote_vjp__(self, args: list, kwargs: dict, grad_output: Any, wrt: list[int],
                       output_index: Optional[int]) -> Any:
        return self._conn.request({"op": "vjp", "obj": self._handle, "args": args, "kwargs": kwargs,
                                   "grad_output": grad_output, "wrt": wrt, "output_index": output_index})

    def __remote_fit__(self, batches: list, loss: str, lr: float, steps: int, optimizer: str) -> Any:
        return self._conn.request({"op": "fit", "obj": self._handle, "batches": batches, "loss": loss,
                                   "lr": lr, "steps": steps, "optimizer": optimizer})

    def __remote_state_shapes__(self) -> Any:
        """`obj.state_dict()` with each tensor sent as its shape and dtype only (a tensor on the meta
        device here): what binding weights by structure reads, without the values' bytes."""
        return self._conn.request({"op": "call", "obj": self._handle, "name": "state_dict", "args": [], "kwargs": {},
                                   "shapes": True})

    def __remote_parameter_shapes__(self) -> Any:
        """`obj.named_parameters()` (a shared parameter once) with each tensor sent as its shape and dtype
        only, as `__remote_state_shapes__` sends a state: what a count of parameters reads."""
        return self._conn.request({"op": "call", "obj": self._handle, "name": "named_parameters", "args": [],
                                   "kwargs": {}, "shapes": True})

    def __remote_attributes__(self) -> dict[str, Any]:
        """The object's `__dict__` as it came back (tensors as plain tensors, a module's `_buffers` as a dict,
        other objects as handles; {} if it has none): where a test looks for a table the contract names and
        the student stored under another name (`testing._plain_tensors` picks the tensors)."""
        found = self._conn.request({"op": "getattr", "obj": self._handle, "name": "__dict__"})
        return found if isinstance(found, dict) else {}

    def __remote_is_method__(self) -> bool:
        """Whether the object is a bound method (what a `def` without @property gives)."""
        return self._handle.type_name == "method"

    def __remote_type__(self) -> str:
        """The class of the student's object (what a message names: `got ndarray`, never the proxy's)."""
        return self._handle.type_name

    def __repr__(self) -> str:
        return f"<student's {self._handle.type_name}>"


class _BoundMethod:
    """`obj.method` for a known method: calling it is one message (getattr and call in the child)."""

    __slots__ = ("_obj", "_name")

    def __init__(self, obj: RemoteObject, name: str) -> None:
        self._obj, self._name = obj, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        obj = self._obj
        return obj._conn.request({"op": "call", "obj": obj._handle, "name": self._name,
                                  "args": list(args), "kwargs": kwargs})

    def _real(self) -> RemoteObject:
        obj = self._obj
        method = obj._conn.request({"op": "getattr", "obj": obj._handle, "name": self._name})
        return obj._conn.named_method(method, obj._handle.type_name, self._name)

    def __remote_call__(self, args: tuple, kwargs: dict, return_args: bool = False) -> Any:
        if not return_args:
            return self(*args, **kwargs)
        return self._real().__remote_call__(args, kwargs, True)

    def __remote_vjp__(self, *args: Any) -> Any:
        return self._real().__remote_vjp__(*args)

    def __remote_fit__(self, *args: Any) -> Any:
        return self._real().__remote_fit__(*args)

    def __remote_is_method__(self) -> bool:
        return True


class RemoteNamespace:
    """The submission's top-level names."""

    __slots__ = ("_conn", "_defined", "_names", "_notes", "_note_defines")

    def __init__(self, conn: Connection, notes: list[str], names: frozenset[str],
                 defined: Sequence[str] = (), note_defines: Sequence[frozenset[str]] = ()) -> None:
        object.__setattr__(self, "_conn", conn)
        object.__setattr__(self, "_notes", notes)
        object.__setattr__(self, "_note_defines", tuple(note_defines))
        object.__setattr__(self, "_names", names)
        object.__setattr__(self, "_defined", tuple(defined))  # what the submission's loading defined

    def __repr__(self) -> str:  # no memory address: hypothesis shows it in a failing example
        return STUDENT_REPR

    def __getattr__(self, name: str) -> Any:
        if name not in self._names:
            # Not a contract name: a probe by tooling (hypothesis looks for `execute_example`).
            raise AttributeError(name)
        try:
            return self._conn.lookup(name)
        except StudentError as exc:
            if exc.kind != "NameError":
                raise
            raise missing_name(name, self._defined, self._notes, self._names, self._note_defines) from None

    def __remote_seed__(self, value: int) -> None:
        """Seed the child's random generators before whatever the test asks of it next."""
        self._conn.seed = int(value)

    def __shared_scope__(self) -> object:
        """What testing.shared's results belong to: this child (a new one for every component's grading)."""
        return self._conn

    def __remote_call__(self, *a: Any, **k: Any) -> Any:  # marks the namespace as remote for helpers
        raise TypeError("call a name of the namespace, not the namespace")


_NOT_DEFINED = re.compile(r"name '(\w+)' is not defined")


def missing_name(name: str, defined: Sequence[str], notes: Sequence[str], contract: Collection[str] = (),
                 note_defines: Sequence[frozenset[str]] = ()) -> MissingName:
    """The failure of a test that asks for a contract name the submission's loading did not bind
    (`defined`: the names it did; `notes`: what went wrong while loading), the same on every path. A definition
    under another of the `contract`'s names is the student's code for that name, never suggested for this one
    (helper-76: "`TransformerEncoder` is not defined ...; did you mean `TransformerDecoder`?"). A note of a statement
    that would have bound the name (`note_defines`, per note: loader.defines) is said to be why; the others are
    said to be other errors (helper-81's F7: "No module named 'pandas'" had read as the cause of a missing class)."""
    defined = [d for d in defined if d not in contract]
    detail = ""
    shown = [n.strip().splitlines()[-1] for n in notes[:3]]
    causes, wanted = set[int](), {name, loader.ANY_NAME}
    while True:  # and a statement that would have bound a name such a statement missed (an import of its base class)
        more = {i for i, names in enumerate(note_defines[:len(shown)]) if i not in causes and names & wanted}
        if not more:
            break
        causes |= more
        wanted |= {m.group(1) for i in more for m in _NOT_DEFINED.finditer(shown[i])}
    why = [text for i, text in enumerate(shown) if i in causes]
    others = [text for i, text in enumerate(shown) if i not in causes]
    if why:
        detail += "\n  " + _("while loading your code, the statement that defines it failed:") + " " + "\n  ".join(why)
    if others:
        detail += "\n  " + _("other errors while loading your code:") + " " + "\n  ".join(others)
    like = [d for d in defined if not d.startswith("_") and spelled_like(name, d)]
    if len(like) > 1:  # signatures.renamed grades none of them
        return MissingName(_("`{name}` is not defined in your submission, and {names} are all spelled like it: the "
                             "grader cannot tell which one is meant, so it graded none. Name the one you mean "
                             "`{name}`").format(name=name, names=", ".join(f"`{d}`" for d in like[:4])) + detail)
    close = suggest(name, defined)
    if close:
        return MissingName(_("`{name}` is not defined in your submission; did you mean `{close}`? (the grader "
                             "looks for the contract's name `{name}`)").format(name=name, close=close) + detail)
    return MissingName(_("`{name}` is not defined in your submission").format(name=name) + detail)


def suggest(name: str, defined: Sequence[str]) -> Optional[str]:
    """The submission's name that most likely means the contract's `name` (None if nothing is close):
    one spelled like it (signatures.spelled_like: the grader grades such a definition in its place where
    it is the only one), else a close spelling."""
    candidates = [d for d in defined if not d.startswith("_") and d != name]
    for d in candidates:
        if spelled_like(name, d):
            return d
    close = difflib.get_close_matches(name.lower(), [d.lower() for d in candidates], n=1, cutoff=0.75)
    return next((d for d in candidates if d.lower() == close[0]), None) if close else None
