"""Isolation between submissions, against a student who has read the grader's code (issue #12).

Each attack is a bounded fixture in tests/hostile/ whose header says what it attacks and what the
grader must do. Here each is graded with the real 02 suites through `session.grade_file`, in the
same warm fork server as the submissions graded after it (one worker serves a whole class), and the
tests check the attacker's own score, that later submissions are unaffected, and that nothing of the
job is left behind. A batch through the local pool mixes the attackers with correct submissions.
"""
from __future__ import annotations

import datetime as dt
import inspect
import json
import os
import resource
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from autograder import config as config_mod
from autograder.grading import session
from autograder.grading.pool import grade_directory
from autograder.grading.results import results_json
from autograder.sandbox.bwrap import bwrap_available
from autograder.sandbox.forkserver import Zygote
from autograder.sandbox.runtime import landlock, wire
from autograder.sandbox.runtime.environment import ENVIRONMENT
from kit_helpers import poll

HOSTILE = Path(__file__).resolve().parent / "hostile"
A = "02_attention_scoring"
FULL = {"sequence_mask": 2.0, "masked_softmax": 4.0, "AdditiveAttention": 4.0, "DotProductAttention": 4.0}
needs_bwrap = pytest.mark.skipif(not bwrap_available(), reason="bubblewrap is not usable here")


def scores(result: session.Result) -> dict[str, float]:
    return {c.name: c.score for c in result.components}


def namespace_processes(zygote: Zygote) -> list[int]:
    """Processes in the fork server's pid namespace (the fork server itself included)."""
    assert zygote.proc is not None
    inner = [int(p) for p in os.listdir("/proc") if p.isdigit() and _ppid(int(p)) == zygote.proc.pid]
    assert inner, "the fork server runs inside bubblewrap's process"
    ns = os.readlink(f"/proc/{inner[0]}/ns/pid")
    out = []
    for p in os.listdir("/proc"):
        try:
            if p.isdigit() and os.readlink(f"/proc/{p}/ns/pid") == ns:
                out.append(int(p))
        except OSError:
            pass
    return out


