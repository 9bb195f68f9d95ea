"""The misconception catalogue ("the zoo") graded: every entry (catalogue/index.py says what an entry
is) is composed into a submission, the reference of its assignment followed by the entry's code, and
graded: a mutant must lose points in its own component only and name its symptom, a correct entry
must keep full marks, and a degenerate one must earn at most `DEGENERATE_SHARE` of its component.
The score tables of the documentation (docs/zoo-scores.md) are written from these verdicts.
Entries are graded in-process (`session.run_in_process`), where a mistaken signature is called by
name exactly as in the sandbox (`signatures.adapted`, as `remote.Connection` does), so that a verdict
here is the sandbox's.
"""
from __future__ import annotations

import argparse
import ast
import inspect
import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional
from collections.abc import Callable, Sequence

from autograder import config as config_mod
from autograder import generated_docs
from autograder.catalogue.index import DEGENERATE_SHARE, Entry, entries


def reference_source(assignment_id: str) -> str:
    """The whole reference module of an assignment, as a submission would define it."""
    course = config_mod.default()
    module = importlib.import_module(course.assignment(assignment_id).solution)
    return inspect.getsource(module)


def compose(entry: Entry, out_dir: Path) -> Path:
    """Write the submission for an entry: the assignment's reference, then the entry's code."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{entry.assignment}__{entry.kind}__{entry.name}.py"
    path.write_text(reference_source(entry.assignment) + "\n\n# ---- zoo entry ----\n" + entry.path.read_text())
    return path


@dataclass
class Verdict:
    """How the suites judged one zoo entry."""

    entry: Entry
    lost: list[str]  # components that lost points
    killed_by: list[str]  # names of the failing tests of the entry's component
    first_failure: str  # name and message of the first failing test of the entry's component
    score: float
    max_score: float
    component_score: float = 0.0  # what the entry's own component earned
    component_points: float = 0.0  # ... out of its points
    passing: list[str] = field(default_factory=list)  # names of the passing tests of the entry's component
    named: list[str] = field(default_factory=list)  # misconception families the feedback names (diagnosis)
    told: list[str] = field(default_factory=list)  # ... and the mistakes it describes (their members' words)

    @property
    def ok(self) -> bool:
        if self.entry.kind == "correct":
            return not self.lost
        if self.entry.kind == "degenerate":
            return self.degenerate_share_ok and all(c == self.entry.component for c in self.lost)
        return self.lost == [self.entry.component] and self.symptom_named

    @property
    def degenerate_share_ok(self) -> bool:
        """The entry's own component earned at most DEGENERATE_SHARE of its points."""
        return self.component_score <= DEGENERATE_SHARE * self.component_points + 1e-9

    @property
    def symptom_named(self) -> bool:
        """The feedback says what is wrong: the first failure names the symptom, or the diagnosis
        names the mutant's own misconception (it replaced the fixed hints that carried symptoms)."""
        if self.entry.kind != "mutant":
            return True
        own = self.entry.family or self.entry.name
        return self.entry.symptom.lower() in self.first_failure.lower() or own in self.named


