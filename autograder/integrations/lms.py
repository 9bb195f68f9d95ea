"""Files downloaded from learning-management systems, and grades going back to them.

Who each file is (Canvas's and Moodle's file names, a Gradescope export's metadata, plain
`<student>_<notebook>` names) comes from grading/lms_names.py (`parse`), which grading reads too.

`collect` files an LMS download (zip or folder) as `<student>/<assignment>.ipynb` and records who and
when in the folder's COLLECTED, for `course grade` (`course collect`) and for nbgrader zip_collect
(`nbgrader_bridge.LmsExtractor` runs it, `LmsCollector` reads what it recorded);
`canvas_csv` writes grades in the layout Canvas's gradebook imports.
"""
from __future__ import annotations

import contextlib
import csv
import functools
import io
import json
import os
import re
import shutil
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, Optional, Union


from autograder.config import CollectCaps
from autograder.grading.class_record import COLLECTED, STUDENT_ID, STUDENT_ID_MAX, collected, plain_parts
from autograder.grading.lms_names import (GRADESCOPE_FOLDER, GRADESCOPE_METADATA, MOODLE, LmsError, LmsFile,
                                          canvas_name, gradescope_file, gradescope_metadata,
                                          moodle_student, parse)
from autograder.printable import printable
from autograder.spreadsheet import write_csv

# --- `course collect`: the same for `course grade` ---------------------------------------------
#
# Every byte of a download came from students except its layout: the LMS names each submission
# (Canvas's `<name>_<user id>_<attachment id>_<file>`, Moodle's `<Full Name>_<id>_assignsubmission_file_`
# folder, a Gradescope export's `submission_<id>/` folders listed in its submission_metadata.yml),
# and what lies below that level (a student's files, folders and zips, whatever they are called)
# belongs to that submission. Nothing is extracted by name: files are read through the caps below
# and written only as `<to>/<student>/<assignment>.ipynb`, where the student id is one safe folder name.

MiB = 1 << 20


@dataclass(frozen=True)
class CollectLimits:
    """The most `course collect` reads from a download (a 1 MB zip can hold 1 GB of zeros). Each
    cap is checked on an archive's declared sizes before reading and on the bytes actually read;
    a submission over a cap is skipped with one line, the rest of the class is filed."""

    file_bytes: int = 32 * MiB  # one notebook or .py file, uncompressed
    submission_bytes: int = 64 * MiB  # everything read for one submission (its files, its zips)
    submission_entries: int = 10_000  # files in one submission's own zips
    class_bytes: int = 8192 * MiB  # the notebooks and .py files kept for the whole class
    class_entries: int = 200_000  # files of the submissions kept, listed and in their zips
    download_entries: int = 2_000_000  # the download's own listing (checked before any student's file is read)
    ratio: int = 200  # uncompressed / compressed size of one zip entry, checked from ratio_from bytes
    ratio_from: int = 1 * MiB
    nesting: int = 2  # zips inside the download: a student's own zip, and one more level in it
    metadata_bytes: int = 16 * MiB  # a Gradescope export's submission_metadata.yml

    @classmethod
    def of(cls, caps: CollectCaps) -> CollectLimits:
        """The caps course.yml's `limits.collect` sets (the one place they are written)."""
        return cls(file_bytes=int(caps.file_mb * MiB), submission_bytes=int(caps.submission_mb * MiB),
                   submission_entries=caps.submission_files, class_bytes=int(caps.class_mb * MiB),
                   class_entries=caps.class_files, ratio=caps.ratio, nesting=caps.nesting)


LIMITS = CollectLimits.of(CollectCaps())
SUBMISSION_SUFFIXES = (".ipynb", ".py")


class UnsafeStudentId(LmsError):
    """A student id that is not one safe folder name."""


