"""The fork server: a warm interpreter (torch imported) that forks one fresh child per job.

Started by the grader inside the sandbox with a control socket on the fd given as argv[1]. One
job at a time: receive the job's limits and two file descriptors (the RPC socket and the output
pipe), fork, report the child's pid, then report how it ended. "kill" ends the job's whole process
tree and removes the files it wrote.

The job itself (the submission, the helper modules) goes from the grader straight to the child over
the RPC socket, never through the zygote: whatever the zygote's memory once held is inherited by
every later child, so it must never hold a submission.
"""
from __future__ import annotations

import math
import os
import re
import resource
import selectors
import signal
import socket
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch

import child
import landlock
import reaper
import server_state
import syscalls
import warm
import wire

MiB = 1024 * 1024
#: What a job may write in bubblewrap (Landlock): the sandbox's own tmpfs, wiped after every job, and
#: the null device. Nothing else, whatever its mode says to the job's uid (root outside, as root).
SANDBOX_SCRATCH = ["/tmp", "/dev/shm", "/dev/null"]


def vm_size() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def apply_limits(limits: dict) -> None:
    """Per-child resource limits; the CPU limit kills (SIGKILL at the hard limit) whatever handlers do.
    The kernel counts CPU time in whole seconds: a limit is rounded up, never cut (0.5 s was 0: the
    child was killed at once; 3.7 s was 3)."""
    cpu = max(1, math.ceil(float(limits["cpu_seconds"])))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (vm_size() + int(limits["memory_mb"]) * MiB,) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(limits["file_size_mb"]) * MiB,) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (int(limits["processes"]),) * 2)
    except (ValueError, OSError):
        pass
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # over-size writes fail with EFBIG instead


def drop_privileges(workdir: str, uid: int | None) -> None:
    """As root (the process-isolation fallback), become the jobs' own uid with no groups."""
    if uid is None:
        return
    os.chown(workdir, uid, uid)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


class Confinement:
    """What every child does to itself after fork, before it reads any job: limits, an unprivileged
    user (when we are root), Landlock and the seccomp filter. Each step that fails raises: a child
    that cannot be confined runs nothing.

    Landlock, in both modes: a job writes only its scratch space (process mode: its working folder;
    bubblewrap: SANDBOX_SCRATCH), and in process mode reads only `readable` (bubblewrap's mounts
    already hide the host's files). A write the kernel would allow the job's uid (/proc/1/* as root in
    bubblewrap, a world-writable file) is refused all the same.

    As root, the jobs of this fork server run as a uid of their own, which no other process has
    (`reaper.fresh_uid`): they can signal or limit nothing else, and ending a job is ending that uid."""

    def __init__(self, pid_namespace: bool, readable: list[str]) -> None:
        self.pid_namespace, self.readable = pid_namespace, readable
        self.job_uid = reaper.fresh_uid() if os.getuid() == 0 else None
        self.syscall_filter = syscalls.build_filter()  # built once, loaded by every child
        self.landlock = landlock.abi_version() > 0

    def apply(self, limits: dict, workdir: str) -> None:
        apply_limits(limits)
        drop_privileges(workdir, self.job_uid)
        if self.landlock and self.pid_namespace:
            landlock.restrict(None, SANDBOX_SCRATCH)
        elif self.landlock:
            landlock.restrict(self.readable, [workdir, "/dev/null"])
        if self.syscall_filter is not None:
            self.syscall_filter.load()

    def probe(self, protected: list[str]) -> list[str]:
        """The protected paths a confined child can still read (should be none), found by a child."""
        read_end, write_end = os.pipe()
        workdir = tempfile.mkdtemp(prefix="probe-")
        pid = os.fork()
        if pid == 0:
            exposed = []
            try:
                os.close(read_end)
                self.apply({"cpu_seconds": 10, "memory_mb": 1024, "processes": 64, "file_size_mb": 1}, workdir)
                for path in protected:
                    try:
                        os.listdir(path) if os.path.isdir(path) else open(path, "rb").close()
                        exposed.append(path)
                    except OSError:
                        pass
                os.write(write_end, "\n".join(exposed).encode())
            finally:
                os._exit(0)
        os.close(write_end)
        data = b""
        while chunk := os.read(read_end, 65536):
            data += chunk
        os.close(read_end)
        os.waitpid(pid, 0)
        wipe(workdir, False)
        return [line for line in data.decode().splitlines() if line]


