"""Grade one submission: run an assignment's public and hidden suites in one pytest session, with a
provider that supplies the student's names, and score the outcomes per component."""
from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import inspect
import site
import sysconfig
import time
import types
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import pytest
import torch
from _pytest.runner import runtestprotocol  # what pytest runs per test; the documented way to run one again

from autograder import config as config_mod
from autograder.catalogue.diagnosis import (Recorder, catalogue, conclude_mistakes, contradicted, entry_family, explain, families, is_degenerate,
                                            reproducing, reproducing_without, signature_entries, where_entries)
from autograder.grading import dependencies, late, signatures
from autograder.grading.providers import InProcessProvider, SandboxProvider
from autograder.grading.scoring import STORED, ComponentScore, Result, component_score, outputs_agreed, score
from autograder.grading.submission import Cell, SubmissionError, read_cells
from autograder.sandbox.forkserver import Zygote
from autograder.selfcheck import i18n
from autograder.selfcheck.i18n import _
from autograder.selfcheck import testing
from autograder.selfcheck.plugin import (GradingPlugin, Reference, StudentProvider, TestOutcome, component_of,
                                         fail_fast_kind, register_hypothesis_profile, run_pytest)

SUITES = Path(__file__).resolve().parents[1] / "suites"


def suite_files(assignment_id: str, public_only: bool, suites: Path = SUITES) -> list[Path]:
    kinds = ["public"] if public_only else ["public", "hidden"]
    files = [suites / kind / f"test_{assignment_id}.py" for kind in kinds]
    return [f for f in files if f.exists()]


def trains(assignment_id: str, suites: Path = SUITES) -> bool:
    """Whether the assignment's suites train a model (they use `testing.fit`). Only then do its
    grading workers and fork servers build torch's optimizers up front (runtime/warm.py: about a
    second each); without them a training test would import that machinery in its own child."""
    def names(code: types.CodeType) -> Iterator[str]:  # every name its bytecode uses, nested code included
        yield from code.co_names
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                yield from names(const)

    # The suites are the kit's own files: compiled here, never parsed as a submission is.
    return any("fit" in set(names(compile(path.read_text(), str(path), "exec")))
               for path in suite_files(assignment_id, public_only=False, suites=suites))