def safe_student_id(student: str) -> str:
    """`student` when it is one safe path component (the only form a student id is written in):
    not empty, at most STUDENT_ID_MAX characters, no `/`, `\\`, `..`, leading dot, space or
    control character (STUDENT_ID); else UnsafeStudentId, whose message shows it escaped."""
    if len(student) <= STUDENT_ID_MAX and STUDENT_ID.fullmatch(student) and ".." not in student:
        return student
    shown = printable(student[:STUDENT_ID_MAX]) + ("..." if len(student) > STUDENT_ID_MAX else "")
    raise UnsafeStudentId(f"student id {shown!r} is not a safe folder name (letters, digits, _ . - @ +; "
                          f"at most {STUDENT_ID_MAX} characters)")


@dataclass
class Filed:
    student: str
    path: Path
    source: str  # where it came from in the download, printable
    lms: LmsFile


class _OverCap(Exception):
    """A cap of CollectLimits was reached; the message says which."""


#: What reading a damaged, encrypted or truncated zip (or a file that changed) raises.
UNREADABLE = (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, EOFError, OSError,
              zlib.error, ValueError)  # ValueError: UnicodeDecodeError of an entry name, a bad header field


@dataclass
class _Budget:
    """What is left of one cap pair (bytes read, files listed) for one submission or the class."""

    what: str
    bytes_cap: int
    entries_cap: int
    bytes_used: int = 0
    entries_used: int = 0

    def charge(self, nbytes: int = 0, entries: int = 0) -> None:
        """Count bytes and files, or raise _OverCap and count nothing (what was refused costs nothing)."""
        if self.bytes_used + nbytes > self.bytes_cap:
            raise _OverCap(f"more than {_mib(self.bytes_cap)} uncompressed {self.what}")
        if self.entries_used + entries > self.entries_cap:
            raise _OverCap(f"more than {self.entries_cap} files {self.what}")
        self.bytes_used += nbytes
        self.entries_used += entries


def _mib(n: int) -> str:
    return f"{n / MiB:g} MiB"


@dataclass(frozen=True)
class _Entry:
    """A file of the download or of a zip inside it, as its container lists it (nothing read yet)."""

    parts: tuple[str, ...]  # its path in its container, plain components
    shown: str  # where it is, container included, printable
    size: int  # uncompressed, as declared
    packed: int  # compressed (a file in a folder: its size)
    open: Callable[[], IO[bytes]]


def _zip_entries(z: zipfile.ZipFile, container: str, skipped: list[str]) -> list[_Entry]:
    entries = []
    for info in z.infolist():
        if info.is_dir():
            continue
        shown = printable(container + info.filename)
        parts = plain_parts(info.filename)
        if parts is None:
            skipped.append(f"{shown}: not a relative path inside the archive; not read")
        elif stat.S_ISLNK(info.external_attr >> 16):
            skipped.append(f"{shown}: a symbolic link; not followed")
        else:
            entries.append(_Entry(parts, shown, info.file_size, info.compress_size, functools.partial(z.open, info)))
    return entries


def _folder_entries(root: Path, skipped: list[str]) -> list[_Entry]:
    """Regular files under `root`; symbolic links (files or folders) are reported, never followed."""
    entries = []
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        for name in sorted(dirs + files):
            path = here / name
            rel = path.relative_to(root)
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                skipped.append(f"{printable(str(rel))}: a symbolic link; not followed")
            elif stat.S_ISREG(info.st_mode):
                entries.append(_Entry(rel.parts, printable(str(rel)), info.st_size, info.st_size,
                                      functools.partial(_open_no_follow, path)))
            elif not stat.S_ISDIR(info.st_mode):
                skipped.append(f"{printable(str(rel))}: not a regular file; not read")
    return entries


def _open_no_follow(path: Path) -> IO[bytes]:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"{path}: no longer a regular file")
    return os.fdopen(fd, "rb")


