"""The seccomp filter every sandboxed child runs under: system calls a grading child never needs.

Built with libseccomp (through the `pyseccomp` binding) once in the fork server and loaded by each
child after fork, before it reads the job, so the student's code and everything it starts inherit
it (with no-new-privileges set). A denied call fails with EPERM (clone3 with ENOSYS, so that the C
library falls back to clone, whose namespace flags the filter can inspect); nothing is killed, so
a student who tries gets an ordinary OSError in their own traceback.

One rule covers every call that acts on a process, process group or user named by its arguments
(limits, scheduling, priorities, memory placement): a target other than the caller itself is
refused (`TARGETS_SELF_ONLY`). The fork server shares the job's uid in bubblewrap, and a uid-wide
target (PRIO_USER, IOPRIO_WHO_USER) reaches every process of that uid on the host, outside every
namespace. Signals are the exception: a job signals its own processes, and the mode confines
where else they can go (bubblewrap's pid namespace, a uid of the job's own in process mode).
"""
from __future__ import annotations

import errno
from typing import Any

#: Denied system calls, by reason. Each is something the job could use to reach beyond itself.
DENIED: dict[str, tuple[str, ...]] = {
    "inspect or control other processes (the fork server, pid 1, other jobs)": (
        "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp", "process_madvise",
        "process_mrelease"),
    "new namespaces (a nested user namespace has every capability inside it) and mounts": (
        "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount",
        "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr"),
    "System V and POSIX message queues: IPC objects that outlive the job": (
        "shmget", "shmat", "shmctl", "shmdt", "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop",
        "semtimedop", "semctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify",
        "mq_getsetattr"),
    "kernel keyrings, shared by the grader's user": ("keyctl", "add_key", "request_key"),
    "kernel interfaces with a history of escapes, that no grading code uses": (
        "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
        "name_to_handle_at", "open_by_handle_at", "lookup_dcookie"),
    "the machine itself": (
        "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot",
        "swapon", "swapoff", "acct", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
        "sethostname", "setdomainname", "iopl", "ioperm", "quotactl", "syslog", "vhangup"),
}

#: Calls that act on a target named by their arguments, with the (argument index, value) pairs that
#: name the caller itself; any other value of such an argument is refused. pid 0 is "this process";
#: setpriority's `which` 0 is PRIO_PROCESS, ioprio_set's 1 is IOPRIO_WHO_PROCESS (with `who` 0).
#: Getters are not listed: reading another process's settings changes nothing.
TARGETS_SELF_ONLY: dict[str, tuple[tuple[int, int], ...]] = {
    **dict.fromkeys(("prlimit64", "sched_setscheduler", "sched_setparam", "sched_setattr", "sched_setaffinity",
                     "migrate_pages", "move_pages"), ((0, 0),)),
    "setpriority": ((0, 0), (1, 0)),
    "ioprio_set": ((0, 1), (1, 0)),
}
#: prctl(PR_SCHED_CORE, op, pid, ...) acts on the process `pid` (core-scheduling cookies).
PR_SCHED_CORE = 62

#: A job talks to nothing but the sockets it is handed (its RPC socket, already connected) and the ones
#: it makes in pairs: the only sockets it may create are Unix stream sockets (socket, socketpair), and
#: it may not connect() anywhere. So no network and no vsock (whatever family a kernel adds), and no
#: Unix socket of the host reached by its path (process mode sees the host's /tmp, /run: a daemon's or
#: another job's socket), nor datagrams sent to a path (a Unix datagram socket can sendto() any path
#: even when connected). An allow-list: a family or type not named here is refused.
ALLOWED_SOCKET_FAMILY = 1  # AF_UNIX
#: Socket types (the low bits of `type`, below SOCK_NONBLOCK/SOCK_CLOEXEC) other than SOCK_STREAM (1).
DENIED_SOCKET_TYPES = {"SOCK_DGRAM": 2, "SOCK_RAW": 3, "SOCK_RDM": 4, "SOCK_SEQPACKET": 5, "SOCK_DCCP": 6,
                       "SOCK_PACKET": 10}
SOCKET_TYPE_MASK = 0xF

#: clone() flags that create namespaces: clone with any of them fails like unshare.
CLONE_NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000,
                         0x40000000, 0x00000080)


def denied_names() -> list[str]:
    return [name for names in DENIED.values() for name in names]


def build_filter() -> Any:
    """The filter (not loaded yet): allow by default, deny the calls above. None without libseccomp."""
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError):
        return None
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in denied_names():
        try:
            f.add_rule(seccomp.ERRNO(errno.EPERM), name)
        except (ValueError, RuntimeError, OSError):
            pass  # not a system call on this architecture
    for name, self_args in TARGETS_SELF_ONLY.items():
        for index, value in self_args:  # one rule per argument: any of them naming another target denies
            try:
                f.add_rule(seccomp.ERRNO(errno.EPERM), name, seccomp.Arg(index, seccomp.NE, value))
            except (ValueError, RuntimeError, OSError):
                pass  # not a system call on this architecture
    f.add_rule(seccomp.ERRNO(errno.EPERM), "prctl", seccomp.Arg(0, seccomp.EQ, PR_SCHED_CORE),
               seccomp.Arg(2, seccomp.NE, 0))
    for flag in CLONE_NAMESPACE_FLAGS:
        f.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    for call in ("socket", "socketpair"):
        f.add_rule(seccomp.ERRNO(errno.EPERM), call, seccomp.Arg(0, seccomp.NE, ALLOWED_SOCKET_FAMILY))
        for kind in DENIED_SOCKET_TYPES.values():
            f.add_rule(seccomp.ERRNO(errno.EPERM), call, seccomp.Arg(1, seccomp.MASKED_EQ, SOCKET_TYPE_MASK, kind))
    f.add_rule(seccomp.ERRNO(errno.EPERM), "connect")
    try:
        f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    except (ValueError, RuntimeError, OSError):
        pass
    return f