def run(assignment_id: str, provider: StudentProvider, *, public_only: bool = False,
        components: Optional[list[str]] = None, course: Optional[config_mod.Course] = None,
        submission: str = "", suites: Path = SUITES, cells: Optional[list[Cell]] = None,
        release: Optional[late.Release] = None, now: Optional[dt.datetime] = None) -> Result:
    """Run the suites of one assignment with `provider` supplying the student's names.

    A component whose child held the course's reference code has its feedback withheld unless
    `now` is after `release`, the student's late.reference_release (default: the class's).

    Components run in course.yml order (dependencies first), so that when a component's child
    starts, the tests of what it is built on have run and the dependency rule (dependencies.plan)
    can use their outcomes. An earlier assignment's component that the submission redefines is
    tested first with that assignment's suite (not scored: it only decides the rule). Once every
    test has run, a component graded with the course's version of a dependency the submission
    defines is graded again with the student's own, and the better grading stays (`BestOf`).
    """
    course = course or config_mod.default()
    assignment = course.assignment(assignment_id)
    register_hypothesis_profile(course.hypothesis.max_examples, course.hypothesis.derandomize)
    own = [c.name for c in assignment.components]
    # what the submission defines, a component spelled otherwise included (graded in its place: signatures.renamed)
    renames = signatures.renamed(course, cells or [])
    defined = dependencies.defined_names(cells or []) | set(renames)
    earlier = [n for n in course.closure(own) if n in defined and course.owner(n) not in (None, assignment)]
    wanted = earlier + (components or own)
    left_out = set(own) - set(components or own)
    names = own + course.closure(own)
    diagnosis = Diagnoser(course, names + list(assignment.given))
    plugin = SessionPlugin(provider, wanted, reference=None if public_only else diagnosis.reference,
                           diagnoser=None if public_only else diagnosis)

    def outcomes(name: str) -> Optional[tuple[int, int]]:
        if name in left_out:  # the reference's code, counted full marks: it passes its tests
            return 1, 1
        tests = [o for o in plugin.outcomes.values() if o.component == name]
        if not tests:
            return None
        # a dependency the tests call by name (a mistaken signature) fails its signature test: the
        # student's later code calls it in the contract's order, which reaches the wrong parameters
        called_by_name = any(m.adapter for m in mismatches.get(name, []))
        return sum(t.passed for t in tests), len(tests) + called_by_name

    def works(name: str) -> bool:
        """Whether the student's own `name` agreed with the course's in one reference comparison of its own suite
        at least: code that works, whose signature says what a call written in its order means."""
        return any(o.component == name and o.passed and o.kind == "reference" for o in plugin.outcomes.values())

    def planner(own: bool, methods: Optional[dict[str, str]] = None) -> Callable[[str], list[dependencies.DependencyUse]]:
        return lambda component: dependencies.plan(course, assignment, component, defined, outcomes, own, untakeable,
                                                   methods)

    mismatches = signatures.mismatches(course, cells or [])
    slips = signatures.method_attributes(course, cells or [])  # stored values written as methods: read by calling
    untakeable = signatures.course_cannot_take(course, cells or [], signatures.called_as(course, cells or [], mismatches))
    diagnosis.dropped = {name: signatures.dropped_inputs(mismatches, name) for name in mismatches}
    best: Optional[BestOf] = None
    if isinstance(provider, (SandboxProvider, InProcessProvider)):
        provider.planner = planner(own=False)
        provider.works = works
        methods = {name: f"{spec['cls']}.{spec['method']}" for name, spec in provider.methods.items()}
        best = BestOf(course, assignment, provider, plugin, [planner(own=True), planner(False, methods)],
                      mismatches, renames, slips)
        plugin.after = best
    release = release or late.reference_release(course, assignment)

    def pending(uses: list[dependencies.DependencyUse]) -> Optional[late.Release]:
        return dependencies.unreleased_reference(course, uses, release, now)

    if isinstance(provider, SandboxProvider):
        provider.withholds = lambda uses: pending(uses) is not None
    files = suite_files(assignment_id, public_only, suites)
    for owner_id in dict.fromkeys(o.id for n in earlier if (o := course.owner(n)) is not None):
        files = suite_files(owner_id, public_only, suites) + files
    try:
        run_pytest(files, plugin, suites)
    finally:
        provider.close()
    tested = [plugin.outcomes[n] for n in plugin.order]
    mismatches = signatures.mismatches(course, cells or [])
    if isinstance(provider, (SandboxProvider, InProcessProvider)):  # its calls reach a mistaken signature by
        # name (remote.Connection, signatures.adapted): that costs one test; and one spelled otherwise was graded
        # in the contract name's place (signatures.renamed): the name costs one test
        tested += signatures.charged_tests(mismatches, renames, [t.component for t in tested if t.component in own],
                                           slips)
    components_scored = score(assignment, tested, getattr(provider, "notes", {}), course.scoring)
    uses = getattr(provider, "uses", {})
    for comp in components_scored:
        comp.dependencies = best.settled[comp.name] if best and comp.name in best.settled else uses.get(comp.name, [])
        judge(comp, course, mismatches)
        held = pending(comp.dependencies)
        if held is not None:
            withhold(comp, course, held)
    return Result(assignment_id, submission, components_scored, scoring=course.scoring, limits=course.limits,
                  hint_level=course.feedback.hint_level, language=i18n.language())