def _read(entry: _Entry, sink: IO[bytes], most: int, budget: _Budget, limits: CollectLimits) -> None:
    """Copy `entry` into `sink`, at most `most` bytes, every byte charged to `budget`: the declared
    size and compression ratio are checked first, the bytes actually read as they come."""
    if entry.size > limits.ratio_from and entry.size > limits.ratio * max(entry.packed, 1):
        raise _OverCap(f"{entry.shown} is compressed more than {limits.ratio}:1 "
                       f"({_mib(entry.size)} in {entry.packed} bytes)")
    if entry.size > most:
        raise _OverCap(f"{entry.shown} is {_mib(entry.size)} uncompressed, more than {_mib(most)}")
    budget.charge(nbytes=entry.size)  # as declared; corrected below to what was actually read
    read = 0
    with entry.open() as f:
        while chunk := f.read(min(MiB, most + 1 - read)):
            read += len(chunk)
            if read > most:
                raise _OverCap(f"{entry.shown} is more than {_mib(most)} uncompressed")
            sink.write(chunk)
    budget.charge(nbytes=read - entry.size)


@dataclass
class _Candidate:
    """A notebook or .py file of one submission, read into the collection's own folder."""

    lms: LmsFile
    spooled: Path
    source: str  # printable
    nested: int  # 0: a file the LMS lists; 1, 2: from inside the student's own zips

    @property
    def rank(self) -> tuple[Any, ...]:
        """Larger is preferred among one student's files: a notebook, the LMS's later submission
        (Gradescope's time, Canvas's attachment id), a file the LMS lists over one from the
        student's own zip, one called like the assignment's notebook; then the first by name."""
        later: Any = self.lms.submitted_at.timestamp() if self.lms.submitted_at else 0
        if self.lms.lms == "canvas":
            later = int(self.lms.extra.get("attachment_id") or 0)
        return (self.spooled.suffix == ".ipynb", later, -self.nested)


def _person(lms_file: LmsFile) -> tuple[str, str]:
    """Who the LMS says a submission is by: its own user id where it has one."""
    if lms_file.lms in ("canvas", "moodle") and lms_file.lms_user_id:
        return lms_file.lms, lms_file.lms_user_id
    if lms_file.lms == "gradescope":  # the submitter's e-mail (one SID or local part can be two people's)
        return lms_file.lms, str(lms_file.extra.get("person") or lms_file.lms_user_id)
    return lms_file.lms, lms_file.student


