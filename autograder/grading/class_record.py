"""The class record: who each student folder of a collected class is and when they submitted.

`course collect` and nbgrader's zip_collect (integrations/lms.py) write it at the root of the class
folder; `course grade DIR` (grading/export.py) and the submission times (grading/late.py) read it.
It is the only place identity and time are read from in a collected class: nothing in a student's
own folder is, since the student could have uploaded it. It imports nothing of the kit but the
dependency-free reader of student files, so that the writer (an integration) and the readers
(grading) both sit above it.
"""
from __future__ import annotations

import datetime as dt
import functools
import json
import re
import stat
from pathlib import Path
from typing import Any, Optional

from autograder.grading.student_files import SubmissionError, read_bounded

#: At the root of `course collect`'s --to (and of nbgrader zip_collect's extracted/). Its name can be
#: no student's folder: a safe student id never starts with a dot.
COLLECTED = ".course-collect.json"
#: What a student id may hold: letters, digits, `_`, `.`, `-`, `@`, `+`; it starts with a letter or digit.
STUDENT_ID = re.compile(r"^[^\W_][\w.@+-]*$")
STUDENT_ID_MAX = 100
#: The largest record read (a class of thousands is well under it).
MAX_BYTES = 64 * 1024 * 1024


def plain_parts(name: str) -> Optional[tuple[str, ...]]:
    """A relative path's components, or None for an absolute path, `..`, a drive or a NUL."""
    if name.startswith(("/", "\\")) or "\0" in name or re.match(r"^[A-Za-z]:", name):
        return None
    parts = tuple(p for p in name.split("/") if p not in ("", "."))
    return None if not parts or ".." in parts else parts


def collected(root: Path) -> dict[str, dict[str, Any]]:
    """{student folder: what the LMS said} from root's COLLECTED; {} when there is none. Only
    records whose folder is a safe student id and whose file is one name."""
    try:
        info = (root / COLLECTED).lstat()
    except OSError:
        return {}
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
        return {}  # a link (to /proc/kmsg, to a forged record) or an oversized file names no one
    return dict(_collected(root / COLLECTED, info.st_mtime_ns, info.st_size))


@functools.lru_cache(maxsize=8)
def _collected(path: Path, mtime_ns: int, size: int) -> dict[str, dict[str, Any]]:
    """`collected`, read once per version of the file (a class's grading asks once per student)."""
    try:
        raw, size = read_bounded(path, MAX_BYTES)
        data = json.loads(raw) if size <= MAX_BYTES else None
    except (SubmissionError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {folder: record for folder, record in data.items()
            if isinstance(record, dict) and record.get("student") == folder and STUDENT_ID.fullmatch(folder)
            and len(folder) <= STUDENT_ID_MAX and ".." not in folder
            and plain_parts(str(record.get("file") or "")) == (record.get("file"),)}


def collected_record(folder: Path, file: Optional[str] = None) -> dict[str, Any]:
    """What was recorded about the student folder `folder` (in its parent's COLLECTED), when it
    was (and, given `file`, that file was filed there); else {}."""
    record = collected(folder.parent).get(folder.name, {})
    return record if file is None or record.get("file") == file else {}


def collected_time(record: dict[str, Any]) -> Optional[dt.datetime]:
    """The submission time of a record (aware, UTC; a naive time is UTC), when the LMS gave one."""
    when = record.get("submitted_at")
    if not isinstance(when, str) or not when:
        return None
    try:
        parsed = dt.datetime.fromisoformat(when)
    except ValueError:
        return None
    return parsed.replace(tzinfo=dt.timezone.utc) if parsed.tzinfo is None else parsed.astimezone(dt.timezone.utc)
