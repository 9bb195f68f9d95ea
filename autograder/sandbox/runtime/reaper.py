"""Ending a job completely in process mode (no pid namespace): every process it started, however it
left its process group or session.

As root, each fork server gives its jobs a uid of their own (`fresh_uid`: random, from a range no
account uses, unused when chosen), so "the job" is "every process of that uid": a helper that takes
the uid sends kill(-1, SIGKILL), which reaches every process of the uid at once (a process cannot
fork past it: the kernel serialises the two) and nothing else; setsid(), double forks and
re-parenting change nothing. Without root, the job is what descends from the fork server (a child
subreaper: orphans of a job are re-parented to it), killed until none is left. Standard library
only: the grader imports it too, and runs it as a script to end a fork server's jobs after the
server itself is gone.
"""
from __future__ import annotations

import os
import secrets
import signal
import sys
import time
from collections.abc import Callable

#: Job uids come from here: above every range systemd gives out (accounts, DynamicUser, containers),
#: below the "foreign" range at 0x7FFE0000 and the values that read as negative.
JOB_UIDS = range(0x70000000, 0x7FFE0000)
#: Rounds of killing and reaping before a job counts as not ended (its server is then replaced).
ROUNDS = 400


def _status(pid: str) -> tuple[int, str, int]:
    """(real uid, state letter, parent pid) of a process, from /proc; (-1, "", -1) when gone."""
    uid, state, ppid = -1, "", -1
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Uid:"):
                    uid = int(line.split()[1])
                elif line.startswith("State:"):
                    state = line.split()[1]
                elif line.startswith("PPid:"):
                    ppid = int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return -1, "", -1
    return uid, state, ppid


def _live() -> list[tuple[int, int, int]]:
    """(pid, real uid, parent pid) of every process that is not a zombie."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            uid, state, ppid = _status(entry)
            if state and state != "Z":
                out.append((int(entry), uid, ppid))
    return out


def processes_of(uid: int) -> list[int]:
    """Live (not zombie) processes whose real uid is `uid`."""
    return [pid for pid, owner, _ in _live() if owner == uid]


def descendants(root: int) -> list[int]:
    """Live processes descending from `root` (not root itself)."""
    children: dict[int, list[int]] = {}
    for pid, _, ppid in _live():
        children.setdefault(ppid, []).append(pid)
    out, stack = [], list(children.get(root, []))
    while stack:
        pid = stack.pop()
        out.append(pid)
        stack.extend(children.get(pid, []))
    return out


def fresh_uid() -> int:
    """A uid from JOB_UIDS that no process has."""
    in_use = {owner for _, owner, _ in _live()}
    while True:
        uid = JOB_UIDS.start + secrets.randbelow(len(JOB_UIDS))
        if uid not in in_use:
            return uid


def kill_as(uid: int) -> None:
    """SIGKILL every process of `uid` at once, from a helper that becomes that uid (we must be root)."""
    helper = os.fork()
    if helper == 0:
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            os.kill(-1, signal.SIGKILL)  # every process we may signal, i.e. of this uid, but not us
        except BaseException:
            pass
        os._exit(0)
    os.waitpid(helper, 0)


def end_user(uid: int, reap: Callable[[], None]) -> bool:
    """Kill every process of `uid` until none is alive; `reap` collects those that were ours. False
    if some are still alive after ROUNDS rounds."""
    for round_ in range(ROUNDS):
        if not processes_of(uid):
            return True
        kill_as(uid)
        reap()
        time.sleep(0.001 * min(round_, 20))
    return not processes_of(uid)


def end_descendants(root: int, reap: Callable[[], None]) -> bool:
    """Kill every descendant of `root` until none is alive (`root` must be a child subreaper, so that
    orphans stay its descendants). False if some are still alive after ROUNDS rounds."""
    for round_ in range(ROUNDS):
        pids = descendants(root)
        if not pids:
            return True
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        reap()
        time.sleep(0.001 * min(round_, 20))
    return not descendants(root)


if __name__ == "__main__":  # python reaper.py UID: end every process of UID (run as root by the grader)
    sys.exit(0 if end_user(int(sys.argv[1]), lambda: None) else 1)
