"""Grade a whole class in parallel on this machine: warm worker processes, each with its own
sandbox fork server (the local executor; see integrations/ for others)."""
from __future__ import annotations

import concurrent.futures as cf
import json
import multiprocessing
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Optional, Protocol

from autograder import config as config_mod
from autograder.grading.results import GRADER_FAILED, failed_results, results_json, write_csv
from autograder.grading import session
from autograder.grading.submission import Found, find_submissions
from autograder.sandbox.forkserver import Zygote

_zygote: Optional[Zygote] = None  # the worker's fork server (set by its initializer)


def _init_worker(mode: str) -> None:
    global _zygote
    from autograder.sandbox import bwrap
    launched = bwrap.launch(mode)  # the fork server warms up while this worker does
    import torch

    from autograder.sandbox.runtime.warm import warm_up
    torch.set_num_threads(1)
    warm_up()
    _zygote = Zygote(mode, launched=launched)


def _grade_one(assignment_id: str, path: str, public_only: bool,
               config_path: Optional[str] = None) -> dict[str, Any]:
    """Runs in a worker: grade one file, return the results as data (never raises)."""
    course = config_mod.load(config_path) if config_path else config_mod.default()
    try:
        assert _zygote is not None, "the worker's initializer starts its fork server"
        return results_json(session.grade_file(_zygote, assignment_id, path, public_only=public_only, course=course))
    except Exception:
        return failed_results(course.assignment(assignment_id), GRADER_FAILED,
                              grader_error=traceback.format_exc()[-3000:])


def grade_directory(assignment_id: str, directory: Path, out: Path, *, jobs: Optional[int] = None,
                    public_only: bool = False, mode: str = "auto", progress: bool = True,
                    config_path: Optional[str] = None) -> list[dict[str, Any]]:
    """Grade every submission in `directory`; write `<name>.json` per submission and `grades.csv`."""
    course = config_mod.load(config_path) if config_path else config_mod.default()
    assignment = course.assignment(assignment_id)
    found = find_submissions(directory, assignment_id, course.support_module)
    gradable = [f for f in found if f.path is not None]
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []

    def record(sub: Found, res: dict[str, Any]) -> None:
        res.setdefault("extra_data", {})["submission"] = sub.path.name if sub.path else ""
        (out / f"{sub.name}.json").write_text(json.dumps(res, indent=2) + "\n")
        rows.append({"name": sub.name, **res})

    for sub in found:
        if sub.path is None:  # nothing to grade in the student's folder: 0, with the reason
            record(sub, failed_results(assignment, sub.problem))
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(gradable) or 1))
    bar = _progress(len(gradable), progress)
    if gradable:
        ctx = multiprocessing.get_context("fork")
        with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_worker,
                                    initargs=(mode,)) as pool:
            futures = {pool.submit(_grade_one, assignment_id, str(sub.path), public_only, config_path): sub
                       for sub in gradable}
            for fut in cf.as_completed(futures):
                sub = futures[fut]
                try:
                    res = fut.result()
                except Exception as exc:
                    res = failed_results(assignment, GRADER_FAILED, grader_error=repr(exc))
                record(sub, res)
                bar.update(1)
    bar.close()
    rows.sort(key=lambda r: r["name"])
    write_csv(out / "grades.csv", assignment, rows)
    return rows


class _Bar(Protocol):
    def update(self, n: int) -> Any: ...

    def close(self) -> None: ...


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, enabled: bool) -> _Bar:
    if not enabled:
        return _NoBar()
    from tqdm import tqdm
    return tqdm(total=total, unit="submission", file=sys.stderr, dynamic_ncols=True)