def _ppid(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def reference_submission(tmp_path: Path) -> Path:
    from solutions import attention_scoring
    path = tmp_path / "reference.py"
    path.write_text(inspect.getsource(attention_scoring))
    return path


@needs_bwrap
def test_pid_one_and_the_fork_server_are_out_of_reach(zygote: Zygote, tmp_path: Path) -> None:
    result = session.grade_file(zygote, A, HOSTILE / "ptrace_init.py")
    assert scores(result) == FULL, results_json(result)["output"]  # every attempt failed
    assert "ATTACK SUCCEEDED" not in result.output
    server = zygote.proc.pid if zygote.proc else None
    assert scores(session.grade_file(zygote, A, reference_submission(tmp_path))) == FULL
    assert zygote.proc is not None and zygote.proc.pid == server, "the fork server was restarted"
    assert len(namespace_processes(zygote)) == 1, "a process of a job outlived it"


@needs_bwrap
def test_colluding_submissions_share_no_files(zygote: Zygote) -> None:
    planter = session.grade_file(zygote, A, HOSTILE / "plant_reference.py")
    assert planter.components[1].score < 4  # its masked_softmax is broken: the reference was handed in
    collector = session.grade_file(zygote, A, HOSTILE / "collect_planted.py")
    assert scores(collector) == dict.fromkeys(FULL, 0.0)
    for comp in collector.components:
        assert all("not implemented yet" in t.output for t in comp.tests if not t.passed), comp.name


@needs_bwrap
def test_no_memory_or_ipc_object_outlives_its_job(zygote: Zygote) -> None:
    hoarder = session.grade_file(zygote, A, HOSTILE / "ipc_hoard.py")
    assert scores(hoarder) == FULL, hoarder.output[-2000:]
    finder = session.grade_file(zygote, A, HOSTILE / "find_leftovers.py")
    assert scores(finder) == FULL, finder.output[-2000:]


@needs_bwrap
def test_a_reply_cannot_blow_up_the_grader(zygote: Zygote, tmp_path: Path) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB, a high-water mark
    result = session.grade_file(zygote, A, HOSTILE / "wire_bomb.py")
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mib < 512, f"the grading process grew by {grown_mib:.0f} MiB"
    got = scores(result)
    assert got["AdditiveAttention"] < 1  # every test that calls forward fails (a few check only the structure)
    failures = [t.output for t in result.components[2].tests if not t.passed]
    assert failures and all("reply" in text for text in failures), failures[:2]
    assert {k: v for k, v in got.items() if k != "AdditiveAttention"} == {
        k: v for k, v in FULL.items() if k != "AdditiveAttention"}
    assert scores(session.grade_file(zygote, A, reference_submission(tmp_path))) == FULL


def _reference_lines() -> set[str]:
    from solutions import attention_scoring
    source = inspect.getsource(attention_scoring.masked_softmax) + inspect.getsource(attention_scoring.sequence_mask)
    return {line.strip() for line in source.splitlines() if len(line.strip()) >= 25}


@needs_bwrap
def test_reference_code_never_reaches_feedback_before_the_due_date(zygote: Zygote) -> None:
    due = config_mod.default().assignment(A).due
    assert due is not None
    result = session.grade_file(zygote, A, HOSTILE / "leak_reference.py",
                                now=config_mod.default().deadlines.local(due - dt.timedelta(days=1)))
    visible = json.dumps(results_json(result))
    leaked = [line for line in _reference_lines() if line in visible]
    assert leaked == []
    for name in ("AdditiveAttention", "DotProductAttention"):
        comp = next(c for c in result.components if c.name == name)
        assert comp.withheld and "masked_softmax" in comp.withheld
        assert not any(u.student for u in comp.dependencies if u.name == "masked_softmax")
    # After the due date the same grading shows the details (and the score does not change).
    after = session.grade_file(zygote, A, HOSTILE / "leak_reference.py",
                               now=config_mod.default().deadlines.local(due + dt.timedelta(days=1)))
    assert scores(after) == scores(result)
    assert not any(c.withheld for c in after.components)


def test_process_mode_confines_the_child_to_its_own_files(tmp_path: Path) -> None:
    if os.getuid() != 0 and landlock.abi_version() < 1:
        pytest.skip("neither root (for a separate user) nor Landlock: process mode cannot isolate here")
    z = Zygote("process")
    try:
        z.start()
        assert z.isolation is not None and z.isolation.isolated, z.isolation
        result = session.grade_file(z, A, HOSTILE / "read_solutions.py")
    finally:
        z.stop()
    assert scores(result) == FULL, result.output[-2000:]
    assert "READ" not in result.output and "ATTACK SUCCEEDED" not in result.output


def test_a_message_whose_tensors_share_a_blob_is_refused() -> None:
    import torch
    header, blobs = wire.encode({"ok": [torch.zeros(4), torch.zeros(4)]})
    shared = header.replace(b'"__tensor__": 1', b'"__tensor__": 0')
    assert shared != header
    with pytest.raises(wire.WireError, match="same blob"):
        wire.decode(shared, blobs[:1] + [b""])
    with pytest.raises(wire.WireError, match="same blob"):
        wire.decode(shared, blobs)


#: The attackers of a mixed class, each followed by a correct submission on the same worker: the
#: isolation attacks above (bubblewrap only: their outcomes are bubblewrap's), and in process mode the
#: attacks on the fork server and the end of a job (test_a_job_cannot_change_or_outlive_its_fork_server
#: makes each of those on a fork server of each mode and checks the server from the host).
CLASS_ATTACKERS = {"bwrap": ("ptrace_init", "plant_reference", "collect_planted", "ipc_hoard", "find_leftovers",
                             "wire_bomb", "leak_reference"),
                   "process": ("limit_fork_server", "renice_fork_server", "setsid_survivor", "proc_write_fork_server")}


@pytest.mark.parametrize("mode", ["bwrap", "process"])
def test_a_class_with_attackers_grades_every_correct_submission_fully(mode: str, tmp_path: Path) -> None:
    """One worker (`course grade DIR --jobs 1`), so one fork server serves every submission in turn,
    each attacker followed by a correct submission."""
    if mode == "bwrap" and not bwrap_available():
        pytest.skip("bubblewrap is not usable here")
    if mode == "process" and os.getuid() != 0:
        pytest.skip("process mode gives jobs a uid of their own only as root")
    class_dir = tmp_path / "class"
    class_dir.mkdir()
    attackers = CLASS_ATTACKERS[mode]
    for i, name in enumerate(attackers):
        shutil.copy(HOSTILE / f"{name}.py", class_dir / f"{i:02d}_{name}.py")
        shutil.copy(reference_submission(tmp_path), class_dir / f"{i:02d}_{name}_zz_correct.py")
    rows = grade_directory(A, class_dir, tmp_path / "out", jobs=1, mode=mode, progress=False)
    by_name = {r["name"]: r for r in rows}
    assert len(rows) == 2 * len(attackers) and len(list((tmp_path / "out").glob("*.json"))) == 2 * len(attackers)
    for name, row in by_name.items():
        if name.endswith("_zz_correct"):
            assert row["score"] == 14, (name, row["output"][:500])
        assert "ATTACK SUCCEEDED" not in row["output"], (name, row["output"][:500])
    full = {"ptrace_init", "find_leftovers", *FORK_SERVER_ATTACKS}  # every attempt fails; their code is correct
    for i, name in enumerate(attackers):
        if name in full:
            assert by_name[f"{i:02d}_{name}"]["score"] == 14, (name, by_name[f"{i:02d}_{name}"]["output"][:500])
    if mode == "bwrap":
        assert by_name["02_collect_planted"]["score"] == 0


# ------------------------------------------------ jobs act on nothing but themselves, and end completely

#: Attacks on the fork server itself (its limits, its scheduling, its /proc files) and a process that
#: outlives its job.
FORK_SERVER_ATTACKS = ("limit_fork_server", "renice_fork_server", "setsid_survivor", "proc_write_fork_server")


def server_pid(zygote: Zygote) -> int:
    """The fork server's pid on the host: bubblewrap's child in bwrap mode, the process itself else."""
    assert zygote.proc is not None
    if zygote.mode != "bwrap":
        return zygote.proc.pid
    return next(int(p) for p in os.listdir("/proc") if p.isdigit() and _ppid(int(p)) == zygote.proc.pid)


def outside_view(pid: int) -> dict[str, object]:
    """What a job could change about the fork server, read from the host (not trusting the server)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    view: dict[str, object] = {"nice, rt priority, policy": (fields[16], fields[37], fields[38]),
                               "affinity": os.sched_getaffinity(pid)}
    for name in ("limits", "oom_score_adj", "autogroup"):
        try:
            view[name] = Path(f"/proc/{pid}/{name}").read_text()
        except OSError:
            view[name] = None
    return view


def job_processes(zygote: Zygote) -> list[int]:
    """Live processes of jobs: in bubblewrap the pid namespace's but the fork server; in process mode
    those of the jobs' uid (as root their own) or descending from the fork server."""
    from autograder.sandbox.runtime import reaper
    if zygote.mode == "bwrap":
        live = set(reaper.descendants(1)) | {1}
        return [p for p in namespace_processes(zygote) if p != server_pid(zygote) and p in live]
    assert zygote.proc is not None
    if os.getuid() == 0:
        return reaper.processes_of(int(zygote.child_uid or -1))
    return reaper.descendants(zygote.proc.pid)


@pytest.fixture(scope="module", params=["bwrap", "process"])
def own_server(request: pytest.FixtureRequest) -> Iterator[Zygote]:
    """A fork server of each mode for this module's attacks (process mode isolates only as root)."""
    if request.param == "bwrap" and not bwrap_available():
        pytest.skip("bubblewrap is not usable here")
    if request.param == "process" and os.getuid() != 0:
        pytest.skip("process mode gives jobs a uid of their own only as root")
    z = Zygote(request.param)
    z.start()
    yield z
    z.stop()


@pytest.mark.parametrize("attack", FORK_SERVER_ATTACKS)
def test_a_job_cannot_change_or_outlive_its_fork_server(own_server: Zygote, attack: str, tmp_path: Path) -> None:
    zygote = own_server
    if not zygote.alive:
        zygote.start()
    pid = server_pid(zygote)
    before = outside_view(pid)
    result = session.grade_file(zygote, A, HOSTILE / f"{attack}.py")
    assert "ATTACK SUCCEEDED" not in result.output, result.output[-2000:]
    assert scores(result) == FULL, result.output[-2000:]
    # Nothing of the job is left, the server is the same one and unchanged (seen from the host).
    assert poll(lambda: job_processes(zygote), lambda p: not p, time.monotonic() + 10) == []
    assert zygote.alive and server_pid(zygote) == pid, "the fork server was replaced: the attack changed it"
    assert outside_view(pid) == before
    assert zygote.check() == []
    assert scores(session.grade_file(zygote, A, reference_submission(tmp_path))) == FULL


def test_the_fork_server_catches_no_signal(own_server: Zygote) -> None:
    """A pid namespace's init gets from inside only the signals it catches: it must catch none."""
    if not own_server.alive:
        own_server.start()
    status = Path(f"/proc/{server_pid(own_server)}/status").read_text()
    caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
    glibc_internal = {32, 33}  # below SIGRTMIN: the C library's own (thread cancellation, setxid), own-process only
    assert [sig for sig in range(1, 65) if caught >> (sig - 1) & 1 and sig not in glibc_internal] == []


def _renice(pid: int) -> None:
    os.setpriority(os.PRIO_PROCESS, pid, os.getpriority(os.PRIO_PROCESS, pid) + 1)


def test_a_fork_server_changed_during_a_job_is_replaced_before_the_next(own_server: Zygote) -> None:
    """What the filter does not block (here: the test renices the server from outside while a job
    runs) the server finds in its own settings after the job: it says so, and is replaced."""
    zygote = own_server
    if not zygote.alive:
        zygote.start()
    first = server_pid(zygote)
    job = {"cells": [["job.py", "def f():\n    return 2\n"]], "modules": {}, "prelude": [], "inject": [],
           "deps_module": "", "seed": 0}
    limits = config_mod.default().limits
    child = zygote.spawn(job, limits)
    child.wait_ready(30)
    _renice(first)
    child.close()
    assert child.exit_report is not None and child.exit_report.get("dirty"), child.exit_report
    assert any("threads" in line for line in child.exit_report.get("changed", []))
    child = zygote.spawn(job, limits)  # a fresh fork server
    child.wait_ready(30)
    child.close()
    assert server_pid(zygote) != first and not (child.exit_report or {}).get("dirty")
    # Between jobs (a Dask worker's warm server between runs): check() finds it and stops the server.
    second = server_pid(zygote)
    Path(f"/proc/{second}/oom_score_adj").write_text("500")
    changed = zygote.check()
    assert any("oom_score_adj" in line for line in changed) and not zygote.alive


#: Where a job tries to write: the fork server's /proc files and its own, a host-wide sysctl (each the
#: value it holds, so that a write that goes through changes nothing), and a new file in the usual
#: top-level folders. Before Landlock in bubblewrap, as root, the /proc ones all took the write.
WRITE_PROBE = '''
def probe():
    import os
    def attempt(path, value=None, create=False):
        try:
            if value is None:  # the value it holds (coredump_filter reads as hex): a write changes nothing
                with open(path, "r") as f:
                    value = ("0x" if path.endswith("coredump_filter") else "") + f.read().split()[0]
            with open(path, "x" if create else "w") as f:
                f.write(value)
            return "written"
        except OSError as exc:
            return type(exc).__name__
    out = {}
    for pid in sorted({1, os.getppid()}):
        out[f"/proc/{pid}/oom_score_adj"] = attempt(f"/proc/{pid}/oom_score_adj")
        out[f"/proc/{pid}/coredump_filter"] = attempt(f"/proc/{pid}/coredump_filter")
        out[f"/proc/{pid}/sched"] = attempt(f"/proc/{pid}/sched", "0")
    out["/proc/self/oom_score_adj"] = attempt("/proc/self/oom_score_adj")
    out["/proc/sys/kernel/pid_max"] = attempt("/proc/sys/kernel/pid_max")  # host-wide, not namespaced
    for top in ("", "etc", "usr", "var", "home", "root", "opt", "srv", "run", "sandbox", "work", "tmp"):
        if os.path.isdir("/" + top) and not os.path.islink("/" + top):
            out["/" + top + "/new"] = attempt("/" + top + "/probe-new-file", "x", create=True)
    out["/dev/shm/new"] = attempt("/dev/shm/probe-new-file", "x", create=True)
    out["/dev/null"] = attempt("/dev/null", "x")
    out["own folder"] = attempt(os.path.join(os.getcwd(), "probe-new-file"), "x", create=True)
    return out
'''


def run_probe(zygote: Zygote, source: str) -> object:
    """Run `source`'s probe() in a fresh job of `zygote` and return its answer."""
    from autograder.grading.remote import Connection, RemoteNamespace
    job = {"cells": [["job.py", source]], "modules": {}, "prelude": [], "inject": [], "deps_module": "", "seed": 0}
    child = zygote.spawn(job, config_mod.default().limits)
    try:
        ready = child.wait_ready(30)["ready"]
        deadline = time.monotonic() + 30
        return RemoteNamespace(Connection(child, lambda: deadline), [], frozenset(ready["defined"])).probe()
    finally:
        child.close()


def test_a_job_writes_only_its_scratch_space(own_server: Zygote) -> None:
    """Landlock in both modes: the fork server's /proc files (writable by the job's uid in bubblewrap
    as root), the job's own and every folder but the scratch space refuse a write."""
    zygote = own_server
    if not zygote.alive:
        zygote.start()
    if landlock.abi_version() < 1:
        pytest.skip("the kernel has no Landlock")
    pid = server_pid(zygote)
    before = outside_view(pid)
    answers = run_probe(zygote, WRITE_PROBE)
    assert isinstance(answers, dict)
    scratch = {"/tmp/new", "/dev/shm/new", "/dev/null", "own folder"} if zygote.mode == "bwrap" else {
        "/dev/null", "own folder"}
    assert {path for path, answer in answers.items() if answer == "written"} == scratch, answers
    assert any(path.startswith("/proc/1/") for path in answers) and "/usr/new" in answers
    assert outside_view(pid) == before and zygote.check() == []


_SENDER = '''

def masked_softmax(X, valid_lens):  # wrong on purpose: the attention classes get the course's version
    return X


_sent = []


class AdditiveAttention(AdditiveAttention):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not _sent:  # the child holds the course's masked_softmax: encode {bits} in the pid counter
            _sent.append(1)
            for _ in range({bits}):
                pid = os.fork()
                if pid == 0:
                    os._exit(0)
                os.waitpid(pid, 0)
'''

_RECEIVER = '''

def sequence_mask(X, valid_len, value=0):
    raise RuntimeError(f"PID={os.getpid()}")
'''


@needs_bwrap
def test_a_job_that_held_the_course_code_leaves_no_state_for_the_next(zygote: Zygote, tmp_path: Path) -> None:
    """Before the due date, a child handed the course's masked_softmax could encode it in state the
    fork server keeps for later jobs (here: how far its pid namespace's counter moved), for a later
    submission to read. Such a job's fork server serves no further job: the receiver's pid is the
    same whatever the sender did. After the due date nothing is withheld and the server is kept."""
    due = config_mod.default().assignment(A).due
    assert due is not None
    before = config_mod.default().deadlines.local(due - dt.timedelta(days=1))
    reference = "import os\n" + reference_submission(tmp_path).read_text()
    receiver = tmp_path / "receiver.py"
    receiver.write_text(reference + _RECEIVER)
    seen = []
    for bits in (0, 40):
        sender = tmp_path / f"sender{bits}.py"
        sender.write_text(reference + _SENDER.format(bits=bits))
        sent = session.grade_file(zygote, A, sender, now=before)
        assert any(c.withheld for c in sent.components)
        got = json.dumps(results_json(session.grade_file(zygote, A, receiver, now=before)))
        seen.append(got.split("PID=")[1].split('"')[0].split("\\")[0])
    assert seen[0] == seen[1], seen
    after = config_mod.default().deadlines.local(due + dt.timedelta(days=1))
    session.grade_file(zygote, A, tmp_path / "sender40.py", now=after)
    server = zygote.proc.pid if zygote.proc else None
    session.grade_file(zygote, A, receiver, now=after)
    assert zygote.proc is not None and zygote.proc.pid == server  # nothing withheld: no server replaced


def test_the_child_s_world_is_the_same_in_both_modes(own_server: Zygote) -> None:
    """What the student's code reads of its process (environment, command line) is the kit's, whatever
    isolates it (child.uniform_process): code that looks for a mode's traces finds none in either."""
    zygote = own_server
    if not zygote.alive:
        zygote.start()
    result = session.grade_file(zygote, A, HOSTILE / "tell_modes_apart.py")
    seen = [json.loads(line.split("WORLD: ", 1)[1]) for line in result.output.splitlines() if "WORLD: " in line]
    assert seen and all(w == {"environ": ENVIRONMENT, "argv": ["__submission__"]} for w in seen), seen[:1]
    assert scores(result) == FULL, result.output[-2000:]
