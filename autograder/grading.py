"""Grade submissions in the sandbox: the provider that gives tests a sandboxed submission,
one submission's grading, and the Gradescope-format results."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Optional

from autograder import config as config_mod
from autograder import handin, runner
from autograder.remote import Connection, RemoteNamespace, SandboxLimit
from autograder.sandbox import Child, ChildDied, JobLimits, SandboxError, Zygote
from autograder.submission import SubmissionError, read_cells


class _Broken:
    """Stands in for a submission that could not be loaded: every use fails with the reason."""

    def __init__(self, reason: str) -> None:
        self._reason = reason

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        raise SandboxLimit(self._reason)


class SandboxProvider:
    """One fresh sandboxed child per component (and again after a child dies)."""

    def __init__(self, zygote: Zygote, course: config_mod.Course, assignment_id: str,
                 cells: list[tuple[str, str]]) -> None:
        self.zygote, self.course = zygote, course
        self.assignment = course.assignment(assignment_id)
        self.cells = cells
        lim = course.limits
        self.limits = JobLimits(lim.component_cpu_seconds, lim.memory_mb, lim.processes,
                                lim.file_size_mb, lim.output_kb)
        self.started = time.monotonic()
        self.child: Optional[Child] = None
        self.current: Optional[str] = None
        self.broken: dict[str, str] = {}
        self.notes: dict[str, list[str]] = {}
        self.output: dict[str, str] = {}
        self.test_deadline = 0.0
        self.names = frozenset(  # the names tests may ask the submission for
            [c.name for a in course.assignments for c in a.components] + list(course.given_names)
            + list(handin.toolkit_names()))

    def _deadline(self) -> float:
        return min(self.test_deadline, self.started + self.course.limits.submission_seconds)

    def namespace(self, component: str) -> Any:
        now = time.monotonic()
        self.test_deadline = now + self.course.limits.test_seconds
        if now > self.started + self.course.limits.submission_seconds:
            return _Broken(f"the whole submission ran past its time limit "
                           f"({self.course.limits.submission_seconds:g} s)")
        if component in self.broken:
            return _Broken(self.broken[component])
        if component != self.current or self.child is None or self.child.dead:
            self._start(component)
            if component in self.broken:
                return _Broken(self.broken[component])
        assert self.child is not None
        conn = Connection(self.child, self._deadline)
        ns = RemoteNamespace(conn, self.notes.get(component, []), self.names)
        ns.__remote_seed__(0)  # every test starts from the same seed in the child (sent with its first call)
        self.test_deadline = time.monotonic() + self.course.limits.test_seconds
        return ns

    def _start(self, component: str) -> None:
        self._finish_child()
        self.current = component
        job = {"cells": [list(c) for c in self.cells], "seed": 0, "limits": self.limits.as_dict(),
               **handin.job_parts(self.course, self.assignment, component)}
        try:
            self.child = self.zygote.spawn(job, self.limits)
            ready = self.child.wait_ready(self.course.limits.load_seconds)
        except ChildDied as exc:
            reason = f"loading your code failed: {exc.reason}"
            if exc.limit in ("time", "cpu", "memory"):
                # Loading is the same for every component: do not wait for the limit again.
                for c in self.assignment.components:
                    self.broken.setdefault(c.name, reason)
            self.broken[component] = reason
            self._finish_child()
            return
        except SandboxError as exc:
            self.broken[component] = f"the grader's sandbox failed ({exc}); ask your instructor to regrade"
            self._finish_child()
            return
        report = ready.get("ready", {}) if isinstance(ready, dict) else {}
        errors = report.get("errors", []) if isinstance(report, dict) else []
        self.notes[component] = [f"{e.get('where')}: {e.get('error')}" for e in errors if isinstance(e, dict)]

    def _finish_child(self) -> None:
        if self.child is not None:
            self.child.close()
            text = self.child.output_text()
            if text.strip() and self.current:
                self.output[self.current] = self.output.get(self.current, "") + text
            self.child = None

    def after_test(self, component: str) -> None:
        if self.child is not None and self.child.dead:
            if self.child.dead.limit == "sandbox":  # it took the fork server down: no second chance
                self.broken[component] = f"your code was stopped: {self.child.dead.reason}"
            self._finish_child()

    def close(self) -> None:
        self._finish_child()


def grade_file(zygote: Zygote, assignment_id: str, path: Path | str, *, public_only: bool = False,
               course: Optional[config_mod.Course] = None, suites: Path = runner.SUITES) -> runner.Result:
    """Grade one submission file in the sandbox."""
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
    result = runner.run(assignment_id, provider, public_only=public_only, course=course, submission=str(path),
                        suites=suites)
    result.output = "\n".join(f"[{name}] output of your code:\n{text}" for name, text in provider.output.items())
    result.seconds = time.monotonic() - start  # type: ignore[attr-defined]
    return result


def results_json(result: runner.Result) -> dict[str, Any]:
    """The Gradescope autograder results format, one entry per test."""
    tests = []
    for comp in result.components:
        total_weight = sum(t.weight for t in comp.tests) or 1.0
        for t in comp.tests:
            max_score = round(comp.points * t.weight / total_weight, 4)
            tests.append({
                "name": f"{comp.name}: {t.name}",
                "score": max_score if t.passed else 0.0,
                "max_score": max_score,
                "status": "passed" if t.passed else "failed",
                "output": t.output,
                "visibility": "visible" if t.public else "after_published",
                "extra_data": {"component": comp.name, "public": t.public},
            })
    notes = []
    for comp in result.components:
        notes += [f"{comp.name}: {n}" for n in comp.notes]
    output = runner.format_result(result, verbose=False)
    if notes:
        output += "\n\nWhile loading your code:\n" + "\n".join(notes)
    if result.output:
        output += "\n\n" + result.output[-8000:]
    return {
        "score": round(result.score, 4),
        "max_score": result.max_score,
        "output": output,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "execution_time": round(getattr(result, "seconds", 0.0), 3),
        "tests": tests,
        "extra_data": {"assignment": result.assignment, "submission": Path(result.submission).name,
                       "components": {c.name: {"score": c.score, "max_score": c.points} for c in result.components}},
    }


def write_results(result: runner.Result, path: Path | str) -> None:
    Path(path).write_text(json.dumps(results_json(result), indent=2) + "\n")
