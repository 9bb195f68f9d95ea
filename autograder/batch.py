"""Grade a whole class in parallel: warm worker processes, each with its own sandbox fork server."""
from __future__ import annotations

import concurrent.futures as cf
import csv
import json
import multiprocessing
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Optional

from autograder import config as config_mod
from autograder import grading
from autograder.sandbox import Zygote

SUFFIXES = (".ipynb", ".py")
_zygote: Optional[Zygote] = None


def find_submissions(directory: Path, assignment_id: str) -> list[tuple[str, Path]]:
    """(name, file) pairs: top-level .py/.ipynb files, and one file per student sub-folder."""
    out: list[tuple[str, Path]] = []
    for entry in sorted(directory.iterdir()):
        if entry.is_file() and entry.suffix in SUFFIXES:
            out.append((entry.stem, entry))
        elif entry.is_dir() and not entry.name.startswith("."):
            files = sorted(p for p in entry.rglob("*") if p.suffix in SUFFIXES and p.is_file()
                           and ".ipynb_checkpoints" not in p.parts)
            preferred = [p for p in files if p.stem == assignment_id]
            if preferred or files:
                out.append((entry.name, (preferred or files)[0]))
    seen: dict[str, int] = {}
    unique = []
    for name, path in out:
        n = seen.get(name, 0)
        seen[name] = n + 1
        unique.append((name if n == 0 else f"{name}-{path.suffix.lstrip('.')}", path))
    return unique


def _init_worker(mode: str) -> None:
    global _zygote
    from autograder import bwrap
    launched = bwrap.launch(mode)  # the fork server warms up while this worker does
    import torch

    from autograder.runtime.warm import warm_up
    torch.set_num_threads(1)
    warm_up()
    _zygote = Zygote(mode, launched=launched)


def _grade_one(assignment_id: str, path: str, public_only: bool,
               config_path: Optional[str] = None) -> dict[str, Any]:
    """Runs in a worker: grade one file, return the results as data (never raises)."""
    try:
        assert _zygote is not None, "the worker's initializer starts its fork server"
        course = config_mod.load(config_path) if config_path else None
        result = grading.grade_file(_zygote, assignment_id, path, public_only=public_only, course=course)
        return grading.results_json(result)
    except Exception:  # noqa: BLE001 - a grader bug must not stop the batch
        return {"score": 0.0, "max_score": config_mod.default().assignment(assignment_id).max_score,
                "output": "The grader failed on this submission; ask your instructor to regrade.",
                "tests": [], "extra_data": {"grader_error": traceback.format_exc()[-3000:]}}


def grade_directory(assignment_id: str, directory: Path, out: Path, *, jobs: Optional[int] = None,
                    public_only: bool = False, mode: str = "auto", progress: bool = True,
                    config_path: Optional[str] = None) -> list[dict[str, Any]]:
    """Grade every submission in `directory`; write `<name>.json` per submission and `grades.csv`."""
    course = config_mod.load(config_path) if config_path else config_mod.default()
    assignment = course.assignment(assignment_id)
    subs = find_submissions(directory, assignment_id)
    out.mkdir(parents=True, exist_ok=True)
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(subs) or 1))
    rows: list[dict[str, Any]] = []
    ctx = multiprocessing.get_context("fork")
    bar = _progress(len(subs), progress)
    with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_worker,
                                initargs=(mode,)) as pool:
        futures = {pool.submit(_grade_one, assignment_id, str(path), public_only, config_path): (name, path)
                   for name, path in subs}
        for fut in cf.as_completed(futures):
            name, path = futures[fut]
            try:
                res = fut.result()
            except Exception as exc:  # noqa: BLE001 - a dead worker costs one result, not the batch
                res = {"score": 0.0, "max_score": assignment.max_score, "tests": [],
                       "output": "The grader failed on this submission; ask your instructor to regrade.",
                       "extra_data": {"grader_error": repr(exc)}}
            res.setdefault("extra_data", {})["submission"] = path.name
            (out / f"{name}.json").write_text(json.dumps(res, indent=2) + "\n")
            rows.append({"name": name, **res})
            bar.update(1)
    bar.close()
    rows.sort(key=lambda r: r["name"])
    write_csv(out / "grades.csv", assignment, rows)
    return rows


def write_csv(path: Path, assignment: config_mod.Assignment, rows: list[dict[str, Any]]) -> None:
    names = [c.name for c in assignment.components]
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["submission", "score", "max_score", *names, "status"])
        for r in rows:
            comps = r.get("extra_data", {}).get("components", {})
            status = "grader error" if r.get("extra_data", {}).get("grader_error") else "graded"
            w.writerow([r["name"], r["score"], r["max_score"],
                        *[comps.get(n, {}).get("score", 0.0) for n in names], status])


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, enabled: bool) -> Any:
    if not enabled:
        return _NoBar()
    from tqdm import tqdm
    return tqdm(total=total, unit="submission", file=sys.stderr, dynamic_ncols=True)
