"""Grade one submitted file: the one path of `course grade FILE`, `course check` and the Gradescope
runner, so that the same file gets the same results, messages and scores on each of them.

The sandbox's fork server is launched first (`early_zygote`), before this process imports torch
and the test stack, so that both warm up at the same time."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from autograder.config import Course
from autograder.grading.errors import GradingRefused
from autograder.sandbox import affinity

if TYPE_CHECKING:
    from autograder.deadlines import SubmissionTime
    from autograder.grading.scoring import Result
    from autograder.sandbox.forkserver import Zygote


def early_zygote(mode: str) -> Zygote:
    """The sandbox's fork server for one submission, launched before this process imports torch and
    the test stack so that both warm up at the same time, without the optimizers' warm-up (only a
    training test needs it, in its own child): a cold `course check` is about two seconds shorter."""
    from autograder.sandbox import bwrap
    launched = bwrap.launch(mode, warm_optimizers=False)
    try:
        from autograder.sandbox.forkserver import Zygote
    except BaseException:
        launched.proc.kill()
        raise
    return Zygote(mode, launched=launched)


def check_isolation(zygote: Zygote, refuse: bool, allow: bool = False) -> None:
    """Start the sandbox and say how it confines student code; refuse to grade without isolation."""
    zygote.start()
    isolation = zygote.isolation
    if isolation is None or isolation.isolated:
        return
    print(f"course: WARNING: {isolation.describe()}", file=sys.stderr)
    if refuse and not allow:
        zygote.stop()
        raise GradingRefused("refusing to grade untrusted code without isolation: install bubblewrap (see "
                             "docs/security.md), or pass --allow-unisolated to grade anyway; every results "
                             "file will say so")


@dataclass
class Graded:
    """One file's grade: its results file's name and content (finalized), and the result."""

    name: str
    results: dict[str, Any]
    result: Result

    def printed(self, verbose: bool = True) -> str:
        """What the command prints: each component's score (`verbose`: its tests and messages), then
        the final grade's lines (overrides, late penalty) that the results' output begins with."""
        from autograder.grading.results import format_result
        text = format_result(self.result, verbose=verbose, tests=verbose)
        output = self.results["output"]
        final = output[: len(output) - len(self.results["extra_data"]["graded_output"])].strip()
        return text + ("\n\n" + final if final else "")


def grade_one(course: Course, assignment_id: str, path: Path, *, mode: str = "auto", student: str = "",
              submitted_at: Optional[SubmissionTime] = None, out: Optional[Path] = None,
              allow_unisolated: bool = False) -> Graded:
    """Grade `path` in the sandbox and finalize its results: its student and submission time
    (`student`, `submitted_at`, else what the course tools recorded: export.identify_file; a
    platform's time may carry the student's own due date), the release of withheld feedback for that
    student and due date, overrides and the late penalty; with `out`, written into that class folder."""
    from autograder.grading import late
    from autograder.grading.export import finish_one, identify_file
    from autograder.grading.identify import wrong_assignment

    assignment = course.assignment(assignment_id)
    wrong = wrong_assignment(course, assignment_id, path)
    if wrong:
        print(f"course: WARNING: {wrong}", file=sys.stderr)
    _, who, when = identify_file(path, assignment, out, student, submitted_at)
    release = late.reference_release(course, assignment, who, when.due if when else None)
    zygote = early_zygote(mode)
    try:
        from autograder.grading.results import results_json
        from autograder.grading.session import grade_file  # imports torch while the sandbox warms up
        check_isolation(zygote, refuse=True, allow=allow_unisolated)
        with affinity.on_one_cpu():  # the grader and its children on one CPU (affinity.py)
            result = grade_file(zygote, assignment_id, path, course=course, student=who, release=release)
    finally:
        zygote.stop()
    name, res = finish_one(results_json(result), course, assignment, path, out=out, student=who, submitted_at=when)
    return Graded(name, res, result)
