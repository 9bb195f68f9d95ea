"""`course grade --cluster` on a real Dask cluster: a scheduler and two worker processes started with
the `dask` command line on this machine (127.0.0.1, random ports), graded against local grading.

The tests of this module share the cluster and run in order on one xdist worker: the equality test
warms the workers' graders, the interrupt and kill tests reuse them (the kill test leaves one worker).
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

distributed = pytest.importorskip("distributed")

from autograder import config  # noqa: E402
from autograder.authoring.samples import write_samples  # noqa: E402
from kit_helpers import HANGS_AS_IT_LOADS, course_with_an_hour_to_load, write_notebook  # noqa: E402

pytestmark = pytest.mark.xdist_group("dask_cluster")

A = "02_attention_scoring"
KIT = Path(config.__file__).resolve().parents[1]
#: Results fields that are timings (everything else must be equal).
TIMINGS = ("execution_time",)
#: The scheduler's fault settings docs/scale.md recommends: a submission that took 2 workers down gets
#: 0 (the local pool's rule), and each worker holds one task at a time (a death is suspected of it only).
DASK_ENV = {"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "1",
            "DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION": "1.0",
            "OMP_NUM_THREADS": "1"}


def wait_for(what: str, check: Callable[[], Any], timeout: float, every: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


class Cluster:
    """A scheduler and workers, each a `dask` command in its own process group."""

    def __init__(self, folder: Path, env: dict[str, str]) -> None:
        self.folder, self.env = folder, env
        self.scheduler_file = folder / "scheduler.json"
        self.procs: dict[str, subprocess.Popen] = {}
        folder.mkdir(parents=True, exist_ok=True)

    def start(self, name: str, args: list[str]) -> None:
        log = (self.folder / f"{name}.log").open("wb")
        self.procs[name] = subprocess.Popen([sys.executable, "-m", "dask", *args], cwd=self.folder, env=self.env,
                                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        log.close()

    def start_scheduler(self) -> str:
        self.start("scheduler", ["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                 "--scheduler-file", str(self.scheduler_file)])

        def address() -> str:
            assert self.procs["scheduler"].poll() is None, self.log("scheduler")
            try:
                return json.loads(self.scheduler_file.read_text())["address"]
            except (OSError, ValueError, KeyError):
                return ""
        self.address: str = wait_for("the scheduler", address, 60)
        return self.address

    def start_worker(self, name: str) -> None:
        self.start(name, ["worker", "--scheduler-file", str(self.scheduler_file), "--nthreads", "1", "--no-nanny",
                          "--no-dashboard", "--host", "127.0.0.1", "--name", name])

    def kill(self, name: str) -> None:
        proc = self.procs[name]
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)

    def stop(self) -> None:
        for name in list(self.procs):
            self.kill(name)

    def log(self, name: str) -> str:
        return (self.folder / f"{name}.log").read_text(errors="replace")[-3000:]


def _as_in_a_terminal() -> None:
    # A run in the background (CI, `cmd &` in a script) ignores SIGINT, and a Python started with SIGINT
    # ignored never raises KeyboardInterrupt: give the command the disposition of a foreground command.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def course_grade(*args: str, cwd: Path, course_file: Path | None = None) -> subprocess.Popen:
    config_args = ["--config", str(course_file)] if course_file else []
    return subprocess.Popen([sys.executable, "-m", "autograder.cli", *config_args, "grade", A, *args], cwd=cwd,
                            env=dict(os.environ, **DASK_ENV), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_as_in_a_terminal)


def finish(proc: subprocess.Popen, timeout: float = 180) -> tuple[int, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"course grade did not finish in {timeout:.0f} s:\n{out}\n{err}") from None
    return proc.returncode, out + err


def results(folder: Path) -> dict[str, Any]:
    """Every results file and grades.csv, timings left out."""
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in TIMINGS}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value
    out: dict[str, Any] = {p.name: strip(json.loads(p.read_text())) for p in sorted(folder.glob("*.json"))}
    out["grades.csv"] = (folder / "grades.csv").read_text() if (folder / "grades.csv").exists() else None
    return out


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cluster")


@pytest.fixture(scope="module")
def submissions(work: Path) -> Path:
    """Six to grade: the reference, all stubs, a broken file, two zoo mutants (.py files), a notebook in
    a student's folder; and a student's folder with nothing to grade."""
    folder = work / "submissions"
    write_samples(A, folder, mutants=2)
    (folder / "nina").mkdir()
    write_notebook(folder / "nina" / f"{A}.ipynb", [("markdown", "# my attention"),
                                                     ("code", (folder / "reference.py").read_text())])
    (folder / "omar").mkdir()
    (folder / "omar" / "notes.txt").write_text("forgot to upload the notebook")
    assert len(list(folder.iterdir())) == 7
    return folder


class LocalGrading:
    """`course grade A DIR --jobs 1` on the same submissions, started at once (it runs while the
    cluster starts and warms up); `results()` waits for it."""

    def __init__(self, submissions: Path, out: Path) -> None:
        self.out = out
        self.proc = course_grade(str(submissions), "--out", str(out), "--jobs", "1", "-q", cwd=out.parent)
        self._results: dict[str, Any] | None = None

    def results(self) -> dict[str, Any]:
        if self._results is None:
            code, output = finish(self.proc)
            assert code == 0, output
            self._results = results(self.out)
        return self._results


@pytest.fixture(scope="module")
def local(work: Path, submissions: Path) -> Iterator[LocalGrading]:
    grading = LocalGrading(submissions, work / "local")
    yield grading
    if grading.proc.poll() is None:
        grading.proc.kill()
        grading.proc.communicate()


@pytest.fixture(scope="module")
def cluster(work: Path, local: LocalGrading) -> Iterator[Cluster]:
    c = Cluster(work / "dask", dict(os.environ, **DASK_ENV))
    try:
        c.start_scheduler()
        for name in ("w1", "w2"):
            c.start_worker(name)
        with distributed.Client(c.address, timeout=30, set_as_default=False) as client:
            try:
                client.wait_for_workers(2, timeout=90)
            except TimeoutError:
                raise AssertionError("the workers did not join:\n" + c.log("w1") + c.log("w2")) from None
        yield c
    finally:
        c.stop()


def test_cluster_results_equal_local_grading(cluster: Cluster, submissions: Path, local: LocalGrading, work: Path):
    code, output = finish(course_grade(str(submissions), "--out", str(work / "cluster"), "--cluster",
                                       cluster.address, cwd=work))
    assert code == 0, output
    assert "6/6" in output  # the progress bar counts completed/total
    got = results(work / "cluster")
    local_results = local.results()
    assert sorted(got) == sorted(local_results)
    for name, expected in local_results.items():
        assert got[name] == expected, name
    scores = {name: r["score"] for name, r in got.items() if name.endswith(".json")}
    assert scores["reference.json"] == scores["nina.json"] == 14, scores
    assert scores["stubs.json"] == scores["broken.json"] == scores["omar.json"] == 0, scores
    assert all(0 < s < 14 for n, s in scores.items() if "mutant" in n), scores
    assert "No notebook found" in got["omar.json"]["output"]


def first_result(folder: Path, proc: subprocess.Popen) -> Path:
    def found() -> Path | None:
        assert proc.poll() is None, "course grade ended before its first result:\n" + finish(proc)[1]
        return next((p for p in folder.glob("*.json") if p.name != "omar.json"), None)  # omar: nothing to grade
    return wait_for("a first result", found, 120, every=0.05)


def test_ctrl_c_cancels_the_rest_and_exits_nonzero(cluster: Cluster, submissions: Path, work: Path):
    # Thirty more correct submissions: two workers need tens of seconds for them, so the batch cannot
    # end on its own between its first result and the interrupt (seven could: all graded in 7.9 s).
    folder = work / "a_large_class"
    shutil.copytree(submissions, folder)
    for i in range(30):
        (folder / f"copy{i:02}.py").write_text((submissions / "reference.py").read_text())
    out = work / "interrupted"
    proc = course_grade(str(folder), "--out", str(out), "--cluster-file", str(cluster.scheduler_file), "-q",
                        cwd=work)
    first_result(out, proc)
    proc.send_signal(signal.SIGINT)
    code, output = finish(proc, timeout=60)
    assert code == 130, output
    assert "interrupted" in output and "Traceback" not in output, output
    assert len(list(out.glob("*.json"))) < 37
    with distributed.Client(cluster.address, timeout=30, set_as_default=False) as client:
        wait_for("the scheduler to forget the cancelled tasks",
                 lambda: client.run_on_scheduler(lambda dask_scheduler: not dask_scheduler.tasks), 30, every=0.5)


def test_a_stopped_run_ends_the_gradings_in_progress_at_once(cluster: Cluster, submissions: Path, work: Path):
    """SIGTERM while every worker grades a submission that hangs as it loads, under load and submission
    limits of an hour: the client cancelled the tasks, but a running task went on until the limits
    ended it, holding its worker's grader, so the next `course grade --cluster` waited for it (an
    hour). Now the stopped run kills those gradings' sandboxes (dask_cluster.stop_grading) and the next
    run grades its class."""
    from autograder.integrations import dask_cluster
    folder = work / "hangs"
    folder.mkdir()
    for i in range(2):  # one per worker
        (folder / f"hangs_{i}.py").write_text(HANGS_AS_IT_LOADS)
    proc = course_grade(str(folder), "--out", str(work / "hangs-out"), "--cluster-file", str(cluster.scheduler_file),
                        "-q", cwd=work, course_file=course_with_an_hour_to_load(work))
    with distributed.Client(cluster.address, timeout=30, set_as_default=False) as client:
        def grading() -> bool:  # a task of this run on each worker, past its set-up (which holds the lock too)
            assert proc.poll() is None, finish(proc)[1]
            # Only this run's tasks count: the interrupted run of the test before may still be executing one
            # while this command imports torch, and a SIGTERM then would find it without its handler.
            running = client.run(lambda dask_worker: [str(ts.key) for ts in dask_worker.state.executing])
            return len(running) == 2 and all(any(k.startswith("course-grade-hangs_") for k in keys)
                                             for keys in running.values())
        wait_for("both workers grading", grading, 120, every=0.2)
        time.sleep(2)  # into the load that hangs
        proc.send_signal(signal.SIGTERM)
        code, output = finish(proc, timeout=60)
        assert code == 143 and "Traceback" not in output, output
        wait_for("the workers to end their gradings", lambda: not any(
            client.run(lambda: dask_cluster._State.lock.locked()).values()), 60, every=0.2)
    out = work / "after-a-stop"
    code, output = finish(course_grade(str(submissions), "--out", str(out), "--cluster-file",
                                       str(cluster.scheduler_file), "-q", cwd=work), timeout=300)
    assert code == 0, output
    assert len(list(out.glob("*.json"))) == 7


def test_stopping_a_run_touches_no_other_run_with_the_same_options(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch):
    """A review found that stop_grading matched a run's options only: another `course grade --cluster`
    with the same options (another assignment, say) had its grading in progress on those workers
    closed, scored 0 ("the grader's sandbox failed (the grading was stopped)") and recorded. Now a stop
    names its run: another run's grading goes on, and its next task reopens a sandbox closed for a
    stopped run; a task of the stopped run that starts after the stop returns at once. (The worker's
    state, set up in this process, with a fork server of its own.)"""
    from autograder.grading import pool
    from autograder.integrations import dask_cluster as dc
    from autograder.sandbox.forkserver import Zygote
    from kit_helpers import reference_source
    z = Zygote()
    z.start()
    monkeypatch.setattr(pool._Worker, "zygote", z)
    for attr, value in (("key", "k"), ("private", str(tmp_path)), ("refusal", ""), ("config_path", None),
                        ("running", ""), ("stopped", ())):
        monkeypatch.setattr(dc._State, attr, value)
    source = reference_source(A).encode()
    try:
        monkeypatch.setattr(dc._State, "running", "B")
        assert dc.stop_grading("k", "A") is False and not z.closed  # B's grading goes on
        monkeypatch.setattr(dc._State, "running", "A")
        assert dc.stop_grading("k", "A") is True and z.closed  # A's ends
        monkeypatch.setattr(dc._State, "running", "")
        graded = dc.grade_task("k", "B", "bob", "bob.py", source, len(source), A, False)
        assert graded["score"] == 14, graded.get("output", "")[:500]
        assert dc.grade_task("k", "A", "amy", "amy.py", source, len(source), A, False) == {
            "refused": "this grading run was stopped"}
    finally:
        z.closed = True
        z.stop()


def test_a_worker_killed_mid_batch_costs_no_result(cluster: Cluster, submissions: Path, local: LocalGrading,
                                                  work: Path):
    out = work / "killed"
    proc = course_grade(str(submissions), "--out", str(out), "--cluster", cluster.address, "-q", cwd=work)
    with distributed.Client(cluster.address, timeout=30, set_as_default=False) as client:
        first_result(out, proc)

        def busy_worker() -> str:
            names = {addr: w["name"] for addr, w in client.scheduler_info()["workers"].items()}
            return next((names[addr] for addr, keys in client.processing().items() if keys), "")
        victim = wait_for("a worker grading a submission", busy_worker, 60, every=0.05)
        done_before = len(list(out.glob("*.json")))
        cluster.kill(victim)
    code, output = finish(proc)
    assert code == 0, output
    assert done_before < 7, "the batch ended before the kill"
    assert results(out) == local.results()  # every submission, the one that was being graded included


def test_a_worker_with_another_kit_refuses(tmp_path: Path, submissions: Path):
    """A worker whose kit differs from the client's (one comment added to a hidden suite) refuses."""
    kit = tmp_path / "kit"
    ignore = shutil.ignore_patterns("__pycache__")
    for part in ("autograder", "solutions"):
        shutil.copytree(KIT / part, kit / part, ignore=ignore)
    shutil.copy(KIT / "course.yml", kit / "course.yml")
    suite = kit / "autograder" / "suites" / "hidden" / f"test_{A}.py"
    suite.write_text(suite.read_text() + "\n# a different kit\n")
    env = dict(os.environ, **DASK_ENV)
    other = Cluster(tmp_path / "dask", env)
    try:
        other.start_scheduler()
        other.env = dict(env, PYTHONPATH=os.pathsep.join([str(kit), env.get("PYTHONPATH", "")]))
        other.start_worker("other-kit")
        out = tmp_path / "out"
        code, output = finish(course_grade(str(submissions), "--out", str(out), "--cluster", other.address,
                                           cwd=tmp_path), timeout=120)
    finally:
        other.stop()
    assert code == 2, output
    assert "refuses to grade: it does not have the client's kit" in output, output
    assert "Traceback" not in output, output
    assert not out.exists() or not list(out.glob("*.json"))


