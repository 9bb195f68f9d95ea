"""Unit tests of the sandbox and its wire format: what the grader accepts from a child, and what a
child can reach.

The wire tests run in-process. The others fork children from a warm sandbox (bubblewrap; skipped
without it) with hand-written jobs, no test suite: a child gets a few lines of code and the grader
talks to it through the same Connection/RemoteNamespace proxies the tests use.
"""
from __future__ import annotations

import ast
import json
import os
import pickle
import shutil
import re
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

from autograder.sandbox import affinity
from autograder.sandbox import bwrap as bwrap_mod
from autograder.sandbox import forkserver as sandbox_mod
from autograder.grading.remote import Connection, RemoteNamespace, SandboxLimit, StudentError
from autograder.sandbox.runtime import wire
from autograder.selfcheck import testing as T
from autograder.sandbox.bwrap import bwrap_available, bwrap_command
from autograder.config import Limits
from autograder.sandbox.forkserver import Zygote
from kit_helpers import poll, processes_named

REPO = Path(__file__).resolve().parent.parent
needs_bwrap = pytest.mark.skipif(not bwrap_available(), reason="bubblewrap is not usable here")


# ------------------------------------------------------------------ the wire format (in-process)

def frame(header: bytes, blobs: list[bytes]) -> bytes:
    return wire.frame(header, blobs)


def read_frame(data: bytes) -> tuple[bytes, list[bytes]]:
    pos = 0

    def read(n: int) -> bytes:
        nonlocal pos
        if pos + n > len(data):
            raise EOFError("short")
        out, pos = data[pos:pos + n], pos + n
        return out

    return wire.parse_frame(read)


def test_round_trip_of_plain_values() -> None:
    value = {"a": [1, 2.5, None, True, "s"], "t": (torch.arange(6, dtype=torch.int64).reshape(2, 3),),
             "dtype": torch.float64, "size": torch.Size([2, 3]), "big": 2 ** 70, "empty": torch.zeros(0, 3)}
    header, blobs = wire.encode(value)
    back = wire.decode(*read_frame(frame(header, blobs)))
    assert back["a"] == [1, 2.5, None, True, "s"] and back["dtype"] is torch.float64
    assert torch.equal(back["t"][0], value["t"][0]) and back["size"] == (2, 3)
    assert back["big"] == float(2 ** 70) and back["empty"].shape == (0, 3)


class Sneaky(torch.Tensor):
    """A subclass whose comparisons always succeed (what a hostile child would send)."""

    def __eq__(self, other: Any) -> bool:  # type: ignore[override]
        return True

    def allclose(self, *args: Any, **kwargs: Any) -> bool:  # type: ignore[override]
        return True


@pytest.mark.parametrize("make", [
    lambda: torch.zeros(3).as_subclass(Sneaky),
    lambda: torch.nn.Parameter(torch.ones(2, 2)),
    lambda: torch.ones(4, 4).to_sparse(),
    lambda: torch.arange(10.0)[::2],  # a non-contiguous view
])
def test_tensors_decode_as_plain_tensors(make: Any) -> None:
    sent = make()
    back = wire.decode(*wire.encode(sent))
    assert type(back) is torch.Tensor and not back.requires_grad
    assert torch.Tensor.equal(back, torch.Tensor.to_dense(torch.Tensor.detach(sent)) if sent.is_sparse else
                              torch.Tensor.detach(sent).as_subclass(torch.Tensor))
    assert back._base is None  # owns its memory: no view of the receive buffer


def test_shapes_travel_without_data_and_only_where_the_reader_asked_for_them() -> None:
    state = {"W.weight": torch.ones(3, 4, dtype=torch.float64), "b": torch.zeros(2)}
    header, blobs = wire.encode(state, shapes=True)
    assert blobs == []
    back = wire.decode(header, blobs, meta_bytes=1 << 20)
    assert {k: (v.device.type, tuple(v.shape), v.dtype) for k, v in back.items()} == {
        "W.weight": ("meta", (3, 4), torch.float64), "b": ("meta", (2,), torch.float32)}
    with pytest.raises(wire.WireError, match="where its values were asked for"):
        wire.decode(header, blobs)  # a reply to a request for values
    with pytest.raises(wire.WireError, match="describe over 100 bytes"):
        wire.decode(header, blobs, meta_bytes=100)  # 96 + 8 bytes described: more than the data could have been


def test_a_lazy_layer_s_parameters_travel_as_shapeless_and_only_where_shapes_were_asked_for() -> None:
    """nn.LazyLinear (d2l 1.0) has no shape before its first call: sent as such, it comes back as an
    uninitialized parameter on the meta device, which binds by name (selfcheck/testing.bind)."""
    header, blobs = wire.encode(dict(torch.nn.LazyLinear(3).state_dict()), shapes=True)
    back = wire.decode(header, blobs, meta_bytes=1)
    assert all(torch.nn.parameter.is_lazy(v) and v.device.type == "meta" for v in back.values()) and list(back) == ["weight", "bias"]
    with pytest.raises(wire.WireError, match="a lazy parameter, where tensor values were asked for"):
        wire.decode(header, blobs)
    with pytest.raises(wire.WireError):
        wire.decode(b'{"__lazy__": "object"}', [], meta_bytes=1)  # not a dtype of the allow-list


def test_objects_without_a_data_form_are_refused_or_become_handles() -> None:
    with pytest.raises(wire.WireError):
        wire.encode(object())
    with pytest.raises(wire.WireError):
        wire.encode({1, 2})
    header, _ = wire.encode(len, to_handle=lambda obj: wire.Handle(7, "builtin", True))
    assert isinstance(wire.decode(header, []), wire.Handle)
    nested: Any = []
    for _ in range(100):
        nested = [nested]
    with pytest.raises(wire.WireError, match="nested"):
        wire.encode(nested)


def test_a_handle_may_carry_a_tuple_s_items_and_only_as_a_list() -> None:
    """A tuple subclass's instance (a NamedTuple) travels as its handle with its items (child.encodable)."""
    header, blobs = wire.encode(wire.Handle(3, "DecState", False, (torch.ones(2), [None, 1])))
    back = wire.decode(header, blobs)
    assert (back.id, back.type_name) == (3, "DecState") and torch.equal(back.items[0], torch.ones(2))
    assert back.items[1] == [None, 1]
    assert wire.decode(*wire.encode(wire.Handle(4, "f", True))).items is None  # an object's handle has none
    assert wire.decode(*wire.encode(wire.Handle(5, "State", False, [1, None]))).items == [1, None]  # a list's
    with pytest.raises(wire.WireError):
        wire.decode(b'{"__handle__": 1, "items": 5}', [])