def affected_components(entry: Entry) -> Optional[list[str]]:
    """The components of the entry's assignment that its code can change: its own and those that
    build on it (the others run the reference's code whatever the entry does). None, for all of
    them, when the file defines another component or runs anything at load time but imports,
    definitions and literal constants (a decorator, a default value, a base class or a class body
    that calls something runs as every component's child loads the file): that could reach any
    component."""
    course = config_mod.default()
    contract = {c.name for a in course.assignments for c in a.components}
    for stmt in ast.parse(entry.path.read_text()).body:
        if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)) and stmt.name in contract - {entry.component}:
            return None
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not _defines_only(stmt):
            return None
        if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) and t.id not in contract
                                                for t in stmt.targets):
            try:
                ast.literal_eval(stmt.value)
                continue
            except ValueError:
                return None
        if not isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef)) and not (
                isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
            return None
    return _among_or_built_on(course, entry.assignment, {entry.component})


#: Decorators that only wrap what they decorate (nothing of the entry's runs when they are applied).
_PLAIN_DECORATORS = frozenset({"property", "staticmethod", "classmethod"})


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
        return True
    except ValueError:
        return False


def _defines_only(stmt: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    """Whether defining `stmt` runs nothing of the entry (what loading a file does with a definition:
    decorators, default values, base classes and class bodies run then, in every component's child)."""
    if any(not (isinstance(d, ast.Name) and d.id in _PLAIN_DECORATORS) for d in stmt.decorator_list):
        return False
    if isinstance(stmt, ast.ClassDef):
        if stmt.keywords or any(not isinstance(b, (ast.Name, ast.Attribute)) for b in stmt.bases):
            return False
        for inner in stmt.body:
            if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if not _defines_only(inner):
                    return False
            elif isinstance(inner, ast.Assign):
                if not _literal(inner.value):
                    return False
            elif not (isinstance(inner, ast.Pass) or (isinstance(inner, ast.Expr) and isinstance(inner.value, ast.Constant))):
                return False
        return True
    defaults = [*stmt.args.defaults, *(d for d in stmt.args.kw_defaults if d is not None)]
    return all(_literal(d) for d in defaults)  # annotations are strings (`from __future__ import annotations`)


def _among_or_built_on(course: config_mod.Course, assignment_id: str, components: set[str]) -> list[str]:
    """The assignment's components that are one of `components` or build on one of them."""
    return [c.name for c in course.assignment(assignment_id).components
            if c.name in components or components & set(course.closure([c.name]))]


def graded_components(entry: Entry) -> Optional[list[str]]:
    """The components `judge` grades. A correct alternative: the ones its code can change
    (`affected_components`), since those built on it run it. A mutant or degenerate entry: its own
    alone, when its code can change nothing else. It fails its own tests, so the dependency rule
    grades whatever is built on it with the course's version: the reference's own code, which scores
    what the reference scores; grading that again per entry checks the rule, not the entry
    (test_zoo checks the rule once for each component others are built on). None: all of them."""
    affected = affected_components(entry)
    return affected if affected is None or entry.kind == "correct" else [entry.component]


def judge(entry: Entry, workdir: Path, grade: Optional[Callable[..., Any]] = None,
          components: Optional[list[str]] = None) -> Verdict:
    """Grade an entry (in-process by default) and summarize which tests caught it. Only
    `components` are graded (by default `graded_components`); the others count full marks."""
    from autograder.grading.session import run_in_process
    grade = grade or run_in_process
    chosen = components if components is not None else graded_components(entry)
    result = grade(entry.assignment, compose(entry, workdir), components=chosen)
    graded = [c for c in result.components if chosen is None or c.name in chosen]
    untouched = result.max_score - sum(c.points for c in graded)  # the reference's points, not graded
    lost = [c.name for c in graded if c.score < c.points]
    own = next((c for c in graded if c.name == entry.component), None)
    failing = [t for t in own.tests if not t.passed] if own else []
    first = f"{failing[0].name}\n{failing[0].output}" if failing else ""
    passing = [t.name for t in own.tests if t.passed] if own else []
    named = sorted({d.family for c in graded for d in c.misconceptions})
    told = sorted({bug for c in graded for d in c.misconceptions for bug, _fix in d.ways})
    return Verdict(entry, lost, [t.name for t in failing], first, result.score + untouched, result.max_score,
                   own.score if own else 0.0, own.points if own else 0.0, passing, named, told)


def later_assignments(component: str) -> list[str]:
    """Assignments after the component's own whose components build on it."""
    course = config_mod.default()
    owner = course.owner(component)
    return [a.id for a in course.assignments if owner and a.id > owner.id
            and component in course.closure([c.name for c in a.components])]


def built_on(entries: Sequence[Entry], assignment_id: str) -> Optional[list[str]]:
    """The components of a later assignment that the entries' code can change: those built on an
    entry's component. None, for all of them, when an entry's file could reach any component
    (`affected_components`)."""
    if any(affected_components(e) is None for e in entries):
        return None
    return _among_or_built_on(config_mod.default(), assignment_id, {e.component for e in entries})


def compose_into(entries: Sequence[Entry], assignment_id: str, out_dir: Path) -> Path:
    """A submission of a later assignment that also carries the entries' buggy code (each entry's
    file after the reference, in order; one entry per component, or a later one replaces it)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{assignment_id}__with__{'__'.join(e.name for e in entries)}.py"
    path.write_text(reference_source(assignment_id)
                    + "".join("\n\n# ---- zoo entry ----\n" + e.path.read_text() for e in entries))
    return path


def cross_groups(entries: Sequence[Entry], *, per: Callable[[Entry], str] = lambda e: e.component,
                 every_later: bool = False, rounds: Optional[int] = None) -> list[tuple[str, list[Entry]]]:
    """The entries grouped for grading in the later assignments that build on them: per later
    assignment (the first one, or with `every_later` each one), the i-th entry of every `per` key
    (by default its component: one mutant of each component) in one submission; with `rounds`, the
    first `rounds` such submissions per later assignment only."""
    by_later: dict[str, dict[str, list[Entry]]] = {}
    for e in entries:
        later = later_assignments(e.component)
        for a in later if every_later else later[:1]:
            by_later.setdefault(a, {}).setdefault(per(e), []).append(e)
    groups = []
    for a, keyed in sorted(by_later.items()):
        for i in range(min(max(len(v) for v in keyed.values()), rounds or len(entries))):
            groups.append((a, [v[i] for v in keyed.values() if i < len(v)]))
    return groups


def table(verdicts: list[Verdict]) -> str:
    """A markdown table: per component, the mutants and correct alternatives and what caught them."""
    rows = ["| component | mutant | bug | caught by (first failing test) |", "|---|---|---|---|"]
    for v in sorted((v for v in verdicts if v.entry.kind == "mutant"),
                    key=lambda v: (v.entry.assignment, v.entry.component, v.entry.name)):
        first = v.killed_by[0] if v.killed_by else "**not caught**"
        extra = f" (+{len(v.killed_by) - 1} more)" if len(v.killed_by) > 1 else ""
        rows.append(f"| `{v.entry.component}` | {v.entry.name} | {v.entry.bug} | {first}{extra} |")
    counts: dict[str, list[int]] = {}
    for v in (v for v in verdicts if v.entry.kind in ("mutant", "correct")):
        counts.setdefault(v.entry.component, [0, 0])[0 if v.entry.kind == "mutant" else 1] += 1
    summary = ["| component | mutants | correct alternatives |", "|---|---|---|"]
    summary += [f"| `{c}` | {m} | {k} |" for c, (m, k) in counts.items()]
    return "\n".join(summary) + "\n\n" + score_table(verdicts) + "\n\n" + "\n".join(rows) + "\n"


def score_table(verdicts: list[Verdict]) -> str:
    """What the scoring policy gives each kind of entry, per component (share of its points)."""
    def shares(component: str, kind: str) -> list[float]:
        return sorted(v.component_score / v.component_points for v in verdicts
                      if v.entry.component == component and v.entry.kind == kind and v.component_points)

    def spread(values: list[float]) -> str:
        if not values:
            return ""
        return f"{values[0]:.0%} / {values[len(values) // 2]:.0%} / {values[-1]:.0%}"

    rows = ["| component | mutants: min / median / max of the component's points | degenerate: max | correct: min |",
            "|---|---|---|---|"]
    for component in dict.fromkeys(v.entry.component for v in verdicts):
        degenerate, correct = shares(component, "degenerate"), shares(component, "correct")
        rows.append(f"| `{component}` | {spread(shares(component, 'mutant'))} | "
                    f"{f'{degenerate[-1]:.0%}' if degenerate else ''} | {f'{correct[0]:.0%}' if correct else ''} |")
    return "\n".join(rows)


def main(argv: Optional[list[str]] = None) -> int:
    import tempfile

    from autograder.grading.results import format_result
    from autograder.grading.session import run_in_process
    parser = argparse.ArgumentParser(description="Grade catalogue entries in-process (kit development).")
    parser.add_argument("assignment", nargs="?")
    parser.add_argument("--name", help="only entries whose name contains this")
    parser.add_argument("--table", action="store_true", help="print the markdown table")
    parser.add_argument("--update-docs", action="store_true",
                        help="write the tables into docs/zoo-scores.md")
    parser.add_argument("-v", "--verbose", action="store_true")
    ns = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp())
    verdicts = []
    for entry in entries(ns.assignment):
        if ns.name and ns.name not in entry.name:
            continue
        v = judge(entry, tmp)
        verdicts.append(v)
        if not (ns.table or ns.update_docs) or not v.ok:
            note = "" if v.symptom_named else f"  (symptom {entry.symptom!r} not in first failure)"
            if entry.kind == "degenerate":
                share = v.component_score / v.component_points if v.component_points else 0.0
                note += (f"  {entry.component}: {v.component_score:g}/{v.component_points:g} ({share:.0%}, "
                         f"at most {DEGENERATE_SHARE:.0%}); passes {len(v.passing)}: {'; '.join(v.passing) or '-'}")
            print(f"{'ok ' if v.ok else 'BAD'} {entry.id:60} {v.score:g}/{v.max_score:g} lost={v.lost}{note}")
            if ns.verbose or not v.ok:
                print(format_result(run_in_process(entry.assignment, compose(entry, tmp)), verbose=True))
    if ns.table:
        print(table(verdicts))
    if ns.update_docs:
        generated_docs.write_between_markers(generated_docs.ZOO_SCORES, "zoo-table", table(verdicts))
    return 0 if all(v.ok for v in verdicts) else 1


if __name__ == "__main__":
    raise SystemExit(main())
