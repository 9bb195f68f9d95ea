"""The kit's proof that its tests work: every mutant is caught in its own component only, every
correct alternative gets full marks, and every hidden test catches at least one mutant."""
from __future__ import annotations

import ast

import pytest

from autograder.catalogue import zoo
from autograder.config import default
from autograder.grading.session import SUITES, run_in_process

ENTRIES = zoo.entries()
MUTANTS = [e for e in ENTRIES if e.kind == "mutant"]
CORRECT = [e for e in ENTRIES if e.kind == "correct"]


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory) -> dict[str, zoo.Verdict]:
    tmp = tmp_path_factory.mktemp("zoo")
    return {e.id: zoo.judge(e, tmp) for e in ENTRIES}


def test_zoo_is_large_enough():
    course = default()
    components = {c.name for a in course.assignments for c in a.components}
    assert len(MUTANTS) >= 60 and len(CORRECT) >= 10
    covered = {e.component for e in MUTANTS}
    assert covered == components, f"components without mutants: {sorted(components - covered)}"


@pytest.mark.parametrize("entry", MUTANTS, ids=[e.id for e in MUTANTS])
def test_mutant_loses_points_in_its_own_component_only(entry, verdicts):
    v = verdicts[entry.id]
    assert v.lost == [entry.component], f"{entry.bug}: lost points in {v.lost}"
    assert v.symptom_named, f"first failure does not name {entry.symptom!r}:\n{v.first_failure}"


@pytest.mark.parametrize("entry", CORRECT, ids=[e.id for e in CORRECT])
def test_correct_alternative_gets_full_marks(entry, verdicts):
    v = verdicts[entry.id]
    assert not v.lost, f"{entry.bug}: lost points in {v.lost}\n{v.first_failure}"


CROSS = [(e, later) for e in MUTANTS for later in zoo.later_assignments(e.component)[:1]]


@pytest.mark.parametrize("entry,later", CROSS, ids=[f"{e.id}->{a}" for e, a in CROSS])
def test_mutant_costs_nothing_in_later_assignments(entry, later, tmp_path):
    # No double jeopardy across assignments: the later assignment's components are graded
    # on the reference versions of what they build on.
    result = run_in_process(later, zoo.compose_into(entry, later, tmp_path))
    assert result.score == result.max_score, [c.name for c in result.components if c.score < c.points]


def hidden_tests() -> list[str]:
    names = []
    for path in sorted((SUITES / "hidden").glob("test_*.py")):
        tree = ast.parse(path.read_text())
        justified = set()
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                marks = ast.unparse(node)
                if "mark.keep(" in marks:
                    justified.add(node.name)
                else:
                    names.append((path.stem, node.name))
    return names


def test_every_hidden_test_catches_a_mutant(verdicts):
    # A test name is its docstring's first line; map back through the runner's outcomes.
    killers: set[str] = set()
    for v in verdicts.values():
        if v.entry.kind == "mutant":
            killers.update(v.killed_by)
    from autograder.selfcheck.plugin import describe_test  # noqa: F401 - names come from docstrings
    idle = []
    for stem, fn in hidden_tests():
        doc = _docstring_first_line(stem, fn)
        if doc not in killers:
            idle.append(f"{stem}::{fn} ({doc})")
    assert not idle, "hidden tests that catch no mutant (add a mutant or justify with @pytest.mark.keep):\n" + "\n".join(idle)


def _docstring_first_line(stem: str, fn: str) -> str:
    tree = ast.parse((SUITES / "hidden" / f"{stem}.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == fn:
            doc = (ast.get_docstring(node) or "").strip().splitlines()
            return doc[0].strip() if doc else fn
    return fn