def fork_servers(worker_pid: int) -> list[int]:
    """Host pids of the fork servers of a worker process: each bubblewrap child's child, or in process
    mode the zygote itself (a child of the worker)."""
    parents: dict[int, list[int]] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        parents.setdefault(ppid, []).append(int(entry))
    servers = []
    for child in parents.get(worker_pid, []):
        cmdline = Path(f"/proc/{child}/cmdline").read_bytes() if os.path.exists(f"/proc/{child}/cmdline") else b""
        if b"zygote.py" in cmdline and not cmdline.startswith(b"bwrap"):
            servers.append(child)
        elif cmdline.startswith(b"bwrap"):
            servers += parents.get(child, [])
    return servers


def server_view(pid: int) -> dict[str, str]:
    """What a job could change about a fork server, read from the host (not asking the server)."""
    view = {}
    for name in ("limits", "oom_score_adj", "coredump_filter", "autogroup", "stat"):
        try:
            text = Path(f"/proc/{pid}/{name}").read_text()
        except OSError:
            text = ""
        # stat: nice, rt priority, policy (fields 19, 40, 41); autogroup: its nice, not its counter.
        view[name] = " ".join(text.rsplit(")", 1)[-1].split()[i] for i in (16, 37, 38)) if name == "stat" and text \
            else text.split()[-1] if name == "autogroup" and text else text
    return view


