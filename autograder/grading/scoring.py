"""Scores: per component, its points times the weight share of its passed tests."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

from autograder.config import Assignment, Limits, Scoring

if TYPE_CHECKING:  # these import torch (through the catalogue and the sandbox's procedures); scores,
    # results files and `course export` need none of it
    from autograder.catalogue.diagnosis import Diagnosis
    from autograder.grading.dependencies import DependencyUse
    from autograder.selfcheck.plugin import TestOutcome


@dataclass
class ComponentScore:
    name: str
    points: float
    score: float
    tests: list[TestOutcome]
    notes: list[str] = field(default_factory=list)  # what went wrong while loading the submission
    dependencies: list[DependencyUse] = field(default_factory=list)  # whose version of each it used
    withheld: str = ""  # why its detailed feedback is withheld (reference code in its child), if it is
    misconceptions: list[Diagnosis] = field(default_factory=list)  # what the catalogue recognises
    degenerate: bool = False  # a degenerate catalogue entry reproduces its output (it ignores its inputs)

    @property
    def mistakes(self) -> int:
        """How many realistic mistakes the diagnosis names (two where no one explains the failures:
        diagnosis.conclude_pair)."""
        return 0 if self.degenerate else sum(not d.degenerate for d in self.misconceptions)

    @property
    def explained(self) -> bool:
        """Its failures are known realistic mistakes (the diagnosis names them): the floor applies."""
        return self.mistakes > 0

    @property
    def seen_in_values(self) -> bool:
        """... and the diagnosis saw it in numbers the code computed (`Diagnosis.seen_in_values`)."""
        return self.explained and any(d.seen_in_values for d in self.misconceptions if not d.degenerate)


@dataclass
class Result:
    """One submission's grade for one assignment."""

    assignment: str
    submission: str
    components: list[ComponentScore]
    output: str = ""  # what the student's code printed, per component
    seconds: float = 0.0  # wall time of the grading
    isolation: str = ""  # how the student's code was confined (Isolation.describe())
    scoring: Scoring = field(default_factory=Scoring)  # the policy the scores were computed with
    limits: Limits = field(default_factory=Limits)  # what of the student's texts its results keep
    unreadable: str = ""  # why the submitted file could not be read (SubmissionError): nothing was graded
    unreadable_english: str = ""  # ... in English, for staff (grades.csv, the report)
    hint_level: int = 1  # how much of a diagnosis its feedback shows (course.yml feedback.hint_level)
    language: str = "en"  # the language of what the student reads (course.yml language; selfcheck/i18n.py)

    @property
    def score(self) -> float:
        return sum(c.score for c in self.components)

    @property
    def max_score(self) -> float:
        return sum(c.points for c in self.components)

    def assignment_components(self) -> set[str]:
        return {c.name for c in self.components}


@dataclass(frozen=True)
class TestShare:
    """One test's part of its component's points: what it can earn and what it earned."""

    outcome: TestOutcome
    max_score: float
    score: float
    factor: float  # the gate: 1 for reference tests, the share of reference comparisons passed otherwise
    floored: bool = False  # the factor is the policy's floor: a passed test's (more than the share of
    # comparisons passed), or a failed test's whose failure the one named mistake explains
    capped: bool = False  # lowered with every other test of a degenerate component (policy.degenerate_share)


#: Kinds of test that compare with the course: its values (reference) or which outputs depend on which inputs
#: (dependence). Both are judged on their own and make the gate; only values say the outputs agreed.
COMPARED = frozenset({"reference", "dependence"})
#: Parts of a comparison that check a stored side output or table rather than what the component returns.
STORED = frozenset({"attention_weights", "table"})


def outputs_agreed(tests: list[TestOutcome]) -> set[str]:
    """The test functions the code passed in full that compare what it returns with the course's (a
    reference comparison of its outputs, not of a stored table or weights, whose layout a mistake's
    catalogue entry may not share): where a mistake would have shown (diagnosis.contradicted)."""
    failed = {t.function for t in tests if not t.passed}
    return {t.function for t in tests if t.kind == "reference" and t.part not in STORED} - failed


