"""The wire format between the grader and a sandboxed child: JSON plus raw tensor bytes.

Nothing is ever unpickled: a message is a JSON header in which every tensor is replaced by a
reference to a raw little-endian byte blob, and tensors are rebuilt from bytes as plain
`torch.Tensor`s with a dtype from a fixed allow-list. Objects that have no data form (modules,
functions) travel as opaque numbered handles that only the child can resolve.
"""
from __future__ import annotations

import json
import math
import socket
import struct
from typing import Any
from collections.abc import Callable

import torch

try:
    from . import json_bounds  # the grader: a module of the kit's package
except ImportError:
    import json_bounds  # type: ignore[no-redef]  # the sandbox: the runtime's top-level modules

DTYPES: dict[str, torch.dtype] = {
    "float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
    "float64": torch.float64, "int8": torch.int8, "uint8": torch.uint8, "int16": torch.int16,
    "int32": torch.int32, "int64": torch.int64, "bool": torch.bool,
    "complex64": torch.complex64, "complex128": torch.complex128,
}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}
ITEMSIZE = {k: torch.empty((), dtype=v).element_size() for k, v in DTYPES.items()}
MAX_MESSAGE_BYTES = 512 * 1024 * 1024
MAX_DIMS = 64
_HEADER = struct.Struct("!QI")  # total blob bytes, JSON length


class WireError(Exception):
    """A message that is malformed, too large or cut short."""


class Handle:
    """An opaque reference to an object that lives in the child. `items`: a tuple or list subclass's items (a
    NamedTuple's), a tuple or a list, sent with its handle, so that the reader sees them as the container's and can
    send the object back."""

    __slots__ = ("id", "type_name", "is_callable", "items")

    def __init__(self, id: int, type_name: str = "", is_callable: bool = False,
                 items: tuple[Any, ...] | list[Any] | None = None) -> None:
        self.id, self.type_name, self.is_callable, self.items = id, type_name, is_callable, items

    def __repr__(self) -> str:
        return f"<remote {self.type_name} #{self.id}>"