def collect(source: Path, assignment_id: str, dest: Path, student_id: str = "name",
            limits: CollectLimits = LIMITS) -> tuple[list[Filed], list[str]]:
    """File an LMS download (a zip, or a folder: `_downloads`) as `dest/<student>/<assignment>.ipynb`,
    and record who and when (what the LMS said) in `dest`'s COLLECTED, the only record of them
    that the kit trusts (`collected`). Returns (filed, skipped files with why, printable). A
    submission over a cap, with an unsafe student id or with a file that cannot be read is skipped;
    a student with several files keeps one (`_Candidate.rank`) and the others are listed; two LMS
    records filed under one student id are both skipped. LmsError only when the download itself
    cannot be read."""
    skipped: list[str] = []
    class_budget = _Budget("in the whole download", limits.class_bytes, limits.class_entries)
    notebooks = (f"{assignment_id}.ipynb",)
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="course-collect-")))
        records: dict[tuple[Any, ...], tuple[LmsFile, list[tuple[tuple[str, ...], _Entry]]]] = {}
        for n, entries in enumerate(_downloads(source, stack, notebooks, student_id, skipped)):
            if len(entries) > limits.download_entries:
                raise LmsError(f"{source}: more than {limits.download_entries} files in the download's own listing; "
                               f"not collected (CollectLimits in {__name__})")
            exports = _gradescope_exports(entries, class_budget, limits, notebooks, student_id)
            for entry in sorted(entries, key=lambda e: e.parts):
                if "__MACOSX" in entry.parts or any(p.startswith(".") for p in entry.parts):
                    continue
                try:
                    found = _owner(entry.parts, exports, notebooks, student_id)
                except UnsafeStudentId as exc:
                    skipped.append(f"{entry.shown}: {exc}; not filed")
                    continue
                if isinstance(found, str):
                    if found:
                        skipped.append(f"{entry.shown}: {found}")
                    continue
                lms_file, level = found
                records.setdefault((n, *level), (lms_file, []))[1].append((entry.parts[len(level):], entry))
        candidates: list[_Candidate] = []
        for key, (lms_file, owned) in records.items():
            budget = _Budget("in one submission", limits.submission_bytes, limits.submission_entries)
            mine: list[_Candidate] = []
            try:  # the one guarded step per submission: whatever goes wrong costs this submission only
                budget.charge(entries=len(owned))
                class_budget.charge(entries=len(owned))
                for inner, entry in owned:
                    name = inner[-1] if inner else lms_file.file  # the student's own name for it
                    _take(lms_file, name, entry, 0, mine, tmp, budget, class_budget, limits, skipped)
                class_budget.charge(nbytes=sum(c.spooled.stat().st_size for c in mine))
            except Exception as exc:  # _OverCap, an unreadable zip (UNREADABLE), anything else in a student's files
                for c in mine:
                    c.spooled.unlink(missing_ok=True)
                why = str(exc) if isinstance(exc, (_OverCap, LmsError)) else f"not readable ({type(exc).__name__}: {exc})"
                skipped.append(f"{printable('/'.join(key[1:]))}: {printable(why)} (the submission of "
                               f"{lms_file.student}); not filed")
                continue
            candidates += mine
        chosen = _choose(candidates, skipped)
        filed = []
        for candidate in chosen:
            try:
                filed.append(_file(candidate, dest, assignment_id))
            except LmsError as exc:
                skipped.append(f"{candidate.source}: {exc}; not filed")
        if filed:
            _record(dest, filed)
        return filed, skipped


def _downloads(source: Path, stack: contextlib.ExitStack, notebooks: tuple[str, ...], student_id: str,
               skipped: list[str]) -> list[list[_Entry]]:
    """The downloads `source` holds, each as its files: a zip is one; a folder is one (its files
    as the LMS laid them out), and so is each zip at its top level that no LMS name makes a
    student's file (a download put beside others, as in nbgrader zip_collect's archive/ folder:
    the LMS names every top-level file of its own download after the student)."""
    if source.is_file() and zipfile.is_zipfile(source):
        return [_zip_download(source.open("rb"), str(source), "", stack, skipped)]
    if not source.is_dir():
        raise LmsError(f"{source}: not a zip file or a folder of downloaded submissions")
    rest: list[_Entry] = []
    zips: list[list[_Entry]] = []
    for entry in _folder_entries(source, skipped):
        if len(entry.parts) == 1 and entry.parts[0].endswith(".zip") and _nobodys(entry.parts, notebooks, student_id):
            zips.append(_zip_download(entry.open(), str(source / entry.parts[0]), entry.shown + "/", stack, skipped))
        else:
            rest.append(entry)
    return [rest, *zips]


def _nobodys(parts: tuple[str, ...], notebooks: tuple[str, ...], student_id: str) -> bool:
    """Whether no LMS name attributes the file at `parts` to a student."""
    try:
        return isinstance(_owner(parts, {}, notebooks, student_id), str)
    except UnsafeStudentId:
        return False  # a student's file, with an id that is not filed


def _zip_download(file: IO[bytes], shown: str, container: str, stack: contextlib.ExitStack,
                  skipped: list[str]) -> list[_Entry]:
    stack.enter_context(file)
    try:
        return _zip_entries(stack.enter_context(zipfile.ZipFile(file)), container, skipped)
    except UNREADABLE as exc:
        raise LmsError(f"{printable(shown)}: not a readable zip file: {printable(str(exc))}") from None


