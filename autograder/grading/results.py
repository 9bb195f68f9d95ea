"""What a grade becomes: Gradescope-format results JSON, the class's grades.csv, plain-text reports."""
from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any, Optional

from autograder.config import Assignment, Scoring
from autograder.grading.final import row_notes, row_status
from autograder.grading.scoring import Result, component_shares
from autograder import spreadsheet
from autograder.grading import bounded, dependencies
from autograder.selfcheck import i18n
from autograder.selfcheck.i18n import N_, _

#: The heading of the load-time notes in a results' `output` (the class report finds it in every language).
LOADING_HEADING = N_("While loading your code:")

#: The message of a submission the grader itself failed on (never the student's fault).
GRADER_FAILED = N_("The grader failed on this submission; ask your instructor to regrade.")
#: The status (grades.csv, results' extra_data.status) of a submission whose file could not be read.
UNREADABLE = "unreadable"


def unreadable_message(reason: str) -> str:
    """The one line a student reads when their file could not be read (Result.unreadable)."""
    return _("Your submission could not be read, so nothing was graded: {reason}. Save the notebook in Jupyter and "
             "upload it again (after the due date, ask your instructor for a re-upload).").format(reason=reason.rstrip("."))


def unreadable_problem(reason: str) -> str:
    """What staff read of it (grades.csv notes, the report's problems, the end of `course grade`)."""
    return f"{reason.rstrip('.')}: ask for a re-upload"


def format_result(result: Result, verbose: bool = True, tests: bool = True, counts_only: bool = False) -> str:
    """A plain-text report: per component, per test (unless `tests` is off), with failure messages
    (if `verbose`). `counts_only` (a self-check with the public tests) shows tests passed out of
    total instead of points, which would look like the grade and are not. In the result's language."""
    with i18n.using(result.language):
        return _format_result(result, verbose, tests, counts_only)


def _format_result(result: Result, verbose: bool, tests: bool, counts_only: bool) -> str:
    def count(tested: list) -> str:
        return _("{passed} of {total} public tests passed").format(passed=sum(t.passed for t in tested), total=len(tested))

    if result.unreadable:
        return f"{result.assignment}: {UNREADABLE}\n{unreadable_message(result.unreadable)}"
    everything = [t for c in result.components for t in c.tests]
    lines = [f"{result.assignment}: " + (count(everything) if counts_only else
                                          f"{result.score:g} / {result.max_score:g}")]
    for comp in result.components:
        lines.append(f"  {comp.name}: " + (count(comp.tests) if counts_only else f"{comp.score:g} / {comp.points:g}"))
        if comp.dependencies:
            lines.append("    " + _("graded with {dependencies}").format(dependencies=dependencies.describe(comp.dependencies)))
        if comp.withheld:
            lines.append("    " + _("note: {text}").format(text=comp.withheld))
        if not tests:
            continue
        for note in bounded.notes(comp.notes, result.limits):
            lines.append("    " + _("note: {text}").format(text=note.splitlines()[-1] if note else ""))
        for t, share in itertools.zip_longest(comp.tests, component_shares(comp, result.scoring)):
            mark = "PASS" if t.passed else "FAIL"
            if not counts_only and t.passed and share is not None and share.score < share.max_score:  # gate or cap
                mark += ", " + _("counts {share}").format(share=f"{share.score / share.max_score:.0%}")
            lines.append(f"    [{mark}] {t.name}")
            if not t.passed and verbose and t.output:
                lines += ["        " + line for line in _output(t.output, result).splitlines()]
    return "\n".join(lines)


def results_json(result: Result, policy: Optional[Scoring] = None) -> dict[str, Any]:
    """The Gradescope autograder results format, one entry per test, in the result's language; each test's
    `extra_data.test` is its name in English ("component: test"), what staff tools key it by."""
    with i18n.using(result.language):
        return _results_json(result, policy)


