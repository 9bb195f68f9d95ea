"""Manual overrides: a TA's judgement on one component of one student's grade, with who and why.

They live in a CSV file in the course repository (course.yml: `overrides_file: overrides.csv`),
one row per override:

    assignment,student,component,score,by,reason,date
    02_attention_scoring,carol,masked_softmax,4,ta_dana,"fills with -1e9, not -inf: accepted",2026-10-02

`score` is the component's new score (0 to its points). Grading never writes this file: every
export (`course grade --out`, `course export`, `nbgrader export`) reads it again and applies it to
the autograded scores, so a regrade never loses an override, and grades.csv shows each one with
who made it and why. The file is checked row by row (unknown assignment, student-less rows,
unknown component, score out of range, missing `by` or `reason`, two overrides of one component).
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from autograder.config import Course

COLUMNS = ("assignment", "student", "component", "score", "by", "reason", "date")


class OverrideError(Exception):
    """The overrides file cannot be used as it is; the message names the line and the field."""


@dataclass(frozen=True)
class Override:
    assignment: str
    student: str
    component: str
    score: float
    by: str
    reason: str
    date: str = ""
    where: str = ""  # file and line, for messages

    def describe(self, previous: Optional[float] = None) -> str:
        was = f" (autograder: {previous:g})" if previous is not None else ""
        when = f" on {self.date}" if self.date else ""
        return f"{self.component} set to {self.score:g}{was} by {self.by}{when}: {self.reason}"

    def to_json(self, previous: Optional[float]) -> dict[str, object]:
        return {"component": self.component, "score": self.score, "autograded": previous, "by": self.by,
                "reason": self.reason, "date": self.date}


def path_of(course: Course) -> Optional[Path]:
    return Path(course.overrides_file) if course.overrides_file else None


def load(course: Course, path: Optional[Path] = None) -> list[Override]:
    """Every override in the course's overrides file (none when it has no file, or it does not
    exist yet), checked against course.yml."""
    path = path or path_of(course)
    if path is None or not path.exists():
        return []
    text = path.read_text(encoding="utf-8-sig")
    reader = csv.DictReader(text.splitlines())
    header = [(h or "").strip().lower() for h in reader.fieldnames or []]
    if "student_id" in header and "student" not in header:
        header[header.index("student_id")] = "student"
    missing = [c for c in COLUMNS[:-1] if c not in header]
    unknown = [h for h in header if h and h not in COLUMNS]
    if missing or unknown:
        raise OverrideError(f"{path}: the header must be {','.join(COLUMNS)} (date optional)"
                            + (f"; missing {', '.join(missing)}" if missing else "")
                            + (f"; unknown {', '.join(unknown)}" if unknown else ""))
    out: list[Override] = []
    seen: dict[tuple[str, str, str], str] = {}
    for i, values in enumerate(reader, start=2):
        row = {h: (v or "").strip() for h, v in zip(header, values.values())}
        if not any(row.values()):
            continue
        where = f"{path.name} line {i}"

        def bad(field: str, message: str, line: int = i) -> OverrideError:
            return OverrideError(f"{path} line {line}: {field}: {message}")

        try:
            assignment = course.assignment(row["assignment"])
        except Exception:
            known = ", ".join(a.id for a in course.assignments)
            raise bad("assignment", f"{row['assignment']!r} is not an assignment of course.yml ({known})") from None
        if not row["student"]:
            raise bad("student", "empty")
        try:
            component = assignment.component(row["component"])
        except KeyError:
            known = ", ".join(c.name for c in assignment.components)
            raise bad("component", f"{row['component']!r} is not a component of {assignment.id} ({known})") from None
        try:
            score = float(row["score"])
        except ValueError:
            raise bad("score", f"not a number: {row['score']!r}") from None
        if not 0 <= score <= component.points:
            raise bad("score", f"{score:g} is outside 0..{component.points:g} (the points of {component.name})")
        for field in ("by", "reason"):
            if not row[field]:
                raise bad(field, "empty: every override says who made it and why")
        key = (assignment.id, row["student"], component.name)
        if key in seen:
            raise bad("component", f"a second override of {component.name} for {row['student']} "
                                   f"(the first: {seen[key]}); keep one")
        seen[key] = where
        out.append(Override(assignment.id, row["student"], component.name, score, row["by"], row["reason"],
                            row.get("date", ""), where))
    return out


def for_student(overrides: list[Override], assignment_id: str, student: str) -> list[Override]:
    return [o for o in overrides if o.assignment == assignment_id and o.student == student]
