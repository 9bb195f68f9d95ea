"""The grader's side of the sandbox: a fork server in bubblewrap, one fresh child per job.

The grader process never imports or runs submission code. It starts a *zygote* (a warm Python
with torch imported) inside bubblewrap, with no network, no view of the kit's files (only the
runtime directory, the interpreter and its libraries, read-only) and an unprivileged uid in a
user namespace. For each job the zygote forks a child that loads the submission and answers
calls; the grader bounds every wait with a deadline and has the zygote kill the job's whole
process tree when it is done, times out or misbehaves.
"""
from __future__ import annotations

import enum
import os
import selectors
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NoReturn, Optional, TypedDict

from autograder.config import Limits
from autograder.sandbox import affinity
from autograder.sandbox.bwrap import RUNTIME_DIR, Launch, launch, resolve_mode
from autograder.sandbox.runtime import reaper, wire
from autograder.selfcheck.i18n import N_, _

#: The largest reply the grader buffers (the wire format allows 512 MiB, sent *to* a child): the
#: grader is not memory-limited and holds several copies of a reply while decoding it.
MAX_REPLY_BYTES = 64 * 1024 * 1024
_SIGNAL_NAMES = {signal.SIGSEGV: N_("the process crashed with a segmentation fault"),
                 signal.SIGABRT: N_("the process crashed with an abort"),
                 signal.SIGBUS: N_("the process crashed with a bus error"),
                 signal.SIGFPE: N_("the process crashed with a floating-point exception"),
                 signal.SIGILL: N_("the process crashed with an illegal instruction")}


_SIGNAL_NUMBERS = {int(s) for s in _SIGNAL_NAMES}
#: A fork server idle for longer than this is asked to check itself again before its next job.
IDLE_CHECK_SECONDS = 1.0


class SandboxError(Exception):
    """The sandbox itself failed (could not start, protocol broken)."""


class Stop(str, enum.Enum):
    """Why a child ended before answering."""

    TIME = "time"  # wall-clock limit (per test, per load, per submission)
    CPU = "cpu"  # CPU-time limit
    MEMORY = "memory"  # killed: out of memory or another limit
    CRASH = "crash"  # a fatal signal (segmentation fault, abort, ...)
    EXIT = "exit"  # the process exited or closed its connection
    OUTPUT = "output"  # a reply over the size the grader accepts
    PROTOCOL = "protocol"  # a malformed reply
    SANDBOX = "sandbox"  # the fork server died or stopped answering
    CLOSED = "closed"  # the grader ended the job


class ExitReport(TypedDict, total=False):
    """How a job ended, as the fork server reports it (runtime/zygote.py)."""

    signal: int
    code: int
    cpu: float
    killed: bool
    dirty: bool  # processes or files of the job survived the clean-up, or it changed the fork server
    changed: list[str]  # what the job changed about the fork server (runtime/server_state.py)
    lost: bool  # no report: the fork server is gone


@dataclass(frozen=True)
class Isolation:
    """What the fork server reported about how its children are confined (checked by a probe child)."""

    mode: str  # "bwrap" or "process"
    seccomp: bool  # the system-call filter is loaded in every child
    landlock: bool  # the child confines its own file access (process mode: reads and writes; bwrap: writes)
    separate_user: bool  # children run as another user than the grader
    exposed: tuple[str, ...]  # protected paths (kit, results) a confined child could still read

    @property
    def isolated(self) -> bool:
        """Student code can change nothing but its own score: no view of the kit or results, no
        access to the grader's processes. False means: do not grade with this sandbox."""
        confined = self.mode == "bwrap" or self.landlock or self.separate_user
        return self.seccomp and confined and not self.exposed

    def describe(self) -> str:
        if self.isolated:
            how = ("bubblewrap namespaces" + (", Landlock (writes: scratch only)" if self.landlock else "")
                   if self.mode == "bwrap" else
                   "an unprivileged user" + (" and Landlock" if self.landlock else "") + " (no bubblewrap)")
            return f"isolated: {how}, seccomp filter, resource limits"
        problems = []
        if not self.seccomp:
            problems.append("no seccomp filter (install libseccomp and pyseccomp)")
        if not (self.mode == "bwrap" or self.landlock or self.separate_user):
            problems.append("student code runs as the grader's own user with its file access")
        if self.exposed:
            problems.append("student code can read " + ", ".join(self.exposed[:4]))
        return "NOT ISOLATED: " + "; ".join(problems)