@dataclass(eq=False)
class SessionPlugin(GradingPlugin):
    """The grading plugin, handing `after` the session's tests once every one of them has run."""

    after: Callable[[list[pytest.Item]], None] = lambda items: None
    fresh: dict[str, TestOutcome] = field(default_factory=dict)  # each test's outcome before it ran
    unfinished: set[str] = field(default_factory=set)  # tests that failed on a missing name or a stub

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        super().pytest_runtest_logreport(report)
        if report.failed and fail_fast_kind(report) in ("MissingName", "NotImplementedYet"):
            self.unfinished.add(report.nodeid)

    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        super().pytest_collection_modifyitems(session, config, items)
        self.fresh = {k: copy.copy(v) for k, v in self.outcomes.items()}

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item,
                                nextitem: Optional[pytest.Item]) -> Generator[None, object, object]:
        done = yield
        if nextitem is None:  # the last test (its teardown is done: nothing is set up any more)
            self.after(item.session.items)
        return done

    def again(self, item: pytest.Item) -> TestOutcome:
        """Run one test again (its setup and teardown included, as on its first run); its outcome."""
        self.outcomes[item.nodeid] = copy.copy(self.fresh[item.nodeid])
        self.unfinished.discard(item.nodeid)
        item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        runtestprotocol(item, nextitem=None, log=True)
        item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return self.outcomes[item.nodeid]


class BestOf:
    """The dependency rule's later gradings (dependencies.settle). Once every test has run, each of the
    assignment's components that was graded with the course's version of a dependency the submission
    defines is graded again with each of `alternatives` (the student's own dependencies; those written as
    methods of the student's class the student's, the rest as in the first) that differs from the gradings
    before it: its tests run again in a fresh child, stopping as soon as they cannot score more than the best
    grading so far (not at all when nothing can be gained: full marks, or every failure a missing name or an
    unfinished stub of its own, which no dependency changes). The best grading's outcomes, load notes and
    printed output stay and the others' are dropped, so the feedback shown is always that of the grading that
    counts (withheld if it held the course's code: dependencies.unreleased_reference)."""

    def __init__(self, course: config_mod.Course, assignment: config_mod.Assignment,
                 provider: SandboxProvider | InProcessProvider, plugin: SessionPlugin,
                 alternatives: list[Callable[[str], list[dependencies.DependencyUse]]],
                 mismatches: dict[str, list[signatures.Mismatch]], renames: dict[str, str],
                 slips: dict[str, list[str]]) -> None:
        self.course, self.assignment, self.provider, self.plugin = course, assignment, provider, plugin
        self.alternatives, self.mismatches, self.renames, self.slips = alternatives, mismatches, renames, slips
        self.settled: dict[str, list[dependencies.DependencyUse]] = {}  # per component: the uses that count

    def __call__(self, items: list[pytest.Item]) -> None:
        tests: dict[str, list[pytest.Item]] = {}
        for item in items:
            tests.setdefault(component_of(item) or "", []).append(item)
        for comp in self.assignment.components:
            first = self.provider.uses.get(comp.name)
            if first is None or comp.name in self.provider.broken:
                continue
            plans, seen = [], [[u.student for u in first]]
            for planner in self.alternatives:
                uses = planner(comp.name)
                if [u.student for u in uses] not in seen:
                    plans.append((planner, uses))
                    seen.append([u.student for u in uses])
            if not plans:
                continue
            # its signature and naming tests, which `run` adds whichever grading stays: in all scores, so that
            # the scores the feedback quotes are those awarded (helper-52)
            items, charged = tests[comp.name], signatures.charged_tests(self.mismatches, self.renames, [comp.name],
                                                                                        self.slips)
            first_score = judged_score(self.course, comp.name, comp.points,
                                       [self.plugin.outcomes[i.nodeid] for i in items] + charged, self.mismatches)
            failed = [i.nodeid for i in items if not self.plugin.outcomes[i.nodeid].passed]
            if first_score >= comp.points or self.plugin.unfinished.issuperset(failed):
                self.settled[comp.name], _ = dependencies.settle(first, first_score, [(plans[0][1], None)],
                                                                 comp.name, comp.points)
                continue
            kept = self.provider.take(comp.name)
            outcomes = {i.nodeid: self.plugin.outcomes[i.nodeid] for i in items}
            best, tried = first_score, []
            for planner, uses in plans:
                self.provider.planner = planner
                score = self.regrade(comp.name, comp.points, items, best, charged)
                run = self.provider.take(comp.name)
                tried.append((uses, score))
                if score is not None and score > best:
                    best, kept = score, run
                    outcomes = {i.nodeid: self.plugin.outcomes[i.nodeid] for i in items}
            self.settled[comp.name], _ = dependencies.settle(first, first_score, tried, comp.name, comp.points)
            self.plugin.outcomes.update(outcomes)
            self.provider.put(comp.name, kept)

    def regrade(self, name: str, points: float, items: list[pytest.Item], best: float,
                charged: list[TestOutcome]) -> Optional[float]:
        """The component's score with the provider's planner's dependencies (and the `charged` tests), or None once
        it cannot exceed `best` (the tests not yet run counted as passed, the diagnosis's floor as given)."""
        ran: list[TestOutcome] = []
        for i, item in enumerate(items):
            ran.append(self.plugin.again(item))
            rest = [copy.copy(self.plugin.fresh[it.nodeid]) for it in items[i + 1:]]
            for t in rest:
                t.passed = True
            at_best = [at_best_explained(name, t) for t in ran] + rest + charged
            if component_score(points, at_best, self.course.scoring, explained=True) <= best:
                return None
        return judged_score(self.course, name, points, ran + charged, self.mismatches)


