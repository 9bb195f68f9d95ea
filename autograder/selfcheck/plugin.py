"""The pytest plugin that binds a test suite to one submission and records per-test outcomes.

Each test names its component with `@pytest.mark.component("masked_softmax")` and may carry a
`@pytest.mark.weight(2)` (default 1). The `student` fixture gives the submission as seen for
that component; `ref` gives the reference implementations (instructor side only).
"""
from __future__ import annotations

import ast
import contextlib
import functools
import inspect
import io
import os
import re
import sys
import textwrap
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Protocol
from collections.abc import Callable, Iterator

import pytest
from hypothesis import HealthCheck, Phase, settings

from autograder.sandbox.runtime import procedures
from autograder.selfcheck import symptoms
from autograder.selfcheck.failures import FailFast
from autograder.selfcheck.i18n import _

if TYPE_CHECKING:  # for the annotation only: the plugin imports testing where a test runs (as below)
    from autograder.selfcheck.testing import Reproduced

#: The seed of the grader's own random streams (test inputs drawn outside hypothesis).
GRADER_SEED = 1234


class StudentProvider(Protocol):
    """Where the student's names come from: the notebook kernel, or a sandboxed child."""

    def namespace(self, component: str) -> Any: ...

    def after_test(self, component: str) -> None: ...

    def close(self) -> None: ...


@dataclass
class TestOutcome:
    nodeid: str
    name: str
    component: str
    weight: float
    public: bool
    kind: str = "reference"  # reference, dependence, reads, property or structure (see config.Scoring)
    function: str = ""  # the test function's name (course.yml scoring.tests overrides use it)
    passed: bool = False
    output: str = ""
    seconds: float = 0.0
    misconception: str = ""  # the catalogue family diagnosed for the component (stable id), if any
    candidates: tuple[str, ...] = ()  # the families that reproduce this failure (evidence for it)
    replayed: tuple[str, ...] = ()  # ... of which found by replaying the catalogue's variants
    entries: tuple[str, ...] = ()  # the catalogue entries whose replay reproduced it (members of those families)
    replay_ran: bool = False  # the catalogue's variants were replayed on its failed call (none may have reproduced it)
    on_values: bool = False  # it failed on numbers the code computed (testing.Mismatch.on_values), not a crash or a fact
    crashed: bool = False  # the student's code raised (testing.Crash, or an exception that is no failed check)
    ignores_input: bool = False  # an output the course's moves with an input stays put (testing.Ignores)
    part: str = ""  # what of the component's results the test checks (its `part` parameter), if it says
    english: str = ""  # `name` in English (describe_test): what staff read and results are keyed by


HYPOTHESIS_PROFILE = "course"


def examples_from_the_test_alone() -> None:
    """Make a derandomized test's examples follow from the test and the settings alone.

    Hypothesis (6.131 and later) draws about one value in forty from the literals of every loaded
    module that is not a library or a test file. Which of the kit's modules a process has loaded
    differs between `course grade`, nbgrader, Gradescope, a Dask worker, a student's check() and the
    zoo's in-process gradings (which also load every mutant graded before), so one submission could
    meet different examples on each path, and the zoo would prove the hidden tests on examples
    students never meet. Hypothesis has no setting for it: the collector is replaced by an empty
    pool (tests/test_selfcheck.py holds the examples to it).
    """
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
        providers._get_local_constants  # noqa: B018 - the collector, if this hypothesis has it
        providers.CONSTANTS_CACHE.cache.clear()
    except (ImportError, AttributeError):  # older, or moved: the kit's test fails, not a grading
        return
    empty = Constants()
    providers._get_local_constants = lambda: empty


def digests_computed_once() -> None:
    """Compute each test function's digest once per process, not on every run.

    A derandomized test's seed is a digest of its source (`function_digest`: inspect.getsource, then
    tokenize to drop comments, about 2 ms), which hypothesis computes twice per run (the seed and the
    unused database key). Every part of a split test is a run, and a grading worker runs the same
    test functions for every submission: 90 digests per 02 grading, about a tenth of its time. The
    digest of a function object cannot change while it lives (its source is read from the file it was
    compiled from), so it is kept per function object: the same seeds, computed once.
    """
    import weakref

    from hypothesis import core
    from hypothesis.internal import reflection

    compute = reflection.function_digest
    if getattr(core.function_digest, "computed_once", False):
        return
    known: weakref.WeakKeyDictionary[Any, bytes] = weakref.WeakKeyDictionary()

    def function_digest(function: Any) -> bytes:
        try:
            return known[function]
        except (KeyError, TypeError):  # TypeError: not weakly referenceable; computed every time
            digest = compute(function)
        try:
            known[function] = digest
        except TypeError:
            pass
        return digest

    function_digest.computed_once = True  # type: ignore[attr-defined]
    core.function_digest = function_digest  # core calls it by this name (seed and database key)


