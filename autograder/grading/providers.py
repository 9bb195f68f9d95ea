"""Where a test's `student` fixture comes from: a sandboxed child per component (grading), or the
sandbox's loader run in this process (the kit's own fast tests on trusted files)."""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any, Optional
from collections.abc import Callable

from autograder.config import Course
from autograder.grading import bounded, dependencies, signatures
from autograder.grading.remote import Connection, RemoteNamespace, SandboxLimit, missing_name
from autograder.grading.submission import Cell
from autograder.sandbox.bwrap import RUNTIME_DIR
from autograder.sandbox.forkserver import Child, ChildDied, SandboxError, Stop, Zygote
from autograder.sandbox.runtime import procedures
from autograder.selfcheck.plugin import Submission
from autograder.selfcheck.i18n import _


class Broken:
    """Stands in for a submission that could not be loaded: every use fails with the reason."""

    def __init__(self, reason: str) -> None:
        self._reason = reason

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        raise SandboxLimit(self._reason)


#: For a component, which dependencies are the student's and which the course's (dependencies.plan).
Planner = Callable[[str], list[dependencies.DependencyUse]]


@dataclass
class Run:
    """What grading one component with one set of dependencies left: which they were, the notes of
    loading the submission, what the student's code printed."""

    uses: list[dependencies.DependencyUse] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    output: str = ""