def test_a_float_subclass_travels_as_the_float_it_is() -> None:
    """Helper-82's F4: numpy's float64 wrote its repr ("np.float64(9.21)"), which no reader parses: the grader took
    the reply for malformed and stopped the child (a correct PositionalEncoding storing `np.log(10000.0)` beside its
    table kept 1.96 of 6)."""
    import numpy as np
    assert wire.decode(*wire.encode({"log_base": np.log(10000.0)})) == {"log_base": float(np.log(10000.0))}


MALFORMED = [
    b"[1, 2]",                                                    # a bare JSON list
    b"{}",                                                        # no kind
    b'{"__what__": 1}',                                           # unknown kind
    b'{"__tensor__": 0, "dtype": "object", "shape": [1]}',        # dtype outside the allow-list
    b'{"__tensor__": 0, "dtype": "float32", "shape": [-1]}',      # negative dimension
    b'{"__tensor__": 0, "dtype": "float32", "shape": [2]}',       # bytes do not match the shape
    b'{"__tensor__": 3, "dtype": "float32", "shape": [1]}',       # a blob that is not there
    b'{"__tensor__": -1, "dtype": "float32", "shape": [1]}',      # a negative blob index
    b'{"__tensor__": 0, "dtype": "float32", "shape": [1.5]}',     # a float dimension
    b'{"__tensor__": 0, "dtype": "float32", "shape": "1"}',       # not a list
    b'{"__tensor__": 0, "dtype": "float32", "shape": [0, 9223372036854775807, 9223372036854775807]}',
    b'{"__tensor__": 0, "dtype": "float32", "shape": [0, 18446744073709551616]}',
    b'{"__tensor__": 0, "dtype": "float32", "shape": [' + b", ".join([b"0"] * 65) + b"]}",
    b'{"__dtype__": "pickle"}',
    b'{"__dict__": [[{"__list__": []}, 1]]}',                    # an unhashable key
    b'{"__dict__": [1, 2]}',
    b'{"__handle__": "x"}',
    b'{"__float__": "not a number"}',
    b'1' * 5000,                                                  # an integer too long to convert
    b'{"__list__": [' * 100_000 + b']}' * 100_000,                # nested past any recursion limit
    b"\xff\xfe not json",
]


@pytest.mark.parametrize("header", MALFORMED, ids=range(len(MALFORMED)))
def test_malformed_messages_raise_wire_error_only(header: bytes) -> None:
    with pytest.raises(wire.WireError):
        wire.decode(header, [b"\0\0\0\0"])


@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.sampled_from(["__tensor__", "__list__", "__tuple__", "__dict__",
                                                       "__float__", "__dtype__", "__handle__", "dtype",
                                                       "shape", "x"]), inner, max_size=3),
                    max_leaves=12),
       st.lists(st.binary(max_size=16), max_size=3))
def test_fuzzed_messages_decode_or_raise_wire_error(value: Any, blobs: list[bytes]) -> None:
    header = json.dumps(value).encode()
    try:
        wire.decode(header, blobs)
    except wire.WireError:
        pass


def test_frames_with_bad_sizes_are_refused_before_allocating() -> None:
    header = b'{"__list__": []}'
    huge = struct.pack("!QI", 2 ** 62, len(header)) + header
    with pytest.raises(wire.WireError, match="over the limit"):
        read_frame(huge)
    bad_count = struct.pack("!QI", 8, len(header)) + header + struct.pack("!I", 1000)
    with pytest.raises(wire.WireError, match="blob count"):
        read_frame(bad_count)
    bad_sizes = struct.pack("!QI", 16, len(header)) + header + struct.pack("!IQ", 1, 100)
    with pytest.raises(wire.WireError, match="do not add up"):
        read_frame(bad_sizes)


def test_the_grader_refuses_oversized_replies_from_the_header() -> None:
    reader = wire.FrameReader(sandbox_mod.MAX_REPLY_BYTES, "reply")
    reader.feed(struct.pack("!QI", sandbox_mod.MAX_REPLY_BYTES, 10))  # only the 12-byte header
    with pytest.raises(wire.WireError, match="over the limit"):
        reader.frame()
    assert sandbox_mod.MAX_REPLY_BYTES <= 64 * 2 ** 20 < wire.MAX_MESSAGE_BYTES


def _list_message(body: bytes) -> bytes:
    """The wire's JSON of {"ok": [<body>]} (body: JSON values separated by commas)."""
    return b'{"__dict__": [["ok", {"__list__": [' + body + b']}]]}'