def test_a_worker_grades_correctly_after_a_run_of_attackers(cluster: Cluster, work: Path):
    """Two consecutive runs on the same Dask worker (issue #22): run 1 holds the attacks on the fork
    server (its limits, scheduling and /proc files), run 2 correct submissions only. Every
    submission gets full marks (the attackers' code is correct), and the fork server that grades run
    2 is a new one or, seen from the host, exactly as it was before run 1."""
    hostile = Path(__file__).resolve().parent / "hostile"
    reference = (KIT / "solutions" / "attention_scoring.py").read_text()
    with distributed.Client(cluster.address, timeout=30, set_as_default=False) as client:
        workers = {w["name"]: addr for addr, w in client.scheduler_info()["workers"].items()}
        for name in sorted(workers)[1:]:  # one worker grades both runs
            cluster.kill(name)
        wait_for("a single worker", lambda: len(client.scheduler_info()["workers"]) == 1, 60)
    worker = cluster.procs[sorted(workers)[0]].pid

    def run(name: str, files: dict[str, str]) -> dict[str, float]:
        folder = work / f"two-runs-{name}"
        folder.mkdir()
        for file, text in files.items():
            (folder / file).write_text(text)
        code, output = finish(course_grade(str(folder), "--out", str(work / f"two-runs-{name}-out"),
                                           "--cluster", cluster.address, "-q", cwd=work))
        assert code == 0, output
        graded = results(work / f"two-runs-{name}-out")
        assert not any("ATTACK SUCCEEDED" in json.dumps(r) for r in graded.values()), graded
        return {n: r["score"] for n, r in graded.items() if n.endswith(".json")}

    if not fork_servers(worker):  # this test alone: warm the worker first
        assert run("warm", {"reference.py": reference}) == {"reference.json": 14}
    [before] = fork_servers(worker)
    view = server_view(before)
    attackers = ("limit_fork_server", "renice_fork_server", "proc_write_fork_server")
    first = run("1", {f"{name}.py": (hostile / f"{name}.py").read_text() for name in attackers})
    second = run("2", {f"correct{i}.py": reference for i in range(2)})
    assert first == {f"{name}.json": 14 for name in attackers}, first
    assert second == {"correct0.json": 14, "correct1.json": 14}, second
    [after] = fork_servers(worker)
    assert after != before or server_view(after) == view, (view, server_view(after))


def test_once_a_stop_signal_arrives_the_client_loop_s_errors_are_not_printed() -> None:
    """The mechanism behind the Ctrl-C test's "no Traceback": on Ctrl-C, distributed's sync() schedules a
    cancel callback that raises NameError on the client's loop thread when the interrupt lands before its
    call's future exists, and tornado logs it with its traceback (seen in CI on a loaded machine,
    2026-11-27). From the signal on, until the grading ends, the loop's logger prints nothing."""
    from autograder.integrations import dask_cluster
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    log = logging.getLogger(dask_cluster.LOOP_LOGGERS[0])
    log.addHandler(handler)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with dask_cluster.QuietOnceStopped().installed():
            log.error("before the stop")
            with pytest.raises(KeyboardInterrupt):
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(5)
            log.error("a cancelled call's error")
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back
        log.error("after the grading")
    finally:
        signal.signal(signal.SIGINT, previous)
        log.removeHandler(handler)
    assert [r.getMessage() for r in records] == ["before the stop", "after the grading"]