def run_child(limits: dict, rpc_fd: int, out_fd: int, control: socket.socket, workdir: str,
              confinement: Confinement, cpus: Any = None) -> None:
    """In the forked child: move to its grader's CPUs (`cpus`, if given), isolate, limit, redirect
    output, receive the job, then serve it."""
    try:
        control.close()
        run_on(cpus)
        os.setsid()
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        os.close(out_fd)
        os.chdir(workdir)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        confinement.apply(limits, workdir)
        sock = socket.socket(fileno=rpc_fd)
        job = wire.recv(sock)
        child.serve(job, sock)
    except BaseException:
        pass
    finally:
        os._exit(0)


def run_on(cpus: Any) -> None:
    """Keep this process on `cpus` (a list of CPU numbers from the grader's spawn request); anything
    else, or CPUs this process may not use, leaves it where it is."""
    if not isinstance(cpus, list) or not cpus or not all(type(c) is int and 0 <= c < 4096 for c in cpus):
        return
    try:
        os.sched_setaffinity(0, cpus)
    except (OSError, ValueError):
        pass


def kill_tree(pid: int, confinement: Confinement) -> bool:
    """Kill the job's processes: everything but us in our own pid namespace; in process mode every
    process of the jobs' uid (as root), else every descendant of ours (we are their subreaper).

    In the pid namespace, kill(-1) reaches every process but init and us at once, and a fork cannot
    race it (a snapshot of pids can: a process that forks a successor and exits, again and again,
    always has a newest member missing from the snapshot); so does kill(-1) from the jobs' uid.
    Returns False if some survived.
    """
    if confinement.pid_namespace:
        me = os.getpid()
        for _ in range(200):
            try:
                os.kill(-1, signal.SIGKILL)
            except OSError:
                pass
            reap_all()
            if not [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, me)]:
                return True
            time.sleep(0.005)
        return False
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    if confinement.job_uid is not None:
        return reaper.end_user(confinement.job_uid, reap_all)
    return reaper.end_descendants(os.getpid(), reap_all)


def mount_points_under(root: str) -> set[str]:
    """The mount points below `root`: bubblewrap's read-only binds of a kit or an interpreter that lives
    under /tmp (a virtual environment made there), whose directories it made in the sandbox's own /tmp
    before any job ran. They are not a job's, and cannot be removed."""
    prefix, found = root.rstrip("/") + "/", set()
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                fields = line.split()
                point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4]) if len(fields) > 4 else ""
                if point.startswith(prefix):
                    found.add(point.rstrip("/"))
    except OSError:
        pass
    return found


def wipe(root: str, keep_root: bool) -> bool:
    """Remove everything under `root` (and root itself unless keep_root), whatever modes the job set,
    but the mount points below it and the directories that lead to them (`mount_points_under`).

    Iterative (a job may nest directories deeply); True when nothing else is left.
    """
    mounts, prefix = mount_points_under(root), root.rstrip("/") + "/"
    kept = set(mounts)
    for mount in mounts:
        d = os.path.dirname(mount)
        while d.startswith(prefix):
            kept.add(d)
            d = os.path.dirname(d)
    dirs, stack = [], [root]
    while stack:
        d = stack.pop()
        if d in mounts:
            continue
        try:
            os.chmod(d, 0o1777 if (d == root and keep_root) else 0o700)
            with os.scandir(d) as it:
                entries = list(it)
        except OSError:
            continue
        dirs.append(d)
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    os.unlink(entry.path)
            except OSError:
                pass
    for d in reversed(dirs):
        if (d != root or not keep_root) and d not in kept:
            try:
                os.rmdir(d)
            except OSError:
                pass
    try:
        if not keep_root:
            return not os.path.lexists(root)
        left = [root]
        for d in left:  # what is left must be the way to the mount points, nothing else
            for name in os.listdir(d):
                path = os.path.join(d, name)
                if path not in kept or not os.path.isdir(path) or os.path.islink(path):
                    return False
                if path not in mounts:
                    left.append(path)
        return True
    except OSError:
        return not keep_root


def clean_up(workdir: str, pid_namespace: bool) -> bool:
    """Remove what the job wrote: in the sandbox all of /tmp and /dev/shm, which only jobs use (the
    next job must not find files of this one), and any System V IPC object of the sandbox's own IPC
    namespace (the seccomp filter denies creating them; this is the second line); in process mode
    only its working directory."""
    if pid_namespace:
        return all([wipe("/tmp", True), wipe("/dev/shm", True) if os.path.isdir("/dev/shm") else True,
                    remove_ipc_objects()])
    return wipe(workdir, False)