def at_best_explained(component: str, test: TestOutcome) -> TestOutcome:
    """A test as the diagnosis could at best judge it, before it has run: a failure that a catalogue
    variant reproduced, or whose text is a known mistake's (or says it failed where one does: where_entries),
    explained by the one mistake named."""
    if test.passed or not (test.candidates or signature_entries(component, test.function, test.output)
                           or where_entries(component, test.function, test.output)):
        return test
    return dataclasses.replace(test, misconception=test.misconception or "?")


def judge(comp: ComponentScore, course: config_mod.Course,
          mismatches: dict[str, list[signatures.Mismatch]]) -> None:
    """The diagnosis of a scored component: its signature mistakes (signatures.attach) or else its
    misconceptions (name_misconceptions) and, for one known realistic mistake, its score with the
    floor (its property and structure tests count at least that share)."""
    if not signatures.attach(comp, mismatches):  # said once; a mistaken order makes any diagnosis wrong
        name_misconceptions(comp)
    elif not signatures.feeds_wrong_values(mismatches, comp.name):
        # Only inputs left out (a forward without valid_lens): where its outputs are those of code that ignores
        # them, that mistake is named (catalogue entries' `ignores`; helper-52's Mr-Talon); where they are not,
        # a mistake whose replay without those inputs gives them (Diagnoser.dropped; guohm230).
        name_misconceptions(comp, only=ignoring(comp.name, signatures.dropped_inputs(mismatches, comp.name)))
    comp.score = component_score(comp.points, comp.tests, course.scoring, explained=comp.explained,
                                 degenerate=comp.degenerate, seen=comp.seen_in_values, mistakes=comp.mistakes)


def judged_score(course: config_mod.Course, name: str, points: float, tests: list[TestOutcome],
                 mismatches: dict[str, list[signatures.Mismatch]]) -> float:
    """What these outcomes would score `name` in the result (`judge`), leaving them as they are."""
    copies = [copy.copy(t) for t in tests]
    comp = ComponentScore(name, points, component_score(points, copies, course.scoring), copies)
    judge(comp, course, mismatches)
    return comp.score


class Diagnoser:
    """The `ref` fixture of the grading process, recording every reference call of a test, and the
    diagnosis of a failed comparison against the values those calls produced (catalogue/diagnosis)."""

    def __init__(self, course: config_mod.Course, names: list[str]) -> None:
        self.course, self.names = course, list(dict.fromkeys(names))
        self.components = {c.name for a in course.assignments for c in a.components}
        self.recorder = Recorder()
        self.test = ""  # the test self.recorder records (testing.current_test)
        # per component, the contract's inputs its signature leaves out (signatures.dropped_inputs): its
        # failures are replayed as such code is called (diagnosis.reproducing_without)
        self.dropped: dict[str, frozenset[str]] = {}

    def reference(self) -> Reference:
        """A recording reference for one test (its parts share one recording: a part may reuse the reference
        calls another part made, testing.shared): components recorded, and every course module, given ones too,
        built with its weights from the test's own random stream (`Recorder.construct`)."""
        if testing.current_test() != self.test or not self.test:
            self.recorder, self.test = Recorder(), testing.current_test()
        names = {}
        for name in self.names:
            obj = self.course.reference_object(name)
            if name in self.components:
                obj = self.recorder.module_class(name, obj) if inspect.isclass(obj) else self.recorder.function(name, obj)
            elif inspect.isclass(obj) and issubclass(obj, torch.nn.Module):
                obj = self.recorder.given_class(obj)  # its weights too from the test's own stream
            names[name] = obj
        return Reference(**names)

    def __call__(self, component: str, actual: Any, expected: Any, inputs: dict[str, Any], rtol: float,
                 atol: float) -> testing.Reproduced:
        call = self.recorder.lookup(expected)
        if call is None and inputs and not inspect.isclass(self.course.reference_object(component)):
            call = Recorder.from_inputs(component, inputs)  # a hand-computed expectation of a function
        if call is None or call.component != component or not isinstance(actual, torch.Tensor):
            return testing.Reproduced()
        dropped = self.dropped.get(component, frozenset())
        found = reproducing_without(call, self.course.reference_object(component), actual, rtol, atol, dropped,
                                    ignoring(component, dropped)) if dropped else reproducing(call, actual, rtol, atol)
        return testing.Reproduced(frozenset(found.values()), frozenset(found), replayed=True)