def _students_folder(name: str, notebooks: tuple[str, ...], student_id: str) -> bool:
    """Whether an LMS layout assigns a folder of this name, and all below it, to a student: a
    Moodle submission folder, a Gradescope submission_<id> folder, or a name an LMS gives a
    student's file (a Canvas or plain upload unpacked in place)."""
    return bool(MOODLE.match(name) or GRADESCOPE_FOLDER.match(name)) or parse(name, notebooks, student_id) is not None


def _lms_metadata_place(folder: tuple[str, ...], notebooks: tuple[str, ...], student_id: str) -> bool:
    """The one rule for where LMS metadata is read: only where the LMS writes it (the download's
    top, or one top-level folder that holds an export), never inside a folder that an LMS layout
    assigns to a student, nor any deeper."""
    return len(folder) <= 1 and not any(_students_folder(name, notebooks, student_id) for name in folder)


def _gradescope_exports(entries: list[_Entry], budget: _Budget, limits: CollectLimits, notebooks: tuple[str, ...],
                        student_id: str) -> dict[tuple[str, ...], dict[str, dict[str, Any]]]:
    """The Gradescope exports of a download, by folder: submission_metadata.yml where Gradescope
    writes it (`_lms_metadata_place`), never in a student's folder."""
    exports = {}
    for entry in entries:
        folder = entry.parts[:-1]
        if entry.parts[-1] != GRADESCOPE_METADATA or not _lms_metadata_place(folder, notebooks, student_id):
            continue
        text = io.BytesIO()
        try:
            _read(entry, text, limits.metadata_bytes, budget, limits)
        except _OverCap as exc:
            raise LmsError(f"{entry.shown}: {exc}") from None
        exports[folder] = gradescope_metadata(text.getvalue().decode("utf-8", "replace"), entry.shown)
    if () in exports:  # the download is one export: a top-level folder's file is a student's
        exports = {(): exports[()]}
    return exports


def _owner(parts: tuple[str, ...], exports: dict[tuple[str, ...], dict[str, dict[str, Any]]],
           notebooks: tuple[str, ...], student_id: str) -> Union[str, tuple[LmsFile, tuple[str, ...]]]:
    """Whose file this is, by the first LMS-written level of its path from the top, and that
    level (everything below it belongs to the same submission); or why it is nobody's ("" for
    files of the LMS's own layout, such as the export's metadata)."""
    for top, metadata in exports.items():
        if parts[:len(top)] == top:
            rest = parts[len(top):]
            if rest == (GRADESCOPE_METADATA,):
                return ""
            if len(rest) >= 2 and rest[0] in metadata:
                submission = gradescope_file(rest[0], metadata[rest[0]], "/".join(rest[1:]))
                return replace(submission, student=safe_student_id(submission.student)), top + rest[:1]
            return "not in a submission folder that the export's submission_metadata.yml lists"
    for i, folder in enumerate(parts[:-1]):
        m = MOODLE.match(folder)
        if m:
            return LmsFile(safe_student_id(moodle_student(m["name"], m["pid"])), "/".join(parts[i + 1:]), "moodle",
                           m["pid"], m["name"]), parts[:i + 1]
    found = parse(parts[-1], notebooks, student_id)
    if found is None:
        if parts[-1].endswith(SUBMISSION_SUFFIXES + (".zip",)):
            return f"not a Canvas, Moodle, Gradescope or <student>_{notebooks[0]} name"
        return "not a notebook or a .py file"
    return replace(found, student=safe_student_id(found.student)), parts


