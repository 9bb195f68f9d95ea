"""Grade a whole class in parallel on this machine: warm worker processes, each with its own
sandbox fork server (the local executor; see integrations/ for others)."""
from __future__ import annotations

import concurrent.futures as cf
import contextlib
import gc
import json
import multiprocessing
import os
import signal
import sys
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Protocol

from autograder import config as config_mod
from autograder.config import Assignment
from autograder.grading.results import GRADER_FAILED, failed_results, results_json, write_csv
from autograder.grading import late, session
from autograder.grading.errors import GradingFailed, GradingRefused
from autograder.grading.submission import Found, find_submissions
from autograder.sandbox import affinity
from autograder.sandbox.forkserver import Zygote
from autograder.selfcheck import i18n
from autograder.selfcheck.i18n import _

#: Address space a grading worker may use above what it maps after warming up: a reply or a bug
#: that blows the grader up costs one submission (MemoryError), not the machine or the batch.
WORKER_MEMORY_MB = 4096
#: How often a submission may take a grading worker down before it gets 0 with a message.
MAX_ATTEMPTS = 2


#: What a pool worker whose initializer failed puts on the queue of submissions started (a tuple: never
#: a submission's name).
COULD_NOT_START = ("could not start",)


class _Worker:
    """The state of one grading worker process (module globals: one per process)."""

    zygote: Optional[Zygote] = None
    refusal: str = ""  # why this worker grades nothing (no isolation)
    started: Any = None  # queue of submission names the parent reads to know what was in flight
    one_cpu_each: bool = False  # each grading on the CPU it starts on (affinity.on_one_cpu)
    graded: int = 0  # gradings this worker has run (freeze_what_lasts after the first)


def _init_local_worker(parent: int, mode: str, protect: list[str], allow_unisolated: bool, started: Any,
                       optimizers: bool, count: Any, width: int) -> None:
    """A worker of this machine's pool (a Dask worker runs `_init_worker` alone). One that cannot start
    says so on `started` before it ends: the pool it breaks then blames no submission. Once warm, the
    worker (the `count`-th started of `width`) takes a CPU of its own, its children with it (affinity.py)."""
    _die_with_parent(parent)
    try:
        _init_worker(mode, protect, allow_unisolated, started, optimizers)
        with count.get_lock():
            index = count.value
            count.value += 1
        # A CPU of its own with as many workers as CPUs; with fewer, one CPU per grading (_grade_one).
        _Worker.one_cpu_each = affinity.pin_worker(index, width) is None and width < len(affinity.allowed())
    except BaseException:
        started.put(COULD_NOT_START)
        raise


def _init_worker(mode: str, protect: list[str], allow_unisolated: bool, started: Any,
                 optimizers: bool = True) -> None:
    """Start the worker's fork server and warm both up; torch's optimizers only if `optimizers` (the
    assignment trains a model: session.trains)."""
    from autograder.sandbox import bwrap
    launched = bwrap.launch(mode, warm_optimizers=optimizers, protect=protect)  # it warms up while we do
    import torch

    from autograder.sandbox.runtime.warm import warm_up
    torch.set_num_threads(1)
    warm_up(optimizers=optimizers)
    _Worker.started = started
    _Worker.zygote = Zygote(mode, launched=launched)
    _Worker.zygote.start()
    isolation = _Worker.zygote.isolation
    if isolation is not None and not isolation.isolated and not allow_unisolated:
        _Worker.refusal = isolation.describe()
    _limit_own_memory(WORKER_MEMORY_MB)


