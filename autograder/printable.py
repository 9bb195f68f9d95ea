"""Text that came from a student (file names, ids, paths inside archives) as it may be printed or
written to a log: every character that could move the cursor, end a line or reorder what a reader
sees is escaped, so a name cannot forge a console line or hide what follows it.

Escaped: control characters (C0, DEL, C1: newline, carriage return, escape sequences), format
characters (bidirectional overrides, zero-width joiners), line and paragraph separators, surrogates
and private-use or unassigned code points. They become `\\n`, `\\x1b`, `\\u202e` as Python writes
them; everything else, backslashes included, is left as it is.
"""
from __future__ import annotations

import unicodedata

#: Unicode general categories that are never shown as themselves.
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def printable(text: str) -> str:
    """`text` with every hidden character escaped (one line, what a reader sees is what it holds)."""
    if text.isprintable():
        return text
    return "".join(_escape(c) if unicodedata.category(c) in HIDDEN_CATEGORIES else c for c in text)


def _escape(char: str) -> str:
    escaped = repr(char)[1:-1]
    if escaped != char:
        return escaped
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable_text(text: str) -> str:
    """Several lines of text (a results report with student-controlled messages) as they may be
    printed: each line through `printable`, the line breaks kept, so no escape sequence reaches the
    terminal (cursor moves, clears, window titles, OSC 52 clipboard writes)."""
    return "\n".join(printable(line.replace("\t", "    ")) for line in text.split("\n"))