def ignoring(component: str, inputs: frozenset[str]) -> frozenset[str]:
    """The families of the component's catalogue entries that ignore exactly `inputs` (their `ignores`): realistic
    mistakes, and degenerate versions (a masked_softmax that never masks) as "degenerate:<family>"."""
    return frozenset(entry_family(e) for e in catalogue() if e.component == component
                     and inputs and e.ignores == inputs)


def name_misconceptions(comp: ComponentScore, only: Optional[frozenset[str]] = None) -> None:
    """The component's diagnosis from all its failed comparisons (catalogue.diagnosis.conclude_mistakes): the
    failures it explains say so, with its fix; no other hint is ever shown. Code that one of the
    catalogue's degenerate versions reproduces (and no single realistic mistake explains) is marked
    degenerate, and named as such where one degenerate version explains every failure. Two realistic
    mistakes that together explain the failures no one explains are both named, each on the failures it
    explains (diagnosis.conclude_pair). With `only` (the mistakes of ignoring the inputs a signature leaves
    out), failure texts may name no family but those; replays are made as such code is called
    (Diagnoser.dropped). Once a realistic mistake is named, a failure no
    replay covers (a property test, run with the code's own initial weights) that one of its catalogue
    entries fails at the same place with other values (diagnosis.where_entries) is explained by it too;
    that evidence never names a mistake. Code that no realistic mistake explains and whose output ignores an input
    the course's reads (a dependence test failed so: testing.Ignores) is degenerate by its behaviour alone, whether
    or not a catalogue entry reproduces it (helper-72's F9, F16: constants at one size or in one mode); code whose every
    dependence test passed is never degenerate."""
    failed = [t for t in comp.tests if not t.passed]
    passed = outputs_agreed(comp.tests)
    for test in failed:
        signed = signature_entries(comp.name, test.function, test.output)
        # a mistake that would have failed a comparison the code passed is no candidate (diagnosis.contradicted)
        ruled_out = contradicted(comp.name, set(test.candidates) | families(signed), passed)
        replayed = set(test.candidates) - ruled_out
        played = {e for e in test.entries if not families({e}) & ruled_out}
        # replays, made as code without the left-out inputs is called (`only`), may name any mistake or
        # degenerate version; a failure's text then only the mistake of ignoring them
        signed = {e for e in signed if not families({e}) & ruled_out and (only is None or families({e}) & only)}
        test.replayed, test.candidates, test.entries = tuple(sorted(replayed)), \
            tuple(sorted(replayed | families(signed))), tuple(sorted(played | signed))
    named, comp.degenerate = conclude_mistakes([set(t.candidates) for t in failed],
                                               [set(t.replayed) for t in failed],
                                               [t.replay_ran for t in failed])
    dependence = [t for t in comp.tests if t.kind == "dependence"]
    if comp.degenerate and dependence and all(t.passed for t in dependence):
        # its outputs depend on its inputs where the course's do, and only there: not degenerate, whatever a
        # degenerate version reproduces in one shrunk example (an FFN dropping its one hidden unit in train mode
        # returned what `ffn_zeros` returns: 0.2 of 2, helper-81's F5)
        comp.degenerate, named = False, tuple(f for f in named if not is_degenerate(f))
    told: set[int] = set()  # the failures a named mistake's words were added to
    for family in named:
        if not is_degenerate(family):
            for test in failed:  # where the named mistake fails a test no replay covers, with other values
                where = {e for e in where_entries(comp.name, test.function, test.output) if families({e}) == {family}}
                if where and family not in test.candidates and not test.replay_ran:
                    test.candidates, test.entries = (*test.candidates, family), tuple(sorted({*test.entries, *where}))
        found = explain(comp.name, family, [set(t.entries) for t in failed if family in t.candidates])
        if found is None:
            continue
        # seen in what the component returns, compared with the course's: a table or stored weights, and what
        # a property test reads of them, can be written to order beside outputs never computed (helper-64)
        seen = any(family in t.candidates and t.on_values and t.kind == "reference" and t.part not in STORED
                   for t in failed)
        comp.misconceptions.append(dataclasses.replace(found, seen_in_values=seen))
        for test in failed:  # two mistakes named (diagnosis.conclude_pair): a failure both explain says the first's
            if family in test.candidates and id(test) not in told:
                told.add(id(test))
                test.misconception = family
                test.output = test.output + found.message(comp.name)
    if not comp.explained and any(t.ignores_input for t in failed):
        comp.degenerate = True  # by behaviour: an output ignores an input the course's reads (testing.Ignores)