def _take(lms_file: LmsFile, name: str, entry: _Entry, nesting: int, out: list[_Candidate], tmp: Path,
          budget: _Budget, klass: _Budget, limits: CollectLimits, skipped: list[str]) -> None:
    """Read what one submission holds at `entry` (a file the LMS lists, or one in the student's own
    zip, called `name` by the student): a notebook or .py into `out`, a zip's files in turn;
    nothing else is read. Files count against `budget` (the submission's) and `klass`."""
    if name.startswith(".") or "__MACOSX" in entry.parts:
        return
    if name.endswith(".zip"):
        if nesting >= limits.nesting:
            skipped.append(f"{entry.shown}: a zip nested more than {limits.nesting} deep; not read")
            return
        data = io.BytesIO()
        try:
            _read(entry, data, limits.submission_bytes, budget, limits)
            with zipfile.ZipFile(data) as z:
                inside = sorted(_zip_entries(z, entry.shown + "/", skipped), key=lambda e: e.parts)
                budget.charge(entries=len(inside))
                klass.charge(entries=len(inside))
                for e in inside:
                    _take(lms_file, e.parts[-1], e, nesting + 1, out, tmp, budget, klass, limits, skipped)
        except UNREADABLE as exc:
            skipped.append(f"{entry.shown}: not a readable zip ({printable(str(exc))}); not read")
        return
    if not name.endswith(SUBMISSION_SUFFIXES):
        if nesting == 0:
            skipped.append(f"{entry.shown}: not a notebook or a .py file")
        return
    if Path(name).stem == "attention_support" or name.startswith("test_"):
        skipped.append(f"{entry.shown}: given code or tests, not a submission")
        return
    fd, spooled = tempfile.mkstemp(suffix=Path(name).suffix, dir=tmp)
    try:
        with os.fdopen(fd, "wb") as sink:
            _read(entry, sink, limits.file_bytes, budget, limits)
    except UNREADABLE as exc:
        skipped.append(f"{entry.shown}: not readable ({printable(str(exc))}); not read")
        return
    out.append(_Candidate(lms_file, Path(spooled), entry.shown, nesting))


def _choose(candidates: list[_Candidate], skipped: list[str]) -> list[_Candidate]:
    """One file per student id, by the LMS's own record (`_Candidate.rank`); a student id that two
    LMS records (two people) share is nobody's: both are reported."""
    by_student: dict[str, list[_Candidate]] = {}
    for c in candidates:
        by_student.setdefault(c.lms.student, []).append(c)
    chosen = []
    for student, mine in sorted(by_student.items()):
        people = sorted({_person(c.lms) for c in mine})
        if len(people) > 1:
            who = ", ".join(f"{lms} {uid}" for lms, uid in people)
            for c in mine:
                hint = " (Canvas: --canvas-student-id user_id)" if any(lms == "canvas" for lms, _ in people) else ""
                skipped.append(f"{c.source}: two LMS records are both filed as {student} ({who}); none filed{hint}")
            continue
        mine.sort(key=lambda c: c.source)
        best = max(mine, key=lambda c: c.rank)
        for c in mine:
            if c is not best:
                skipped.append(f"{c.source}: {student} also has {best.source}, which is filed ({_why(best, c)})")
        chosen.append(best)
    return chosen


def _why(best: _Candidate, other: _Candidate) -> str:
    if best.rank[0] != other.rank[0]:
        return "a notebook"
    if best.rank[1] != other.rank[1]:
        return "a later submission"
    if best.rank[2] != other.rank[2]:
        return "listed by the LMS itself, not found in a zip"
    return "first by name: the download does not say which is newer"


def _inside(dest: Path, name: str) -> Path:
    """`dest/name`, checked to stay inside `dest`: one component, no symbolic link on the way."""
    root = dest.resolve()
    folder = root / safe_student_id(name)
    if folder.is_symlink() or folder.resolve().parent != root:
        raise LmsError(f"{printable(str(folder))} is a symbolic link or leaves {printable(str(root))}")
    return folder