def test_a_messages_json_is_bounded_at_each_edge_before_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Size, values and depth: at the bound decodes, one over is a WireError naming the bound, and
    json.loads never sees a message over a bound (60 MiB of empty lists took the grader to 3.3 GB)."""
    from autograder.sandbox.runtime.json_bounds import Bounds
    flat = _list_message(b",".join([b'{"__list__": []}'] * 10))
    deep = _list_message(b'{"__list__": [' * 9 + b"1" + b"]}" * 9)
    roomy = Bounds(max_bytes=len(flat), max_items=10**6, max_depth=10**6)
    assert wire.decode(flat, [], bounds=roomy) == {"ok": [[]] * 10}
    with pytest.raises(wire.WireError, match=rf"JSON of {len(flat) + 1} bytes is over the limit of {len(flat)} bytes"):
        wire.decode(flat + b" ", [], bounds=roomy)
    items = 5 + 2 + 1 + 1 + 10 * 3 + 9  # 5 containers and 2 keys around the list, a comma and the top
    # value; per element a dict, a list and a key; 9 commas between the elements
    assert wire.decode(flat, [], bounds=Bounds(max_items=items)) == {"ok": [[]] * 10}
    with pytest.raises(wire.WireError, match=rf"holds about {items + 1} values, over the limit of {items}"):
        wire.decode(_list_message(b",".join([b'{"__list__": []}'] * 10 + [b"1"])), [], bounds=Bounds(max_items=items))
    depth = 5 + 2 * 9  # {"__dict__": [["ok", {"__list__": [ ... ]}]]}: 5 levels, then 2 per nested list
    assert wire.decode(deep, [], bounds=Bounds(max_depth=depth))["ok"][0] is not None
    with pytest.raises(wire.WireError, match=rf"nests {depth + 2} levels deep, over the limit of {depth}"):
        wire.decode(_list_message(b'{"__list__": [' * 10 + b"1" + b"]}" * 10), [], bounds=Bounds(max_depth=depth))
    # strings hide no structure, and none is counted: brackets, commas and escaped quotes inside them
    text = json.dumps('[[[[, "\\" ]]]] {{:').encode()
    assert wire.decode(_list_message(text), [], bounds=Bounds(max_items=9, max_depth=5)) == {"ok": ['[[[[, "\\" ]]]] {{:']}
    parsed: list[int] = []
    monkeypatch.setattr(wire.json, "loads", lambda data: parsed.append(len(data)))
    for bomb in (_list_message(b"[]," * 300_000 + b"[]"), _list_message(b"[" * 50_000 + b"]" * 50_000)):
        with pytest.raises(wire.WireError, match="over the limit"):
            wire.decode(bomb, [])
    assert parsed == []


def test_json_that_is_not_utf8_is_refused_before_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Helper-50's review: json.loads of bytes also reads UTF-32, where U+2200 is 00 22 00 00, a quote to the
    measure, which then cut 5,000 real lists out as a "string" and let them through max_items=1000 into
    json.loads, which built them. Bytes are now parsed as the UTF-8 text that was measured (a 0x22 byte is a
    quote to both), or refused; nothing over the bounds is built. A notebook's BOM is still fine."""
    from autograder.sandbox.runtime.json_bounds import Bounds, JSONBoundsError, loads
    bounds = Bounds(max_items=1000, max_depth=20)
    text = '{"a": "\u2200", "b": [' + ",".join(["[]"] * 5000) + '], "c": "\u2200"}'
    parsed: list[Any] = []
    real = json.loads
    monkeypatch.setattr(wire.json, "loads", lambda data: parsed.append(data) or real(data))
    for encoding in ("utf-32-le", "utf-16-le", "utf-32"):
        with pytest.raises(wire.WireError):  # not UTF-8 (the BOM of utf-32), or UTF-8 that is no JSON
            wire.decode(text.encode(encoding), [], bounds=bounds)
    assert [type(data) for data in parsed] == [str, str]  # the measured text itself, never bytes to re-detect
    with pytest.raises(JSONBoundsError, match="over the limit"):
        loads(text.encode("utf-8"), bounds)
    assert len(parsed) == 2
    assert loads(b"\xef\xbb\xbf" + json.dumps({"cells": ["\u2200"]}).encode(), bounds) == {"cells": ["\u2200"]}


def test_the_grader_reads_replies_with_course_yml_bounds() -> None:
    limits = Limits(reply_kb=1, json_items=7, json_depth=3)
    assert (limits.reply_bounds().max_bytes, limits.reply_bounds().max_items, limits.reply_bounds().max_depth) == (1024, 7, 3)
    assert "self.limits.reply_bounds()" in Path(sandbox_mod.__file__).read_text()


def test_frames_arrive_in_pieces() -> None:
    data = frame(*wire.encode({"ok": torch.arange(1000.0)})) * 2
    reader = wire.FrameReader()
    got = []
    for i in range(0, len(data), 777):
        reader.feed(data[i:i + 777])
        while (f := reader.frame()) is not None:
            got.append(wire.decode(*f))
    assert len(got) == 2 and torch.equal(got[1]["ok"], torch.arange(1000.0))


def test_the_childs_buffered_receiver_splits_and_joins_frames() -> None:
    """Several messages in one read, one message over many reads: each comes out whole, in order."""
    import socket
    values = [{"op": "call", "args": [torch.arange(n, dtype=torch.float64)]} for n in (0, 3, 70_000)]
    ours, theirs = socket.socketpair()
    with ours, theirs:
        receiver = wire.Receiver(theirs, chunk=4096)
        ours.sendall(b"".join(frame(*wire.encode(v)) for v in values[:2]))
        got = [receiver.recv(), receiver.recv()]
        big = frame(*wire.encode(values[2]))
        import threading
        sender = threading.Thread(target=ours.sendall, args=(big,))
        sender.start()
        got.append(receiver.recv())
        sender.join()
        ours.close()
        with pytest.raises(EOFError):
            receiver.recv()
    for want, have in zip(values, got):
        assert torch.equal(want["args"][0], have["args"][0])


def test_no_pickle_anywhere_in_the_grader_and_the_sandbox() -> None:
    """No module between a child and a score imports a deserializer that runs code."""
    files = sorted((REPO / "autograder" / "sandbox").rglob("*.py")) + sorted(
        (REPO / "autograder" / "grading").glob("*.py")) + sorted((REPO / "autograder" / "selfcheck").glob("*.py"))
    banned_modules = {"pickle", "cPickle", "_pickle", "marshal", "shelve", "dill", "cloudpickle", "joblib"}
    names = {p.name for p in files}
    assert {"wire.py", "zygote.py", "child.py", "forkserver.py", "remote.py", "session.py", "plugin.py"} <= names, names
    for path in files:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                assert not {a.name.split(".")[0] for a in node.names} & banned_modules, path
            if isinstance(node, ast.ImportFrom):
                assert (node.module or "").split(".")[0] not in banned_modules, path
            if isinstance(node, ast.Attribute) and node.attr in ("load", "loads") and \
                    isinstance(node.value, ast.Name) and node.value.id in ("torch", "pickle", "marshal", "np"):
                raise AssertionError(f"{path.name}: {node.value.id}.{node.attr}")
            if isinstance(node, ast.Name) and node.id in ("eval", "exec") and path.parent.name != "runtime":
                raise AssertionError(f"{path.name} calls {node.id}")  # only the child runs code


