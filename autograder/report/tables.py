"""The report's tables as CSV files next to the page: tests.csv, misconceptions.csv,
similarity.csv, problems.csv and students.csv. Every file has an `assignment` column (or one
column group per assignment in students.csv), so a report over several assignments has the same
files as a report over one."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from autograder.report.similarity import Similarity
from autograder.spreadsheet import write_csv
from autograder.report.stats import Issue, MisconceptionStat, StudentRow, TestStat


@dataclass
class AssignmentTables:
    """What the CSV files need of one assignment."""

    assignment: str
    tests: list[TestStat]
    misconceptions: list[MisconceptionStat]
    problems: list[Issue]
    load_notes: list[Issue]
    similarity: Similarity


def _number(value: Optional[float], digits: int = 4) -> Any:
    return "" if value is None else round(value, digits)


def _write(path: Path, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> Path:
    return write_csv(path, header, rows)


def write_tests(path: Path, tables: Sequence[AssignmentTables]) -> Path:
    rows = [[t.assignment, rank, s.component, s.title, "public" if s.public else "hidden", _number(s.max_score),
             s.cases, s.n, s.passed, _number(s.pass_rate), _number(s.discrimination), _number(s.points_lost)]
            for t in tables for rank, s in enumerate(t.tests, start=1)]
    return _write(path, ["assignment", "rank_by_cost", "component", "test", "suite", "points", "cases", "submissions",
                         "passed", "pass_rate", "discrimination", "points_lost"], rows)


def write_misconceptions(path: Path, tables: Sequence[AssignmentTables]) -> Path:
    rows = [[t.assignment, m.component, m.id, m.summary, m.fix, m.count, ";".join(m.students)]
            for t in tables for m in t.misconceptions]
    return _write(path, ["assignment", "component", "id", "summary", "fix", "count", "students"], rows)


def write_similarity(path: Path, tables: Sequence[AssignmentTables]) -> Path:
    rows = [[t.assignment, rank, p.a, p.b, _number(p.score), _number(p.share_a), _number(p.share_b),
             p.overlap_tokens] for t in tables for rank, p in enumerate(t.similarity.pairs, start=1)]
    return _write(path, ["assignment", "rank", "a", "b", "score", "share_of_a", "share_of_b", "overlap_tokens"], rows)


def write_problems(path: Path, tables: Sequence[AssignmentTables]) -> Path:
    rows = [[t.assignment, section, i.kind, i.message, i.count, ";".join(i.components), ";".join(i.students)]
            for t in tables for section, issues in (("crash or limit", t.problems), ("load note", t.load_notes))
            for i in issues]
    return _write(path, ["assignment", "section", "kind", "message", "count", "components", "students"], rows)


def write_students(path: Path, students: Sequence[StudentRow], tables: Sequence[AssignmentTables]) -> Path:
    assignments = [t.assignment for t in tables]
    problems: dict[str, list[str]] = {}
    wrong: dict[str, list[str]] = {}
    similar: dict[str, tuple[float, str]] = {}
    for t in tables:
        for issue in t.problems:
            for s in issue.students:
                problems.setdefault(s, []).append(f"{t.assignment}: {issue.kind}")
        for m in t.misconceptions:
            for s in m.students:
                wrong.setdefault(s, []).append(f"{t.assignment}/{m.component}/{m.id}")
        for p in t.similarity.pairs:
            for me, other in ((p.a, p.b), (p.b, p.a)):
                if p.score > similar.get(me, (-1.0, ""))[0]:
                    similar[me] = (p.score, f"{other} ({t.assignment})")
    header = ["student"]
    for a in assignments:
        header += [f"{a} score", f"{a} max"]
    header += ["mean_percent", "at_risk", "reasons", "problems", "misconceptions", "most_similar", "similarity"]
    rows = []
    for r in students:
        row: list[Any] = [r.name]
        for a in assignments:
            value = r.scores.get(a)
            row += [_number(value[0]), _number(value[1])] if value is not None else ["", ""]
        score, partner = similar.get(r.name, (None, ""))
        row += [round(100 * r.mean_fraction, 1), "yes" if r.at_risk else "no", "; ".join(r.reasons),
                "; ".join(dict.fromkeys(problems.get(r.name, []))), ";".join(wrong.get(r.name, [])), partner,
                _number(score)]
        rows.append(row)
    return _write(path, header, rows)


def write_all(out: Path, students: Sequence[StudentRow], tables: Sequence[AssignmentTables]) -> list[Path]:
    return [write_tests(out / "tests.csv", tables), write_misconceptions(out / "misconceptions.csv", tables),
            write_similarity(out / "similarity.csv", tables), write_problems(out / "problems.csv", tables),
            write_students(out / "students.csv", students, tables)]
