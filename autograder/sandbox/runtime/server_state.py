"""What another process could change about the fork server from outside, as the fork server reads it.

A job cannot run code in the fork server (it is not dumpable, ptrace is denied), but the kernel lets
a process change some settings of another one of its uid: resource limits, scheduling policy and
priority, nice value, I/O priority, CPU affinity, and through /proc its OOM score, autogroup nice
and core-dump filter. The seccomp filter refuses the system calls; this is the second line, and
covers what nobody listed: the fork server takes a `snapshot()` at start and compares after every
job, and when anything differs it reports itself dirty and the grader replaces it.
"""
from __future__ import annotations

import ctypes
import os
import resource
from typing import Any

#: Files of /proc/self that hold settings another process may write.
PROC_SETTINGS = ("oom_score_adj", "autogroup", "coredump_filter", "timerslack_ns", "cgroup", "loginuid")
_IOPRIO_WHO_PROCESS = 1


def _ioprio_get() -> Any:
    """ioprio_get(IOPRIO_WHO_PROCESS, tid) through libseccomp's syscall table; None without it."""
    try:
        import pyseccomp
        number = int(pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, "ioprio_get"))
    except (ImportError, OSError, ValueError, RuntimeError, TypeError):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    return lambda tid: int(libc.syscall(number, _IOPRIO_WHO_PROCESS, tid))


def _thread(tid: int, ioprio: Any) -> tuple[Any, ...]:
    """Scheduling settings of one thread: nice, real-time priority, policy, CPU affinity, I/O priority."""
    with open(f"/proc/self/task/{tid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    nice, rt_priority, policy = fields[16], fields[37], fields[38]  # stat fields 19, 40 and 41
    affinity = tuple(sorted(os.sched_getaffinity(tid)))
    return nice, rt_priority, policy, affinity, ioprio(tid) if ioprio else None


def snapshot() -> dict[str, Any]:
    """Everything above, one entry per setting (threads as the set of their distinct settings: a
    thread started later inherits them)."""
    state: dict[str, Any] = {}
    for name in sorted(n for n in dir(resource) if n.startswith("RLIMIT_")):
        state[name] = resource.getrlimit(getattr(resource, name))
    ioprio = _ioprio_get()
    threads = set()
    for tid in os.listdir("/proc/self/task"):
        try:
            threads.add(_thread(int(tid), ioprio))
        except OSError:
            pass  # a thread that just ended
    state["threads (nice, rt priority, policy, affinity, ioprio)"] = sorted(threads, key=repr)
    for name in PROC_SETTINGS:
        try:
            with open(f"/proc/self/{name}") as f:
                state[name] = f.read().strip()
        except OSError:
            state[name] = None
    with open("/proc/self/status") as f:
        state["signals caught"] = next((line.split()[1] for line in f if line.startswith("SigCgt:")), None)
    return state


def differences(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What changed between two snapshots, one line per setting."""
    return [f"{key}: {before.get(key)!r} -> {after.get(key)!r}" for key in sorted(set(before) | set(after))
            if before.get(key) != after.get(key)]