def register_hypothesis_profile(max_examples: int = 20, derandomize: bool = True) -> None:
    """Deterministic hypothesis: derandomized, no example database, no deadline, quiet, no examples
    drawn from the literals of loaded modules (`examples_from_the_test_alone`) and each test's seed
    computed once per process (`digests_computed_once`).

    Hypothesis keeps the settings in effect per thread and the current profile's name per process: after
    a grading in another thread (a class graded from a worker thread), this thread's settings differ from
    the current profile's, and registering would warn (a HypothesisDeprecationWarning, "since 2025-11-15": a
    future error). So this thread first takes the current profile, as the other thread left it, then registers."""
    examples_from_the_test_alone()
    digests_computed_once()
    settings.load_profile(settings.get_current_profile_name())
    settings.register_profile(
        HYPOTHESIS_PROFILE, max_examples=max_examples, derandomize=derandomize, database=None,
        deadline=None, print_blob=False, report_multiple_bugs=False,
        # No "explain" phase: it re-runs failing examples many times for little feedback value.
        phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                               HealthCheck.data_too_large, HealthCheck.filter_too_much,
                               HealthCheck.large_base_example])
    settings.load_profile(HYPOTHESIS_PROFILE)


def component_of(item: pytest.Item) -> Optional[str]:
    mark = item.get_closest_marker("component")
    return mark.args[0] if mark and mark.args else None


def weight_of(item: pytest.Item) -> float:
    mark = item.get_closest_marker("weight")
    return float(mark.args[0]) if mark and mark.args else 1.0


def kind_of(item: pytest.Item) -> str:
    """`@pytest.mark.kind("property")`, else "reference" for a test that uses the course's reference
    (`ref`) and "property" for one that does not (hand-computed examples are marked "reference")."""
    mark = item.get_closest_marker("kind")
    if mark and mark.args:
        return str(mark.args[0])
    return "reference" if "ref" in getattr(item, "fixturenames", ()) else "property"


