"""A student's final grade: the autograded components, then the TAs' overrides, then the late
penalty. Every path that writes grades (`course grade --out`, `course export`, Gradescope's
results.json, `nbgrader export`) goes through `finalize`, so they give the same numbers.

`finalize` works on a results dict (the Gradescope format of results.results_json) and records
in its `extra_data`: `student`, `raw_score` (what the autograder gave), `overrides` (each with
who, why and the autograded score), `override` (the net change), `late` (submission time, due
date and where each came from, seconds late, penalty and why) and `final_score`; the results'
`score` becomes the final score. It can run again on its own output (an export after an
override was added or the policy changed) and gives the same numbers from the same inputs.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from autograder.grading import late as late_mod
from autograder.grading import overrides as overrides_mod
from autograder.selfcheck import i18n
from autograder.selfcheck.i18n import _

if TYPE_CHECKING:
    from autograder.config import Assignment, Course

#: Keys of extra_data that finalize writes (a results file graded before has none of them).
FINAL_KEYS = ("student", "raw_score", "overrides", "override", "late", "final_score")


def recorded_time(extra: dict[str, Any]) -> Optional[late_mod.SubmissionTime]:
    """The submission time a previous finalize recorded (an export has no submission folder)."""
    late = extra.get("late") or {}
    if not late.get("submitted_at"):
        return None
    due = None
    if str(late.get("due_source", "")).startswith("Gradescope") and late.get("due"):
        due = late_mod.utc(late_mod.parse_time(late["due"]))
    return late_mod.SubmissionTime(late_mod.utc(late_mod.parse_time(late["submitted_at"])),
                                   late.get("time_source", ""), due)


def finalize(res: dict[str, Any], course: Course, assignment: Assignment, student: str,
             when: Optional[late_mod.SubmissionTime] = None,
             overrides: Optional[list[overrides_mod.Override]] = None) -> dict[str, Any]:
    """Apply `student`'s overrides and the late policy to one results dict, in place; returns it.

    `when` is the submission time (None: the one recorded by an earlier finalize, if any); only
    the overrides of this student and assignment are used."""
    extra = res.setdefault("extra_data", {})
    comps: dict[str, dict[str, Any]] = extra.get("components") or {}
    mine = overrides_mod.for_student(overrides or [], assignment.id, student)
    if mine and not comps:  # a submission the grader could not grade: the TA grades it
        comps = {c.name: {"score": 0.0, "max_score": c.points} for c in assignment.components}
        extra["components"] = comps
    raw = round(sum(float(c["score"]) for c in comps.values()), 4) if comps else float(
        extra.get("raw_score", res.get("score", 0.0)))
    finals = {name: float(c["score"]) for name, c in comps.items()}
    applied = []
    for o in mine:
        previous = float(comps[o.component]["score"]) if o.component in comps else None
        finals[o.component] = o.score
        applied.append(o.to_json(previous))
    adjusted = round(sum(finals.values()), 4) if comps else raw
    if when is None:
        when = recorded_time(extra)
    lateness = late_mod.assess(course, assignment, student, when, adjusted)
    final = round(max(0.0, adjusted - lateness.penalty), 4)
    extra["student"] = student
    extra["raw_score"] = raw
    extra["overrides"] = applied
    extra["override"] = round(adjusted - raw, 4)
    extra["late"] = lateness.to_json(course.deadlines)
    extra["final_score"] = final
    extra["final_components"] = finals
    res["score"] = final
    notes = _notes(raw, applied, lateness, final, course)
    if "graded_output" not in extra:
        extra["graded_output"] = res.get("output", "")
    res["output"] = (notes + "\n\n" if notes else "") + extra["graded_output"]
    return res


def _notes(raw: float, applied: list[dict[str, Any]], lateness: late_mod.Lateness, final: float,
           course: Course) -> str:
    """What the student and staff read above the test results when overrides or lateness count, in the
    course's language (the late policy's own words stay English: config.LatePolicy)."""
    lines = []
    with i18n.using(course.language):
        for o in applied:
            said = (_("Override: {component} set to {score} (autograder: {autograded}) by {by}: {reason}")
                    if o["autograded"] is not None else _("Override: {component} set to {score} by {by}: {reason}"))
            lines.append(said.format(component=o["component"], score=f"{o['score']:g}", by=o["by"], reason=o["reason"],
                                     autograded=f"{o['autograded'] or 0:g}"))
        if lateness.seconds_late > 0 and lateness.due is not None:
            lines.append(_("Submitted {submitted}, due {due} ({source}): {explanation}.").format(
                submitted=course.deadlines.show(lateness.submitted_at), due=course.deadlines.show(lateness.due.when),
                source=lateness.due.source, explanation=lateness.explanation)
                + (" " + _("Late policy: {policy}.").format(policy=lateness.policy) if lateness.penalty else ""))
        if lines and (applied or lateness.penalty):
            lines.append(_("Final score: {final} (autograded {raw})").format(final=f"{final:g}", raw=f"{raw:g}"))
    return "\n".join(lines)


def row_status(res: dict[str, Any]) -> str:
    extra = res.get("extra_data", {})
    if extra.get("status"):
        return str(extra["status"])
    if extra.get("grader_error"):
        return "grader error"
    if not extra.get("components"):
        return "not graded"
    return "graded"


def row_notes(res: dict[str, Any]) -> str:
    """The notes column of grades.csv: overrides with who/why, lateness, why a row has no grade."""
    extra = res.get("extra_data", {})
    notes = []
    for o in extra.get("overrides") or []:
        was = f" (autograder: {o['autograded']:g})" if o.get("autograded") is not None else ""
        notes.append(f"override {o['component']} = {o['score']:g}{was} by {o['by']}"
                     + (f" on {o['date']}" if o.get("date") else "") + f": {o['reason']}")
    late = extra.get("late") or {}
    if late.get("seconds_late"):
        notes.append(late.get("explanation", ""))
    if extra.get("lms_note"):  # e.g. Canvas's LATE mark: the download has no time to assess it with
        notes.append(str(extra["lms_note"]) + ("" if late.get("submitted_at") else
                                               ": no submission time, so no late penalty; give times with --times"))
    if row_status(res) != "graded":
        problem = str(extra.get("problem") or extra.get("graded_output") or res.get("output", "")).strip()
        if problem:
            notes.append(problem.splitlines()[0])
    return "; ".join(n for n in notes if n)


def load_result(path: Path) -> dict[str, Any]:
    """One results file `course grade --out` wrote ({} if there is none, or it is not one)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    is_results = isinstance(data, dict) and "score" in data and "max_score" in data and "tests" in data
    return data if is_results else {}


def load_results(folder: Path) -> dict[str, dict[str, Any]]:
    """{name: results dict} of every results file `course grade --out` wrote into `folder`."""
    found = {path.stem: load_result(path) for path in sorted(folder.glob("*.json"))}
    return {name: data for name, data in found.items() if data}
