"""How the sandbox's fork server is started: the bubblewrap command line, its environment, launching.

Kept apart from `sandbox` (which talks to the fork server and imports torch for the wire format)
so that a command can launch the fork server first and import torch while it warms up.
"""
from __future__ import annotations

import functools
import os
import shutil
import site
import socket
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from autograder.sandbox.runtime.environment import ENVIRONMENT

RUNTIME_DIR = Path(__file__).resolve().parent / "runtime"
_PACKAGE = Path(__file__).resolve().parents[1]  # autograder/
KIT_DIRS = [_PACKAGE, _PACKAGE.parent / "solutions"]
SANDBOX_RUNTIME = "/sandbox/runtime"
#: The only parts of /etc the sandbox sees: the dynamic loader's, names, time zone, fonts, certificates.
ETC_ALLOWED = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "timezone",
               "passwd", "group", "nsswitch.conf", "hosts", "fonts", "ssl/certs", "ca-certificates",
               "mime.types", "os-release", "matplotlibrc")
#: Size of the sandbox's writable /tmp and /dev/shm (they are RAM: unbounded, a job could fill the host's).
TMPFS_MB = 256


@functools.lru_cache(maxsize=1)
def bwrap_available() -> bool:
    """True when bubblewrap is installed and can create the namespaces we ask for."""
    exe = shutil.which("bwrap")
    if not exe:
        return False
    try:
        probe = subprocess.run([exe, "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev",
                                "--proc", "/proc", "true"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def _python_roots() -> list[Path]:
    """Directories the interpreter needs: its prefixes, standard library and site-packages.

    Not the other entries of sys.path: they hold the grader's script directory, or its working
    directory under `python -m`, which may be a folder of submissions or results. The zygote runs
    with -I and never imports from them.
    """
    candidates = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), Path(sys.base_exec_prefix)}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        candidates.add(Path(sysconfig.get_paths()[key]))
    candidates.update(Path(p) for p in site.getsitepackages())
    candidates.add(Path(sys.executable).resolve().parent.parent)
    roots = set()
    for c in candidates:
        real = c.resolve()
        if not real.is_dir():
            continue
        if any(real == k or k in real.parents or real in k.parents for k in _kit_roots()):
            continue  # never bind the kit: it holds solutions and hidden tests
        roots.add(real)
    # Keep only outermost directories.
    return sorted(r for r in roots if not any(o != r and o in r.parents for o in roots))


def _kit_roots() -> list[Path]:
    return [k.resolve() for k in KIT_DIRS] + [KIT_DIRS[0].parent.resolve()]


def bwrap_command(python: str, fd: int, zygote_args: tuple[str, ...] = ()) -> list[str]:
    """The bubblewrap command line that starts the zygote."""
    size = str(TMPFS_MB * 1024 * 1024)
    # --as-pid-1: the fork server is the namespace's init, so no process of bubblewrap's own runs
    # there as the job's uid (init ignores the signals a job sends it, and is not dumpable);
    # --disable-userns: no nested user namespace (with every capability inside it).
    cmd = ["bwrap", "--unshare-all", "--unshare-user", "--disable-userns", "--as-pid-1",
           "--uid", "65534", "--gid", "65534", "--die-with-parent",
           "--new-session", "--proc", "/proc", "--dev", "/dev", "--size", size, "--tmpfs", "/dev/shm",
           "--size", size, "--tmpfs", "/tmp", "--dir", "/sandbox", "--chdir", "/tmp", "--clearenv"]
    for top in ("usr", "lib", "lib64", "lib32", "bin", "sbin"):
        p = Path("/" + top)
        if p.is_symlink():
            cmd += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            cmd += ["--ro-bind", str(p), str(p)]
    # Only the harmless part of /etc: the sandbox's uid is the grader's uid outside, so when grading
    # as root every root-only file in a bound directory (/etc/shadow, ssl/ssh keys) would be readable.
    cmd += ["--dir", "/etc"]
    for name in ETC_ALLOWED:
        p = Path("/etc") / name
        if p.exists():  # follows symlinks: a dangling one would stop bwrap
            cmd += ["--ro-bind", str(p), str(p)]
    roots = _python_roots()
    for root in roots:
        if not str(root).startswith(("/usr/", "/etc/")) and str(root) not in ("/usr", "/etc"):
            cmd += ["--ro-bind", str(root), str(root)]
    # Mask copies of the kit installed into site-packages (non-editable installs).
    for root in roots:
        for name in ("autograder", "solutions"):
            if (root / name).is_dir():
                cmd += ["--tmpfs", str(root / name)]
    cmd += ["--ro-bind", str(RUNTIME_DIR), SANDBOX_RUNTIME]
    # Everything but the size-limited /tmp and /dev/shm (wiped after every job) is read-only:
    # bubblewrap's root, /etc, /sandbox and /dev would otherwise be writable and unbounded.
    cmd += ["--remount-ro", "/dev", "--remount-ro", "/"]
    for key, value in child_env().items():
        cmd += ["--setenv", key, value]
    cmd += [python, *PYTHON_FLAGS, f"{SANDBOX_RUNTIME}/zygote.py", str(fd), "--pidns", *zygote_args]
    return cmd