class Runs:
    """A provider's record per component of the grading its tests ran in, and a second grading of a
    component (the session's best of two): `take` ends the first and hands over its record, the
    next test starts a fresh one (with the planner's dependencies), `put` keeps the better record."""

    def __init__(self) -> None:
        self.planner: Optional[Planner] = None  # set by the session; None: reference dependencies
        #: Set by the session: whether the student's own `name` agreed with the course's in a reference comparison of
        #: its own suite (its signature is code that works). None: no earlier component's tests ran (none is trusted).
        self.works: Optional[Callable[[str], bool]] = None
        self.uses: dict[str, list[dependencies.DependencyUse]] = {}
        self.notes: dict[str, list[str]] = {}
        self.note_defines: dict[str, list[frozenset[str]]] = {}  # per note, what its statement would have bound
        self.output: dict[str, str] = {}
        self.broken: dict[str, str] = {}  # per component: why its code could not be loaded or run at all

    def _end(self) -> None:
        """End the current component's grading (its child, its loaded names)."""

    def _called_as(self, called_as: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """`called_as` without the call sites read in the student's order (signatures.own_order_sites) of a
        class whose own version showed no working code (`works`): the signature of a stub, or of a class that
        never loaded, says nothing of what a call means (helper-51: a five-line stub had made a wrong call right)."""
        works = self.works
        return {name: spec if "sites" not in spec or (works is not None and works(name))
                else {k: v for k, v in spec.items() if k != "sites"} for name, spec in called_as.items()}

    def take(self, component: str) -> Run:
        self._end()
        return Run(self.uses.pop(component, []), self.notes.pop(component, []), self.output.pop(component, ""))

    def put(self, component: str, run: Run) -> None:
        self._end()
        self.uses[component], self.notes[component] = run.uses, run.notes
        if run.output:
            self.output[component] = run.output


class SandboxProvider(Runs):
    """One fresh sandboxed child per component (and again after a child dies)."""

    def __init__(self, zygote: Zygote, course: Course, assignment_id: str, cells: list[Cell]) -> None:
        super().__init__()
        self.zygote, self.course = zygote, course
        self.assignment = course.assignment(assignment_id)
        self.cells = cells
        self.limits = course.limits
        self.started = time.monotonic()
        self.child: Optional[Child] = None
        self.conn: Optional[Connection] = None
        self.current: Optional[str] = None
        self.test_deadline = 0.0
        self.names = dependencies.contract_names(course)  # the names tests may ask the submission for
        # What a missing name's message suggests from: the submission's own definitions, read from its source
        # (the child's namespace also holds the course's code standing in for earlier components).
        self.defined = sorted(dependencies.defined_names(cells))
        self.mismatches = signatures.mismatches(course, cells)  # read from its source, never run here
        self.renames = signatures.renamed(course, cells)  # components spelled otherwise, from the source too
        self.methods = signatures.method_specs(course, cells)  # contract functions written as methods
        self.nested = signatures.nested_specs(course, cells)  # ... or inside another function
        self.slips = signatures.method_slips(course, cells)  # contract methods spelled otherwise
        self.called_as = signatures.called_as(course, cells, self.mismatches)  # the student's constructors, for the course's stand-ins
        self.contract = signatures.contract(course)  # the contract's signatures, named when the course's code is misused
        #: Whether a child with these dependencies holds the course's code the student may not see yet
        #: (set by the session: dependencies.unreleased_reference); such a job taints its fork server.
        self.withholds: Callable[[list[dependencies.DependencyUse]], bool] = lambda uses: False

    def _deadline(self) -> float:
        return min(self.test_deadline, self.started + self.limits.submission_seconds)

    def _past_deadline(self) -> str:
        """Which limit a call that ran past `_deadline` ran past: the test's or the whole submission's."""
        if self.test_deadline >= self.started + self.limits.submission_seconds:
            return self._past_submission_limit()
        return _("the test ran past its time limit ({seconds} s)").format(seconds=f"{self.limits.test_seconds:g}")

    def _past_submission_limit(self) -> str:
        return _("the whole submission ran past its time limit ({seconds} s)").format(
            seconds=f"{self.limits.submission_seconds:g}")

    def namespace(self, component: str) -> Any:
        now = time.monotonic()
        self.test_deadline = now + self.limits.test_seconds
        if now > self.started + self.limits.submission_seconds:
            return Broken(self._past_submission_limit())
        if component in self.broken:
            return Broken(self.broken[component])
        if component != self.current or self.child is None or self.child.dead:
            self._start(component)
            if component in self.broken:
                return Broken(self.broken[component])
        assert self.conn is not None
        ns = RemoteNamespace(self.conn, self.notes.get(component, []), self.names, self.defined,
                             self.note_defines.get(component, []))
        ns.__remote_seed__(procedures.TEST_SEED)  # every test starts from the same seed (sent with its first call)
        self.test_deadline = time.monotonic() + self.limits.test_seconds
        return ns

    def _start(self, component: str) -> None:
        self._finish_child()
        self.current = component
        uses = self.planner(component) if self.planner else None
        if uses is not None:
            self.uses[component] = uses
        withheld = self.withholds(uses or [])
        if self.zygote.tainted and not withheld:
            # An earlier job held the course's code before the due date; what it could have left in the
            # fork server for this one to read (and show the student) goes with the server. Lazily: a
            # submission on Gradescope, or a class graded after the due date, never pays for it.
            self.zygote.stop()
        job = dependencies.job(self.course, self.assignment, component, self.cells, uses, self.renames,
                               self._called_as(self.called_as), self.methods, self.nested, self.slips)
        left = self.limits.load_seconds  # of the submission's time, once the child exists
        try:
            self.child = self.zygote.spawn(job, self.limits)
            self.zygote.tainted = self.zygote.tainted or withheld
            # Loading has its own limit, within what is left of the submission's (which it had outlasted);
            # taken after spawn, which may have started a new fork server (seconds).
            left = self.started + self.limits.submission_seconds - time.monotonic()
            ready = self.child.wait_ready(max(0.0, min(self.limits.load_seconds, left)))
        except ChildDied as exc:
            if exc.limit == Stop.TIME and left < self.limits.load_seconds:
                reason = self._past_submission_limit()
            else:
                cause = exc.reason if exc.limit != Stop.TIME else _(
                    "it ran past the time limit for loading ({seconds} s)").format(seconds=f"{self.limits.load_seconds:g}")
                reason = _("loading your code failed: {reason}").format(reason=cause)
            if exc.limit in (Stop.TIME, Stop.CPU, Stop.MEMORY):
                # Loading is the same for every component: do not wait for the limit again.
                for c in self.assignment.components:
                    self.broken.setdefault(c.name, reason)
            self.broken[component] = reason
            self._finish_child()
            return
        except SandboxError as exc:
            self.broken[component] = _("the grader's sandbox failed ({error}); ask your instructor to regrade").format(
                error=exc)
            self._finish_child()
            return
        self.conn = Connection(self.child, self._deadline, self.mismatches.get(component, []), self._past_deadline,
                               self._course_signatures(job["inject"]))
        report = ready.get("ready", {}) if isinstance(ready, dict) else {}
        errors = report.get("errors", []) if isinstance(report, dict) else []
        errors = errors if isinstance(errors, list) else []
        omitted = report.get("omitted", 0) if isinstance(report, dict) else 0  # the loader's own count
        total = len(errors) + (omitted if type(omitted) is int else 0)
        kept = [e for e in errors[:self.limits.notes] if isinstance(e, dict)]
        self.notes[component] = bounded.notes([f"{e.get('where')}: {e.get('error')}" for e in kept], self.limits, total)
        self.note_defines[component] = [_names_in(e.get("defines")) for e in kept]

    def _course_signatures(self, names: list[str]) -> dict[str, str]:
        """The contract's signature of each callable of the course's components `names` ("AdditiveAttention":
        "AdditiveAttention(key_size, query_size, num_hiddens, dropout)", "AdditiveAttention.forward": ...)."""
        return {target: f"{target.removesuffix('.__init__')}({params.show(defaults=True)})"
                for name in names for target, params in self.contract.get(name, {}).items()}

    def _finish_child(self) -> None:
        if self.child is not None:
            self.child.close()
            text = self.child.output_text()
            if text.strip() and self.current:
                self.output[self.current] = self.output.get(self.current, "") + text
            self.child, self.conn = None, None

    def _end(self) -> None:
        self._finish_child()
        self.current = None

    def after_test(self, component: str) -> None:
        if self.child is not None and self.child.dead:
            if self.child.dead.limit == Stop.SANDBOX:  # it took the fork server down: no second chance
                self.broken[component] = _("your code was stopped: {reason}").format(reason=self.child.dead.reason)
            self._finish_child()

    def close(self) -> None:
        self._finish_child()


class LoadedNames(Submission):
    """A submission's names loaded in this process; a contract name it lacks fails a test as in the
    sandbox (remote.missing_name), anything else is an AttributeError (a probe by tooling)."""

    def __init__(self, contract: frozenset[str], notes: list[str], defined: list[str],
                 note_defines: list[frozenset[str]], **names: Any) -> None:
        super().__init__(**names)
        object.__setattr__(self, "_loading", (contract, tuple(notes), tuple(defined), tuple(note_defines)))

    def __getattr__(self, name: str) -> Any:  # only for names loading did not bind
        contract, notes, defined, note_defines = self.__dict__["_loading"]
        if name not in contract:
            raise AttributeError(name)
        raise missing_name(name, defined, notes, contract, note_defines)


def _names_in(defines: Any) -> frozenset[str]:
    """A load note's `defines` (loader.defines: what the failed statement would have bound) as a child reported it:
    names, at most 100 of at most 200 characters each (anything else reads as nothing)."""
    if not isinstance(defines, list):
        return frozenset()
    return frozenset(n for n in defines[:100] if isinstance(n, str) and len(n) <= 200)


class InProcessProvider(Runs):
    """Load a submission in this process with the sandbox's loader (for the kit's own fast tests).

    Not for grading untrusted code: it runs the submission in the grader's process.
    """

    def __init__(self, course: Course, assignment_id: str, cells: list[Cell]) -> None:
        super().__init__()
        self.course, self.assignment = course, course.assignment(assignment_id)
        self.cells = cells
        self.current: Optional[str] = None
        self.ns: Any = None
        self.mismatches = signatures.mismatches(course, cells)  # called by name as in the sandbox
        self.renames = signatures.renamed(course, cells)
        self.methods = signatures.method_specs(course, cells)
        self.nested = signatures.nested_specs(course, cells)
        self.slips = signatures.method_slips(course, cells)
        self.called_as = signatures.called_as(course, cells, self.mismatches)
        self.defined = sorted(dependencies.defined_names(cells))  # as SandboxProvider.defined

    def _end(self) -> None:
        self.current, self.ns = None, None

    def namespace(self, component: str) -> Any:
        if component != self.current:
            self.current, self.ns = component, self._load(component)
        procedures.seed_everything(procedures.TEST_SEED)
        return self.ns

    def _load(self, component: str) -> Any:
        sys.path.insert(0, str(RUNTIME_DIR))
        try:
            import child  # the sandbox's own loader (a top-level module inside the sandbox)
        finally:
            sys.path.pop(0)
        uses = self.planner(component) if self.planner else None
        if uses is not None:
            self.uses[component] = uses
        job = dependencies.job(self.course, self.assignment, component, self.cells, uses, self.renames,
                               self._called_as(self.called_as), self.methods, self.nested, self.slips)
        saved = {n: sys.modules.get(n) for n in job["modules"]}
        try:
            names, report = child.load_submission(job)
            names = {**names, **child.scaffolding(job)}  # what the tests get; the student's code keeps its own
            names = signatures.adapted(names, self.mismatches.get(component, []))
        finally:
            for n, m in saved.items():
                if m is None:
                    sys.modules.pop(n, None)
                else:
                    sys.modules[n] = m
        self.notes[component] = [f"{e['where']}: {e['error']}" for e in report["errors"]]
        return LoadedNames(dependencies.contract_names(self.course), self.notes[component], self.defined,
                           [_names_in(e.get("defines")) for e in report["errors"]],
                           **{k: v for k, v in names.items() if not k.startswith("__")})

    def after_test(self, component: str) -> None:
        pass

    def close(self) -> None:
        pass
