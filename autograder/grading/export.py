"""A results folder (what `course grade --out DIR` writes) as the course's grade sheet: who each
results file belongs to, when they submitted, and grades.csv with overrides and late penalties.

    finalize_folder(out, course, assignment, submissions=DIR)   # after grading DIR into out
    finalize_folder(out, course, assignment)                    # `course export`: from the results alone

Each `<name>.json` is finalized (grading/final.py) and rewritten; grades.csv is rebuilt from all
of them, so regrading one student (`course grade A FILE --out DIR`) updates that student's row
and keeps everyone else's, and an override added since is applied to everyone it names.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from autograder.grading import class_record, final, late, overrides
from autograder.grading.results import write_csv

if TYPE_CHECKING:
    from autograder.config import Assignment, Course


@dataclass(frozen=True)
class Who:
    """A submission's student and submission time, and what the LMS called them."""

    student: str
    when: Optional[late.SubmissionTime]
    lms: str = ""
    lms_user_id: str = ""
    note: str = ""  # e.g. Canvas's LATE mark on a download without times


def identify(name: str, path: Optional[Path], directory: Path, assignment_id: str,
             gradescope_export: Optional[dict[str, dict[str, Any]]] = None) -> Who:
    """The student and submission time of the submission `name` of a class folder `directory`
    (its sub-folder or file `path`), only from what a course tool or the LMS wrote: what `course
    collect` recorded at `directory`'s root (class_record.COLLECTED), a Gradescope export's metadata at its
    root, nbgrader's submitted/<student>/<assignment>/timestamp.txt (late.submission_time), an
    LMS's file name, else the folder's or file's name. Nothing a student could upload into their
    folder names them or dates their submission."""
    from autograder.grading import lms_names

    folder = directory / name if (directory / name).is_dir() else None
    record = class_record.collected_record(folder) if folder else {}
    if record:
        note = "LATE mark in the LMS download" if record.get("late_mark") else ""
        return Who(str(record["student"]), late.recorded_time(record), str(record.get("lms", "")),
                   str(record.get("lms_user_id", "")), note)
    if gradescope_export is not None and name in gradescope_export:
        found = lms_names.parse(f"{name}/{path.name if path else 'x'}", gradescope=gradescope_export)
        if found is not None:  # the export's time or none: never a file in the submission's folder
            stamp = late.SubmissionTime(found.submitted_at, "Gradescope export") if found.submitted_at else None
            return Who(found.student, stamp, "gradescope", found.lms_user_id)
    notebooks = (f"{assignment_id}.ipynb",)
    if folder is not None:  # Moodle's `<Full Name>_<id>_assignsubmission_file_/`, else the folder's name
        found = lms_names.parse(f"{name}/{path.name if path else 'x'}", notebooks)
        if found is not None and found.lms == "moodle":  # Moodle's download has no times: none is read
            return Who(found.student, None, found.lms, found.lms_user_id)
        when, note = _nbgrader_time(path, assignment_id, folder)
        return Who(name, when, note=note)
    found = lms_names.parse(path.name if path else name, notebooks)
    if found is not None:  # an LMS's file name at the top: that LMS gave no time
        return Who(found.student, None, found.lms, found.lms_user_id,
                   "LATE mark in the LMS download" if found.late else "")
    return Who(name, None)


def _nbgrader_time(path: Optional[Path], assignment_id: str, folder: Path) -> tuple[Optional[late.SubmissionTime], str]:
    """The time nbgrader recorded for a student folder of its submitted/ layout
    (<student>/<assignment>/timestamp.txt, late.submission_time), and a note when that file cannot be
    read: one student's unreadable or planted timestamp is that student's problem, never the class's."""
    if path is None:
        return None, ""
    try:
        return late.submission_time(path, assignment_id, stop=folder), ""
    except late.DeadlineError as exc:
        return None, f"its submission time could not be read ({exc}); graded as on time: check it"


def finalize_folder(out: Path, course: Course, assignment: Assignment, submissions: Optional[Path] = None,
                    whos: Optional[dict[str, Who]] = None,
                    times: Optional[dict[str, late.SubmissionTime]] = None) -> list[dict[str, Any]]:
    """Finalize every results file in `out` and rebuild `out/grades.csv`; returns the rows.

    `submissions`: the class folder the results were graded from (for students and submission
    times); `whos`: the same, given (one regraded file). Results without either keep the student
    and time an earlier finalize recorded. `times` (student -> time, a --times file) wins over
    every other source of a time: the instructor wrote it."""
    from autograder.grading.submission import find_submissions
    from autograder.grading import lms_names

    known: dict[str, Who] = dict(whos or {})
    if submissions is not None and submissions.is_dir():
        export = lms_names.read_gradescope_export(submissions)
        for found in find_submissions(submissions, assignment.id, course.support_module):
            known.setdefault(found.name, identify(found.name, found.path, submissions, assignment.id, export))
    every = overrides.load(course)
    rows = []
    for name, res in final.load_results(out).items():
        extra = res.setdefault("extra_data", {})
        who = known.get(name)
        student = who.student if who else str(extra.get("student") or name)
        when = who.when if who else None
        when = (times or {}).get(student, when)
        if who is not None:
            if who.lms:
                extra["lms"] = {"lms": who.lms, "lms_user_id": who.lms_user_id}
            if who.note:
                extra["lms_note"] = who.note
        final.finalize(res, course, assignment, student, when, every)
        (out / f"{name}.json").write_text(json.dumps(res, indent=2) + "\n")
        rows.append({"name": name, **res})
    rows.sort(key=lambda r: r["name"])
    write_csv(out / "grades.csv", assignment, rows)
    return rows


