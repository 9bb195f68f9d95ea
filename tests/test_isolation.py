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
from pathlib import Path

import pytest

from autograder import config as config_mod
from autograder.grading import session
from autograder.grading.pool import grade_directory
from autograder.grading.results import results_json
from autograder.sandbox.bwrap import bwrap_available
from autograder.sandbox.forkserver import Zygote
from autograder.sandbox.runtime import landlock, wire

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
    result = session.grade_file(zygote, A, HOSTILE / "leak_reference.py", today=due - dt.timedelta(days=1))
    visible = json.dumps(results_json(result))
    leaked = [line for line in _reference_lines() if line in visible]
    assert leaked == []
    for name in ("AdditiveAttention", "DotProductAttention"):
        comp = next(c for c in result.components if c.name == name)
        assert comp.withheld and "masked_softmax" in comp.withheld
        assert not any(u.student for u in comp.dependencies if u.name == "masked_softmax")
    # After the due date the same grading shows the details (and the score does not change).
    after = session.grade_file(zygote, A, HOSTILE / "leak_reference.py", today=due + dt.timedelta(days=1))
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


@needs_bwrap
def test_a_class_with_attackers_grades_every_correct_submission_fully(tmp_path: Path) -> None:
    """One worker, so one fork server serves every submission in turn, attackers first."""
    class_dir = tmp_path / "class"
    class_dir.mkdir()
    for i, name in enumerate(["ptrace_init", "plant_reference", "collect_planted", "ipc_hoard",
                              "find_leftovers", "wire_bomb", "leak_reference"]):
        shutil.copy(HOSTILE / f"{name}.py", class_dir / f"{i:02d}_{name}.py")
        shutil.copy(reference_submission(tmp_path), class_dir / f"{i:02d}_{name}_zz_correct.py")
    rows = grade_directory(A, class_dir, tmp_path / "out", jobs=1, progress=False)
    by_name = {r["name"]: r for r in rows}
    assert len(rows) == 14 and len(list((tmp_path / "out").glob("*.json"))) == 14
    for name, row in by_name.items():
        if name.endswith("_zz_correct"):
            assert row["score"] == 14, (name, row["output"][:500])
    assert by_name["00_ptrace_init"]["score"] == 14
    assert by_name["02_collect_planted"]["score"] == 0
    assert by_name["04_find_leftovers"]["score"] == 14
