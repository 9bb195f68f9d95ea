"""Where a grader and its sandboxed children run: one grading, one CPU.

Every call into a child is a round trip between two processes that never compute at the same time:
the grader waits for the reply, the child for the next call. On two CPUs each hand-over wakes a
process on the other CPU, with a cold cache (a ping-pong between two processes on this 2-core virtual
machine: 65-108 us across CPUs, 16-22 us on one); a grading makes about a thousand such calls. So a
grader that has a CPU to itself keeps its children on it: a child is forked onto the CPUs its grader
may use at that moment (`for_child`, sent with each job's limits; the fork server's own work, between
jobs, stays free).

Who pins the grader: with as many local pool workers as CPUs, each takes one CPU of its own for its
life (`pin_worker`); with fewer, and in a command that grades one submission, each grading stays on
the CPU it starts on and the grader gets its CPUs back after it (`on_one_cpu`). A Dask worker is left
alone: graders that share a machine unaware of each other could all pick one CPU. Where affinity
cannot be set, nothing changes.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Optional


def allowed() -> set[int]:
    """The CPUs this thread may run on (a cgroup's cpuset and `taskset` included)."""
    try:
        return set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return set()


def this_cpu() -> Optional[int]:
    """The CPU this process ran on last (field 39 of /proc/self/stat), None if unknown."""
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        return int(stat[stat.rindex(b")") + 2:].split()[36])
    except (OSError, ValueError, IndexError):
        return None


def pin(cpus: set[int]) -> bool:
    """Keep this thread on `cpus`; False where that cannot be done (nothing changed)."""
    try:
        os.sched_setaffinity(0, cpus)
        return True
    except (AttributeError, OSError, ValueError, TypeError):
        return False


def for_child() -> Optional[list[int]]:
    """The CPUs a child forked now should run on: its grader's, when the grader is kept to fewer CPUs
    than the machine has (None: wherever the system puts it)."""
    cpus = allowed()
    return sorted(cpus) if cpus and len(cpus) < (os.cpu_count() or 0) else None


def pin_worker(index: int, workers: int) -> Optional[int]:
    """Pin the `index`-th of `workers` grading workers on this machine to a CPU of its own when there are
    as many workers as CPUs (`course grade`'s default); the CPU, or None: with fewer workers each grading
    stays on the CPU it starts on instead (`on_one_cpu`: where the system finds room at that moment, so
    that two classes graded side by side with one worker each do not share one CPU), with more the
    system balances them."""
    cpus = sorted(allowed())
    if not cpus or workers != len(cpus):
        return None
    cpu = cpus[index % len(cpus)]
    return cpu if pin({cpu}) else None


@contextmanager
def on_one_cpu() -> Iterator[Optional[int]]:
    """Within the block, this thread stays on the CPU it runs on (its children with it); after it, its
    earlier CPUs are restored. Yields that CPU (None if nothing was pinned)."""
    before = allowed()
    cpu = this_cpu()
    pinned = cpu is not None and cpu in before and len(before) > 1 and pin({cpu})
    try:
        yield cpu if pinned else None
    finally:
        if pinned:
            pin(before)
