"""Run an assignment's test suites against one submission and score it per component."""
from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from autograder import config as config_mod
from autograder import handin
from autograder.plugin import GradingPlugin, TestOutcome, reference_namespace, register_hypothesis_profile, \
    run_pytest

SUITES = Path(__file__).resolve().parent / "suites"


def suite_files(assignment_id: str, public_only: bool, suites: Path = SUITES) -> list[Path]:
    kinds = ["public"] if public_only else ["public", "hidden"]
    files = [suites / kind / f"test_{assignment_id}.py" for kind in kinds]
    return [f for f in files if f.exists()]


@dataclass
class ComponentScore:
    name: str
    points: float
    score: float
    tests: list[TestOutcome]
    notes: list[str] = field(default_factory=list)


@dataclass
class Result:
    assignment: str
    submission: str
    components: list[ComponentScore]
    output: str = ""

    @property
    def score(self) -> float:
        return sum(c.score for c in self.components)

    @property
    def max_score(self) -> float:
        return sum(c.points for c in self.components)


def score(assignment: config_mod.Assignment, outcomes: list[TestOutcome],
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


def run(assignment_id: str, provider: Any, *, public_only: bool = False,
        components: Optional[list[str]] = None, course: Optional[config_mod.Course] = None,
        submission: str = "", suites: Path = SUITES) -> Result:
    """Run the suites of one assignment with `provider` supplying the student's names."""
    course = course or config_mod.default()
    assignment = course.assignment(assignment_id)
    register_hypothesis_profile(course.hypothesis.max_examples, course.hypothesis.derandomize)
    wanted = components or [c.name for c in assignment.components]
    names = [c.name for c in assignment.components] + course.closure([c.name for c in assignment.components])
    plugin = GradingPlugin(provider, wanted,
                           reference=None if public_only else lambda: reference_namespace(course, names + list(assignment.given)))
    try:
        run_pytest(suite_files(assignment_id, public_only, suites), plugin, suites)
    finally:
        provider.close()
    outcomes = [plugin.outcomes[n] for n in plugin.order]
    notes = getattr(provider, "notes", {})
    return Result(assignment_id, submission, score(assignment, outcomes, notes))


class InProcessProvider:
    """Load a submission in this process with the sandbox's loader (for the kit's own fast tests).

    Not for grading untrusted code: it runs the submission in the grader's process.
    """

    def __init__(self, course: config_mod.Course, assignment_id: str, cells: list[tuple[str, str]]) -> None:
        self.course, self.assignment = course, course.assignment(assignment_id)
        self.cells = cells
        self.current: Optional[str] = None
        self.ns: Any = None
        self.notes: dict[str, list[str]] = {}

    def namespace(self, component: str) -> Any:
        if component != self.current:
            self.current, self.ns = component, self._load(component)
        import torch
        torch.default_generator.manual_seed(0)
        return self.ns

    def _load(self, component: str) -> Any:
        sys.path.insert(0, str(Path(__file__).parent / "runtime"))
        try:
            import child  # the sandbox's own loader
        finally:
            sys.path.pop(0)
        job = {"cells": self.cells, **handin.job_parts(self.course, self.assignment, component)}
        saved = {n: sys.modules.get(n) for n in job["modules"]}
        try:
            names, report = child.load_submission(job)
        finally:
            for n, m in saved.items():
                if m is None:
                    sys.modules.pop(n, None)
                else:
                    sys.modules[n] = m
        self.notes[component] = [f"{e['where']}: {e['error']}" for e in report["errors"]]
        return types.SimpleNamespace(**{k: v for k, v in names.items() if not k.startswith("__")})

    def after_test(self, component: str) -> None:
        pass

    def close(self) -> None:
        pass


def run_in_process(assignment_id: str, path: Path | str, public_only: bool = False) -> Result:
    """Grade a trusted file in this process (kit development and the mutant zoo's fast path)."""
    import torch

    from autograder.submission import read_cells
    torch.set_num_threads(1)
    course = config_mod.default()
    provider = InProcessProvider(course, assignment_id, read_cells(path))
    return run(assignment_id, provider, public_only=public_only, course=course, submission=str(path))


def format_result(result: Result, verbose: bool = True, tests: bool = True) -> str:
    """A plain-text report: per component, per test (unless `tests` is off), with failure messages
    (if `verbose`)."""
    lines = [f"{result.assignment}: {result.score:g} / {result.max_score:g}"]
    for comp in result.components:
        lines.append(f"  {comp.name}: {comp.score:g} / {comp.points:g}")
        if not tests:
            continue
        for note in comp.notes:
            lines.append(f"    note: {note.splitlines()[-1] if note else ''}")
        for t in comp.tests:
            mark = "PASS" if t.passed else "FAIL"
            lines.append(f"    [{mark}] {t.name}")
            if not t.passed and verbose and t.output:
                lines += ["        " + line for line in t.output.splitlines()]
    return "\n".join(lines)


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description="Grade a trusted file in-process (kit development only).")
    parser.add_argument("assignment")
    parser.add_argument("file")
    parser.add_argument("--public", action="store_true")
    ns = parser.parse_args()
    res = run_in_process(ns.assignment, ns.file, ns.public)
    print(format_result(res))