def grade_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """{student_id, score, max_score, lms_user_id} per row, for an LMS export."""
    out = []
    for r in rows:
        extra = r.get("extra_data", {})
        out.append({"student_id": extra.get("student", r["name"]), "score": r["score"], "max_score": r["max_score"],
                    "lms_user_id": (extra.get("lms") or {}).get("lms_user_id", "")})
    return out


def disagreements(ours: list[dict[str, Any]], book: list[dict[str, Any]], tolerance: float = 1e-6) -> list[str]:
    """Every difference between two grade sheets of one assignment (results folder vs gradebook):
    a student in one only, a component, raw total, penalty or final score that differs."""
    def by_student(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {str(r.get("extra_data", {}).get("student", r["name"])): r for r in rows}

    a, b = by_student(ours), by_student(book)
    problems = []
    for student in sorted(set(a) | set(b)):
        if student not in b:
            problems.append(f"{student}: graded by `course grade` ({a[student]['score']:g}) but not in the gradebook")
            continue
        if student not in a:
            problems.append(f"{student}: in the gradebook ({b[student]['score']:g}) but not in the results folder")
            continue
        ea, eb = a[student]["extra_data"], b[student]["extra_data"]
        status_a, status_b = final.row_status(a[student]), final.row_status(b[student])
        if status_b != "graded" and status_a == "graded":
            problems.append(f"{student}: `course grade` gives {a[student]['score']:g}, the gradebook has no grade "
                            f"({final.row_notes(b[student]) or status_b})")
            continue
        fa, fb = ea.get("final_components") or {}, eb.get("final_components") or {}
        for comp in sorted(set(fa) | set(fb)):
            if abs(float(fa.get(comp, 0.0)) - float(fb.get(comp, 0.0))) > tolerance:
                problems.append(f"{student}: {comp} is {fa.get(comp, 0.0):g} by `course grade`, "
                                f"{fb.get(comp, 0.0):g} in the gradebook")
        for key, label in (("raw_score", "raw score"), ("final_score", "final score")):
            if abs(float(ea.get(key, 0.0)) - float(eb.get(key, 0.0))) > tolerance:
                problems.append(f"{student}: {label} {ea.get(key, 0.0):g} by `course grade`, "
                                f"{eb.get(key, 0.0):g} in the gradebook")
        pa, pb = (ea.get("late") or {}).get("penalty", 0.0), (eb.get("late") or {}).get("penalty", 0.0)
        if abs(float(pa) - float(pb)) > tolerance:
            problems.append(f"{student}: late penalty {pa:g} by `course grade`, {pb:g} in the gradebook")
    return problems


def results_name(path: Path, assignment_id: str, out: Optional[Path]) -> str:
    """The results-file name of one submission file, as grading its class folder would name it:
    nbgrader's submitted/<student>/<assignment>/ gives the student; a student's folder already
    graded into `out` gives the folder; else the file's stem."""
    if path.parent.name == assignment_id and path.parent.parent.name:
        return path.parent.parent.name
    if out is not None and (out / f"{path.parent.name}.json").exists():
        return path.parent.name
    return path.stem


def identify_file(path: Path, assignment: Assignment, out: Optional[Path] = None, student: str = "",
                  submitted_at: Optional[late.SubmissionTime] = None
                  ) -> tuple[str, str, Optional[late.SubmissionTime]]:
    """(results name, student, submission time) of one submission file: `student` when given, else
    the one Gradescope's metadata names, nbgrader's folder or an LMS's file name, else the name."""
    from autograder.grading import lms_names

    name = results_name(path, assignment.id, out)
    when = submitted_at or late.submission_time(path, assignment.id)
    if not student:
        if when is not None and when.student:
            student = when.student
        elif name != path.stem:
            student = name
        else:
            found = lms_names.parse(path.name, (f"{assignment.id}.ipynb",))
            student = found.student if found else name
    return name, student, when


def finish_one(res: dict[str, Any], course: Course, assignment: Assignment, path: Path, *,
               out: Optional[Path] = None, student: str = "",
               submitted_at: Optional[late.SubmissionTime] = None) -> tuple[str, dict[str, Any]]:
    """Finalize one graded file's results (its student, submission time, overrides, late penalty);
    with `out`, write `out/<name>.json` and rebuild out/grades.csv (the other rows are kept).
    Returns (name, results)."""
    name, student, when = identify_file(path, assignment, out, student, submitted_at)
    before = final.load_result(out / f"{name}.json").get("extra_data", {}) if out is not None else {}
    if when is None:  # a regrade keeps the time an export gave (--times), as it keeps the LMS's note
        when = final.recorded_time(before)
    extra = res.setdefault("extra_data", {})
    for key in ("lms", "lms_note"):
        if key in before and key not in extra:
            extra[key] = before[key]
    final.finalize(res, course, assignment, student, when, overrides.load(course))
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{name}.json").write_text(json.dumps(res, indent=2) + "\n")
        finalize_folder(out, course, assignment, whos={name: Who(student, when)})
    return name, res