def remove_ipc_objects() -> bool:
    """Remove every System V shared memory segment, message queue and semaphore set we can see."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    ipc_rmid = 0
    removers = {"shm": lambda i: libc.shmctl(i, ipc_rmid, None), "msg": lambda i: libc.msgctl(i, ipc_rmid, None),
                "sem": lambda i: libc.semctl(i, 0, ipc_rmid)}
    clean = True
    for kind, remove in removers.items():
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                ids = [int(line.split()[1]) for line in f.readlines()[1:] if line.strip()]
        except (OSError, ValueError, IndexError):
            continue
        for ipc_id in ids:
            if remove(ipc_id) != 0:
                clean = False
    return clean


def reap_all() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def exit_report(status: int, rusage: resource.struct_rusage) -> dict:
    report = {"cpu": rusage.ru_utime + rusage.ru_stime, "maxrss_kb": rusage.ru_maxrss}
    if os.WIFSIGNALED(status):
        report["signal"] = os.WTERMSIG(status)
    else:
        report["code"] = os.WEXITSTATUS(status)
    return report


def _values(flag: str) -> list[str]:
    """Every value given after `flag` on the command line (--readable P --readable Q ...)."""
    return [sys.argv[i + 1] for i, arg in enumerate(sys.argv[:-1]) if arg == flag]


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    pid_namespace = "--pidns" in sys.argv
    # We catch no signal: as a pid namespace's init, then, no signal from a job reaches us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:  # orphans of a job are re-parented to us, so we can reap them (and find them in process mode)
        import ctypes
        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except OSError:
        pass
    try:  # our /proc entries (and so our control socket) are closed to the jobs
        import ctypes
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0
    except OSError:
        pass
    confinement = Confinement(pid_namespace, _values("--readable"))
    exposed = confinement.probe(_values("--protect"))
    try:
        # Forked children inherit torch's lazily imported machinery; a one-off grading skips the
        # optimizers' (a training test then pays it in its own child).
        warm.warm_up(optimizers="--no-optimizers" not in sys.argv)
        warm.preload()  # and the notebooks' other imports
    except Exception:
        pass
    wire.send(control, {"zygote": os.getpid(), "torch": torch.__version__,
                        "seccomp": confinement.syscall_filter is not None, "landlock": confinement.landlock,
                        "child_uid": confinement.job_uid if confinement.job_uid is not None else os.getuid(),
                        "exposed": exposed})
    baseline = server_state.snapshot()  # what a job could change about us from outside, checked after each
    while True:
        try:
            _, fds, _, _ = socket.recv_fds(control, 1, 2)
            spec = wire.recv(control)  # {"limits": ...} only: the job itself never passes through here
        except (EOFError, OSError, wire.WireError):
            return
        if spec.get("op") == "quit":
            return
        if spec.get("op") == "check":
            wire.send(control, {"changed": server_state.differences(baseline, server_state.snapshot())})
            continue
        if len(fds) != 2:
            return
        rpc_fd, out_fd = fds
        workdir = tempfile.mkdtemp(prefix="job-")
        pid = os.fork()
        if pid == 0:
            run_child(spec["limits"], rpc_fd, out_fd, control, workdir, confinement, spec.get("cpus"))
        os.close(rpc_fd)
        os.close(out_fd)
        wire.send(control, {"pid": pid})
        watch(control, pid, confinement, workdir, baseline)


def watch(control: socket.socket, pid: int, confinement: Confinement, workdir: str, baseline: dict) -> None:
    """Follow one job: report {"died"} if the child ends on its own; on "kill" end it, reply {"exit"}.

    The exit report says "dirty" when a process or a file of the job survived, or when the job
    changed something about us (`server_state`): the grader then replaces us before the next job."""
    sel = selectors.DefaultSelector()
    sel.register(control, selectors.EVENT_READ)
    status, rusage, killed = None, None, False
    while True:
        if status is None:
            done, st, ru = os.wait4(pid, os.WNOHANG)
            if done:
                status, rusage = st, ru
                kill_tree(pid, confinement)  # grandchildren left behind by the job
                reap_all()
                wire.send(control, {"died": exit_report(status, rusage)})
        if not sel.select(timeout=0.02 if status is None else None):
            continue
        try:
            msg = wire.recv(control)
        except (EOFError, OSError, wire.WireError):
            kill_tree(pid, confinement)
            os._exit(0)
        if msg.get("op") != "kill":
            continue
        if status is None:
            killed = True
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            _, status, rusage = os.wait4(pid, 0)  # before kill_tree, which reaps whatever it kills
        gone = kill_tree(pid, confinement)
        reap_all()
        gone = clean_up(workdir, confinement.pid_namespace) and gone
        sel.close()
        report = exit_report(status, rusage)  # type: ignore[arg-type]  # set by wait4 above
        report["killed"] = killed
        changed = server_state.differences(baseline, server_state.snapshot())
        if changed:
            report["changed"] = changed[:20]
        if not gone or changed:
            report["dirty"] = True  # the job survived or changed us: the grader starts afresh
        wire.send(control, {"exit": report})
        return


if __name__ == "__main__":
    main()