def _file(candidate: _Candidate, dest: Path, assignment_id: str) -> Filed:
    """Write one student's folder: the submission, nothing else (who and when: `_record`)."""
    dest.mkdir(parents=True, exist_ok=True)
    lms_file = candidate.lms
    folder = _inside(dest, lms_file.student)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir()
    target = folder / f"{assignment_id}{candidate.spooled.suffix}"
    shutil.copyfile(candidate.spooled, target)
    return Filed(lms_file.student, target, candidate.source, lms_file)


def _record(dest: Path, filed: list[Filed]) -> None:
    """Add `filed` to dest's COLLECTED (students collected earlier into `dest` are kept)."""
    records = collected(dest)
    for f in filed:
        records[f.student] = {
            "student": f.student, "file": f.path.name, "lms": f.lms.lms, "name": f.lms.name,
            "lms_user_id": f.lms.lms_user_id, "source": f.source, "late_mark": f.lms.late,
            "submitted_at": f.lms.submitted_at.isoformat() if f.lms.submitted_at else None}
    fd, tmp = tempfile.mkstemp(prefix=COLLECTED, dir=dest)
    with os.fdopen(fd, "w") as out:
        json.dump(dict(sorted(records.items())), out, indent=2)
        out.write("\n")
    os.replace(tmp, dest / COLLECTED)  # replaces a link of that name rather than writing through it


# --- Canvas gradebook import -------------------------------------------------------------------

CANVAS_FIXED = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")


def read_canvas_roster(path: Path) -> tuple[list[dict[str, str]], list[str]]:
    """A Canvas gradebook export (Grades > Export): its student rows and its header."""
    with path.open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        header = list(reader.fieldnames or [])
        missing = [c for c in ("Student", "ID") if c not in header]
        if missing:
            raise LmsError(f"{path}: not a Canvas gradebook export (no {', '.join(missing)} column); export the "
                           f"gradebook from Canvas (Grades > Export) and pass that file")
        rows = [r for r in reader if r.get("Student", "").strip() and "Points Possible" not in r.get("Student", "")
                and r.get("ID", "").strip()]
    return rows, header


@dataclass(frozen=True)
class CanvasImport:
    """What `canvas_csv` could not match: results without a roster row (each a printable line, why for
    an ambiguous one) and roster students without a result (printable names)."""

    unmatched: list[str]
    absent: list[str]