class ChildDied(Exception):
    """The child ended before answering: a limit tripped, it exited, or it crashed."""

    def __init__(self, reason: str, limit: Optional[Stop] = None) -> None:
        super().__init__(reason)
        self.reason, self.limit = reason, limit


class Zygote:
    """One warm fork server; one job at a time."""

    def __init__(self, mode: str = "auto", start_timeout: float = 120, launched: Optional[Launch] = None) -> None:
        self.mode = launched.mode if launched else resolve_mode(mode)
        self.start_timeout = start_timeout
        self.proc: Optional[subprocess.Popen] = None
        self.control: Optional[socket.socket] = None
        self._launched = launched  # started early by the caller; start() waits for it
        # A replacement is launched as the first one was (the paths its probe checks, warm-up).
        self._protect, self._warm_optimizers = (launched.protect, launched.warm_optimizers) if launched else ((), True)
        self.closed = False  # close(): never started again
        self.isolation: Optional[Isolation] = None  # known once started
        self.child_uid: Optional[int] = None  # the uid the jobs run as (process mode as root: their own)
        self._checked_at = 0.0  # when the server last checked itself (after a job, or asked)
        #: A job of this server held the course's code before the student's due date: the state it could
        #: leave for later jobs (its pid namespace's counter, ...) must not reach feedback a student sees.
        #: The grader replaces a tainted server before the next job whose feedback is shown (providers).
        self.tainted = False

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        """Start the fork server (or take the one launched early) and wait until it is warm."""
        if self.closed:
            raise SandboxError("the grading was stopped")
        started = self._launched or launch(self.mode, warm_optimizers=self._warm_optimizers, protect=self._protect)
        self._launched = None
        self.proc, self.control = started.proc, started.control
        if self.closed:  # close() came from another thread while this one launched: it saw no process
            self.stop()
            raise SandboxError("the grading was stopped")
        try:
            hello = self._recv_control(self.start_timeout)
        except (ChildDied, SandboxError) as exc:
            stderr = self.proc.stderr
            err = stderr.read(4000).decode(errors="replace") if stderr and self.proc.poll() is not None else ""
            self.stop()
            raise SandboxError(f"the sandbox did not start ({self.mode}): {exc} {err}".strip()) from None
        if "zygote" not in hello:
            self.stop()
            raise SandboxError("the sandbox answered with an unexpected message")
        self.child_uid = hello.get("child_uid") if isinstance(hello.get("child_uid"), int) else None
        self._checked_at = time.monotonic()
        self.tainted = False
        self.isolation = Isolation(
            mode=self.mode, seccomp=bool(hello.get("seccomp")), landlock=bool(hello.get("landlock")),
            separate_user=hello.get("child_uid") != os.getuid() or self.mode == "bwrap",
            exposed=tuple(str(p) for p in hello.get("exposed", ())))

    def _recv_control(self, timeout: float) -> dict:
        assert self.control is not None
        self.control.settimeout(timeout)
        try:
            msg = wire.recv(self.control)
        except TimeoutError:
            raise SandboxError("the sandbox did not answer in time") from None
        except (EOFError, OSError, wire.WireError) as exc:
            raise SandboxError(f"the sandbox stopped: {exc}") from None
        if not isinstance(msg, dict):
            raise SandboxError("malformed control message")
        return msg

    def spawn(self, job: Mapping[str, Any], limits: Limits) -> Child:
        """Fork a fresh child for `job`; returns once the child's pid is known. A server idle since
        its last check (it checks itself after every job) is checked again first, and replaced if
        anything changed it meanwhile (a warm Dask worker's server between two runs)."""
        if self.alive and time.monotonic() - self._checked_at > IDLE_CHECK_SECONDS:
            self.check()
        if not self.alive:
            self.start()
        assert self.control is not None
        rpc_ours, rpc_theirs = socket.socketpair()
        out_r, out_w = os.pipe()
        try:
            self.control.settimeout(30)
            socket.send_fds(self.control, [b"J"], [rpc_theirs.fileno(), out_w])
            # Only the limits go through the zygote; the job goes to the child itself (wait_ready):
            # the zygote's memory is inherited by every later child, so it must never hold a submission.
            # ... and the CPUs its grader runs on (affinity.py: a round trip on one CPU is several times cheaper).
            wire.send(self.control, {"limits": limits.child_rlimits(), "cpus": affinity.for_child()})
            msg = self._recv_control(30)
        except (OSError, SandboxError) as exc:
            self.stop()
            raise SandboxError(f"could not start a child: {exc}") from None
        finally:
            rpc_theirs.close()
            os.close(out_w)
        if "pid" not in msg:
            self.stop()
            raise SandboxError("the sandbox did not report a child")
        child = Child(self, rpc_ours, out_r, limits)
        try:
            header, blobs = wire.encode(job)
        except wire.WireError as exc:
            child.close()
            raise SandboxError(f"could not encode the job: {exc}") from None
        child.pending = wire.frame(header, blobs)
        return child

    def end_job(self) -> ExitReport:
        """Kill what is left of the current job and return its exit report."""
        try:
            assert self.control is not None
            self.control.settimeout(10)
            wire.send(self.control, {"op": "kill"})
            for _ in range(3):  # a {"died"} notice may come first
                msg = self._recv_control(10)
                if "exit" in msg:
                    self._checked_at = time.monotonic()  # the server checked itself before it answered
                    if msg["exit"].get("dirty"):
                        self.stop()  # processes or files of the job survived the clean-up: start afresh
                    return msg["exit"]
            raise SandboxError("expected an exit report")
        except (OSError, AssertionError, SandboxError):
            self.stop()
            return {"killed": True, "signal": signal.SIGKILL, "lost": True}

    def check(self) -> list[str]:
        """Ask the idle fork server whether anything changed it since it started (what a job could
        change from outside: runtime/server_state.py); [] when not. Stops it when it has changed or
        does not answer, so that the next job starts a fresh one."""
        if not self.alive or self.control is None:
            return []
        try:
            self.control.settimeout(10)
            self.control.sendall(b"C")
            wire.send(self.control, {"op": "check"})
            changed = [str(line) for line in self._recv_control(10).get("changed", ["no answer"])]
        except (OSError, SandboxError):
            changed = ["the fork server does not answer"]
        self._checked_at = time.monotonic()
        if changed:
            self.stop()
        return changed

    def close(self) -> None:
        """Kill the sandbox and what runs in it, and never start it again. Safe from another thread
        than the one grading: that one finds its job dead, and no sandbox for the next (the grading of
        a stopped `course grade --cluster` ends at once instead of waiting for its limits)."""
        self.closed = True
        proc = self.proc
        if proc is not None:
            self._kill(proc)

    def reopen(self) -> None:
        """Undo `close` for a later grading: its next job starts a fresh fork server."""
        self.closed = False

    def _kill(self, proc: subprocess.Popen) -> None:
        """Kill the server `proc` and its jobs. In bubblewrap mode its pid namespace takes the jobs down
        with it; otherwise what descends from it (it is the jobs' subreaper) is killed first."""
        for pid in ([] if self.mode == "bwrap" else reaper.descendants(proc.pid)):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass

    def stop(self) -> None:
        """Kill the whole sandbox (zygote and anything left in it)."""
        if self._launched is not None:  # launched early, never used
            self.proc, self.control, self._launched = self._launched.proc, self._launched.control, None
        if self.proc is not None:
            self._kill(self.proc)  # then, in process mode as root, every process of the jobs' own uid (below)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            if self.proc.stderr:
                self.proc.stderr.close()
            if self.mode != "bwrap" and os.getuid() == 0 and self.child_uid not in (None, 0):
                try:
                    subprocess.run([sys.executable, "-I", "-S", str(RUNTIME_DIR / "reaper.py"), str(self.child_uid)],
                                   stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False)
                except subprocess.TimeoutExpired:
                    pass
        if self.control is not None:
            self.control.close()
        self.proc, self.control = None, None