#: How the fork server's Python starts: no user site-packages (-s), no bytecode written (-B). Not -I: its -E would
#: ignore the environment's PYTHONHASHSEED, which is ours alone (the fork server starts with `child_env()` and
#: nothing else: bubblewrap's --clearenv, Popen's env), so every launch hashed strings with a seed of its own and
#: the order of a set of strings in the student's code changed from one fork server to the next (helper-77). The
#: fork server puts its own folder on sys.path itself (-I's -P would leave it off).
PYTHON_FLAGS = ("-s", "-B")


def child_env() -> dict[str, str]:
    """The fork server's environment, the student's code's in every mode (runtime/environment.py)."""
    return dict(ENVIRONMENT)


@dataclass
class Launch:
    """A fork server process that has been started but may still be warming up."""

    mode: str
    proc: subprocess.Popen
    control: socket.socket
    protect: tuple[str, ...] = ()  # the arguments it was launched with (a replacement gets the same)
    warm_optimizers: bool = True


def resolve_mode(mode: str) -> str:
    return ("bwrap" if bwrap_available() else "process") if mode == "auto" else mode


def protected_paths(extra: Sequence[Path | str] = ()) -> list[str]:
    """What a child must never read: the kit (tests, solutions, course.yml) and `extra` (results,
    other submissions). The fork server checks it at start with a probe child (Isolation)."""
    kit = _PACKAGE.parent
    paths = [kit, kit / "course.yml", kit / "solutions", _PACKAGE / "suites" / "hidden", *map(Path, extra)]
    return [str(p.resolve()) for p in paths]


def process_readable_paths() -> list[str]:
    """What a child may read in process mode (Landlock): the interpreter, the runtime, system files."""
    system = ["/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/proc", "/dev"]
    etc = [f"/etc/{name}" for name in ETC_ALLOWED]
    return [str(r) for r in _python_roots()] + [str(RUNTIME_DIR)] + system + etc


def launch(mode: str = "auto", warm_optimizers: bool = True, protect: Sequence[Path | str] = ()) -> Launch:
    """Start the fork server without waiting for it: `forkserver.Zygote` waits for its hello.

    `warm_optimizers=False` makes it ready a second sooner, for a single grading or self-check
    (see runtime/warm.py); a warm worker that grades many submissions wants them warm. `protect`
    adds paths (results, submissions) to those the start-up probe checks a child cannot read.
    """
    mode = resolve_mode(mode)
    ours, theirs = socket.socketpair()
    fd = theirs.fileno()
    # In process mode a child may be unable to read the interpreter's files (another user, Landlock):
    # whatever a test may import lazily must be imported in the fork server, optimizers included.
    args: list[str] = [] if warm_optimizers or mode != "bwrap" else ["--no-optimizers"]
    for path in protected_paths(protect):
        args += ["--protect", path]
    if mode != "bwrap":
        for path in process_readable_paths():
            args += ["--readable", path]
    if mode == "bwrap":
        cmd, cwd = bwrap_command(sys.executable, fd, tuple(args)), "/"
    else:
        cmd, cwd = [sys.executable, *PYTHON_FLAGS, str(RUNTIME_DIR / "zygote.py"), str(fd), *args], "/tmp"
    try:
        proc = subprocess.Popen(cmd, pass_fds=[fd], start_new_session=True, cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=child_env())
    except OSError:
        ours.close()
        raise
    finally:
        theirs.close()
    return Launch(mode, proc, ours, tuple(str(p) for p in protect), warm_optimizers)