def _die_with_parent(parent: int) -> None:
    """A worker never outlives the `course` process that started it, however that ends (Ctrl-C,
    SIGTERM, SIGKILL, a crash): the kernel kills it with its parent (its fork server, started by
    bubblewrap with --die-with-parent, goes with it). Ctrl-C reaches the whole terminal's process
    group; the parent decides what it means, so a worker ignores it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's handler, inherited by fork
    if sys.platform.startswith("linux"):
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def _limit_own_memory(megabytes: int) -> None:
    import resource
    with open("/proc/self/status") as f:
        vm = next((int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:")), 0)
    limit = vm + megabytes * 1024 * 1024
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError):
        pass


def _grade_one(name: str, assignment_id: str, path: str, public_only: bool,
               config_path: Optional[str] = None, release: Optional[late.Release] = None) -> dict[str, Any]:
    """Runs in a worker: grade one file, withholding feedback until `release` (the student's, which the
    caller computed where course.yml's extensions are; None: the class's), return the results as data
    (never raises)."""
    course = config_mod.load(config_path) if config_path else config_mod.default()
    if _Worker.refusal:
        return {"refused": _Worker.refusal}
    if _Worker.started is not None:
        _Worker.started.put(name)
    try:
        assert _Worker.zygote is not None, "the worker's initializer starts its fork server"
        with affinity.on_one_cpu() if _Worker.one_cpu_each else contextlib.nullcontext():
            return results_json(session.grade_file(_Worker.zygote, assignment_id, path, public_only=public_only,
                                                   course=course, release=release))
    except Exception:  # a grader bug (or MemoryError) must not stop the batch
        return failed_results(course.assignment(assignment_id), GRADER_FAILED, course.language,
                              grader_error=traceback.format_exc()[-3000:])
    finally:
        _Worker.graded += 1
        if _Worker.graded == 1:
            freeze_what_lasts()


def freeze_what_lasts() -> None:
    """After a worker's first grading, collect once and freeze what is left: torch, the suites,
    hypothesis and pytest, some 200,000 objects that live as long as the worker. The cyclic collector's
    full collections, which about every other 06 grading sets off (0.13 s each), then skip them
    (0.01-0.02 s). Reference counting still frees frozen objects; a cycle among them is never
    collected, so what could leak is bounded by what lived after the first grading: no later
    grading's objects are frozen. The grading process never holds the student's objects (they live in
    the sandboxed children), so nothing of a submission is frozen."""
    gc.collect()
    gc.freeze()


@dataclass
class Batch:
    """A class as an executor sees it: the submissions that have a file to grade, by name, and
    `record(name, results)`, which writes `<name>.json`, keeps the grades.csv row and advances the
    progress bar. An executor calls `record` exactly once per name in `gradable`, and grades it with
    `releases[name]`, its student's late.reference_release."""

    course: config_mod.Course
    assignment: Assignment
    gradable: dict[str, Found]
    record: Callable[[str, dict[str, Any]], None]
    releases: dict[str, late.Release] = field(default_factory=dict)


def grade_class(assignment_id: str, directory: Path, out: Path, execute: Callable[[Batch], None], *,
                progress: bool = True, config_path: Optional[str] = None) -> list[dict[str, Any]]:
    """The bookkeeping every executor shares (this module's local pool, integrations.dask_cluster):
    find the submissions in `directory`, give 0 with the reason to those with no file to grade, have
    `execute` grade the others, and write `<name>.json` per submission and `grades.csv` into `out`."""
    course = config_mod.load(config_path) if config_path else config_mod.default()
    assignment = course.assignment(assignment_id)
    found = find_submissions(directory, assignment_id, course.support_module)
    gradable = {f.name: f for f in found if f.path is not None}
    releases = class_releases(course, assignment, directory, gradable)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []

    def write(sub: Found, res: dict[str, Any]) -> None:
        res.setdefault("extra_data", {})["submission"] = sub.path.name if sub.path else ""
        (out / f"{sub.name}.json").write_text(json.dumps(res, indent=2) + "\n")
        rows.append({"name": sub.name, **res})

    for sub in found:
        if sub.path is None:  # nothing to grade in the student's folder: 0, with the reason
            write(sub, failed_results(assignment, sub.problem, course.language))
    bar = _progress(len(gradable), progress)

    def record(name: str, res: dict[str, Any]) -> None:
        write(gradable[name], res)
        bar.update(1)

    try:
        execute(Batch(course, assignment, gradable, record, releases))
    finally:
        bar.close()
    rows.sort(key=lambda r: r["name"])
    write_csv(out / "grades.csv", assignment, rows)
    return rows


def class_releases(course: config_mod.Course, assignment: Assignment, directory: Path,
                   gradable: dict[str, Found]) -> dict[str, late.Release]:
    """{name: late.reference_release of its student} for a class folder's submissions, each student
    named as `course export` names them (export.identify)."""
    from autograder.grading.export import identify
    from autograder.grading import lms_names
    export = lms_names.read_gradescope_export(directory)
    return {name: late.reference_release(course, assignment, identify(name, f.path, directory, assignment.id,
                                                                      export).student)
            for name, f in gradable.items()}


def grade_directory(assignment_id: str, directory: Path, out: Path, *, jobs: Optional[int] = None,
                    public_only: bool = False, mode: str = "auto", progress: bool = True,
                    config_path: Optional[str] = None, allow_unisolated: bool = False) -> list[dict[str, Any]]:
    """Grade every submission in `directory` on this machine; write `<name>.json` per submission and
    `grades.csv`.

    A worker that dies (a grader crash, the OS killing it) costs no result: its pool is replaced
    and the submissions it had not finished are graded again (those that were in flight, each alone,
    so that a death is charged to the submission that caused it); one that takes workers down
    MAX_ATTEMPTS times gets 0 with a message. Raises GradingRefused before any student code runs
    when the sandbox cannot isolate it (unless allow_unisolated), and GradingFailed when the workers
    die as they start MAX_ATTEMPTS times in a row (the results already written stay).
    """
    protect = [str(out.resolve()), str(directory.resolve())]

    def execute(batch: Batch) -> None:
        _run_pool(batch, jobs=jobs, public_only=public_only, mode=mode, protect=protect,
                  config_path=config_path, allow_unisolated=allow_unisolated)

    return grade_class(assignment_id, directory, out, execute, progress=progress, config_path=config_path)


