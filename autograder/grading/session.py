"""Grade one submission: run an assignment's public and hidden suites in one pytest session, with a
provider that supplies the student's names, and score the outcomes per component."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

from autograder import config as config_mod
from autograder.grading.providers import InProcessProvider, SandboxProvider
from autograder.grading.scoring import Result, score
from autograder.grading.submission import SubmissionError, read_cells
from autograder.sandbox.forkserver import Zygote
from autograder.selfcheck.plugin import (GradingPlugin, StudentProvider, reference_namespace,
                                         register_hypothesis_profile, run_pytest)

SUITES = Path(__file__).resolve().parents[1] / "suites"


def suite_files(assignment_id: str, public_only: bool, suites: Path = SUITES) -> list[Path]:
    kinds = ["public"] if public_only else ["public", "hidden"]
    files = [suites / kind / f"test_{assignment_id}.py" for kind in kinds]
    return [f for f in files if f.exists()]


def run(assignment_id: str, provider: StudentProvider, *, public_only: bool = False,
        components: Optional[list[str]] = None, course: Optional[config_mod.Course] = None,
        submission: str = "", suites: Path = SUITES) -> Result:
    """Run the suites of one assignment with `provider` supplying the student's names."""
    course = course or config_mod.default()
    assignment = course.assignment(assignment_id)
    register_hypothesis_profile(course.hypothesis.max_examples, course.hypothesis.derandomize)
    wanted = components or [c.name for c in assignment.components]
    names = [c.name for c in assignment.components] + course.closure([c.name for c in assignment.components])
    reference = None if public_only else (
        lambda: reference_namespace(course, names + list(assignment.given)))
    plugin = GradingPlugin(provider, wanted, reference=reference)
    try:
        run_pytest(suite_files(assignment_id, public_only, suites), plugin, suites)
    finally:
        provider.close()
    outcomes = [plugin.outcomes[n] for n in plugin.order]
    notes = getattr(provider, "notes", {})
    return Result(assignment_id, submission, score(assignment, outcomes, notes))


def grade_file(zygote: Zygote, assignment_id: str, path: Path | str, *, public_only: bool = False,
               course: Optional[config_mod.Course] = None, suites: Path = SUITES) -> Result:
    """Grade one submission file in the sandbox (its code runs only in children of `zygote`)."""
    course = course or config_mod.default()
    start = time.monotonic()
    import torch
    torch.set_num_threads(1)  # the grader's tensors are tiny: threads only add contention
    try:
        cells = read_cells(path)
    except SubmissionError as exc:
        cells = []
        unreadable = str(exc)
    else:
        unreadable = ""
    provider = SandboxProvider(zygote, course, assignment_id, cells)
    if unreadable:
        for c in course.assignment(assignment_id).components:
            provider.broken[c.name] = unreadable
    result = run(assignment_id, provider, public_only=public_only, course=course, submission=str(path),
                 suites=suites)
    result.output = "\n".join(f"[{name}] output of your code:\n{text}" for name, text in provider.output.items())
    result.seconds = time.monotonic() - start
    result.isolation = zygote.isolation.describe() if zygote.isolation else ""
    return result


def run_in_process(assignment_id: str, path: Path | str, public_only: bool = False) -> Result:
    """Grade a trusted file in this process (kit development and the catalogue's fast path)."""
    import torch
    torch.set_num_threads(1)
    course = config_mod.default()
    provider = InProcessProvider(course, assignment_id, read_cells(path))
    return run(assignment_id, provider, public_only=public_only, course=course, submission=str(path))


if __name__ == "__main__":
    import argparse

    from autograder.grading.results import format_result
    parser = argparse.ArgumentParser(description="Grade a trusted file in-process (kit development only).")
    parser.add_argument("assignment")
    parser.add_argument("file")
    parser.add_argument("--public", action="store_true")
    ns = parser.parse_args()
    print(format_result(run_in_process(ns.assignment, ns.file, ns.public)))
