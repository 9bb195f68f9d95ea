"""The one way the grading process opens a file a student controls: their submission, and anything
beside it a student could have planted (nbgrader's timestamp.txt, metadata, the class record).

It imports nothing of the kit but the student language (selfcheck/i18n.py), so every layer can use it (grading/submission reads submissions
with it, grading/class_record the record at a class folder's root, grading/late the metadata files).
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

from autograder.selfcheck.i18n import N_, _


class SubmissionError(Exception):
    """The file cannot be read as a submission (not found, too large, not a notebook): its text in the
    student's language, and `english` for staff (grades.csv, the report)."""

    def __init__(self, message: str, english: str = "") -> None:
        super().__init__(message)
        self.english = english or message

    @classmethod
    def said(cls, message: str, **fields: Any) -> SubmissionError:
        """The error with the catalogue's `message` (marked with N_), its fields filled in."""
        return cls(_(message).format(**fields), message.format(**fields))


NOT_REGULAR = N_("{name} is not a regular file; submit the file itself")
CANNOT_READ = N_("cannot read {name}: {error}")
OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def read_bounded(path: Path | str, cap: int, what: str = "") -> tuple[bytes, int]:
    """(data, size) of the regular file `path`: the one way the grading process opens a file a
    student controls (their submission, and files beside it a student could have planted). `open`
    with O_NOFOLLOW|O_NONBLOCK, `fstat` on that descriptor (a symbolic link, FIFO, device, socket or
    folder is refused, so /proc files behind a link are never opened), then at most `cap` + 1 bytes
    read from it, whatever size fstat reported (a /proc file reports 0). `size` is the larger of
    fstat's size and the bytes read; over `cap`, `data` is not all of the file (none of it when
    fstat already said so). A refusal is a SubmissionError naming the file (`what`, else its name)."""
    name = what or Path(path).name
    try:
        fd = os.open(path, OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SubmissionError.said(N_("{name} is a symbolic link; submit the file itself"), name=name) from None
        if exc.errno in (errno.ENXIO, errno.ENODEV, errno.EOPNOTSUPP):
            raise SubmissionError.said(NOT_REGULAR, name=name) from None
        raise SubmissionError.said(CANNOT_READ, name=name, error=exc.strerror) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SubmissionError.said(NOT_REGULAR, name=name)
        if info.st_size > cap:
            return b"", info.st_size
        chunks: list[bytes] = []
        left = cap + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return data, max(info.st_size, len(data))
    except OSError as exc:
        raise SubmissionError.said(CANNOT_READ, name=name, error=exc.strerror) from None
    finally:
        os.close(fd)