def test_kind(outcome: TestOutcome, policy: Scoring) -> str:
    return policy.kinds_of.get(f"{outcome.component}::{outcome.function}", outcome.kind)


def test_weight(outcome: TestOutcome, policy: Scoring) -> float:
    override = policy.tests.get(f"{outcome.component}::{outcome.function}")
    return override if override is not None else policy.kinds.get(test_kind(outcome, policy), 1.0) * outcome.weight


def shares(points: float, tests: list[TestOutcome], policy: Scoring, explained: bool = False,
           degenerate: bool = False, seen: Optional[bool] = None, mistakes: int = 1) -> list[TestShare]:
    """Each test's share of `points` (shares add up to exactly `points`, in units of 1e-4) and what it
    earned: a passed comparison of what the component returns its share; any other passed test (a
    property, a structure check, a comparison of a stored side output or table: part in STORED) its
    share times the share of that comparisons' weight passed (the gate, with `gate: proportional`).
    Credit for anything but the outputs thus needs outputs that agree with the course's: code that
    stores the right attention weights or table and returns something else earns nothing for them
    (helper-60, session 42), while a missing or misnamed side output costs its own tests alone.

    When the failures are `explained` by one known realistic mistake (the diagnosis names it), that
    mistake costs at most `1 - policy.floor` of what it touches: a failed test whose failure the mistake
    explains (its `misconception` is set) earns `policy.floor` of its share unless the code crashed there
    (a crash computes nothing: code that raises on every call earns nothing, typo or not), nor where the
    outputs were never computed (no comparison of them passed and the mistake was not seen in them: a table
    built with a catalogue mistake on purpose beside a forward that raises kept a third of PositionalEncoding,
    helper-64; an FFN whose layers have a catalogued mistake's shapes and whose forward raises failed only on
    binding texts and kept the floor, helper-79's A5), the side outputs are judged on their own (the mistake
    says why the outputs differ), nor where a side output's test (part in STORED) failed on a text alone (a shape's:
    not on values the code computed, `on_values`) and the mistake was not seen in values elsewhere (`seen`: weights
    never computed, returned as zeros in a catalogued mistake's shape, earned the floor on the shape's text:
    helper-82's F8; the outputs' own shape mistakes, an FFN built for the wrong output size, keep it where some
    comparison passed), and, where the diagnosis
    saw the mistake in the outputs the code computed (`seen`, default `explained`: Diagnosis.seen_in_values),
    a passed property or structure test earns at least `policy.floor` of its share. A failure it does not
    explain (a second, unknown mistake) earns nothing. Texts alone (a crash's, a shape's, a structure
    check's) can be written without computing anything, so they name a mistake but open no gate.

    Two named mistakes (`mistakes`, diagnosis.conclude_pair) each cost at most `1 - policy.floor` of what is
    left of a test it breaks: a failed test the gate would pay (a property, a structure check, a side
    output) earns `policy.floor` times the gate, which the other mistake has lowered; a failed comparison of
    outputs earns `policy.floor`. So a second mistake costs what it breaks beyond the first (a table with base
    1000 that is also added in place loses more than either alone; one whose tests the first already broke
    costs nothing more, helper-64), and never the same test twice.

    A component whose every `dependence` test passed (its outputs depend on its inputs where the course's do,
    and only there: testing.assert_depends_like) is not degenerate: where its values differ in a way nothing
    named explains (`relu` for `tanh`, an eps of its own), its property and structure tests count at least
    `policy.dependence_gate` of their share; its failed comparisons earn nothing (helper-72's F6: such code
    kept 0 of what it got right).

    A component whose every `reads` test passed (its outputs are computed from its stored side output:
    PositionalEncoding's forward adds rows of its own table to X, and depends on X as the course's does) has its
    tests of that stored output (part in STORED) judged on their own: a right table beside a slip in forward
    (`P[:, T]` for `P[:, :T]`, seen in real learners' code) keeps the table's credit, while a right table beside a
    forward that does not use it (or raises) still earns nothing for it.

    A `degenerate` component (a degenerate catalogue entry reproduces its failures) earns at most
    `policy.degenerate_share` of `points` in all, every test's earning lowered alike."""
    weights = [test_weight(t, policy) for t in tests]
    total = sum(weights)
    if not tests or total <= 0:
        return []
    kinds = [test_kind(t, policy) for t in tests]
    # The gate weighs what the component returns: a stored side output (attention_weights, a table) that
    # is missing, misnamed or wrong costs its own tests, not the credit of the tests about the outputs.
    reference = [(t, w) for t, w, k in zip(tests, weights, kinds) if k in COMPARED and t.part not in STORED]
    ref_total = sum(w for _, w in reference)
    seen = explained if seen is None else seen
    gate, floored, computed = 1.0, False, True
    if policy.gate == "proportional" and ref_total > 0:
        gate = sum(w for t, w in reference if t.passed) / ref_total
        computed = seen or gate > 0  # its outputs agreed somewhere, or the mistake shows in them
        if explained and seen and gate < policy.floor:
            gate, floored = policy.floor, True
        dependence = [t for t, k in zip(tests, kinds) if k == "dependence"]
        if dependence and all(t.passed for t in dependence) and gate < policy.dependence_gate:
            gate = policy.dependence_gate  # not degenerate: an unknown mistake in the values keeps its properties
    units = round(points * 10_000)
    raw = [units * w / total for w in weights]
    maxima = [int(r) for r in raw]
    for i in sorted(range(len(raw)), key=lambda i: raw[i] - maxima[i], reverse=True)[:units - sum(maxima)]:
        maxima[i] += 1  # largest remainders: the shares add up to the points exactly
    reads = [t for t, k in zip(tests, kinds) if k == "reads"]
    stored_own = bool(reads) and all(t.passed for t in reads)  # the outputs are computed from the stored output
    out = []
    for t, m, k in zip(tests, maxima, kinds):
        # judged on its own, not by the gate
        own = (k in COMPARED and (t.part not in STORED or explained)) or (stored_own and t.part in STORED)
        if t.passed:
            factor = 1.0 if own else gate
            out.append(TestShare(t, m / 10_000, round(m * factor) / 10_000, factor, floored and not own))
        elif (explained and policy.gate == "proportional" and t.misconception and not t.crashed and computed
              and (t.part not in STORED or seen or t.on_values)):  # a side output's text alone: helper-82's F8
            factor = policy.floor * (gate if mistakes > 1 and not own else 1.0)
            out.append(TestShare(t, m / 10_000, round(m * factor) / 10_000, factor, True))
        else:
            out.append(TestShare(t, m / 10_000, 0.0, 0.0))
    earned, cap = sum(round(s.score * 10_000) for s in out), int(units * policy.degenerate_share)
    if degenerate and earned > cap:
        out = [dataclasses.replace(s, score=int(round(s.score * 10_000) * cap / earned) / 10_000,
                                   factor=s.factor * cap / earned, capped=True) if s.score else s for s in out]
    return out


