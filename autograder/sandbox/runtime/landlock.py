"""Landlock: what a child may write (both modes) and read (process mode), whatever its uid may.

Where the kernel has Landlock (Linux >= 5.13, unprivileged, no setup), every child confines itself
before it reads the job. It writes only its scratch space: its own working directory in process
mode; in bubblewrap the sandbox's /tmp and /dev/shm, which are wiped after every job. Nothing else
can be written or created, however the file's mode reads: in bubblewrap as root the job's uid is
root outside, and /proc/1/* (the fork server's oom_score_adj, coredump_filter, autogroup, sched)
answer to that uid. In process mode it also reads only the interpreter's directories, the sandbox
runtime and a few system directories (bubblewrap's mounts already decide what exists), so the kit,
the tests, the solutions, other submissions and the results are out of reach. With Landlock ABI >= 6
it signals no process outside itself. Plain ctypes over the three system calls: there is no
maintained Python binding, and the ABI is small and stable.
"""
from __future__ import annotations

import ctypes
import os

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same numbers on every architecture
_RULE_PATH_BENEATH = 1
_CREATE_RULESET_VERSION = 1
_PR_SET_NO_NEW_PRIVS = 38

# Access rights of ABI 1 (execute, write, read file, read dir, remove dir/file, make char/dir/reg/
# sock/fifo/block/sym), then refer (ABI 2) and truncate (ABI 3).
_ABI1_ALL = (1 << 13) - 1
_READ = (1 << 0) | (1 << 2) | (1 << 3)  # execute, read file, read dir
_REFER, _TRUNCATE = 1 << 13, 1 << 14
_FILE_RIGHTS = (1 << 0) | (1 << 1) | (1 << 2) | _TRUNCATE  # the rights a rule on a file (not a directory) may hold
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI version, 0 where Landlock is missing or disabled."""
    try:
        version = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION)
    except (AttributeError, OSError):
        return 0
    return max(int(version), 0)


def restrict(readable: list[str] | None, writable: list[str]) -> bool:
    """Confine this process (and what it starts) to reading `readable` and writing `writable`:
    writing is every change (write, truncate, create, remove, rename, link). `readable` None leaves
    reading alone (bubblewrap: its mount namespace holds only what a job may read).

    Returns False, changing nothing, where the kernel has no Landlock; raises OSError if a rule
    cannot be set (the caller then refuses to run the job).
    """
    abi = abi_version()
    if abi < 1:
        return False
    libc = _libc()
    handled = _ABI1_ALL | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0)
    if readable is None:
        handled &= ~_READ
        readable = []
    attr = _RulesetAttr(handled_access_fs=handled, handled_access_net=0,
                        scoped=(_SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL) if abi >= 6 else 0)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else 8 if abi < 4 else 16
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        for paths, access in ((readable, _READ), (writable, handled)):
            for path in paths:
                try:
                    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue  # a path this machine does not have
                try:
                    rule = _PathBeneathAttr(allowed_access=access if os.path.isdir(path) else access & _FILE_RIGHTS,
                                            parent_fd=fd)
                    if libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0) != 0:
                        raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
                finally:
                    os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(_RESTRICT_SELF, ruleset, 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return True