def _results_json(result: Result, policy: Optional[Scoring]) -> dict[str, Any]:
    if result.unreadable:
        return {"score": 0.0, "max_score": result.max_score, "output": unreadable_message(result.unreadable),
                "visibility": "visible", "stdout_visibility": "hidden", "execution_time": round(result.seconds, 3),
                "tests": [], "extra_data": {"assignment": result.assignment, "submission": Path(result.submission).name,
                                            "isolation": result.isolation, "status": UNREADABLE,
                                            "problem": unreadable_problem(result.unreadable_english or result.unreadable)}}
    tests = []
    policy = policy or result.scoring
    for comp in result.components:
        for share in component_shares(comp, policy):
            t = share.outcome
            output = _output(t.output, result)
            if share.capped:
                output = _("counts {share} of its share: a version of {component} whose outputs do not depend on its "
                           "inputs reproduces its failures (see the diagnosis), so all its tests together earn at most "
                           "{cap} of its points").format(share=f"{share.factor:.0%}", component=comp.name,
                                                         cap=f"{policy.degenerate_share:.0%}")
            elif t.passed and share.floored and comp.mistakes > 1:
                output = _("counts {share} of its share: {component} matches few of the course's values, but its "
                           "failures are two known mistakes (see the diagnosis), so what it still does right counts "
                           "at least {share}").format(share=f"{share.factor:.0%}", component=comp.name)
            elif t.passed and share.floored:
                output = _("counts {share} of its share: {component} matches few of the course's values, but its "
                           "failures are one known mistake (see the diagnosis), so what it still does right counts "
                           "at least {share}").format(share=f"{share.factor:.0%}", component=comp.name)
            elif t.passed and share.factor < 1:
                output = _("counts {share} of its share: {component} matches the course's values in {share} of the "
                           "comparisons (by weight)").format(share=f"{share.factor:.0%}", component=comp.name)
            elif share.floored and comp.mistakes > 1:
                output = _("counts {share} of its share: its failure is one of the two known mistakes the diagnosis "
                           "names, and each costs at most {cost} of what is left of a test it breaks").format(
                    share=f"{share.factor:.0%}", cost=f"{1 - policy.floor:.0%}") + "\n" + output
            elif share.floored:
                output = _("counts {share} of its share: its failure is the one known mistake the diagnosis names, and "
                           "one mistake costs at most {cost} of each test it breaks").format(
                    share=f"{share.factor:.0%}", cost=f"{1 - share.factor:.0%}") + "\n" + output
            tests.append({
                "name": f"{comp.name}: {t.name}",
                "score": share.score,
                "max_score": share.max_score,
                "status": "passed" if t.passed else "failed",
                "output": output,
                "visibility": "visible" if t.public else "after_published",
                "extra_data": {"component": comp.name, "public": t.public, "kind": t.kind,
                               "test": f"{comp.name}: {t.english or t.name}"},
            })
    notes = []
    for comp in result.components:
        notes += [f"{comp.name}: {n}" for n in bounded.notes(comp.notes, result.limits)]
    output = _format_result(result, verbose=False, tests=True, counts_only=False)
    if result.isolation.startswith("NOT ISOLATED"):
        output = _("WARNING: this submission was graded {isolation}").format(isolation=result.isolation) + "\n\n" + output
    if notes:
        output += "\n\n" + _(LOADING_HEADING) + "\n" + "\n".join(notes)
    if result.output:
        output += "\n\n" + result.output[-8000:]
    return {
        "score": round(result.score, 4),
        "max_score": result.max_score,
        "output": output,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "execution_time": round(result.seconds, 3),
        "tests": tests,
        "extra_data": {"assignment": result.assignment, "submission": Path(result.submission).name,
                       "isolation": result.isolation,
                       "components": {c.name: {"score": c.score, "max_score": c.points,
                                               "dependencies": [{"name": u.name, "student": u.student,
                                                                 "reason": u.reason, "defined": u.defined}
                                                                for u in c.dependencies],
                                               "withheld": bool(c.withheld),
                                               "degenerate": bool(c.degenerate),
                                               "misconceptions": [dict(zip(("id", "summary", "fix"), (d.family, *d.said())))
                                                                  for d in c.misconceptions]}
                                      for c in result.components}},
    }