def withhold(comp: ComponentScore, course: config_mod.Course, release: late.Release) -> None:
    """Replace what the student's code could have put into this component's feedback (messages,
    values, printed output, load notes) by why: its child held the course's code, which may reach
    the student only after `release` (dependencies.unreleased_reference)."""
    held = [u for u in comp.dependencies if not u.student]
    replaced = [u for u in held if u.same_assignment]
    when = (_("after your due date ({due})").format(due=course.deadlines.show(release.when)) if release.when
            else _("after the due date"))
    why = (_("{component} was graded with {dependencies}").format(component=comp.name,
                                                                  dependencies=dependencies.describe(replaced))
           if replaced else
           _("{component} was graded with the course's {names}, from an assignment whose due date for you has not "
             "passed").format(component=comp.name, names=", ".join(u.name for u in held)))
    fix = ", ".join(u.name for u in replaced if u.defined)
    comp.withheld = _("{why}; so that the course's code cannot be read out through feedback, the details of these "
                      "tests are shown only {when}.").format(why=why, when=when)
    if fix:
        comp.withheld += " " + _("Fix {names} first: its own feedback is complete.").format(names=fix)
    for test in comp.tests:
        if not test.passed:
            test.output = _("details withheld: {why}").format(why=comp.withheld)
    comp.notes = []


def grade_file(zygote: Zygote, assignment_id: str, path: Path | str, *, public_only: bool = False,
               course: Optional[config_mod.Course] = None, suites: Path = SUITES,
               student: Optional[str] = None, release: Optional[late.Release] = None,
               now: Optional[dt.datetime] = None) -> Result:
    """Grade one submission file in the sandbox (its code runs only in children of `zygote`).

    Withheld feedback (run) is shown after `release`; without it, after the reference_release of
    `student`, else of the class (the Gradescope runner passes Gradescope's student and due date).
    Everything the student reads is in course.yml's `language` (selfcheck/i18n.py)."""
    course = course or config_mod.default()
    with i18n.using(course.language):
        return _grade_file(zygote, assignment_id, path, public_only, course, suites, student, release, now)