def test_docstring(fn: Any) -> str:
    """A test function's docstring, which names the test, also under `python -OO`, which strips docstrings (every
    test was then named by its function, hidden tests' names shown to students: helper-77): read from its source."""
    doc = getattr(fn, "__doc__", None)
    if doc is None and fn is not None and sys.flags.optimize >= 2:
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(inspect.unwrap(fn))))
        except (OSError, TypeError, SyntaxError, ValueError):
            return ""
        first = tree.body[0] if tree.body else None
        doc = ast.get_docstring(first) if isinstance(first, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    return doc if isinstance(doc, str) else ""


def describe_test(item: pytest.Item, english: bool = False) -> str:
    """The test's name for students: the first line of its docstring in the student's language (unless
    `english`: staff's name of it), else its function name; a test with several parametrized cases adds
    the case's id ("... [B8-L40-h4-d32]"), so that each case's name is its own in the results and the
    class report."""
    doc = test_docstring(getattr(item, "function", None)).strip().splitlines()
    name = (doc[0].strip() if english else _(doc[0].strip())) if doc else item.name
    cases = 1
    for mark in item.iter_markers("parametrize"):
        cases *= len(mark.args[1]) if len(mark.args) > 1 else 1
    callspec = getattr(item, "callspec", None)
    return f"{name} [{callspec.id}]" if doc and cases > 1 and callspec is not None else name


def failure_text(report: pytest.TestReport, limit: int = 4000) -> str:
    """What a student may see of a failure: the suite's message, never test source. The messages show
    the inputs of the (shrunk) failing example themselves; hypothesis's notes (the example as a call,
    its draws) are dropped (`exception_message`; the split is for a report pytest built itself)."""
    longrepr = report.longrepr
    crash = getattr(longrepr, "reprcrash", None)  # a report pytest built (our hook builds strings)
    message = crash.message if crash is not None else (str(longrepr) if longrepr else _("failed"))
    message = re.sub(r"^(AssertionError|Failed|autograder(\.\w+)+): ", "", message)
    # A suite's fixed hints are for its readers: shown to a student, they name mistakes the student
    # may not have made (the diagnosis names the one they did).
    message = _HINT.sub("", message)
    return message.split("Falsifying example:")[0].strip()[:limit]


def failure_leaf(exc: BaseException) -> BaseException:
    """The one failure inside an exception group of one (hypothesis' FlakyFailure: a failure that did not
    happen again on replay), or `exc` itself."""
    leaf, inner = exc, getattr(exc, "exceptions", None)
    while isinstance(inner, tuple) and len(inner) == 1 and isinstance(inner[0], BaseException):
        leaf = inner[0]
        inner = getattr(leaf, "exceptions", None)
    return leaf


def exception_message(excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    """The failure's type and message, without the notes attached to the exception (PEP 678).

    Hypothesis reports the failing example as notes: the test function called with the repr of every
    argument, fixtures included ("Falsifying example: test_x(student=<... object at 0x7f...>, ref=...)"
    up to 6.155, "Failing test case: ..." from 6.170 on, and more notes in other cases). They would give
    students hidden test names and memory addresses, and differ between two gradings of one submission
    and between hypothesis versions. The suites' messages show the failing inputs themselves and the
    kit attaches no notes, so none are kept, whatever their wording."""
    exc = excinfo.value
    leaf = failure_leaf(exc)
    if leaf is not exc:  # pytest would show the repr of the one exception inside
        text = str(leaf) if isinstance(leaf, AssertionError) else f"{type(leaf).__name__}: {leaf}"
        return text.strip()
    notes = vars(exc).pop("__notes__", None)
    try:
        return excinfo.exconly(tryshort=True)
    finally:
        if notes is not None:
            exc.__notes__ = notes


def fail_fast_kind(report: pytest.TestReport) -> Optional[str]:
    """The FailFast subclass that ended the test (MissingName, NotImplementedYet, SandboxLimit), if any."""
    kind = dict(report.user_properties).get(FAIL_FAST_PROPERTY)
    return None if kind is None else str(kind)


FAIL_FAST_PROPERTY = "fail_fast"


def part_of(item: pytest.Item) -> str:
    """The `part` a parametrised test checks ("output", "attention_weights", ...), or a whole test's
    `@pytest.mark.part(name)` (a test about one part alone); "" for a whole test."""
    mark = item.get_closest_marker("part")
    if mark and mark.args:
        return str(mark.args[0])
    callspec = getattr(item, "callspec", None)
    part = callspec.params.get("part") if callspec is not None else None
    return part if isinstance(part, str) else ""


def same_examples(items: list[pytest.Item]) -> dict[str, str]:
    """For each part of a test (`part_of`), the id of the test's first part, whose examples every part meets.

    Hypothesis draws a parametrized test's examples from its id (its pytest plugin adds the id to the
    derandomized seed), so each part would meet examples of its own; with one set the parts check
    pieces of one computation per example, which the suites run once (testing.shared)."""
    first: dict[tuple[str, str, str], str] = {}
    out = {}
    for item in items:
        callspec = getattr(item, "callspec", None)
        if not part_of(item) or callspec is None:
            continue
        rest = repr(sorted((k, repr(v)) for k, v in callspec.params.items() if k != "part"))
        out[item.nodeid] = first.setdefault((str(item.path), getattr(item, "originalname", item.name), rest),
                                            item.nodeid)
    return out


class _Draws:
    """A test's `st.data()` for one example: the first run draws, a run trying another binding of the course's weights
    (`testing.with_candidate_bindings`) gets the same values again (drawing more would make another example: that
    run fails)."""

    def __init__(self, data: Any, copy: Callable[[Any], Any]) -> None:
        self.data, self.copy, self.replaying, self.at = data, copy, False, 0  # copy: testing.cloned
        self.values: list[Any] = []

    def draw(self, strategy: Any, label: Any = None) -> Any:
        if not self.replaying:
            value = self.data.draw(strategy, label)
            self.values.append(self.copy(value))
            return value
        if self.at >= len(self.values):
            raise AssertionError("another binding drew more than the example")
        self.at += 1
        return self.copy(self.values[self.at - 1])

    def again(self) -> None:
        self.replaying, self.at = True, 0


def _example_with_bindings(inner: Callable[..., Any]) -> Callable[..., Any]:
    """One example of a hypothesis test, run by `testing.with_candidate_bindings`, its draws replayed (`_Draws`)."""
    from hypothesis.strategies._internal.core import DataObject

    from autograder.selfcheck import testing

    def run(*args: Any, **kwargs: Any) -> Any:
        draws = {k: _Draws(v, testing.cloned) for k, v in kwargs.items() if isinstance(v, DataObject)}

        def again() -> None:
            for d in draws.values():
                d.again()
        return testing.with_candidate_bindings(lambda: inner(*args, **{**kwargs, **draws}), again)
    return run


def _same_seed(inner: Callable[..., Any], run: Callable[..., Any]) -> Callable[..., Any]:
    """`run` in the place of a hypothesis test's `inner_test`, under which hypothesis derives the test's seed (a digest
    of the function's source, `function_digest`, which follows `__wrapped__`, and of the digest the parts add)."""
    wrapper = functools.wraps(inner)(run)
    wrapper.tries_candidate_bindings = True  # type: ignore[attr-defined]
    return wrapper


MISCONCEPTION_PROPERTY = "misconception"
ENTRIES_PROPERTY = "reproducing_entries"
REPLAYED_PROPERTY = "replayed"
ON_VALUES_PROPERTY = "on_values"
CRASHED_PROPERTY = "crashed"
IGNORES_PROPERTY = "ignores_input"
#: Where hypothesis (core._raise_to_user) leaves a test's failing examples on its pytest item.
HYPOTHESIS_FAILING_EXAMPLES = "_hypothesis_failing_examples"
_HINT = re.compile(r"(\n[ \t]*|(?<=[.:]) )hint: [^\n]*")
#: How a test ends that is not a failure of the student's code: pytest reports these its own way.
_PYTEST_OUTCOMES: tuple[type[BaseException], ...] = (pytest.skip.Exception, pytest.xfail.Exception, pytest.exit.Exception)


@dataclass(eq=False)
class GradingPlugin:
    """Register with pytest.main(plugins=[GradingPlugin(...)])."""

    provider: StudentProvider
    components: Optional[list[str]]  # None: every component the suites mention, in file order
    reference: Optional[Callable[[], Any]] = None
    #: (component, actual, expected, inputs, rtol, atol) -> the families and entries that reproduce the failure
    diagnoser: Optional[Callable[..., Reproduced]] = None
    public_marker: Callable[[pytest.Item], bool] = lambda item: "public" in str(item.path)
    #: Where a crash in the student's code happened, from the exception (the self-check's: the student's
    #: code runs in this process; a sandboxed child sends its own, inside the failure's message).
    where: Optional[Callable[[BaseException], str]] = None
    #: Code objects to watch for (a function's, a class's methods'), by the name they belong to: `calls`
    #: then says which of them each test ran (the self-check's: which failures may come from a dependency).
    watch: dict[Any, str] = field(default_factory=dict)
    calls: dict[str, set[str]] = field(default_factory=dict)
    outcomes: dict[str, TestOutcome] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    #: A part's test id -> its first part's (`same_examples`); a test without parts is not in it.
    first_part: dict[str, str] = field(default_factory=dict)

    def pytest_configure(self, config: pytest.Config) -> None:
        config.addinivalue_line("markers", "component(name): the contract component a test grades")
        config.addinivalue_line("markers", "weight(w): the test's weight within its component")
        config.addinivalue_line("markers", "keep(reason): kept although no zoo mutant fails it")
        config.addinivalue_line("markers", "kind(k): reference, dependence, reads, property or structure (scoring policy)")
        config.addinivalue_line("markers", "part(name): the one part of a comparison a whole test checks")

    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        if self.components is None:
            self.components = list(dict.fromkeys(c for c in map(component_of, items) if c))
        rank = {c: i for i, c in enumerate(self.components)}
        graded = [(it, c) for it in items if (c := component_of(it)) is not None and c in rank]
        graded.sort(key=lambda pair: rank[pair[1]])  # stable: file order within a component
        items[:] = [it for it, _ in graded]
        for it, component in graded:
            self.outcomes[it.nodeid] = TestOutcome(
                it.nodeid, describe_test(it), component, weight_of(it), self.public_marker(it),
                kind=kind_of(it), function=getattr(it, "originalname", it.name), part=part_of(it),
                english=describe_test(it, english=True))
            self.order.append(it.nodeid)
        self.first_part = same_examples(items)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        outcome = self.outcomes.get(report.nodeid)
        if outcome is None:
            return
        outcome.seconds += report.duration
        if report.when == "call":
            outcome.passed = report.passed
        if report.failed:
            outcome.passed = False
            outcome.output = failure_text(report)
            properties = dict(report.user_properties)
            found, entries = properties.get(MISCONCEPTION_PROPERTY), properties.get(ENTRIES_PROPERTY)
            outcome.candidates = tuple(sorted(str(f) for f in found)) if isinstance(found, tuple) else ()
            outcome.entries = tuple(sorted(str(e) for e in entries)) if isinstance(entries, tuple) else ()
            outcome.replay_ran = properties.get(REPLAYED_PROPERTY) is True
            outcome.on_values = properties.get(ON_VALUES_PROPERTY) is True
            outcome.crashed = properties.get(CRASHED_PROPERTY) is True
            outcome.ignores_input = properties.get(IGNORES_PROPERTY) is True

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Optional[pytest.TestReport]:
        """A failure is reported by its message alone (without notes: `exception_message`),
        never a traceback, which would show test code and which pytest builds by parsing the source of
        every frame (a third to a half of grading a buggy submission); a FailFast is marked as such, and a
        diagnosed failure carries its misconception's id."""
        excinfo = call.excinfo
        if excinfo is None or call.when == "collect" or isinstance(excinfo.value, _PYTEST_OUTCOMES):
            return None
        properties: list[tuple[str, object]]
        if isinstance(excinfo.value, FailFast):
            message, properties = excinfo.value.msg, [(FAIL_FAST_PROPERTY, type(excinfo.value).__name__)]
        else:
            message, properties = exception_message(excinfo), list(item.user_properties)
            site = student_crash(excinfo.value, self.where) if self.where is not None else ""
            if site:
                message += symptoms.WHERE_MARK + site.replace("\n", "\n    ")
            found = getattr(excinfo.value, "candidates", None)
            if found:
                properties.append((MISCONCEPTION_PROPERTY, tuple(found)))
            entries = getattr(excinfo.value, "entries", None)
            if entries:
                properties.append((ENTRIES_PROPERTY, tuple(entries)))
            if getattr(excinfo.value, "replayed", False) is True:
                properties.append((REPLAYED_PROPERTY, True))
            leaf = failure_leaf(excinfo.value)
            if getattr(leaf, "on_values", False) is True:
                properties.append((ON_VALUES_PROPERTY, True))
            if getattr(leaf, "ignores_input", False) is True:
                properties.append((IGNORES_PROPERTY, True))
            from autograder.selfcheck.testing import Crash
            if isinstance(leaf, Crash) or not isinstance(leaf, AssertionError):
                properties.append((CRASHED_PROPERTY, True))
        return pytest.TestReport(item.nodeid, item.location, {k: 1 for k in item.keywords}, "failed",
                                 message, call.when, [], duration=call.duration, start=call.start,
                                 stop=call.stop, user_properties=properties)

    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """Same inputs on every run: the grader's own random streams start from a fixed seed."""
        procedures.seed_everything(GRADER_SEED)
        from autograder.selfcheck import testing
        component = component_of(item)
        diagnoser = self.diagnoser
        testing.DIAGNOSE = None if diagnoser is None or component is None else (
            lambda *args: diagnoser(component, *args))
        testing.begin_test(self.first_part.get(item.nodeid, item.nodeid))

    @pytest.hookimpl(tryfirst=True)
    def pytest_pyfunc_call(self, pyfuncitem: pytest.Function) -> Optional[bool]:
        """Each example of a test keeps the binding of the course's weights its behaviour confirms, where binding by
        structure guessed (`testing.with_candidate_bindings`): a hypothesis test's examples one by one (its
        `inner_test`, which hypothesis calls for each; the seed stays the test function's own, `_same_seed`), a
        plain test as one example."""
        from autograder.selfcheck import testing
        hypothesis_of = getattr(pyfuncitem.obj, "hypothesis", None)
        if hypothesis_of is not None:
            inner = hypothesis_of.inner_test
            if not getattr(inner, "tries_candidate_bindings", False):
                hypothesis_of.inner_test = _same_seed(inner, _example_with_bindings(inner))
            return None  # pytest calls it: hypothesis runs the examples
        names = pyfuncitem._fixtureinfo.argnames
        testing.with_candidate_bindings(lambda: pyfuncitem.obj(**{n: pyfuncitem.funcargs[n] for n in names}))
        return True

    @pytest.hookimpl(hookwrapper=True, trylast=True)  # inside hypothesis's wrapper, which sets the digest
    def pytest_runtest_call(self, item: pytest.Item) -> Any:
        """Every part of a test meets its first part's examples (`same_examples`); with `watch`, record
        which watched names the test ran (a profile hook, during the call only)."""
        inner = getattr(getattr(getattr(item, "obj", None), "hypothesis", None), "inner_test", None)
        if inner is not None and item.nodeid in self.first_part:
            inner._hypothesis_internal_add_digest = self.first_part[item.nodeid].encode()
        if not self.watch:
            yield
            return
        watch, hit = self.watch, self.calls.setdefault(item.nodeid, set())

        def profile(frame: types.FrameType, event: str, arg: Any) -> None:
            if event == "call" and frame.f_code in watch:
                hit.add(watch[frame.f_code])

        before = sys.getprofile()
        sys.setprofile(profile)
        try:
            yield
        finally:
            sys.setprofile(before)

    def pytest_runtest_teardown(self, item: pytest.Item) -> None:
        """Hypothesis' pytest plugin turns a test's failing examples into a patch for the terminal summary
        at this test's teardown report: an import of libcst (0.65 s, in the first grading of a process
        that fails a test) and a parse of the suite per failing test, for a patch no one reads. It finds none."""
        item.__dict__.pop(HYPOTHESIS_FAILING_EXAMPLES, None)
        component = component_of(item)
        if component:
            self.provider.after_test(component)

    @pytest.fixture
    def student(self, request: pytest.FixtureRequest) -> Any:
        component = component_of(request.node)
        if component is None:
            raise pytest.UsageError(f"{request.node.nodeid} has no @pytest.mark.component")
        return self.provider.namespace(component)

    @pytest.fixture
    def ref(self) -> Any:
        if self.reference is None:
            raise RuntimeError("reference implementations are not available here")
        return self.reference()


def student_crash(exc: BaseException, where: Callable[[BaseException], str]) -> str:
    """`where` of the first exception in `exc`'s chain (a suite's helper re-raises the student's
    exception as a failure message `from None`: the student's stays its context) that names a place."""
    seen: list[BaseException] = []
    current: Optional[BaseException] = exc
    while current is not None and len(seen) < 8 and all(current is not e for e in seen):
        site = where(current)
        if site:
            return site
        seen.append(current)
        current = current.__cause__ or current.__context__
    return ""


#: The repr of every `student` fixture. Hypothesis shows a failing example as a call with each
#: argument's repr; an object's default repr carries its memory address (different on every run).
STUDENT_REPR = "<the submission's names>"


class Reference(types.SimpleNamespace):
    """The `ref` fixture: the course's reference by name, with a stable repr (see STUDENT_REPR)."""

    def __repr__(self) -> str:
        return "<the course's reference>"


class Submission(types.SimpleNamespace):
    """A submission's names loaded in this process (the zoo's in-process grading), with a stable repr."""

    def __repr__(self) -> str:
        return STUDENT_REPR

    def __shared_scope__(self) -> object:
        """What testing.shared's results belong to: these names, loaded once per component."""
        return self


class LocalNamespace:
    """A live view of a dict of names (a notebook's globals) for in-process self-checks."""

    def __init__(self, names: dict[str, Any]) -> None:
        self._names = names

    def __repr__(self) -> str:
        return STUDENT_REPR

    def __getattr__(self, name: str) -> Any:
        try:
            return self._names[name]
        except KeyError:
            raise AttributeError(_("'{name}' is not defined: run the cell that defines it").format(name=name)) from None


class LocalProvider:
    """Self-check in the student's own process: no sandbox, public tests only."""

    def __init__(self, names: dict[str, Any]) -> None:
        self._ns = LocalNamespace(names)

    def namespace(self, component: str) -> Any:
        procedures.seed_everything(procedures.TEST_SEED)
        return self._ns

    def after_test(self, component: str) -> None:
        pass

    def close(self) -> None:
        pass


_SUITE_STAMPS: dict[str, tuple[int, int]] = {}  # suite file -> (mtime_ns, size) when last imported


def _stamp(path: Path) -> tuple[int, int]:
    st = Path(path).stat()
    return st.st_mtime_ns, st.st_size


def run_pytest(files: list[Path], plugin: GradingPlugin, suites: Path,
               extra: tuple[str, ...] = ()) -> None:
    """pytest.main on the suites, quietly: outcomes come back through the plugin, not the terminal."""
    args = [str(f) for f in files] + [
        "-q", "-p", "no:cacheprovider", "--import-mode=importlib",
        # Suites state their messages; rewriting would re-parse them every session and could put
        # test source into a message.
        "--assert=plain",
        # Hypothesis formats every failing example it meets (shrinking included) with the item's
        # repr_failure; pytest's default style parses the suite's source for each frame. Our reports
        # never show a traceback (pytest_runtest_makereport), so the cheap native style will do.
        "--tb=native",
        # Plugins the grader does not need; unraisableexception alone costs a gc.collect per test.
        "-p", "no:unraisableexception", "-p", "no:threadexception", "-p", "no:faulthandler",
        "-p", "no:doctest", "-p", "no:pastebin", "-p", "no:junitxml", "-p", "no:stepwise",
        "-p", "no:logging",
        "-o", "python_files=test_*.py", "--rootdir", str(suites), "-c", os.devnull,
        # pytest collects a file by scanning each of its ancestors up to the confcutdir (/dev's
        # parent, with -c /dev/null): a grading cost that grew with the folders above the kit.
        "--confcutdir", str(suites),
        "-W", "ignore", *extra]
    # importlib mode names suite modules after their path under the root ("hidden.test_02_...") and
    # reuses a module already in sys.modules: keep those of these very files (a warm grading worker
    # imports each suite once), forget any other of the same name (a suite in another directory).
    wanted = {str(Path(f).resolve()): _stamp(f) for f in files}
    for name in [n for n in sys.modules if n.split(".")[0] in ("public", "hidden")]:
        module_file = str(Path(getattr(sys.modules[name], "__file__", None) or "?").resolve())
        if module_file not in wanted or _SUITE_STAMPS.get(module_file) != wanted[module_file]:
            del sys.modules[name]
    _SUITE_STAMPS.update(wanted)
    sink = io.StringIO()
    interrupt = _Interrupt()
    with _only_named_plugins(), contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        pytest.main(args, plugins=[plugin, interrupt])
    if interrupt.seen:  # pytest ends the session and returns; the tests that did not run make no grade
        raise KeyboardInterrupt


class _Interrupt:
    """Whether Ctrl-C (SIGINT) stopped the suites: pytest catches it and ends the session early. pytest
    calls this hook for collection errors (Session.Interrupted, a KeyboardInterrupt) and pytest.exit()
    too: those are not an interrupt."""

    seen = False

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        value = excinfo.value
        self.seen = isinstance(value, KeyboardInterrupt) and not isinstance(value, pytest.Session.Interrupted)


#: The pytest plugins a grading loads: hypothesis' own (its reports of a failing example), and the
#: kit's, which run_pytest hands in.
PLUGINS = ("_hypothesis_pytestplugin",)


@contextlib.contextmanager
def _only_named_plugins() -> Iterator[None]:
    """Load no installed plugin but `PLUGINS` while pytest.main runs (PYTEST_DISABLE_PLUGIN_AUTOLOAD,
    the variable every pytest reads; PYTEST_PLUGINS names the rest), and no options but the grader's own
    (PYTEST_ADDOPTS, which pytest adds to every command line, is unset).

    The suites' outcome must not depend on what else the machine has installed or set: pytest-randomly
    reseeds and reorders, pytest-timeout or pytest-rerunfailures change outcomes, a PYTEST_ADDOPTS of
    `-x`, `-k ...`, `-p ...` or `--hypothesis-seed=...` in a TA's shell or a CI job would stop, deselect, add
    to or reseed a grading (session 50: a `-p` given to the kit's own test run reached every grading it
    made), and a student's environment or a Gradescope image has its own. Reading every installed
    package's entry points was also a cost of every grading run.
    """
    saved = {k: os.environ.get(k) for k in ("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTEST_PLUGINS", "PYTEST_ADDOPTS")}
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    os.environ["PYTEST_PLUGINS"] = ",".join(PLUGINS)
    os.environ.pop("PYTEST_ADDOPTS", None)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