class Child:
    """The grader's connection to one forked child."""

    def __init__(self, zygote: Zygote, sock: socket.socket, out_fd: int, limits: Limits) -> None:
        self.zygote, self.sock, self.out_fd, self.limits = zygote, sock, out_fd, limits
        self.sock.setblocking(False)
        os.set_blocking(out_fd, False)
        self.reader = wire.FrameReader(MAX_REPLY_BYTES, "reply")
        self.buffer = memoryview(bytearray(1 << 20))  # each read of the RPC socket lands here first
        self.output = bytearray()
        self.output_dropped = 0
        self.dead: Optional[ChildDied] = None
        self.exit_report: Optional[ExitReport] = None
        self.pending = b""  # the framed job, sent by wait_ready
        self.requests = 0  # numbered requests: each reply must carry the number of the one it answers
        # One selector for the child's life: output pipe, the zygote's control socket, the RPC socket.
        self.selector = selectors.DefaultSelector()
        self.selector.register(out_fd, selectors.EVENT_READ, "out")
        assert zygote.control is not None, "a child exists only while its fork server runs"
        self.selector.register(zygote.control, selectors.EVENT_READ, "control")
        self.selector.register(sock, selectors.EVENT_READ, "rpc")

    def _keep_output(self, data: bytes) -> None:
        cap = self.limits.output_kb * 1024
        self.output += data
        if len(self.output) > cap:  # keep the beginning and the end
            half = cap // 2
            self.output_dropped += len(self.output) - cap
            self.output = self.output[:half] + self.output[-half:]

    def output_text(self) -> str:
        text = self.output.decode(errors="replace")
        if self.output_dropped:
            cap = self.limits.output_kb * 1024 // 2
            dropped = _("[... {count} bytes of output dropped ...]").format(count=self.output_dropped)
            text = text[:cap] + f"\n{dropped}\n" + text[cap:]
        return text

    def request(self, msg: Any, timeout: float, to_handle: Any = None, from_handle: Any = None) -> Any:
        """Send one message and wait for the reply, at most `timeout` seconds."""
        if self.dead:
            raise self.dead
        if self.pending:
            raise SandboxError("the job was not sent yet: call wait_ready first")
        deadline = time.monotonic() + max(timeout, 0.01)
        self.requests += 1
        try:
            header, blobs = wire.encode({**msg, "rid": self.requests}, to_handle)
        except wire.WireError as exc:
            raise SandboxError(str(exc)) from None
        payload = wire.frame(header, blobs)
        # A reply may describe tensors by shape alone only to a request that asked for shapes.
        reply = self._exchange(payload, deadline, from_handle, MAX_REPLY_BYTES if msg.get("shapes") is True else 0)
        if not isinstance(reply, dict) or reply.get("rid") != self.requests:
            self._die(_("it sent a reply that answers no request of the grader's"), Stop.PROTOCOL)
        return reply

    def wait_ready(self, timeout: float) -> Any:
        """Send the job and wait for the child's load report."""
        payload, self.pending = self.pending, b""
        return self._exchange(payload, time.monotonic() + timeout, None)

    def _exchange(self, payload: bytes, deadline: float, from_handle: Any, meta_bytes: int = 0) -> Any:
        sel = self.selector
        view = memoryview(payload)
        sent = 0
        try:  # usually the whole request fits in the socket buffer: no wait needed
            sent = self.sock.send(view[:1 << 20]) if payload else 0
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            self._died_on_its_own()
        writing = sent < len(view)
        if writing:
            sel.modify(self.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, "rpc")
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._die(_("it ran past the time limit (wall clock)"), Stop.TIME)
                for key, events in sel.select(timeout=min(remaining, 1.0)):
                    if key.data == "out":
                        self._drain_output()
                    elif key.data == "control":
                        self._died_on_its_own()
                    elif events & selectors.EVENT_WRITE and writing:
                        try:
                            sent += self.sock.send(view[sent:sent + (1 << 20)])
                        except (BlockingIOError, InterruptedError):
                            pass
                        except OSError:
                            self._died_on_its_own()
                        if sent >= len(view):
                            writing = False
                            sel.modify(self.sock, selectors.EVENT_READ, "rpc")
                    elif events & selectors.EVENT_READ:
                        try:
                            self.reader.feed(wire.read_into(self.sock, self.buffer))
                        except (BlockingIOError, InterruptedError):
                            continue
                        except (OSError, EOFError):
                            self._died_on_its_own()
                        try:
                            frame = self.reader.frame()
                        except wire.WireError as exc:
                            self._die(_("it sent a reply the grader cannot accept ({error})").format(error=exc), Stop.OUTPUT)
                        if frame is not None:
                            self._drain_output()
                            try:
                                return wire.decode(frame[0], frame[1], from_handle, self.limits.reply_bounds(),
                                                   meta_bytes)
                            except wire.WireError as exc:
                                self._die(_("it sent a malformed reply ({error})").format(error=exc), Stop.PROTOCOL)
        finally:
            if writing and self.dead is None:
                sel.modify(self.sock, selectors.EVENT_READ, "rpc")

    def _drain_output(self, budget: int = 4 << 20) -> None:
        """Read what the child printed, at most `budget` bytes per call: a child that prints without
        pause cannot keep the grader here (the selector brings it back, within the deadline)."""
        while budget > 0:
            budget -= 1 << 16
            try:
                data = os.read(self.out_fd, 1 << 16)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            if not data:
                return
            self._keep_output(data)

    def _died_on_its_own(self) -> None:
        """The child closed its socket or the zygote reported an exit: find out why."""
        report = self.zygote.end_job()
        self.exit_report = report
        self._drain_output()
        if report.get("lost"):
            raise self._mark(ChildDied(_("it stopped the grader's sandbox (the fork server died or stopped "
                                         "answering)"), Stop.SANDBOX))
        sig = report.get("signal")
        cpu = float(report.get("cpu", 0))
        if sig in (signal.SIGXCPU,) or (sig == signal.SIGKILL and cpu >= self.limits.component_cpu_seconds - 0.5):
            raise self._mark(ChildDied(_("it used more than {seconds} s of CPU time").format(
                seconds=f"{self.limits.component_cpu_seconds:g}"), Stop.CPU))
        if sig == signal.SIGKILL:
            raise self._mark(ChildDied(_("it was killed (out of memory or another limit)"), Stop.MEMORY))
        if sig:
            known = _SIGNAL_NAMES.get(signal.Signals(sig)) if sig in _SIGNAL_NUMBERS else None
            raise self._mark(ChildDied(_(known) if known else _("the process crashed with signal {signal}").format(
                signal=sig), Stop.CRASH))
        code = report.get("code", 0)
        raise self._mark(ChildDied(_("the process exited (exit code {code}), e.g. through os._exit or a closed "
                                     "connection").format(code=code), Stop.EXIT))

    def _die(self, reason: str, limit: Stop) -> NoReturn:
        self.exit_report = self.zygote.end_job()
        self._drain_output()
        raise self._mark(ChildDied(reason, limit))

    def _mark(self, exc: ChildDied) -> ChildDied:
        self.dead = exc
        return exc

    def close(self) -> None:
        """End the job (kills its process tree) unless it already ended."""
        if self.dead is None:
            self.exit_report = self.zygote.end_job()
            self._drain_output()
            self.dead = ChildDied("closed", Stop.CLOSED)
        try:
            self.selector.close()
            self.sock.close()
        finally:
            try:
                os.close(self.out_fd)
            except OSError:
                pass