def _grade_file(zygote: Zygote, assignment_id: str, path: Path | str, public_only: bool, course: config_mod.Course,
                suites: Path, student: Optional[str], release: Optional[late.Release],
                now: Optional[dt.datetime]) -> Result:
    if release is None:
        student, platform_due = _who_is_due(course, assignment_id, Path(path), student)
        release = late.reference_release(course, course.assignment(assignment_id), student, platform_due)
    start = time.monotonic()
    import torch
    torch.set_num_threads(1)  # the grader's tensors are tiny: threads only add contention
    try:
        cells = read_cells(path, course.limits)
    except SubmissionError as exc:  # nothing to test: one status and one line, not a failure per test
        return unreadable_result(course, assignment_id, path, str(exc), zygote, time.monotonic() - start, exc.english)
    provider = SandboxProvider(zygote, course, assignment_id, cells)
    result = run(assignment_id, provider, public_only=public_only, course=course, submission=str(path),
                 suites=suites, cells=cells, release=release, now=now)
    withheld = {c.name for c in result.components if c.withheld}
    result.output = stable_paths("\n".join(f"[{name}] " + _("output of your code:") + f"\n{text}"
                                            for name, text in provider.output.items()
                                            if name in result.assignment_components() and name not in withheld))
    result.seconds = time.monotonic() - start
    result.isolation = zygote.isolation.describe() if zygote.isolation else ""
    return result


def stable_paths(text: str) -> str:
    """`text` with the grading interpreter's directories named by what they are (`<site-packages>/torch/
    nn/modules/rnn.py`, `<python-lib>/...`): a warning from torch in the student's output names its
    file, and a results file may not depend on where Python is installed (a fresh virtual environment
    grades byte for byte like CI)."""
    paths = sysconfig.get_paths()
    roots = {paths[k]: "<site-packages>" for k in ("purelib", "platlib")}
    roots.update({p: "<site-packages>" for p in site.getsitepackages()})
    roots.update({paths[k]: "<python-lib>" for k in ("stdlib", "platstdlib") if paths[k] not in roots})
    for root in sorted(roots, key=len, reverse=True):  # site-packages may lie inside the standard library's
        text = text.replace(root.rstrip("/") + "/", roots[root] + "/")
    return text


def unreadable_result(course: config_mod.Course, assignment_id: str, path: Path | str, reason: str,
                      zygote: Optional[Zygote] = None, seconds: float = 0.0, english: str = "") -> Result:
    """The result of a submission whose file cannot be read (a truncated or damaged notebook, over a
    limit): every component 0 with no tests, and `unreadable` saying why (results.results_json makes
    it the status `unreadable` with one line for the student)."""
    assignment = course.assignment(assignment_id)
    comps = [ComponentScore(c.name, c.points, 0.0, []) for c in assignment.components]
    return Result(assignment_id, str(path), comps, seconds=seconds, scoring=course.scoring, limits=course.limits,
                  isolation=zygote.isolation.describe() if zygote is not None and zygote.isolation else "",
                  unreadable=reason, unreadable_english=english or reason, language=course.language)


def _who_is_due(course: config_mod.Course, assignment_id: str, path: Path,
                student: Optional[str]) -> tuple[Optional[str], Optional[dt.datetime]]:
    """The student and the platform's own due date for them from what a course tool recorded for
    `path` (late.submission_time: course collect's record, nbgrader's timestamp; never a file the
    student uploaded)."""
    try:
        when = late.submission_time(path, assignment_id)
    except late.DeadlineError:
        when = None
    if when is None:
        return student, None
    return student or when.student or None, when.due


def run_in_process(assignment_id: str, path: Path | str, public_only: bool = False,
                   components: Optional[list[str]] = None) -> Result:
    """Grade a trusted file in this process (kit development and the catalogue's fast path); with
    `components`, only those (the others are in the result with no tests and no score; they must be
    the reference's code, which passes its tests: the dependency rule counts them as passing, so a
    graded component uses them from the first grading, as a whole grading would)."""
    import torch
    torch.set_num_threads(1)
    course = config_mod.default()
    cells = read_cells(path, course.limits)
    provider = InProcessProvider(course, assignment_id, cells)
    return run(assignment_id, provider, public_only=public_only, components=components, course=course,
               submission=str(path), cells=cells)


if __name__ == "__main__":
    import argparse

    from autograder.grading.results import format_result
    parser = argparse.ArgumentParser(description="Grade a trusted file in-process (kit development only).")
    parser.add_argument("assignment")
    parser.add_argument("file")
    parser.add_argument("--public", action="store_true")
    ns = parser.parse_args()
    print(format_result(run_in_process(ns.assignment, ns.file, ns.public)))