def score(assignment: Assignment, outcomes: list[TestOutcome],
          notes: Optional[dict[str, list[str]]] = None, policy: Optional[Scoring] = None) -> list[ComponentScore]:
    """Partial credit per component: the sum of its tests' earned shares (see `shares`), before any
    diagnosis (the grading session rescores a component whose failures the diagnosis explains)."""
    policy = policy or Scoring()
    out = []
    for comp in assignment.components:
        tests = [o for o in outcomes if o.component == comp.name]
        value = component_score(comp.points, tests, policy)
        out.append(ComponentScore(comp.name, comp.points, value, tests, (notes or {}).get(comp.name, [])))
    return out


def component_shares(comp: ComponentScore, policy: Scoring) -> list[TestShare]:
    """`shares` of a scored component, with what its diagnosis found (explained, degenerate, seen in values)."""
    return shares(comp.points, comp.tests, policy, comp.explained, comp.degenerate, comp.seen_in_values,
                  comp.mistakes)


def component_score(points: float, tests: list[TestOutcome], policy: Scoring, explained: bool = False,
                    degenerate: bool = False, seen: Optional[bool] = None, mistakes: int = 1) -> float:
    return round(sum(sh.score for sh in shares(points, tests, policy, explained, degenerate, seen, mistakes)), 4)