def _run_pool(batch: Batch, *, jobs: Optional[int], public_only: bool, mode: str, protect: list[str],
              config_path: Optional[str], allow_unisolated: bool) -> None:
    """The local executor: a process pool of warm grading workers on this machine."""
    assignment, gradable = batch.assignment, batch.gradable
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(gradable) or 1))
    attempts: dict[str, int] = dict.fromkeys(gradable, 0)
    done: set[str] = set()
    todo = list(gradable)
    #: Submissions in flight together when a worker died: which one took it down is not known, so each
    #: is graded again alone (one worker), where a death is that submission's own and counts for it.
    alone: list[str] = []
    idle = 0  # rounds in a row that graded nothing and charged nothing (a worker died as it started)
    ctx = multiprocessing.get_context("fork")
    optimizers = session.trains(assignment.id)
    while todo or alone:
        was_alone = bool(alone)
        if alone:
            names, alone, width = alone, [], 1
        else:
            names, todo, width = todo, [], jobs
        started = ctx.SimpleQueue()
        count = ctx.Value("i", 0)  # workers started: each takes the next CPU
        with cf.ProcessPoolExecutor(max_workers=width, mp_context=ctx, initializer=_init_local_worker,
                                    initargs=(os.getpid(), mode, protect, allow_unisolated, started, optimizers,
                                              count, width)) as pool, \
                _stopped_at_once_if_interrupted(pool):
            futures: dict[cf.Future, str] = {}
            broken = False
            try:
                for name in names:
                    futures[pool.submit(_grade_one, name, assignment.id, str(gradable[name].path), public_only,
                                        config_path, batch.releases.get(name))] = name
            except cf.process.BrokenProcessPool:  # its workers died before every submission was queued
                broken = True
            for fut in cf.as_completed(futures):
                name = futures[fut]
                try:
                    res = fut.result()
                except cf.process.BrokenProcessPool:
                    broken = True
                    continue
                except Exception as exc:  # a result that cannot come back costs that result only
                    res = failed_results(assignment, GRADER_FAILED, batch.course.language, grader_error=repr(exc))
                if "refused" in res:
                    raise GradingRefused(f"refusing to grade untrusted code: {res['refused']}; install "
                                         f"bubblewrap (docs/security.md) or pass --allow-unisolated")
                batch.record(name, res)
                done.add(name)
            if broken:
                in_flight: set[str] = set()
                failed_to_start = False
                while not started.empty():
                    said = started.get()
                    if said == COULD_NOT_START:
                        failed_to_start = True
                    else:
                        in_flight.add(said)
                in_flight -= done
                if failed_to_start:  # the pool broke for no submission's sake
                    idle = 0 if done & set(names) else idle + 1
                    if idle >= MAX_ATTEMPTS:
                        raise GradingFailed(f"the grading workers stopped as they started, {idle} times in a row "
                                            f"(their errors are above); {len(set(gradable) - done)} submissions "
                                            f"were not graded")
                    (alone if was_alone else todo).extend(n for n in names if n not in done)
                    continue
                idle = 0
                for name in names:
                    if name in done:
                        continue
                    if name not in in_flight:
                        todo.append(name)
                    elif len(in_flight) > 1:
                        alone.append(name)  # one of several: no attempt counted yet
                    else:
                        attempts[name] += 1  # the only one in flight: the death was its own
                        if attempts[name] >= MAX_ATTEMPTS:
                            batch.record(name, worker_died(assignment, attempts[name], batch.course.language))
                            done.add(name)
                        else:
                            alone.append(name)


@contextlib.contextmanager
def _stopped_at_once_if_interrupted(pool: cf.ProcessPoolExecutor) -> Iterator[None]:
    """On Ctrl-C, SIGTERM (made one by `course grade`) or a refusal: cancel the submissions not
    started and kill the workers, instead of the executor's exit waiting for every submission still
    queued (their fork servers die with them)."""
    try:
        yield
    except BaseException:
        # No public handle on the workers; shutdown() forgets them, so take them first (taken after it,
        # there were none to kill, and the exit waited for the submissions in flight to end: up to
        # their time limit for one that hangs).
        workers = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for worker in workers:
            worker.kill()
        raise


def worker_died(assignment: Assignment, times: int, language: str = i18n.SOURCE) -> dict[str, Any]:
    """The results of a submission that took the grader's worker down `times` times: 0, no retry."""
    with i18n.using(language):
        said = _("The grader's worker process died {times} times while grading this submission; ask your "
                 "instructor to look at it.").format(times=times)
    return failed_results(assignment, said, grader_error="worker died")


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