def canvas_csv(out: Path, rows: list[dict[str, Any]], roster_path: Path, column: str,
               missing: str = "zero") -> CanvasImport:
    """Write the grades in Canvas's import layout: Student, ID, SIS User ID, SIS Login ID, Section,
    then one column `column` (the assignment's column as Canvas names it, e.g.
    'Attention scoring (4567)') with the final scores, after a Points Possible row. `rows`:
    {student_id, score, max_score, lms_user_id (optional)}. A student is matched to the roster in
    separate name spaces, in order: Canvas user id against ID; student id against SIS Login ID,
    SIS User ID, ID; student id against Canvas's file-name form of the name. A key that is two roster
    rows, or two students matching one roster row, is ambiguous: none of them is written.
    A roster student no result matches gets 0 (`missing` "zero") or an empty cell, which Canvas's
    import leaves as it is ("blank")."""
    roster, _ = read_canvas_roster(roster_path)

    def index(column: Callable[[dict[str, str]], str]) -> dict[str, list[int]]:
        found: dict[str, list[int]] = {}
        for i, r in enumerate(roster):
            key = column(r).strip().lower()
            if key:
                found.setdefault(key, []).append(i)
        return found

    by_id = index(lambda r: r.get("ID", ""))
    # Separate name spaces, in a fixed order: the Canvas user id against ID only; the student id
    # against SIS Login ID, SIS User ID, ID; names last. The first name space the key is in decides.
    spaces = [(by_id, "lms_user_id", "ID"), (index(lambda r: r.get("SIS Login ID", "")), "student_id", "SIS Login ID"),
              (index(lambda r: r.get("SIS User ID", "")), "student_id", "SIS User ID"), (by_id, "student_id", "ID"),
              (index(lambda r: canvas_name(r.get("Student", ""))), "student_id", "name")]
    unmatched = []
    matched: dict[int, list[int]] = {}  # roster row -> result rows
    touched: set[int] = set()  # roster rows some result matched, ambiguously too: never "absent"
    max_score = max((float(r["max_score"]) for r in rows), default=0.0)
    for n, r in enumerate(rows):
        student = str(r["student_id"])
        hits: Optional[list[int]] = None
        where = ""
        for keys, field_name, space in spaces:
            key = str(r.get(field_name) or "").strip().lower()
            if key and key in keys:
                hits, where = keys[key], f"{space} {key!r}"
                break
        if hits is not None:
            touched.update(hits)
        if hits is None:
            unmatched.append(student)
        elif len(hits) > 1:
            unmatched.append(f"{student} (ambiguous: {where} is {len(hits)} roster rows)")
        else:
            matched.setdefault(hits[0], []).append(n)
    lines: list[list[str]] = []
    for i, ns in matched.items():
        if len(ns) > 1:
            others = ", ".join(str(rows[n]["student_id"]) for n in ns)
            unmatched += [f"{rows[n]['student_id']} (ambiguous: {others} all match the roster row of "
                          f"{roster[i].get('Student', '')!r})" for n in ns]
            continue
        lines.append([roster[i].get(c, "") for c in CANVAS_FIXED] + [f"{float(rows[ns[0]]['score']):g}"])
    absent = [i for i in range(len(roster)) if i not in touched]
    lines += [[roster[i].get(c, "") for c in CANVAS_FIXED] + ["0" if missing == "zero" else ""] for i in absent]
    lines.sort(key=lambda line: line[0].lower())
    write_csv(out, [*CANVAS_FIXED, column], [["    Points Possible", "", "", "", "", f"{max_score:g}"], *lines])
    return CanvasImport([printable(u) for u in unmatched], [printable(roster[i].get("Student", "")) for i in absent])


_ID_SUFFIX = re.compile(r"\s*\(\d+\)\s*$")  # Canvas ends an assignment's column with its id


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def canvas_column(roster_header: list[str], title: str, assignment_id: str,
                  canvas_id: Optional[int] = None) -> tuple[str, str]:
    """The roster's column for this assignment and how it was found: by the Canvas id course.yml
    gives (the "(771234)" Canvas ends the column's name with), else by the title or the assignment
    id within the column's name ("Assignment 02: Attention scoring functions (771234)"). No
    column, or more than one, is an LmsError that names the columns (Canvas would otherwise
    import the grades as a new assignment)."""
    columns = [h for h in roster_header if h not in CANVAS_FIXED and _ID_SUFFIX.search(h)]
    if canvas_id is not None:
        found = [h for h in columns if re.search(rf"\({canvas_id}\)\s*$", h)]
        how = f"by its Canvas id {canvas_id} (course.yml canvas_id)"
    else:
        wanted = [_words(title), _words(assignment_id.replace("_", " "))]
        found = [h for h in columns if any(f" {w} " in f" {_words(_ID_SUFFIX.sub('', h))} " for w in wanted if w)]
        how = f"by the title {title!r}"
    if len(found) == 1:
        return found[0], how
    listed = ", ".join(repr(h) for h in columns) or "none"
    if found:
        raise LmsError(f"{len(found)} columns of the roster match {how[3:]}: {', '.join(map(repr, found))}; "
                       f"give the assignment's canvas_id in course.yml or --canvas-column")
    advice = ("check the assignment's canvas_id in course.yml" if canvas_id is not None
              else "give the assignment's canvas_id in course.yml")
    raise LmsError(f"no column of the roster matches {how[3:]} (its assignment columns: {listed}); {advice} or "
                   f"--canvas-column, or add the assignment in Canvas and export the gradebook again")
