"""Scores: per component, its points times the weight share of its passed tests."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from autograder.config import Assignment
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


@dataclass
class Result:
    """One submission's grade for one assignment."""

    assignment: str
    submission: str
    components: list[ComponentScore]
    output: str = ""  # what the student's code printed, per component
    seconds: float = 0.0  # wall time of the grading
    isolation: str = ""  # how the student's code was confined (Isolation.describe())

    @property
    def score(self) -> float:
        return sum(c.score for c in self.components)

    @property
    def max_score(self) -> float:
        return sum(c.points for c in self.components)

    def assignment_components(self) -> set[str]:
        return {c.name for c in self.components}


def score(assignment: Assignment, outcomes: list[TestOutcome],
          notes: Optional[dict[str, list[str]]] = None) -> list[ComponentScore]:
    """Partial credit: a component's points times the weight share of its passed tests."""
    out = []
    for comp in assignment.components:
        tests = [o for o in outcomes if o.component == comp.name]
        total = sum(t.weight for t in tests)
        got = sum(t.weight for t in tests if t.passed)
        value = round(comp.points * got / total, 4) if total else 0.0
        out.append(ComponentScore(comp.name, comp.points, value, tests, (notes or {}).get(comp.name, [])))
    return out