def graded_with(entries: list[dict[str, Any]]) -> str:
    """What a component was graded with (dependencies.describe, as format_result says it), from the
    `dependencies` of its entry in a results file."""
    return dependencies.describe(dependencies.DependencyUse(str(e["name"]), bool(e["student"]), str(e["reason"]),
                                                            False, bool(e.get("defined", True))) for e in entries)


def _output(text: str, result: Result) -> str:
    """A test's output as the results keep it: its diagnosis at the course's hint level (symptoms.reveal),
    within course.yml's limits.feedback_kb."""
    from autograder.selfcheck import symptoms  # here: importing the selfcheck package loads torch
    return bounded.text(symptoms.reveal(text, result.hint_level), result.limits.feedback_kb * 1024)


def failed_results(assignment: Assignment, output: str, language: str = i18n.SOURCE, **extra: Any) -> dict[str, Any]:
    """Results for a submission that was not graded (no file to grade, or the grader failed): 0. An
    `output` that is a message of the catalogue (GRADER_FAILED) is shown in `language`."""
    with i18n.using(language):
        output = _(output)
    return {"score": 0.0, "max_score": assignment.max_score, "output": output, "visibility": "visible",
            "tests": [], "extra_data": dict(extra)}


def write_results(result: Result, path: Path | str) -> None:
    Path(path).write_text(json.dumps(results_json(result), indent=2) + "\n")


#: grades.csv after the component columns (the same layout from every path: course grade,
#: course export, nbgrader export). `score` is the final score: raw + override - late_penalty.
CSV_TAIL = ("status", "student_id", "raw_score", "override", "late_penalty", "submitted_at", "due", "hours_late",
            "notes", "assignment")


def csv_header(assignments: list[Assignment]) -> list[str]:
    names = list(dict.fromkeys(c.name for a in assignments for c in a.components))
    return ["submission", "score", "max_score", *names, *CSV_TAIL]


def csv_row(row: dict[str, Any], assignment: Assignment, names: list[str]) -> list[Any]:
    """One grades.csv row from a results dict with its `name` (finalized or not: see grading/final.py)."""
    extra = row.get("extra_data", {})
    comps = extra.get("components", {})
    finals = extra.get("final_components") or {n: c.get("score", 0.0) for n, c in comps.items()}
    own = {c.name for c in assignment.components}
    late = extra.get("late") or {}
    raw = extra.get("raw_score", row["score"])
    seconds = float(late.get("seconds_late") or 0.0)

    def blank_zero(value: Any) -> Any:
        return "" if not value else value

    return [row["name"], row["score"], row["max_score"],
            *[(finals.get(n, 0.0) if n in own else "") for n in names],
            row_status(row), extra.get("student", row["name"]), raw, blank_zero(extra.get("override")),
            late.get("penalty", 0.0) or 0.0, late.get("submitted_at", ""), late.get("due", ""),
            round(seconds / 3600, 2) if seconds else "", row_notes(row), assignment.id]


def write_csv(path: Path, assignment: Assignment, rows: list[dict[str, Any]]) -> None:
    """grades.csv: one row per submission: the final score, the (final) score of each component,
    then status, student id, the autograder's raw total, the overrides' net change, the late
    penalty, submission time, due date, hours late, notes (who overrode what and why, how late)."""
    write_grades(path, [(assignment, rows)])


def write_grades(path: Path, sheets: list[tuple[Assignment, list[dict[str, Any]]]]) -> None:
    """grades.csv of several assignments (nbgrader export): the component columns of all of them."""
    header = csv_header([a for a, _ in sheets])
    names = header[3:len(header) - len(CSV_TAIL)]
    spreadsheet.write_csv(path, header, (csv_row(r, assignment, names) for assignment, rows in sheets for r in rows))
