"""Grading speed: the kit's sandboxed grader against nbgrader's and otter-grader's, side by side.

    python benchmarks/bench_grading.py 02_attention_scoring -n 20
    python benchmarks/bench_grading.py --all -n 12 --class-size 100   # every assignment, and a class of 100 each
    python benchmarks/bench_grading.py 06_transformer -n 8 --otter ~/otter-venv/bin/otter

For an assignment it builds the release into a temporary folder (`course release --force`: release/
is generated, not committed), generates N synthetic submissions from its student notebook (a mix
of correct, buggy (zoo mutants), all-stub and broken notebooks), then measures, in one run:

* the torch-import floor: `python -c "import torch"`;
* `course grade A FILE` on one submission, cold (a new process: imports, sandbox start-up);
* `course grade A DIR --jobs 1`: per-submission seconds from each results file (median and mean:
  the marginal cost with a warm worker), and `--jobs <cores>`: wall time for the N;
* outside grading: the class time each of these two runs reports (`graded N submissions in X s`)
  against its results files' `execution_time` summed and divided by the workers: the share of a
  submission spent reading notebooks, starting jobs, writing results and grades.csv (and, with the
  interpreter's start and the workers' warm-up, against the command's own wall time);
* in-process: the same suite on the same correct and buggy notebooks graded in one process without a
  sandboxed child (`autograder.grading.session.run_in_process`, warm: one untimed warm-up, then the
  median of `--in-process-runs` runs per notebook, in a new process), printed as sandboxed / in-process
  per kind (the sandboxed figure: the --jobs 1 run's execution_time of those notebooks);
* with `--class-size K`: the wall time of `course grade A DIR --jobs <cores>` on K generated
  submissions (the class-of-100 figure is measured, not extrapolated);
* `nbgrader autograde A` on the same notebooks with nbgrader's own pipeline (a fresh kernel per
  notebook executing it top to bottom, including the public test cells), per submission;
* `otter run` (otter-grader, a second peer) on an otter-format port of the public tests built here
  from the release (otter_port.py: a test file per component, a case per public test calling the
  kit's own test function on the notebook's globals), on the same notebooks with the kit's check()
  cells tagged otter_ignore; per notebook (mean of N, after one cold run on the correct notebook,
  reported as otter's cold time). otter-grader is a dev dependency of the benchmark only
  (benchmarks/requirements.txt: its own virtual environment); `--otter PATH` names its `otter`
  command, else the one on PATH is used, else the otter side is skipped with one line;
* peak memory of each command's process tree, sampled every 0.1 s: PSS (/proc/<pid>/smaps_rollup,
  summed over the tree: a page that forked processes share is counted once, split among them), of
  the whole run and of its largest grading worker (a pool worker with its fork server and their
  children), and RSS beside it (which counts shared pages in every process that maps them).

With `--cluster` it measures `course grade A DIR --cluster` instead (docs/scale.md), on a
Dask scheduler and workers started here with the `dask` command line (127.0.0.1, `--nthreads 1`):

    python benchmarks/bench_grading.py 02_attention_scoring -n 20 --cluster

* throughput (submissions per second) with one and with two workers: the first run (the workers'
  graders warm up) and warm runs (a later run reuses them); the same N with the local pool
  (`--jobs 1`, `--jobs 2`) beside it;
* the marginal seconds per submission of each executor, (wall(N) - wall(1)) / (N - 1), less the
  grading itself (the mean `execution_time` of the results): what one more task costs on top of
  grading it;
* the CPU seconds per submission of the worker (its grading process, fork server and their
  children), the scheduler and the client, from the processes' own accounting: unlike wall times,
  they do not depend on what else the machine runs;
* the round trip of one task carrying a submission's bytes and returning a results dict, with no
  grading: through the scheduler and through the local pool's process pipe (median of 50).

It prints figures only; nothing is asserted (speed targets are not tests).
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import copy
import functools
import inspect
import json
import multiprocessing
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import nbformat

REPO = Path(__file__).resolve().parent.parent
WARM_UP = "_warm_up"
sys.path.insert(0, str(REPO))

from autograder import config as config_mod  # noqa: E402
from autograder.authoring import release  # noqa: E402
from autograder.catalogue import zoo  # noqa: E402

import otter_port  # noqa: E402  (benchmarks/, beside this file)


def _process_table() -> tuple[dict[int, list[int]], dict[int, list[str]]]:
    """Every live process's children and its /proc/<pid>/stat fields after the command name."""
    children: dict[int, list[int]] = {}
    stats: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
            stats[int(entry)] = fields
        except (OSError, IndexError, ValueError):
            continue
    return children, stats


def _subtree(pid: int, children: dict[int, list[int]]) -> list[int]:
    """A process and all its descendants."""
    out, stack = [], [pid]
    while stack:
        p = stack.pop()
        out.append(p)
        stack += children.get(p, [])
    return out


def tree_total(pid: int, field: Callable[[list[str]], float]) -> float:
    """The sum of `field` (of a /proc/<pid>/stat line's fields after the command name) over a process and
    all its live descendants."""
    children, stats = _process_table()
    total = 0.0
    for p in _subtree(pid, children):
        try:
            total += field(stats[p]) if p in stats else 0.0
        except (IndexError, ValueError):
            continue
    return total


