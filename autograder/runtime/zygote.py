"""The fork server: a warm interpreter (torch imported) that forks one fresh child per job.

Started by the grader inside the sandbox with a control socket on the fd given as argv[1]. One
job at a time: receive a job and two file descriptors (the RPC socket and the output pipe), fork,
report the child's pid, then report how it ended. "kill" ends the job's whole process tree.
"""
from __future__ import annotations

import os
import resource
import selectors
import signal
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402,F401 - imported once here so every forked child starts warm

import child  # noqa: E402
import loader  # noqa: E402,F401
import wire  # noqa: E402

MiB = 1024 * 1024


def vm_size() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def apply_limits(limits: dict) -> None:
    """Per-child resource limits; the CPU limit kills (SIGKILL at the hard limit) whatever handlers do."""
    cpu = int(limits["cpu_seconds"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (vm_size() + int(limits["memory_mb"]) * MiB,) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(limits["file_size_mb"]) * MiB,) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (int(limits["processes"]),) * 2)
    except (ValueError, OSError):
        pass
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # over-size writes fail with EFBIG instead


def run_child(job: dict, rpc_fd: int, out_fd: int, control: socket.socket) -> None:
    """In the forked child: isolate, limit, redirect output, then serve the job."""
    try:
        control.close()
        os.setsid()
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        os.close(out_fd)
        os.chdir(tempfile.mkdtemp(prefix="job-"))
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        apply_limits(job["limits"])
        sock = socket.socket(fileno=rpc_fd)
        child.serve(job, sock)
    except BaseException:  # noqa: BLE001 - nothing may escape into the zygote's loop
        pass
    finally:
        os._exit(0)


def kill_tree(pid: int, pid_namespace: bool) -> None:
    """Kill the job's processes: everything but us in our own pid namespace, else its process group."""
    if pid_namespace:
        me = os.getpid()
        for _ in range(3):
            others = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, me)]
            for p in others:
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
            if not others:
                break
            time.sleep(0.01)
    else:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


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


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    pid_namespace = "--pidns" in sys.argv
    if pid_namespace:
        try:  # orphans of a job are re-parented to us, so we can reap them
            import ctypes
            ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
        except OSError:
            pass
    try:  # our /proc entries (and so our control socket) are closed to the jobs
        import ctypes
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0
    except OSError:
        pass
    wire.send(control, {"zygote": os.getpid(), "torch": torch.__version__})
    while True:
        try:
            _, fds, _, _ = socket.recv_fds(control, 1, 2)
            job = wire.recv(control)
        except (EOFError, OSError, wire.WireError):
            return
        if job.get("op") == "quit":
            return
        rpc_fd, out_fd = fds
        pid = os.fork()
        if pid == 0:
            run_child(job, rpc_fd, out_fd, control)
        os.close(rpc_fd)
        os.close(out_fd)
        wire.send(control, {"pid": pid})
        watch(control, pid, pid_namespace)


def watch(control: socket.socket, pid: int, pid_namespace: bool) -> None:
    """Follow one job: report {"died"} if the child ends on its own; on "kill" end it, reply {"exit"}."""
    sel = selectors.DefaultSelector()
    sel.register(control, selectors.EVENT_READ)
    status, rusage, killed = None, None, False
    while True:
        if status is None:
            done, st, ru = os.wait4(pid, os.WNOHANG)
            if done:
                status, rusage = st, ru
                kill_tree(pid, pid_namespace)  # grandchildren left behind by the job
                reap_all()
                wire.send(control, {"died": exit_report(status, rusage)})
        if not sel.select(timeout=0.02 if status is None else None):
            continue
        try:
            msg = wire.recv(control)
        except (EOFError, OSError, wire.WireError):
            kill_tree(pid, pid_namespace)
            os._exit(0)
        if msg.get("op") != "kill":
            continue
        if status is None:
            killed = True
            kill_tree(pid, pid_namespace)
            _, status, rusage = os.wait4(pid, 0)
        kill_tree(pid, pid_namespace)
        reap_all()
        sel.close()
        report = exit_report(status, rusage)
        report["killed"] = killed
        wire.send(control, {"exit": report})
        return


if __name__ == "__main__":
    main()