def encode(value: Any, to_handle: Callable[[Any], Handle] | None = None, *,
           shapes: bool = False) -> tuple[bytes, list[bytes]]:
    """Encode a value into (JSON bytes, blobs); `to_handle` turns anything else into a Handle. With
    `shapes`, a tensor travels as its shape and dtype only, with no data (the reader gets a tensor on
    the meta device; see `decode`)."""
    blobs: list[bytes] = []

    def enc(v: Any, depth: int = 0) -> Any:
        if depth > 64:
            raise WireError("value nested too deeply")
        kind = type(v)  # the containers every message is made of first, by exact type (not subclasses)
        if kind is dict:
            return {"__dict__": [[enc(k, depth + 1), enc(x, depth + 1)] for k, x in v.items()]}
        if kind is list or kind is tuple:
            return {"__list__" if kind is list else "__tuple__": [enc(x, depth + 1) for x in v]}
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, int):
            if abs(v) < 2 ** 63:
                return v
            try:  # as a float, which decode accepts (a bare JSON float it refuses)
                return {"__float__": repr(float(v))}
            except OverflowError:
                raise WireError("integer too large to send") from None
        if isinstance(v, float):  # a subclass's repr (numpy's "np.float64(9.21)") is no float's text
            return {"__float__": repr(float(v))}
        if isinstance(v, torch.Tensor) and shapes:
            dtype = DTYPE_NAMES.get(v.dtype)
            if dtype is None:
                raise WireError(f"unsupported tensor dtype {v.dtype}")
            if torch.nn.parameter.is_lazy(v):  # a lazy layer's (nn.LazyLinear): no shape yet
                return {"__lazy__": dtype}
            return {"__meta__": [int(x) for x in v.shape], "dtype": dtype}
        if isinstance(v, torch.Tensor):
            t = _plain(v)
            dtype = DTYPE_NAMES.get(t.dtype)
            if dtype is None:
                raise WireError(f"unsupported tensor dtype {t.dtype}")
            blobs.append(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
            return {"__tensor__": len(blobs) - 1, "dtype": dtype, "shape": list(t.shape)}
        if isinstance(v, torch.dtype):
            return {"__dtype__": DTYPE_NAMES.get(v, str(v))}
        if isinstance(v, torch.Size):
            return {"__tuple__": [int(x) for x in v]}
        if isinstance(v, Handle):
            sent = {"__handle__": v.id, "type": v.type_name, "callable": v.is_callable}
            return sent if v.items is None else sent | {"items": enc(v.items, depth + 1)}
        if to_handle is None:
            raise WireError(f"cannot send a {type(v).__name__}")
        return enc(to_handle(v), depth + 1)

    header = json.dumps(enc(value), allow_nan=False).encode()
    return header, blobs


def _plain(v: torch.Tensor) -> torch.Tensor:
    """`v`'s values as a dense, contiguous CPU tensor with no conjugate or negative bit, copied only where
    `v` is not one already (a contiguous tensor's size-1 dimensions may have any stride: reshape(-1)
    below still views it)."""
    t = torch.Tensor.detach(v)
    if t.layout != torch.strided:
        t = t.to_dense()
    if t.device.type != "cpu":
        t = t.cpu()
    if t.is_conj() or t.is_neg():
        t = t.resolve_conj().resolve_neg()
    return t if t.is_contiguous() else t.contiguous()


#: The JSON of a message, measured before it is parsed (json_bounds); the grader reads replies with
#: course.yml's bounds (config.Limits.reply_bounds), everyone else with these.
BOUNDS = json_bounds.Bounds()


def decode(header: bytes, blobs: list[bytes], from_handle: Callable[[Handle], Any] | None = None,
           bounds: json_bounds.Bounds = BOUNDS, meta_bytes: int = 0) -> Any:
    """Decode (JSON bytes, blobs) into plain Python values and plain tensors.

    The JSON is measured before it is parsed (size, element count, nesting depth: `bounds`), so a
    header of nested empty lists costs the reader no more than its bytes. Each blob backs at most
    one tensor, so the tensors of a message never take more memory than the message itself (a reply
    naming one blob a thousand times is refused, not copied). A tensor sent as its shape alone
    (`encode(shapes=True)`) comes back on the meta device (a lazy layer's parameter, which has no
    shape yet, as an uninitialized one), and only where the reader asked for shapes:
    `meta_bytes` is the most bytes such tensors may claim together (0: none accepted), so that no shape
    describes more than the data could have been.
    """
    used: set[int] = set()
    claimed = 0  # bytes the shape-only tensors so far describe

    def dec(v: Any) -> Any:
        nonlocal claimed
        if v is None or isinstance(v, (bool, int, str)):
            return v
        if isinstance(v, list):
            raise WireError("bare JSON list in message")
        if not isinstance(v, dict) or len(v) == 0:
            raise WireError("malformed value")
        if "__float__" in v:
            return float(v["__float__"])
        if "__tensor__" in v:
            return _tensor(v, blobs, used)
        if "__meta__" in v:
            shape = _shape(v["__meta__"])
            dtype = DTYPES[v["dtype"]]
            if not meta_bytes:
                raise WireError("a tensor sent as its shape alone, where its values were asked for")
            claimed += math.prod(shape) * ITEMSIZE[v["dtype"]]
            if claimed > meta_bytes:
                raise WireError(f"tensor shapes that describe over {meta_bytes} bytes, more than a reply may hold")
            return torch.empty(shape, dtype=dtype, device="meta")
        if "__lazy__" in v:  # a lazy layer's parameter, where shapes were asked for: it describes no bytes
            if not meta_bytes:
                raise WireError("a lazy parameter, where tensor values were asked for")
            return torch.nn.UninitializedParameter(  # type: ignore[call-arg]  # torch's stub lacks them
                requires_grad=False, device="meta", dtype=DTYPES[v["__lazy__"]])
        if "__dtype__" in v:
            return DTYPES[v["__dtype__"]]
        if "__handle__" in v:
            items = dec(v["items"]) if "items" in v else None
            if items is not None and type(items) not in (list, tuple):
                raise WireError("malformed value")
            h = Handle(int(v["__handle__"]), str(v.get("type", "")), bool(v.get("callable")), items)
            return from_handle(h) if from_handle else h
        if "__list__" in v:
            return [dec(x) for x in v["__list__"]]
        if "__tuple__" in v:
            return tuple(dec(x) for x in v["__tuple__"])
        if "__dict__" in v:
            return {dec(k): dec(x) for k, x in v["__dict__"]}
        raise WireError("unknown value kind")

    try:
        return dec(json_bounds.loads(header, bounds, "the message's JSON"))
    except WireError:
        raise
    except json_bounds.JSONBoundsError as exc:
        raise WireError(str(exc)) from None
    except (KeyError, TypeError, ValueError, IndexError, OverflowError, RecursionError, RuntimeError,
            MemoryError) as exc:  # whatever the bytes are, the peer gets a WireError, never a crash
        raise WireError(f"malformed message: {str(exc)[:200]}") from None


def _shape(shape: Any) -> list[int]:
    if not isinstance(shape, list) or len(shape) > MAX_DIMS or not all(type(s) is int for s in shape):
        raise WireError("a tensor shape must be a list of at most 64 integers")
    if any(s < 0 for s in shape):
        raise WireError("negative tensor dimension")
    return shape


def _tensor(v: dict, blobs: list[bytes], used: set[int]) -> torch.Tensor:
    dtype, itemsize = DTYPES[v["dtype"]], ITEMSIZE[v["dtype"]]
    shape = _shape(v["shape"])
    index = v["__tensor__"]
    if type(index) is not int or not 0 <= index < len(blobs):
        raise WireError("a tensor refers to a missing blob")
    if index in used:
        raise WireError("two tensors refer to the same blob")
    used.add(index)
    blob = blobs[index]
    numel = math.prod(shape)
    if numel * itemsize != len(blob):
        raise WireError("tensor bytes do not match its shape")
    if numel == 0:
        return torch.empty(shape, dtype=dtype)
    # frombuffer gives a plain torch.Tensor; clone so it owns ordinary (resizable) memory.
    return torch.frombuffer(bytearray(blob), dtype=dtype).reshape(shape).clone()


def frame(header: bytes, blobs: list[bytes]) -> bytes:
    """One message as bytes: sizes, JSON header, blob count and sizes, blobs."""
    sizes = b"".join(struct.pack("!Q", len(b)) for b in blobs)
    total = len(sizes) + sum(len(b) for b in blobs)
    if total + len(header) > MAX_MESSAGE_BYTES:
        raise WireError(f"message of {total + len(header)} bytes is over the limit")
    return b"".join([_HEADER.pack(total, len(header)), header, struct.pack("!I", len(blobs)), sizes, *blobs])


def send(sock: socket.socket, value: Any, to_handle: Callable[[Any], Handle] | None = None, *,
         shapes: bool = False) -> None:
    """Send one framed message in a single write (one wake-up of the reader, not one per piece)."""
    sock.sendall(frame(*encode(value, to_handle, shapes=shapes)))


def recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise EOFError("connection closed")
        buf += chunk
    return bytes(buf)


def parse_frame(read: Callable[[int], bytes]) -> tuple[bytes, list[bytes]]:
    """Read one framed message with `read(n)`, checking sizes before allocating."""
    total, header_len = _HEADER.unpack(read(_HEADER.size))
    if total + header_len > MAX_MESSAGE_BYTES:
        raise WireError(f"message of {total + header_len} bytes is over the limit")
    header = read(header_len)
    (count,) = struct.unpack("!I", read(4))
    if count * 8 > total:
        raise WireError("bad blob count")
    sizes = [struct.unpack("!Q", read(8))[0] for _ in range(count)]
    if sum(sizes) + 8 * count != total:
        raise WireError("blob sizes do not add up")
    return header, [read(s) for s in sizes]


def recv(sock: socket.socket, from_handle: Callable[[Handle], Any] | None = None) -> Any:
    """Receive one framed message (blocking), reading exactly its bytes."""
    header, blobs = parse_frame(lambda n: recv_exact(sock, n))
    return decode(header, blobs, from_handle)


class FrameReader:
    """Incrementally parse frames from a byte stream: feed() what arrives, frame() returns each
    whole message in turn. A message over `max_bytes` is refused from its header, before buffering."""

    def __init__(self, max_bytes: int = MAX_MESSAGE_BYTES, kind: str = "message") -> None:
        self.max_bytes, self.kind = max_bytes, kind
        self.buffer = bytearray()

    def feed(self, data: bytes | memoryview) -> None:
        self.buffer += data

    def frame(self) -> tuple[bytes, list[bytes]] | None:
        if len(self.buffer) < _HEADER.size:
            return None
        total, header_len = _HEADER.unpack_from(self.buffer)
        size = _HEADER.size + header_len + 4 + total
        if size > self.max_bytes:
            raise WireError(f"a {self.kind} of {size} bytes is over the limit of {self.max_bytes} bytes")
        if len(self.buffer) < size:
            return None
        data = memoryview(bytes(self.buffer[:size]))
        del self.buffer[:size]
        pos = 0

        def read(n: int) -> bytes:
            nonlocal pos
            out = data[pos:pos + n].tobytes()
            pos += n
            return out

        return parse_frame(read)


class Receiver:
    """Receive framed messages from a blocking socket through a FrameReader: a few large reads per
    message instead of one read per field. Use one Receiver per socket for its whole life."""

    def __init__(self, sock: socket.socket, chunk: int = 1 << 20) -> None:
        self.sock = sock
        self.reader = FrameReader()
        self.buffer = memoryview(bytearray(chunk))  # read into, for the life of the socket

    def recv(self, from_handle: Callable[[Handle], Any] | None = None) -> Any:
        while (parts := self.reader.frame()) is None:
            self.reader.feed(read_into(self.sock, self.buffer))
        return decode(*parts, from_handle)


def read_into(sock: socket.socket, buffer: memoryview) -> memoryview:
    """What one read of `sock` brings, as a view of `buffer` (valid until its next read): a socket's
    `recv(n)` allocates n bytes for every read, however few arrive (about 20 us for 1 MiB here).
    EOFError when the peer has closed."""
    n = sock.recv_into(buffer)
    if not n:
        raise EOFError("connection closed")
    return buffer[:n]
