"""JSON from an untrusted peer, measured before it is parsed: size, element count, nesting depth.

`json.loads` builds whatever the text describes: 60 MiB of nested empty lists become gigabytes of
Python lists before any check of the result can run. `loads` measures the text first, in linear
time and without building anything (escapes and strings are cut out with plain byte operations,
then the structural characters are counted), and parses only text within its `Bounds`. Standard
library only: it runs in the sandbox (wire.py) and in the grader (wire.py, notebooks).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from itertools import accumulate
from typing import Any


class JSONBoundsError(ValueError):
    """The text is over one of the bounds (the message says which)."""


@dataclass(frozen=True)
class Bounds:
    """The most JSON text a reader accepts (the grader's come from course.yml: config.Limits)."""

    max_bytes: int = 8 << 20
    max_items: int = 250_000  # values, keys and containers
    max_depth: int = 200  # a wire message nests at most 3 levels of JSON per level of value (64)


#: After escapes are removed a string holds no quote: one quantifier, no backtracking.
_STRING = re.compile(rb'"[^"]*"')
_BRACKETS = b"[]{}"
_NOT_BRACKETS = bytes(c for c in range(256) if c not in _BRACKETS)
_STEP = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1


def _skeleton(data: bytes) -> bytes:
    """The text without its strings (what is left is structure, numbers and literals)."""
    # `\\` first, then `\"`: left to right, as JSON reads escapes; backslashes occur only in strings.
    return _STRING.sub(b"", data.replace(b"\\\\", b"").replace(b'\\"', b""))


def _items(skeleton: bytes) -> int:
    """At most how many values, keys and containers the text holds (each but the first of a
    container follows a comma, a key's value follows a colon)."""
    return sum(skeleton.count(c) for c in (b",", b":", b"[", b"{")) + 1


def _depth(skeleton: bytes) -> int:
    return max(accumulate(map(_STEP.__getitem__, skeleton.translate(None, _NOT_BRACKETS))), default=0)


def check(data: bytes, bounds: Bounds, what: str = "JSON text") -> None:
    """Raise JSONBoundsError if `data` is over `bounds`, in linear time and before anything is parsed.
    Invalid JSON fails in json.loads at its first error, never after more than its valid prefix,
    which these measures bound as well."""
    if len(data) > bounds.max_bytes:
        raise JSONBoundsError(f"{what} of {len(data)} bytes is over the limit of {bounds.max_bytes} bytes")
    # The whole text's counts bound its skeleton's from above (cutting out strings only removes
    # characters): text within bounds by those needs no closer look (a wire message, nearly always).
    opening = data.count(b"[") + data.count(b"{")
    if opening <= bounds.max_depth and opening + data.count(b",") + data.count(b":") + 1 <= bounds.max_items:
        return
    skeleton = _skeleton(data)
    items = _items(skeleton)
    if items > bounds.max_items:
        raise JSONBoundsError(f"{what} holds about {items} values, over the limit of {bounds.max_items}")
    depth = _depth(skeleton)  # at most 2 * max_items brackets to step through
    if depth > bounds.max_depth:
        raise JSONBoundsError(f"{what} nests {depth} levels deep, over the limit of {bounds.max_depth}")


def loads(data: bytes | str, bounds: Bounds, what: str = "JSON text") -> Any:
    """`json.loads` of text within `bounds`; JSONBoundsError (a ValueError) otherwise. Bytes must be UTF-8
    (a leading byte-order mark aside), and are parsed as the text measured: `json.loads` of bytes would
    also read UTF-16 and UTF-32, in which a character's bytes can hold a quote (U+2200 in UTF-32 is
    00 22 00 00) and hide real brackets from the measure (helper-50's review, session 36)."""
    raw = data.encode("utf-8", errors="surrogatepass") if isinstance(data, str) else data
    check(raw, bounds, what)
    if isinstance(data, str):
        return json.loads(data)  # the text measured
    try:  # as json.loads decodes UTF-8 (surrogates pass), without its guess at other encodings
        text = data.decode("utf-8-sig", errors="surrogatepass")
    except UnicodeDecodeError:
        raise JSONBoundsError(f"{what} is not UTF-8 text") from None
    return json.loads(text)