def tree_rss(pid: int) -> int:
    """Resident memory (bytes) of a process and all its descendants."""
    page = os.sysconf("SC_PAGE_SIZE")
    return int(tree_total(pid, lambda fields: int(fields[21]) * page))


def pss(pid: int) -> Optional[int]:
    """Proportional set size (bytes) of one process: each page it maps divided by the number of processes
    that map it (/proc/<pid>/smaps_rollup's Pss), so that a sum over processes counts a page once; None
    when the process is gone (or a zombie); PermissionError when it may not be read."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except PermissionError:
        raise
    except (OSError, ValueError):
        return None
    return None


@dataclass
class Memory:
    """Peaks over the samples of a command's process tree: PSS (a page shared by forked children counted
    once, split among them) and RSS (each process's resident pages: shared pages counted in every one
    of them), of the whole tree and of its largest grading worker: a direct child of the command with
    children of its own (a pool worker with its fork server and the fork server's children)."""

    pss: int = 0
    rss: int = 0
    worker_pss: int = 0
    worker_rss: int = 0
    workers: int = 0  # the most grading workers seen at once
    unreadable: int = 0  # samples where a process's PSS could not be read (not permitted)

    def sample(self, pid: int) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        children, stats = _process_table()
        tree = _subtree(pid, children)
        sizes: dict[int, tuple[int, int]] = {}  # pid -> (pss, rss)
        missing = False
        for p in tree:
            if p not in stats:
                continue
            try:
                value = pss(p)
            except PermissionError:
                value, missing = None, True
            sizes[p] = (value or 0, int(stats[p][21]) * page)
        self.unreadable += missing
        self.pss = max(self.pss, sum(v[0] for v in sizes.values()))
        self.rss = max(self.rss, sum(v[1] for v in sizes.values()))
        workers = [_subtree(c, children) for c in children.get(pid, [])]
        workers = [w for w in workers if len(w) > 1]
        self.workers = max(self.workers, len(workers))
        for w in workers:
            self.worker_pss = max(self.worker_pss, sum(sizes.get(p, (0, 0))[0] for p in w))
            self.worker_rss = max(self.worker_rss, sum(sizes.get(p, (0, 0))[1] for p in w))


@dataclass
class Measured:
    """A command's wall seconds, memory peaks, exit code and output tail."""

    wall: float
    memory: Memory
    returncode: int
    output: str


def run_measured(cmd: list[str], cwd: Path | None = None, env: dict | None = None, *, memory: bool = True,
                 check: bool = True) -> Measured:
    """Run a command, sampling its process tree's memory every 0.1 s (PSS and RSS; RSS only without
    `memory`, which is cheaper: no smaps_rollup read)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    peaks = Memory()
    # the output is read by a thread: a command that prints much would otherwise block on a full pipe
    chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: chunks.append(proc.stdout.read() if proc.stdout else b""))
    reader.start()
    while proc.poll() is None:
        if memory:
            peaks.sample(proc.pid)
        else:
            peaks.rss = max(peaks.rss, tree_rss(proc.pid))
        time.sleep(0.1)
    reader.join()
    wall = time.monotonic() - start
    out = b"".join(chunks).decode(errors="replace")
    if check and proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{out[-3000:]}")
    return Measured(wall, peaks, proc.returncode, out[-4000:])


def run(cmd: list[str], cwd: Path | None = None, env: dict | None = None) -> tuple[float, int, str]:
    """Run a command; (wall seconds, peak tree RSS bytes, output tail)."""
    m = run_measured(cmd, cwd, env, memory=False)
    return m.wall, m.memory.rss, m.output[-2000:]


def component_code(course: config_mod.Course, name: str) -> str:
    return inspect.getsource(course.reference_object(name))


@functools.cache
def released_notebook(assignment_id: str) -> nbformat.NotebookNode:
    """The student notebook of a fresh release build, made in a temporary nbgrader course (forced:
    the benchmark does not care about due dates); built once per assignment and run."""
    with tempfile.TemporaryDirectory(prefix="bench-release-") as tmp:
        release.release(config_mod.default(), [assignment_id], force=True, course_dir=Path(tmp), echo=lambda s: None)
        return nbformat.read(str(Path(tmp) / "release" / assignment_id / f"{assignment_id}.ipynb"), as_version=4)


def submissions(assignment_id: str, n: int, folder: Path) -> list[Path]:
    """N student notebooks: the release notebook with solution cells filled in four ways."""
    course = config_mod.default()
    a = course.assignment(assignment_id)
    template = released_notebook(assignment_id)
    mutants = [e for e in zoo.entries(assignment_id) if e.kind == "mutant"]
    kinds = ["correct", "buggy", "stub", "broken"]
    out = []
    for i in range(n):
        kind = kinds[i % len(kinds)] if i else "correct"
        nb = copy.deepcopy(template)
        mutant = mutants[i % len(mutants)] if mutants else None
        for cell in nb.cells:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            name = meta.get("grade_id")
            if not (meta.get("solution") and name in {c.name for c in a.components}):
                continue
            if kind == "stub":
                continue  # the release's own stub
            code = component_code(course, name)
            if kind == "buggy" and mutant is not None and mutant.component == name:
                code = mutant.path.read_text()
            if kind == "broken":
                code = code.replace("def ", "def (", 1)
            cell.source = code
        path = folder / f"student{i:03d}_{kind}" / assignment_id / f"{assignment_id}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(nb, str(path))
        out.append(path)
    return out


GRADED = re.compile(r"graded (\d+) submissions in ([0-9.]+) s")


def outside_grading(m: Measured, results: Path, jobs: int, fixed: float = 0.0) -> dict[str, float]:
    """How much of a `course grade A DIR --jobs J` run is not grading: the class time the command reports
    (without the interpreter's start) and its own wall time, against the grading time in its results
    files (`execution_time`, summed, over J workers); and the reported time less `fixed`, the one-time
    cost of a class run (the workers' start-up and warm-up, measured on a class of one submission)."""
    grading = [json.loads(p.read_text())["execution_time"] for p in results.glob("*.json")]
    match = GRADED.search(m.output)
    reported = float(match.group(2)) if match else float("nan")
    busy = sum(grading) / jobs  # seconds each worker spent grading, on average
    return {"n": len(grading), "grading_mean": statistics.mean(grading), "grading_sum": sum(grading),
            "wall": m.wall, "reported": reported, "outside_reported": 1 - busy / reported,
            "outside_wall": 1 - busy / m.wall, "outside_marginal": 1 - busy / (reported - fixed),
            "per_submission_reported": reported / len(grading),
            "per_submission_marginal": (reported - fixed) * jobs / len(grading)}


def bench_ours(assignment_id: str, subs: list[Path], work: Path, jobs: int) -> dict:
    course_cmd = [sys.executable, "-m", "autograder.cli"]
    flat = work / "ours_in"
    flat.mkdir()
    for p in subs:
        shutil.copy(p, flat / f"{p.parent.parent.name}.ipynb")
    first = flat / f"{subs[0].parent.parent.name}.ipynb"
    cold = []
    for i in range(3):
        m_cold = run_measured(course_cmd + ["grade", assignment_id, str(first), "--results",
                                            str(work / f"cold{i}.json"), "-q"], cwd=REPO)
        cold.append(m_cold.wall)
    # The one-time cost of a class run: a class of one submission, less its grading.
    one = work / "ours_one_in"
    one.mkdir()
    shutil.copy(first, one / first.name)
    m_one = run_measured(course_cmd + ["grade", assignment_id, str(one), "--out", str(work / "ours_one"),
                                       "--jobs", "1", "-q"], cwd=REPO, memory=False)
    fixed = outside_grading(m_one, work / "ours_one", 1)
    fixed_seconds = fixed["reported"] - fixed["grading_sum"]
    # The worker's first submission pays its one-time costs (suite import, first fork): a warm-up
    # copy, graded first (names sort), is left out of the per-submission figures.
    shutil.copy(first, flat / f"{WARM_UP}.ipynb")
    m1 = run_measured(course_cmd + ["grade", assignment_id, str(flat), "--out", str(work / "ours1"),
                                    "--jobs", "1", "-q"], cwd=REPO)
    per = {p.stem: json.loads(p.read_text())["execution_time"] for p in (work / "ours1").glob("*.json")
           if p.stem != WARM_UP}
    by_kind: dict[str, list[float]] = {}
    for stem, seconds in per.items():
        by_kind.setdefault(stem.split("_", 1)[1], []).append(seconds)
    outside1 = outside_grading(m1, work / "ours1", 1, fixed_seconds)
    (flat / f"{WARM_UP}.ipynb").unlink()
    mj = run_measured(course_cmd + ["grade", assignment_id, str(flat), "--out", str(work / "oursj"),
                                    "--jobs", str(jobs), "-q"], cwd=REPO)
    scored = {p.stem: json.loads(p.read_text())["score"] for p in sorted((work / "oursj").glob("*.json"))}
    return {"cold": statistics.median(cold), "own": statistics.median(by_kind["correct"]),
            "median": statistics.median(per.values()), "mean": statistics.mean(per.values()),
            "kinds": {k: statistics.median(v) for k, v in sorted(by_kind.items())}, "per": per,
            "wall_jobs1": m1.wall, "wall_jobs": mj.wall, "memory_cold": m_cold.memory, "memory_jobs1": m1.memory,
            "memory_jobs": mj.memory, "outside_jobs1": outside1, "fixed": fixed_seconds,
            "outside_jobs": outside_grading(mj, work / "oursj", jobs, fixed_seconds),
            "scores": list(scored.values()), "score_of": scored}


def bench_in_process(assignment_id: str, subs: list[Path], runs: int, work: Path) -> dict[str, dict[str, float]]:
    """The in-process cost of the same suite on the same correct and buggy notebooks, in a new process
    (`run_in_process`: no sandbox, no fork): median of `runs` timed gradings per notebook after one
    untimed warm-up; {notebook stem: {"seconds": median, "passed": points}}."""
    chosen = [p for p in subs if p.parent.parent.name.split("_", 1)[1] in ("correct", "buggy")]
    out = work / "in_process.json"
    run([sys.executable, str(Path(__file__).resolve()), assignment_id, "--in-process-of", *map(str, chosen),
         "--in-process-runs", str(runs), "--in-process-out", str(out)], cwd=REPO)
    return json.loads(out.read_text())


def in_process_main(assignment_id: str, paths: list[str], runs: int, out: Path) -> None:
    """The child of bench_in_process: grade each notebook in this process, warm."""
    from autograder.grading.session import run_in_process
    run_in_process(assignment_id, paths[0])  # warm-up: imports, the suites' first collection
    spent: dict[str, list[float]] = {p: [] for p in paths}
    points: dict[str, float] = {}
    for _ in range(runs):
        for p in paths:
            start = time.perf_counter()
            result = run_in_process(assignment_id, p)
            spent[p].append(time.perf_counter() - start)
            points[p] = result.score
    out.write_text(json.dumps({Path(p).parent.parent.name: {"seconds": statistics.median(v), "points": points[p]}
                               for p, v in spent.items()}))


def bench_class(assignment_id: str, size: int, jobs: int) -> float:
    """Wall seconds of `course grade A DIR --jobs J` on a class of `size` generated submissions."""
    with tempfile.TemporaryDirectory(prefix="bench-class-") as tmp:
        work = Path(tmp)
        flat = work / "in"
        flat.mkdir()
        for p in submissions(assignment_id, size, work / "subs"):
            shutil.copy(p, flat / f"{p.parent.parent.name}.ipynb")
        wall, _, _ = run([sys.executable, "-m", "autograder.cli", "grade", assignment_id, str(flat), "--out",
                          str(work / "out"), "--jobs", str(jobs), "-q"], cwd=REPO)
    return wall


def bench_nbgrader(assignment_id: str, subs: list[Path], work: Path) -> dict:
    """A temporary nbgrader course with nbgrader's default autograde pipeline."""
    course = config_mod.default()
    root = work / "nbgrader_course"
    source = root / "source" / assignment_id
    release.stage(course, course.assignment(assignment_id), source)
    (root / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.root = {str(root)!r}\nc.CourseDirectory.course_id = 'bench'\n"
        "c.ExecutePreprocessor.timeout = 600\n")
    env = dict(os.environ, MPLBACKEND="Agg", COURSE_EPOCHS="1")
    nbgrader = [sys.executable, "-m", "nbgrader"]
    run(nbgrader + ["generate_assignment", assignment_id, "--force", "--create"], cwd=root, env=env)
    for p in subs:
        dest = root / "submitted" / p.parent.parent.name / assignment_id
        dest.mkdir(parents=True)
        shutil.copy(p, dest / p.name)
    m = run_measured(nbgrader + ["autograde", assignment_id, "--force", "--create"], cwd=root, env=env)
    return {"per_submission": m.wall / len(subs), "wall": m.wall, "memory": m.memory}


def bench_otter(assignment_id: str, subs: list[Path], work: Path, otter: Path) -> dict:
    """`otter run` (otter-grader, no container) on the otter port of the same notebooks (otter_port.py),
    one after the other as otter runs them: a new process per notebook, which executes it in a new
    kernel and then runs the ported public tests in the notebook's namespace. The first run, on the
    correct notebook, is the cold one; the N runs after it give the seconds per notebook."""
    folder = work / "otter"
    autograder = otter_port.build_autograder(assignment_id, folder)
    env = otter_port.kernel_env(otter, folder, dict(os.environ, MPLBACKEND="Agg", COURSE_EPOCHS="1"))
    notebooks = [otter_port.otter_notebook(p, folder / "subs" / p.parent.parent.name / p.name) for p in subs]
    failed: list[str] = []

    def grade(nb: Path, out: Path) -> tuple[Measured, float, float]:
        out.mkdir(parents=True)
        m = run_measured([str(otter), "run", "-a", str(autograder), "-o", str(out), "--no-logo", str(nb)],
                         cwd=folder, env=env, check=False)
        results = out / "results.json"
        if m.returncode != 0 or not results.exists():
            failed.append(f"{nb.parent.name}: exit {m.returncode}: {m.output[-600:]}")
            return m, 0.0, 0.0
        tests = json.loads(results.read_text()).get("tests", [])
        return m, sum(t.get("score") or 0 for t in tests), sum(t.get("max_score") or 0 for t in tests)

    cold, _, _ = grade(notebooks[0], folder / "cold")
    runs = [(nb.parent.name, *grade(nb, folder / "out" / nb.parent.name)) for nb in notebooks]
    walls = [m.wall for _, m, _, _ in runs]
    memory = Memory()
    for _, m, _, _ in [("cold", cold, 0, 0), *runs]:
        memory.pss, memory.rss = max(memory.pss, m.memory.pss), max(memory.rss, m.memory.rss)
        memory.unreadable += m.memory.unreadable
    return {"per_submission": statistics.mean(walls), "median": statistics.median(walls), "cold": cold.wall,
            "memory": memory, "score_of": {name: (got, of) for name, _, got, of in runs}, "failed": failed,
            "version": otter_port.otter_version(otter), "cases": len(otter_port.public_cases(assignment_id))}


class DaskCluster:
    """A Dask scheduler and workers on this machine (the `dask` command line, 127.0.0.1, random ports),
    each in its own process group; stop() kills them all."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.env = dict(os.environ, OMP_NUM_THREADS="1", DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES="1",
                        DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION="1.0")
        self.procs: list[subprocess.Popen] = []
        self.file = folder / "scheduler.json"
        self._start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file",
                     str(self.file)])
        deadline = time.monotonic() + 60
        while not self.file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.2)
        self.address = json.loads(self.file.read_text())["address"]

    def _start(self, args: list[str]) -> None:
        log = (self.folder / f"dask{len(self.procs)}.log").open("wb")
        self.procs.append(subprocess.Popen([sys.executable, "-m", "dask", *args], cwd=self.folder, env=self.env,
                                           stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                           start_new_session=True))
        log.close()

    def add_workers(self, n: int) -> None:
        from distributed import Client
        for _ in range(n):
            self._start(["worker", "--scheduler-file", str(self.file), "--nthreads", "1", "--no-nanny",
                         "--no-dashboard", "--host", "127.0.0.1"])
        with Client(self.address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(len(self.procs) - 1, timeout=120)

    def cpu(self) -> tuple[float, float]:
        """CPU seconds so far of the scheduler and of the workers (each with its fork server and the
        children that one reaped): exact between runs, when no grading child is alive."""
        return tree_cpu(self.procs[0].pid), sum(tree_cpu(p.pid) for p in self.procs[1:])

    def stop(self) -> None:
        for proc in self.procs:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system, with those of reaped children) of a process and its live descendants."""
    tick = os.sysconf("SC_CLK_TCK")
    return tree_total(pid, lambda fields: sum(int(v) for v in fields[11:15]) / tick)


def _echo(data: bytes, reply: dict) -> dict:
    """A task that carries a submission and returns a results dict, and grades nothing."""
    return reply if data else {}


def round_trip(call: Callable[[], object], times: int = 50) -> float:
    """Median seconds of `call()`, after one untimed call."""
    call()
    spent = []
    for _ in range(times):
        start = time.perf_counter()
        call()
        spent.append(time.perf_counter() - start)
    return statistics.median(spent)


NOOP_TASKS = 300


def noop_tasks(client: Any, cluster: DaskCluster, data: bytes, reply: dict) -> dict[str, float]:
    """NOOP_TASKS tasks like the grading ones (a submission's bytes in, a results dict out) that grade
    nothing, all submitted at once: the wall time, and the CPU seconds per task of the scheduler, this
    process (the client) and the workers: the cost of the path itself."""
    from distributed import as_completed
    sched0, workers0 = cluster.cpu()
    own0 = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    futures = [client.submit(_echo, data, reply, pure=False) for _ in range(NOOP_TASKS)]
    for fut in as_completed(futures, loop=client.loop):
        fut.result()
    wall = time.perf_counter() - start
    own1 = resource.getrusage(resource.RUSAGE_SELF)
    sched1, workers1 = cluster.cpu()
    return {"wall": wall, "scheduler": (sched1 - sched0) / NOOP_TASKS, "workers": (workers1 - workers0) / NOOP_TASKS,
            "client": (own1.ru_utime + own1.ru_stime - own0.ru_utime - own0.ru_stime) / NOOP_TASKS}


def load_average() -> float:
    return os.getloadavg()[0]


def grade_class(assignment_id: str, folder: Path, out: Path, *executor: str) -> dict[str, Any]:
    """`course grade A DIR --out OUT <executor>`: the seconds it reports (the class, without the
    interpreter's start), the CPU seconds of the command's own process (with its reaped children:
    the client, for --cluster) and every submission's execution_time."""
    shutil.rmtree(out, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    _, _, tail = run([sys.executable, "-m", "autograder.cli", "grade", assignment_id, str(folder), "--out",
                      str(out), *executor, "-q"], cwd=REPO)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    match = re.search(r"graded \d+ submissions in ([0-9.]+) s", tail)
    if not match:
        raise SystemExit(f"no timing in the output of course grade:\n{tail}")
    return {"wall": float(match.group(1)),
            "command_cpu": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
            "grading": [json.loads(p.read_text())["execution_time"] for p in out.glob("*.json")]}


def bench_cluster(assignment_id: str, n: int, repeat: int) -> None:
    """`course grade --cluster` against the local pool on N generated submissions (see the docstring).

    Two clusters (one worker, two workers) stay up side by side, and each round runs every executor
    once, so that the figures compared with each other were taken under the same load."""
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as tmp:
        work = Path(tmp)
        flat, one = work / "in", work / "one"
        flat.mkdir()
        one.mkdir()
        for p in submissions(assignment_id, n, work / "subs"):
            shutil.copy(p, flat / f"{p.parent.parent.name}.ipynb")
        first = sorted(flat.iterdir())[0]  # student000_correct
        shutil.copy(first, one / first.name)
        runs: dict[tuple[str, int], list[dict[str, Any]]] = {}  # (executor, class size): one per round
        loads: list[float] = []

        def measure(label: str, folder: Path, executor: tuple[str, ...], cluster: Optional[DaskCluster]) -> None:
            size = len(list(folder.iterdir()))
            cpu_before = cluster.cpu() if cluster else (0.0, 0.0)
            loads.append(load_average())
            r = grade_class(assignment_id, folder, work / "out", *executor)
            cpu_after = cluster.cpu() if cluster else (0.0, 0.0)
            r["scheduler_cpu"], r["workers_cpu"] = (a - b for a, b in zip(cpu_after, cpu_before))
            runs.setdefault((label, size), []).append(r)
            print(f"  {label:30} {size:3} submissions {r['wall']:6.1f} s  load {loads[-1]:4.1f}", flush=True)

        print(f"{assignment_id}: {n} submissions (a mix of correct, buggy, all-stub and broken)")
        clusters: list[DaskCluster] = []
        try:
            for workers in (1, 2):
                (work / f"dask{workers}").mkdir()
                clusters.append(DaskCluster(work / f"dask{workers}"))
                clusters[-1].add_workers(workers)
            executors: dict[str, tuple[tuple[str, ...], Optional[DaskCluster]]] = {
                "local --jobs 1": (("--jobs", "1"), None), "local --jobs 2": (("--jobs", "2"), None),
                "cluster, 1 worker": (("--cluster", clusters[0].address), clusters[0]),
                "cluster, 2 workers": (("--cluster", clusters[1].address), clusters[1])}
            for label in ("cluster, 1 worker", "cluster, 2 workers"):  # the graders warm up
                measure(label.replace("cluster", "first run"), flat, *executors[label])
            for r in range(repeat):
                print(f" round {r + 1} of {repeat}", flush=True)
                for label, (executor, cluster) in executors.items():
                    measure(label, flat, executor, cluster)
                for label in ("local --jobs 1", "cluster, 1 worker"):
                    measure(label, one, *executors[label])
            from distributed import Client
            data = first.read_bytes()
            reply = json.loads(next((work / "out").glob("*.json")).read_text())
            with Client(clusters[0].address, timeout=30, set_as_default=False) as client:
                via_scheduler = round_trip(lambda: client.submit(_echo, data, reply, pure=False).result())
            with Client(clusters[1].address, timeout=30, set_as_default=False) as client:
                noop = noop_tasks(client, clusters[1], data, reply)
        finally:
            for c in clusters:
                c.stop()
        with cf.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as local_pool:
            via_pool = round_trip(lambda: local_pool.submit(_echo, data, reply).result())

    def median(label: str, key: str, size: int = n) -> float:
        return statistics.median(r[key] for r in runs[(label, size)])

    print(f"\nload average (1 min) during the runs: median {statistics.median(loads):.1f}, "
          f"{min(loads):.1f}-{max(loads):.1f} (2 cores)")
    print(f"\n{'executor':30} {'wall, median':>12} {'subm./s':>8} {'grading mean':>12}   walls")
    for (label, size), rs in runs.items():
        if size != n:
            continue
        wall = median(label, "wall")
        grading = statistics.mean(g for r in rs for g in r["grading"])
        print(f"{label:30} {wall:11.1f}s {n / wall:8.2f} {grading:11.2f}s   " + " ".join(f"{r['wall']:.1f}" for r in rs))
    print("\none more submission, one worker, medians over the rounds: wall (wall(N) - wall(1)) / (N - 1), "
          "and that less the mean grading time (execution_time), i.e. what a task costs on top of its grading:")
    for label in ("local --jobs 1", "cluster, 1 worker"):
        big, small = runs[(label, n)], runs[(label, 1)]
        extra = statistics.median((b["wall"] - s["wall"]) / (n - 1) for b, s in zip(big, small))
        grading = statistics.mean(g for r in big for g in r["grading"])
        print(f"  {label:30} {extra:6.2f} s per submission, {(extra - grading) * 1000:+6.0f} ms on top of grading")
    print("\nCPU seconds per submission, cluster, one worker (medians over the rounds; marginal: (N) - (1) over N - 1):")
    label = "cluster, 1 worker"
    big, small = runs[(label, n)], runs[(label, 1)]
    for key, what in (("workers_cpu", "the worker (grading process, fork server, children)"),
                      ("scheduler_cpu", "the scheduler (its background work during the run included)"),
                      ("command_cpu", "the client (course grade --cluster)")):
        per = statistics.median((b[key] - s[key]) / (n - 1) for b, s in zip(big, small))
        print(f"  {what:55} {per * 1000:8.1f} ms")
    print(f"\n{NOOP_TASKS} tasks carrying a submission and returning its results, without grading, two workers: "
          f"{NOOP_TASKS / noop['wall']:.0f} tasks/s; CPU per task: the scheduler {noop['scheduler'] * 1000:.1f} ms, "
          f"the client {noop['client'] * 1000:.1f} ms, the workers {noop['workers'] * 1000:.1f} ms")
    print(f"\none task's round trip without grading ({len(data) / 1024:.0f} KiB submission, "
          f"{len(json.dumps(reply)) / 1024:.0f} KiB results; median of 50):")
    print(f"  through the Dask scheduler       {via_scheduler * 1000:7.1f} ms")
    print(f"  through the local pool's pipe    {via_pool * 1000:7.1f} ms")


def torch_floor() -> float:
    return statistics.median(run([sys.executable, "-c", "import torch"])[0] for _ in range(3))


def _mb(n: int) -> str:
    return f"{n / 2**20:.0f}"


def _memory_row(label: str, m: Optional[Memory], worker: bool = False) -> str:
    """`label  PSS MB (RSS MB)`, of the largest grading worker with `worker`, else of the whole tree."""
    if m is None:
        return f"{label} -"
    pss_, rss_ = (m.worker_pss, m.worker_rss) if worker else (m.pss, m.rss)
    note = "" if not m.unreadable else f" ({m.unreadable} samples missed an unreadable process)"
    return f"{label} {_mb(pss_):>5} ({_mb(rss_)}){note}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("assignment", nargs="?", default="02_attention_scoring")
    parser.add_argument("-n", type=int, default=20, help="synthetic submissions per assignment")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--all", action="store_true", help="every assignment")
    parser.add_argument("--class-size", type=int, default=0,
                        help="also grade a generated class of this size per assignment with --jobs (wall time)")
    parser.add_argument("--no-nbgrader", action="store_true", help="skip the nbgrader side")
    parser.add_argument("--otter", metavar="PATH",
                        help="the `otter` command of otter-grader (default: the one on PATH; see "
                             "benchmarks/requirements.txt); without one the otter side is skipped")
    parser.add_argument("--no-otter", action="store_true", help="skip the otter-grader side")
    parser.add_argument("--in-process-runs", type=int, default=3,
                        help="timed in-process gradings per correct and buggy notebook (median; 0 skips them)")
    parser.add_argument("--cluster", action="store_true",
                        help="measure `course grade --cluster` on a Dask cluster started here, against the local pool")
    parser.add_argument("--repeat", type=int, default=3, help="--cluster: runs per figure (the median is shown)")
    parser.add_argument("--in-process-of", nargs="+", help=argparse.SUPPRESS)  # bench_in_process's child
    parser.add_argument("--in-process-out", type=Path, help=argparse.SUPPRESS)
    ns = parser.parse_args()
    if ns.in_process_of:
        in_process_main(ns.assignment, ns.in_process_of, ns.in_process_runs, ns.in_process_out)
        return
    ids = [a.id for a in config_mod.default().assignments] if ns.all else [ns.assignment]
    if ns.cluster:
        print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}, torch {_torch_version()}; "
              f"date {time.strftime('%Y-%m-%d %H:%M')}")
        for assignment_id in ids:
            bench_cluster(assignment_id, ns.n, ns.repeat)
        return
    otter = None if ns.no_otter else otter_port.find_otter(ns.otter)
    if otter is None and not ns.no_otter:
        print(f"otter-grader: skipped ({'no file ' + ns.otter if ns.otter else 'no `otter` on PATH'}; "
              f"see benchmarks/requirements.txt, or pass --otter PATH)")
    floor = torch_floor()
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}, torch {_torch_version()}"
          + (f", otter-grader {otter_port.otter_version(otter)}" if otter else "")
          + f"; date {time.strftime('%Y-%m-%d %H:%M')}")
    print(f"torch-import floor (python -c 'import torch'), median of 3: {floor:.2f} s\n")
    print(f"{'assignment':24} {'N':>3} {'ours median':>11} {'ours mean':>9} {'nbgrader':>8} {'ratio':>6} "
          f"{'otter':>6} {'ratio':>6} {'class wall':>10} {'cold':>6} {'cold/(floor+own)':>16} {'otter cold':>10}")
    kinds: list[str] = []
    classes: list[str] = []
    in_process: list[str] = []
    memory: list[str] = []
    outside: list[str] = []
    otter_notes: list[str] = []
    class_total = 0.0
    loads: list[str] = []
    for assignment_id in ids:
        load_before = load_average()
        with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
            work = Path(tmp)
            subs = submissions(assignment_id, ns.n, work / "subs")
            ours = bench_ours(assignment_id, subs, work, ns.jobs)
            nbg = None if ns.no_nbgrader else bench_nbgrader(assignment_id, subs, work)
            ott = bench_otter(assignment_id, subs, work, otter) if otter else None
            inproc = bench_in_process(assignment_id, subs, ns.in_process_runs, work) if ns.in_process_runs else None
        loads.append(f"{assignment_id} {load_before:.1f} before, {load_average():.1f} after")
        ratio = f"{nbg['per_submission'] / ours['mean']:.1f}x" if nbg else "-"
        nbg_s = f"{nbg['per_submission']:.2f}" if nbg else "-"
        ott_ratio = f"{ott['per_submission'] / ours['mean']:.1f}x" if ott else "-"
        ott_s = f"{ott['per_submission']:.2f}" if ott else "-"
        ott_cold = f"{ott['cold']:.1f}s" if ott else "-"
        cold_ratio = ours["cold"] / (floor + ours["own"])
        print(f"{assignment_id:24} {ns.n:>3} {ours['median']:>11.2f} {ours['mean']:>9.2f} {nbg_s:>8} {ratio:>6} "
              f"{ott_s:>6} {ott_ratio:>6} {ours['wall_jobs']:>9.1f}s {ours['cold']:>5.1f}s {cold_ratio:>16.2f} "
              f"{ott_cold:>10}", flush=True)
        kinds.append(f"{assignment_id:24} " + "  ".join(f"{k} {v:.2f}" for k, v in ours["kinds"].items()))
        if inproc:
            parts = []
            for kind in ("correct", "buggy"):
                stems = [s for s in inproc if s.split("_", 1)[1] == kind]
                if not stems:
                    continue
                sandboxed = statistics.median(ours["per"][s] for s in stems)
                alone = statistics.median(inproc[s]["seconds"] for s in stems)
                differ = [s for s in stems if abs(inproc[s]["points"] - ours["score_of"][s]) > 1e-6]
                parts.append(f"{kind} {sandboxed:.2f}/{alone:.2f} = {sandboxed / alone:.2f}x"
                             + (f" (scores differ: {', '.join(differ)})" if differ else ""))
            in_process.append(f"{assignment_id:24} " + "   ".join(parts))
        memory.append(f"{assignment_id:24} " + "  ".join([
            _memory_row(f"worker (--jobs {ns.jobs}, {ours['memory_jobs'].workers} workers)", ours["memory_jobs"],
                        worker=True),
            _memory_row("worker (--jobs 1)", ours["memory_jobs1"], worker=True),
            _memory_row(f"whole --jobs {ns.jobs} run", ours["memory_jobs"]),
            _memory_row("cold", ours["memory_cold"]),
            _memory_row("nbgrader", nbg["memory"] if nbg else None),
            _memory_row("otter", ott["memory"] if ott else None)]))
        for label, o in ((f"--jobs {ns.jobs}", ours["outside_jobs"]), ("--jobs 1", ours["outside_jobs1"])):
            outside.append(f"{assignment_id:24} {label:9} {o['n']:>3} submissions: {o['reported']:5.1f} s reported, "
                           f"{o['wall']:5.1f} s wall; grading {o['grading_sum']:5.1f} s (mean {o['grading_mean']:.2f}); "
                           f"outside grading {o['outside_reported']:6.1%} ({o['outside_wall']:6.1%} of the wall); "
                           f"less the start-up: {o['per_submission_marginal']:.2f} s a submission per worker, "
                           f"{o['outside_marginal']:6.1%} outside grading")
        outside.append(f"{assignment_id:24} start-up of a class run (a class of one, less its grading): "
                       f"{ours['fixed']:.1f} s")
        if ott:
            correct = [v for k, v in ott["score_of"].items() if k.endswith("_correct")]
            otter_notes.append(f"{assignment_id:24} {ott['cases']} cases; per notebook mean {ott['per_submission']:.2f} s "
                               f"median {ott['median']:.2f} s; cold {ott['cold']:.2f} s (ours {ours['cold']:.2f} s); "
                               f"correct notebooks score " + ", ".join(f"{g:g}/{t:g}" for g, t in correct)
                               + (f"; {len(ott['failed'])} runs failed: {ott['failed'][0]}" if ott["failed"] else ""))
        if ns.class_size:
            wall = bench_class(assignment_id, ns.class_size, ns.jobs)
            class_total += wall
            classes.append(f"{assignment_id:24} {wall:7.1f} s")
    print("\nours, seconds per submission by kind (median, warm worker, --jobs 1):")
    print("\n".join(kinds))
    if in_process:
        print(f"\nsandboxed / in-process, seconds per submission, same suite on the same notebooks (sandboxed: "
              f"--jobs 1 execution_time; in-process: run_in_process, warm, median of {ns.in_process_runs}):")
        print("\n".join(in_process))
    print("\npeak memory, MB: PSS (RSS in brackets; RSS counts the pages forked children share once per process);"
          "\n  a worker = a grading process with its fork server and children:")
    print("\n".join(memory))
    print("\noutside grading: a class run's time (as `course grade` reports it: `graded N submissions in X s`, "
          "and its wall time)\n  against its results' execution_time summed, over the workers; then the same less "
          "the run's start-up (workers' warm-up):")
    print("\n".join(outside))
    if otter_notes:
        print("\notter-grader (`otter run` per notebook on the otter port of the public tests, benchmarks/otter_port.py):")
        print("\n".join(otter_notes))
    if ns.class_size:
        print(f"\na class of {ns.class_size} submissions per assignment, `course grade A DIR --jobs {ns.jobs}`:")
        print("\n".join(classes))
        print(f"{'total':24} {class_total:7.1f} s = {class_total / 60:.1f} min")
    print(f"\nload average (1 min; {os.cpu_count()} cores): " + "; ".join(loads))
    print("\nours median/mean: per-submission seconds in a warm worker (--jobs 1, warm-up submission left out),"
          "\n  full public + hidden suite, over the mix of correct, buggy (zoo mutant), all-stub and broken notebooks;"
          "\nnbgrader: `nbgrader autograde` wall / N on the same notebooks (a fresh kernel per notebook running it"
          "\n  top to bottom with the public test cells); ratio = nbgrader / ours mean;"
          "\notter: `otter run` wall per notebook (mean of N, after a cold first run), a fresh kernel per notebook"
          "\n  running it top to bottom, then the public tests ported to otter once each; ratio = otter / ours mean;"
          "\ncold: `course grade A FILE` on a correct submission in a new process; own = the warm time of a correct"
          "\n  submission (the tests' own compute); the target is cold <= 2 x (floor + own).")


def _torch_version() -> str:
    out = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
    return out.stdout.strip()


if __name__ == "__main__":
    main()