def test_bwrap_command_binds_nothing_of_the_kit_nor_sys_path_extras(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    extra = tmp_path / "submissions_on_sys_path"
    extra.mkdir()
    monkeypatch.syspath_prepend(str(extra))
    monkeypatch.chdir(tmp_path)
    cmd = bwrap_command(sys.executable, 3)
    sources = [cmd[i + 1] for i, a in enumerate(cmd) if a in ("--ro-bind", "--bind")]
    assert str(bwrap_mod.RUNTIME_DIR) in sources, sources  # the binds are where this test looks
    for src in sources:
        assert not src.startswith(str(REPO.resolve()) + "/solutions")
        assert "suites" not in src and not src.startswith(str(tmp_path))
        assert src == str(bwrap_mod.RUNTIME_DIR) or not src.startswith(str(REPO.resolve()))
    etc = [s for s in sources if s.startswith("/etc")]
    assert "/etc" not in sources and all(s[5:] in bwrap_mod.ETC_ALLOWED for s in etc)
    assert "--unshare-all" in cmd and "--die-with-parent" in cmd and cmd[cmd.index("--uid") + 1] == "65534"
    assert cmd.count("--size") == 2  # /tmp and /dev/shm are bounded


# ------------------------------------------------------------------ live children

LIMITS = Limits(component_cpu_seconds=2, memory_mb=512, processes=64, file_size_mb=4, output_kb=8)


@pytest.fixture
def box(zygote: Zygote) -> Zygote:
    """The session's warm sandbox (conftest.py), which is bubblewrap wherever these tests run."""
    if zygote.mode != "bwrap":
        pytest.skip("bubblewrap is not usable here")
    return zygote


class Job:
    """A child running `source`, seen through the grader's proxies."""

    def __init__(self, zygote: Zygote, source: str, limits: Limits = LIMITS, seconds: float = 30) -> None:
        job = {"cells": [["job.py", source]], "modules": {}, "prelude": [], "inject": [], "deps_module": "",
               "seed": 0}
        self.child = zygote.spawn(job, limits)
        self.ready = self.child.wait_ready(30)["ready"]
        self.seconds = seconds
        self.ns = RemoteNamespace(Connection(self.child, lambda: self.started + self.seconds), [],
                                  frozenset(self.ready["defined"]))
        self.started = time.monotonic()

    def __enter__(self) -> Job:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.child.close()


@needs_bwrap
def test_the_child_is_unprivileged_and_offline(box: Zygote) -> None:
    source = '''
def probe():
    import os, socket
    out = {"uid": os.getuid(), "gid": os.getgid(), "euid": os.geteuid()}
    try:
        out["interfaces"] = [name for _, name in socket.if_nameindex()]
    except OSError as exc:  # the system-call filter denies the socket it needs
        out["interfaces"] = type(exc).__name__
    try:
        socket.create_connection(("1.1.1.1", 53), timeout=2)
        out["net"] = "connected"
    except OSError as exc:
        out["net"] = type(exc).__name__
    try:
        socket.getaddrinfo("example.com", 80)
        out["dns"] = "resolved"
    except OSError as exc:
        out["dns"] = type(exc).__name__
    with open("/proc/self/status") as f:
        out["caps"] = [l.split()[1] for l in f if l.startswith("CapEff")][0]
    return out
'''
    with Job(box, source) as job:
        out = job.ns.probe()
    assert (out["uid"], out["gid"], out["euid"]) == (65534, 65534, 65534)
    assert out["interfaces"] in ([], ["lo"], "PermissionError")
    assert out["net"] != "connected" and out["dns"] != "resolved"
    assert int(out["caps"], 16) == 0


@needs_bwrap
def test_the_child_cannot_see_the_kit_or_other_submissions(box: Zygote) -> None:
    paths = [REPO, REPO / "solutions" / "attention_scoring.py", REPO / "autograder" / "suites" / "hidden",
             REPO / "course.yml", REPO / "tests" / "hostile", Path.home(), Path("/etc/shadow"), Path("/work")]
    source = f'''
def probe():
    import os
    seen = []
    for p in {[str(p) for p in paths]!r}:
        try:
            if os.path.isdir(p):
                os.listdir(p)
            else:
                open(p, "rb").close()
            seen.append(p)
        except OSError:
            pass
    return seen, sorted(os.listdir("/")), sorted(os.listdir("/sandbox/runtime"))
'''
    with Job(box, source) as job:
        seen, root, runtime = job.ns.probe()
    # Only the (empty) parents of the bound interpreter prefix exist, e.g. /root for a pyenv in it.
    assert [p for p in seen if not sys.prefix.startswith(p)] == []
    assert "work" not in root
    assert [n for n in runtime if n.endswith(".py")] == sorted(p.name for p in bwrap_mod.RUNTIME_DIR.glob("*.py"))


@needs_bwrap
def test_output_is_truncated_keeping_both_ends(box: Zygote) -> None:
    source = '''
def shout():
    import sys
    sys.stdout.write("FIRST LINE\\n" + "x" * 1_000_000 + "\\nLAST LINE\\n")
    sys.stdout.flush()
    return 1
'''
    with Job(box, source) as job:
        assert job.ns.shout() == 1
    text = job.child.output_text()
    assert text.startswith("FIRST LINE") and text.rstrip().endswith("LAST LINE")
    assert "bytes of output dropped" in text and len(text) < LIMITS.output_kb * 1024 + 200


@needs_bwrap
def test_wall_clock_deadline_kills_and_names_itself(box: Zygote) -> None:
    source = '''
def nap():
    import signal, time
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM):
        signal.signal(s, signal.SIG_IGN)
    time.sleep(3600)
'''
    with Job(box, source, seconds=0.5) as job:
        start = time.monotonic()
        with pytest.raises(SandboxLimit, match=r"your code was stopped: it ran past the time limit \(wall clock\)"):
            job.ns.nap()
        assert time.monotonic() - start < 60  # stopped by the deadline, not by the end of the hour-long nap
        assert job.child.dead.limit == "time" and job.child.exit_report["killed"]


@needs_bwrap
def test_cpu_limit_kills_even_when_signals_are_ignored(box: Zygote) -> None:
    source = '''
def spin():
    import signal
    for s in (signal.SIGXCPU, signal.SIGTERM, signal.SIGINT, signal.SIGALRM):
        signal.signal(s, signal.SIG_IGN)
    while True:
        pass
'''
    limits = Limits(component_cpu_seconds=1, memory_mb=512, processes=64, file_size_mb=4, output_kb=8)
    with Job(box, source, limits, seconds=120) as job:  # wall clock: far behind the 1 s of CPU on any machine
        with pytest.raises(SandboxLimit, match=r"your code was stopped: it used more than 1 s of CPU time"):
            job.ns.spin()
        assert job.child.dead.limit == "cpu"


@needs_bwrap
def test_memory_limit_is_address_space_above_the_warm_interpreter(box: Zygote) -> None:
    source = '''
def grab(mb):
    block = bytearray(mb * 2 ** 20)
    block[::4096] = b"x" * len(block[::4096])  # touch every page
    return len(block) // 2 ** 20

def grab_tensor(mb):
    import torch
    return int(torch.ones(mb * 2 ** 18).sum()) // 2 ** 18
'''
    with Job(box, source) as job:
        assert job.ns.grab(128) == 128  # well under limits.memory_mb: fine
        assert job.ns.grab_tensor(128) == 128
        with pytest.raises(SandboxLimit, match=r"ran out of memory \(limit: 512 MB above the interpreter\)"):
            job.ns.grab(600)
        with pytest.raises(SandboxLimit, match=r"ran out of memory \(limit: 512 MB"):
            job.ns.grab_tensor(600)
        assert job.ns.grab(64) == 64  # the child survives a refused allocation


@needs_bwrap
def test_exits_and_base_exceptions_in_calls(box: Zygote) -> None:
    source = '''
def interrupt():
    raise KeyboardInterrupt

def leave():
    raise SystemExit(3)

def vanish():
    import os
    os._exit(0)

def ok():
    return "ok"
'''
    with Job(box, source) as job:
        with pytest.raises(StudentError, match="your code raised KeyboardInterrupt"):
            job.ns.interrupt()
        with pytest.raises(StudentError, match="your code raised SystemExit"):
            job.ns.leave()
        assert job.ns.ok() == "ok"
        with pytest.raises(SandboxLimit, match=r"the process exited \(exit code 0\)"):
            job.ns.vanish()
        with pytest.raises(SandboxLimit):
            job.ns.ok()  # a dead child stays dead


@needs_bwrap
@pytest.mark.skipif(len(affinity.allowed()) < 2, reason="needs two CPUs to tell one from all")
def test_a_child_runs_on_the_cpu_its_grader_is_kept_to(box: Zygote) -> None:
    """The mechanism of affinity.py: a child is forked onto its grader's CPUs at that moment, so a grading
    kept to one CPU (on_one_cpu, a pool worker) has its children on that CPU; an unpinned grader's child
    may run anywhere it may; and the grader gets its own CPUs back after the block."""
    source = """
def cpus():
    import os
    return sorted(os.sched_getaffinity(0))
"""
    before = affinity.allowed()
    with affinity.on_one_cpu() as cpu:
        assert cpu is not None and affinity.allowed() == {cpu}
        with Job(box, source) as job:
            assert job.ns.cpus() == [cpu]
    assert affinity.allowed() == before
    with Job(box, source) as job:
        assert set(job.ns.cpus()) >= before


def test_a_spawn_request_s_cpus_are_used_only_when_they_are_a_list_of_cpu_numbers() -> None:
    """The fork server moves a child only to CPUs named as a list of small integers; anything else leaves it
    where it is (the zygote's run_on, called in the forked child before it is confined; here in a process
    of its own, as the fork server imports it)."""
    one = min(affinity.allowed())
    code = ("import os, sys; sys.path.insert(0, sys.argv[1]); import zygote\n"
            "before = os.sched_getaffinity(0)\n"
            "for bad in (None, [], '0', [True], [-1], [1 << 20], {'cpus': 0}, [0.0]):\n"
            "    zygote.run_on(bad)\n"
            "    assert os.sched_getaffinity(0) == before, bad\n"
            "zygote.run_on([int(sys.argv[2])])\n"
            "print(sorted(os.sched_getaffinity(0)))\n")
    proc = subprocess.run([sys.executable, "-c", code, str(bwrap_mod.RUNTIME_DIR), str(one)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == f"[{one}]"


@pytest.mark.skipif(len(affinity.allowed()) < 2, reason="needs two CPUs")
def test_pool_workers_take_a_cpu_each_only_when_there_are_as_many_workers_as_cpus() -> None:
    """pin_worker, in processes of their own: the i-th of n workers takes the i-th allowed CPU; with more
    workers than CPUs none is pinned (the system balances them), nor with fewer (each grading then stays on
    the CPU it starts on: two classes graded side by side with one worker each must not share CPU 0)."""
    code = ("import sys; from autograder.sandbox import affinity\n"
            "before = sorted(affinity.allowed())\n"
            "cpu = affinity.pin_worker(int(sys.argv[1]), int(sys.argv[2]))\n"
            "print(cpu, sorted(affinity.allowed()) == before, sorted(affinity.allowed()))\n")
    cpus = sorted(affinity.allowed())
    seen = []
    for index, workers in ((0, len(cpus)), (1, len(cpus)), (0, len(cpus) + 1), (0, len(cpus) - 1)):
        proc = subprocess.run([sys.executable, "-c", code, str(index), str(workers)], capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        seen.append(proc.stdout.strip())
    assert seen == [f"{cpus[0]} False [{cpus[0]}]", f"{cpus[1]} False [{cpus[1]}]", f"None True {cpus}",
                    f"None True {cpus}"]


@needs_bwrap
def test_the_whole_process_tree_is_gone_after_the_job(box: Zygote) -> None:
    marker = f"hx_tree{os.getpid() % 100_000}"  # this run's own (another run may be at the same test)
    source = f'''
def spawn(n):
    import ctypes, os, time
    children = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            ctypes.CDLL(None).prctl(15, b"{marker}", 0, 0, 0)
            os.setsid()
            if os.fork() == 0:          # a grandchild in its own session, orphaned at once
                ctypes.CDLL(None).prctl(15, b"{marker}", 0, 0, 0)
                time.sleep(60)
            os._exit(0)
        children.append(pid)
    for pid in children:  # once they are reaped, only the grandchildren carry the name
        os.waitpid(pid, 0)
    return n
'''
    with Job(box, source, seconds=60) as job:
        start = time.monotonic()
        assert job.ns.spawn(10) == 10
        # They exist while the job runs (each names itself right after its fork)...
        assert len(poll(lambda: processes_named(marker), lambda p: len(p) >= 10, start + 30)) == 10
    # ...and not after it: gone well before their 60 s sleep would end it for them.
    assert poll(lambda: processes_named(marker), lambda p: not p, start + 50) == []
    with Job(box, "def f():\n    return 2\n") as job:  # the sandbox is fine for the next job
        assert job.ns.f() == 2


@needs_bwrap
def test_files_of_a_job_are_gone_for_the_next_one(box: Zygote) -> None:
    writer = '''
def write():
    import os
    for d in (".", "/tmp", "/dev/shm", "/tmp/deep/er"):
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "hx_planted"), "w") as f:
            f.write("x")
    os.chmod("/tmp/deep", 0)  # make it hard to remove
    return os.getcwd()
'''
    reader = '''
def look():
    import os
    return sorted(os.listdir("/tmp")), sorted(os.listdir("/dev/shm")), os.getcwd()
'''
    with Job(box, writer) as job:
        first_cwd = job.ns.write()
    with Job(box, reader) as job:
        tmp, shm, cwd = job.ns.look()
    assert tmp == [os.path.basename(cwd)] and shm == [] and cwd != first_cwd


@needs_bwrap
def test_no_pickle_is_used_while_talking_to_a_child(box: Zygote, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the grader used pickle")

    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, refuse)
    monkeypatch.setattr(torch, "load", refuse)
    source = '''
import torch

class Weird(torch.Tensor):
    def __reduce_ex__(self, protocol):
        raise RuntimeError("pickled!")

def make():
    return {"t": torch.ones(2).as_subclass(Weird), "m": torch.nn.Linear(2, 2), "l": [1.5, (2, "x")]}
'''
    with Job(box, source) as job:
        out = job.ns.make()
        assert type(out["t"]) is torch.Tensor and out["l"] == [1.5, (2, "x")]
        assert re.match(r"<student's Linear>", repr(out["m"]))
        assert out["m"].weight.shape == (2, 2)


@needs_bwrap
def test_a_tuple_subclass_is_read_as_its_items_and_sent_back_as_itself(box: Zygote) -> None:
    """Helper-80's F6: a decoder's NamedTuple state reached the grader as an opaque handle (`len(state)` failed: a
    correct decoder kept 1.88 of 10 sandboxed and 10 in-process). It is read as the tuple it is, its items those the
    tuple holds whatever its class says (a hostile __iter__, __len__ or __getitem__ runs nowhere in the grader), and sent
    back it is the student's own object again."""
    source = '''
from typing import NamedTuple
import torch

class State(NamedTuple):
    enc_outputs: object
    caches: object

class Liar(tuple):
    def __iter__(self):
        while True:
            yield 0
    def __len__(self):
        return 10 ** 9
    def __getitem__(self, i):
        raise RuntimeError("never read")

def make():
    return State(torch.ones(2), [None, torch.zeros(1)])

def same(state):
    return type(state).__name__, state.enc_outputs.sum().item()

def liar():
    return Liar((1, 2))

def kind(value):
    return type(value).__name__

class Parts(list):
    @property
    def hidden(self):
        return self[1]

def parts():
    return Parts([torch.ones(1), [None, torch.zeros(2)]])

def hidden_of(state):
    return type(state).__name__, state.hidden[1].shape[0]
'''
    with Job(box, source) as job:
        state = job.ns.make()
        assert isinstance(state, tuple) and len(state) == 2 and torch.equal(state[0], torch.ones(2))
        _enc, caches = state
        assert caches[0] is None and torch.equal(caches[1], torch.zeros(1)) and repr(state).startswith("(tensor(")
        assert job.ns.same(state) == ("State", 2.0)  # the student's own NamedTuple again
        assert torch.equal(state.enc_outputs, torch.ones(2))  # its attributes are read in the child
        assert tuple(job.ns.liar()) == (1, 2)
        assert job.ns.kind((torch.ones(3), None)) == "tuple"  # a plain tuple is sent by value, as before
        listed = job.ns.parts()  # a list subclass alike (helper-82's F7)
        assert isinstance(listed, list) and len(listed) == 2 and torch.equal(listed[0], torch.ones(1))
        assert job.ns.hidden_of(listed) == ("Parts", 2)
        assert (T.type_name(listed), T.type_name(state)) == ("Parts", "State")  # messages name the student's class
        listed[1][1] = torch.zeros(5)  # changed by a test: sent as what it holds now
        assert job.ns.kind(listed) == "list"
        assert T.cloned(state) is state  # the grader's proxy goes back as the child's object: never copied here


def test_a_value_the_wire_refuses_is_said_to_be_what_the_code_returned(box: Zygote) -> None:
    """Helper-82's F6: a reply nested deeper than wire.encode takes read "your code raised WireError: value nested too
    deeply", though the code raised nothing. It now says the code returned a value the grader cannot read, and the child
    goes on answering."""
    source = "def deep():\n    v = 1\n    for _ in range(70):\n        v = [v]\n    return v\n\n" \
             "def fails():\n    raise ValueError('mine')\n"
    with Job(box, source) as job:
        with pytest.raises(StudentError) as returned:
            job.ns.deep()
        assert str(returned.value).startswith("your code returned a value the grader cannot read (value nested too deeply)")
        assert "raised" not in str(returned.value)
        with pytest.raises(StudentError, match="your code raised ValueError: mine"):
            job.ns.fails()


def test_what_shared_keeps_of_a_grading_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Helper-82's F5: T.shared kept every result of a component's grading, so code returning 60 MiB per call grew a
    grading to 3 GB. Beyond SHARED_BYTES the earliest results go (a part that needs one again computes it again); what
    fits is still reused."""
    class Scope:
        pass

    class Student:
        scope = Scope()

        @staticmethod
        def __shared_scope__(student: Any) -> Any:
            return Student.scope

    monkeypatch.setattr(T, "SHARED_BYTES", 3 * 4096)
    student, runs = Student(), []

    def big() -> torch.Tensor:
        runs.append(1)
        return torch.zeros(1024)  # 4096 bytes

    T.begin_test("test_bounded")
    for i in range(5):
        T.shared(student, big, i)
    assert T._SHARED.total <= 3 * 4096 and len(T._SHARED.results) == 3
    T.begin_test("test_bounded")  # the same test's first example again: dropped, so computed again, then kept
    T.shared(student, big, 0)
    assert len(runs) == 6 and T._SHARED.total <= 3 * 4096
    T.begin_test("test_bounded")
    T.shared(student, big, 0)
    assert len(runs) == 6  # reused


def test_a_named_tuple_s_tensors_are_cloned_as_a_tuple_s_are() -> None:
    """Helper-82's F3: `T.cloned` (what T.shared and T.Snapshot keep, what T.call passes) copied the tensors of lists,
    tuples and dicts but not of a NamedTuple, the student's own state in an in-process grading, so code writing into
    its state in place changed what a test had kept. A NamedTuple is rebuilt with its tensors cloned (its class kept);
    another tuple subclass is left as it is (its constructor is the student's)."""
    from typing import NamedTuple

    class State(NamedTuple):
        enc_outputs: Any
        caches: Any

    class Other(tuple):
        pass

    state = State(torch.ones(2), [None, torch.zeros(1)])
    copy = T.cloned(state)
    assert type(copy) is State and torch.equal(copy.enc_outputs, state.enc_outputs)
    assert copy.enc_outputs is not state.enc_outputs and copy.caches[1] is not state.caches[1]
    other = Other((torch.ones(1),))
    assert T.cloned(other) is other


@needs_bwrap
def test_a_fork_server_launched_early_warms_while_we_wait_and_stops_unused() -> None:
    """`course check`/`grade FILE` launch the fork server before importing torch: used, it serves
    jobs (an optimizer still works in a child although the optimizers were not warmed); unused, it
    is stopped all the same."""
    from autograder.sandbox import bwrap as bwrap_mod
    quick = Zygote("bwrap", launched=bwrap_mod.launch("bwrap", warm_optimizers=False))
    try:
        source = ("import torch\ndef step():\n    w = torch.nn.Parameter(torch.ones(2))\n"
                  "    opt = torch.optim.Adam([w], lr=0.1)\n    w.sum().backward()\n    opt.step()\n"
                  "    return w.detach()\n")
        with Job(quick, source, seconds=60) as job:
            assert torch.allclose(job.ns.step(), torch.full((2,), 0.9))
    finally:
        quick.stop()
    launched = bwrap_mod.launch("bwrap")
    Zygote("bwrap", launched=launched).stop()
    assert launched.proc.poll() is not None, "stop() left the early fork server running"

    def group_alive() -> bool:  # bubblewrap leads its own process group: the fork server and its children
        try:
            os.killpg(launched.proc.pid, 0)
        except ProcessLookupError:
            return False
        return True

    assert not poll(group_alive, lambda alive: not alive, time.monotonic() + 30), "processes of the sandbox survived"


# ------------------------------------------------------------------ a job acts on itself only

TARGET_PROBES = '''
def probe():
    import ctypes, errno, os, pyseccomp
    libc = ctypes.CDLL(None, use_errno=True)
    ioprio_set = pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, "ioprio_set")
    def errno_of(result):
        return "ok" if result == 0 else errno.errorcode.get(ctypes.get_errno(), "?")
    # Each names another target with an argument the kernel would refuse by itself (EINVAL, ESRCH):
    # only the filter answers EPERM, and nothing changes either way.
    other = {
        "prlimit64 of pid 1": errno_of(libc.prlimit(1, 999, None, None)),
        "sched_setscheduler of pid 1": errno_of(libc.sched_setscheduler(1, 99, None)),
        "sched_setparam of pid 1": errno_of(libc.sched_setparam(1, None)),
        "setpriority PRIO_USER": errno_of(libc.setpriority(2, 0x7FFFFFF0, 19)),
        "setpriority PRIO_PGRP": errno_of(libc.setpriority(1, 0x3FFFFFF0, 19)),
        "ioprio_set IOPRIO_WHO_USER": errno_of(libc.syscall(ioprio_set, 3, 0, 7 << 13)),
        "ioprio_set of pid 1": errno_of(libc.syscall(ioprio_set, 1, 1, 7 << 13)),
        "prctl PR_SCHED_CORE of pid 1": errno_of(libc.prctl(62, 99, 1, 0, 0)),
    }
    cpus = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)                     # what torch and numpy do to themselves still works
    os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + 1)
    import resource
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return other
'''


@pytest.mark.parametrize("mode", ["bwrap", "process"])
def test_calls_that_name_another_process_group_or_user_are_refused(zygote: Zygote, mode: str) -> None:
    if mode == "bwrap" and zygote.mode != "bwrap":
        pytest.skip("bubblewrap is not usable here")
    server = zygote if mode == "bwrap" else Zygote("process")
    try:
        with Job(server, TARGET_PROBES) as job:
            answers = job.ns.probe()
    finally:
        if server is not zygote:
            server.stop()
    assert answers == dict.fromkeys(answers, "EPERM")


SOCKET_PROBES = '''
def probe(path):
    import errno, socket
    def attempt(make):
        try:
            s = make()
        except OSError as exc:
            return errno.errorcode.get(exc.errno, str(exc.errno))
        for one in (s if isinstance(s, tuple) else (s,)):
            one.close()
        return "ok"
    def dial():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
        finally:
            s.close()
    return {
        "vsock": attempt(lambda: socket.socket(40, socket.SOCK_STREAM)),  # AF_VSOCK: not network-namespaced
        "inet": attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM)),
        "unix datagram": attempt(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)),
        "unix seqpacket": attempt(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)),
        "datagram pair": attempt(lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)),
        "connect to a path": attempt(dial),
        "unix stream": attempt(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)),
        "stream pair": attempt(lambda: socket.socketpair()),
    }
'''


@pytest.mark.parametrize("mode", ["bwrap", "process"])
def test_a_job_reaches_no_socket_but_its_own(zygote: Zygote, mode: str) -> None:
    """Only Unix stream sockets and pairs of them, and no connect(): a host daemon's socket (or another
    job's) listening on a path the job can name gets no connection, vsock and datagrams are refused."""
    import socket
    import stat
    if mode == "bwrap" and zygote.mode != "bwrap":
        pytest.skip("bubblewrap is not usable here")
    folder = Path(tempfile.mkdtemp(prefix="sock-", dir="/tmp"))  # a path a process-mode job can name
    folder.chmod(0o755)
    path = folder / "daemon.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server = zygote if mode == "bwrap" else Zygote("process")
    try:
        listener.bind(str(path))
        path.chmod(stat.S_IRWXU | stat.S_IRWXG | stat.S_IRWXO)
        listener.listen(4)
        listener.setblocking(False)
        with Job(server, SOCKET_PROBES) as job:
            answers = job.ns.probe(str(path))
        try:
            listener.accept()
            reached = True
        except BlockingIOError:
            reached = False
    finally:
        listener.close()
        shutil.rmtree(folder, ignore_errors=True)
        if server is not zygote:
            server.stop()
    assert not reached
    assert answers == {"vsock": "EPERM", "inet": "EPERM", "unix datagram": "EPERM", "unix seqpacket": "EPERM",
                       "datagram pair": "EPERM", "connect to a path": "EPERM", "unix stream": "ok",
                       "stream pair": "ok"}, answers


@pytest.mark.parametrize("mode", ["bwrap", "process"])
def test_a_closed_fork_server_ends_the_grading_in_progress_and_never_starts_again(mode: str, tmp_path: Path) -> None:
    """Zygote.close, from another thread than the one grading (a stopped `course grade --cluster`):
    the job that hangs as it loads, under an hour's limits, dies now, and the grading ends at once
    with every component unscored by a sandbox that no longer starts."""
    import threading

    from autograder.config import load
    from autograder.grading.session import grade_file
    from kit_helpers import HANGS_AS_IT_LOADS, course_with_an_hour_to_load, descendants
    if mode == "bwrap" and not bwrap_available():
        pytest.skip("bubblewrap is not usable here")
    if mode == "process" and os.getuid() != 0:
        pytest.skip("process mode gives jobs a uid of their own only as root")
    course = load(course_with_an_hour_to_load(tmp_path))
    hangs = tmp_path / "hangs.py"
    hangs.write_text(HANGS_AS_IT_LOADS)
    z = Zygote(mode)
    z.start()
    got: list[Any] = []
    grading = threading.Thread(target=lambda: got.append(grade_file(z, "02_attention_scoring", hangs, course=course)))
    try:
        assert z.proc is not None
        server = len(descendants(z.proc.pid))
        grading.start()
        poll(lambda: len(descendants(z.proc.pid)) if z.proc else 0, lambda n: n > server, time.monotonic() + 60)
        time.sleep(1)  # into the load that hangs
        z.close()
        grading.join(timeout=60)
        assert not grading.is_alive(), "the grading went on after its fork server was closed"
    finally:
        z.closed = True
        z.stop()
    assert got and got[0].score == 0
    assert all("sandbox" in t.output for c in got[0].components for t in c.tests), got[0].output[-1000:]
    assert not z.alive
    with pytest.raises(sandbox_mod.SandboxError, match="the grading was stopped"):
        z.start()


@pytest.mark.parametrize("seconds,applied", [(0.5, 1), (3.7, 4), (120, 120)])
def test_a_childs_cpu_limit_is_rounded_up_to_whole_seconds(seconds: float, applied: int) -> None:
    """The kernel's CPU limit is in whole seconds: a course.yml limit of 0.5 s had become 0 (every
    child killed at once) and one of 3.7 s 3 (the hostile suite scales its limits by the machine)."""
    code = ("import os, resource, sys; sys.path.insert(0, sys.argv[1]); import zygote\n"
            "if os.fork() == 0:  # a fresh child, as the fork server's (its CPU time starts at 0)\n"
            f"    zygote.apply_limits({{'cpu_seconds': {seconds}, 'memory_mb': 1024, 'processes': 64, "
            "'file_size_mb': 1})\n"
            "    print(*resource.getrlimit(resource.RLIMIT_CPU), flush=True)\n"
            "    os._exit(0)\n"
            "sys.exit(os.waitstatus_to_exitcode(os.wait()[1]))")
    proc = subprocess.run([sys.executable, "-c", code, str(bwrap_mod.RUNTIME_DIR)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == [str(applied), str(applied + 1)]


@pytest.mark.skipif(not bwrap_mod.bwrap_available(), reason="bubblewrap is not usable here")
def test_the_end_of_a_job_leaves_the_binds_bubblewrap_made_in_tmp_and_counts_it_clean(tmp_path: Path) -> None:
    """An interpreter or a kit under /tmp (a virtual environment made there, helper-58) is bound read-only
    into the sandbox's own /tmp, through directories bubblewrap makes there first. The clean-up after a job
    (zygote.wipe) could not remove them and reported the job dirty, so the grader replaced the fork server
    after every job (a 06 class 3-6 times slower). It removes what a job wrote, a file beside such a
    directory included, and keeps the way to the mount points."""
    source = tmp_path / "site"
    source.mkdir()
    (source / "module.py").write_text("# not the job's\n")
    box = "/tmp/wipe-box"
    code = ("import os, sys; sys.path.insert(0, sys.argv[1]); import zygote\n"
            "root = sys.argv[2]\n"
            "os.makedirs(root + '/job/deep'); open(root + '/job/deep/x', 'w').write('x')\n"
            "open(root + '/venv/planted', 'w').write('beside the mount')\n"
            "clean = zygote.wipe(root, True)\n"
            "print(clean, sorted(os.path.relpath(os.path.join(d, n), root) for d, ds, fs in os.walk(root) for n in ds + fs))\n")
    proc = subprocess.run(["bwrap", "--dev-bind", "/", "/", "--tmpfs", box, "--ro-bind", str(source), f"{box}/venv/lib/site",
                           sys.executable, "-c", code, str(bwrap_mod.RUNTIME_DIR), box],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "True ['venv', 'venv/lib', 'venv/lib/site', 'venv/lib/site/module.py']"


def test_every_fork_server_hashes_strings_with_the_environment_s_seed(box: Zygote) -> None:
    """helper-77: the fork server started with `python -I`, whose -E ignores the PYTHONHASHSEED=0 of its environment,
    so each launch hashed strings with a seed of its own: the order of a set of strings in a student's code (a
    vocabulary built with `list(set(tokens))`, a printed set) changed from one fork server to the next. Every fork
    server, in both modes, now hashes as `PYTHONHASHSEED=0 python` does."""
    source = '''
def seen():
    import os, sys
    return [hash("attention"), list({"queries", "keys", "values", "valid_lens", "dropout"}), os.environ["PYTHONHASHSEED"],
            sys.flags.hash_randomization]
'''
    expected = subprocess.run([sys.executable, "-c", "print(hash('attention'), list({'queries', 'keys', 'values', "
                               "'valid_lens', 'dropout'}))"], capture_output=True, text=True, timeout=60,
                              env={"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0"}).stdout.split(" ", 1)
    servers = [box]
    if os.getuid() == 0:  # process mode gives jobs a uid of their own only as root
        servers.append(Zygote(mode="process"))
        servers[-1].start()
    try:
        for server in servers:
            with Job(server, source) as job:
                value, order, seed, randomized = job.ns.seen()
            assert (value, str(order).replace('"', "'"), seed, randomized) == \
                (int(expected[0]), expected[1].strip(), "0", 0), server.mode
    finally:
        for server in servers[1:]:
            server.stop()
