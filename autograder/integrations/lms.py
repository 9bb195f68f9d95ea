"""Files downloaded from learning-management systems, and grades going back to them.

What instructors download, and what it becomes (`parse`):

* **Canvas** "Download Submissions": `<name>[_LATE]_<user id>_<attachment id>_<file>`, e.g.
  `eve_12345_67890_02_attention_scoring.ipynb` or `doejane_LATE_12345_67890_02_attention_scoring-1.ipynb`
  (`<name>` is the student's sortable name, lower case, letters, digits and underscores only;
  anonymous grading writes `anon_<id>` instead of name and user id; a re-upload gets `-1`, `-2`).
  Student id: the name (or, with `student_id="user_id"`, the Canvas user id). Canvas's download
  has no submission times, only the LATE mark, which is kept as a note.
* **Moodle** "Download all submissions": `<Full Name>_<participant id>_assignsubmission_file_<file>`,
  or a folder `<Full Name>_<participant id>_assignsubmission_file_/` holding the files. Student id:
  the full name in lower case with `_` for spaces (`mary_ann_smith`).
* **Gradescope** "Export Submissions": `submission_metadata.yml` beside one `submission_<id>/`
  folder per submission. Student id: the submitter's SID, else their e-mail's local part; the
  submission time is `:created_at:`.
* **Plain** `<student>_<notebook>.ipynb` (the student id may contain underscores, the notebook
  is one of the assignment's: `mary_ann_02_attention_scoring.ipynb`).

Every assignment has a single notebook, so any notebook a student uploaded is filed under the
released notebook's name (`02_attention_scoring-1.ipynb`, `Copy of 02_attention_scoring.ipynb`).

`nbgrader_bridge.LmsCollector` is nbgrader zip_collect's collector plugin on these parsers; `collect` files an
LMS download (zip or folder) as `<student>/<assignment>.ipynb` for `course grade` (`course collect`);
`canvas_csv` writes grades in the layout Canvas's gradebook imports.
"""
from __future__ import annotations

import csv
import datetime as dt
import json
import re
import shutil
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml

from autograder.grading.late import parse_time, utc
from autograder.spreadsheet import write_csv

CANVAS = re.compile(r"^(?:(?:(?P<anon_late>LATE)_)?(?P<anon>anon_[A-Za-z0-9]+)"
                    r"|(?P<name>.+?)(?:_(?P<late>LATE))?_(?P<uid>\d+))_(?P<aid>\d+)_(?P<file>.+)$")
MOODLE = re.compile(r"^(?P<name>.+?)_(?P<pid>\d+)_assignsubmission_(?:file|onlinetext)_(?P<file>.*)$")
GRADESCOPE_FOLDER = re.compile(r"^submission_(?P<sid>\d+)$")
GRADESCOPE_METADATA = "submission_metadata.yml"
#: A Canvas re-upload (`name-1.ipynb`) or a browser's copy (`name (1).ipynb`).
COPY_SUFFIX = re.compile(r"(?:-\d+| \(\d+\))$")


class LmsError(Exception):
    """A download cannot be filed as it is; the message says which file and why."""


@dataclass(frozen=True)
class LmsFile:
    """One downloaded file, as its LMS named it."""

    student: str  # the course's student id
    file: str  # the student's own file name (for Canvas without its copy suffix)
    lms: str  # canvas, moodle, gradescope, plain
    lms_user_id: str = ""  # Canvas user id, Moodle participant id, Gradescope submission id
    name: str = ""  # the student's name as the LMS wrote it
    late: bool = False  # Canvas's LATE mark
    submitted_at: Optional[dt.datetime] = None  # aware, when the LMS says (Gradescope)
    extra: dict[str, Any] = field(default_factory=dict)


def slug(name: str) -> str:
    """'Mary Ann Smith' -> 'mary_ann_smith' (a student id that is a safe folder name)."""
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


def canvas_name(sortable_name: str) -> str:
    """Canvas's file-name form of a sortable name ('Doe, Jane' -> 'doejane'), as content_zipper does."""
    name = re.sub(r"[^\w]", "", sortable_name)
    name = re.sub(r"_(\d+)_", r"\1", name)
    return name.lower()


def notebook_stem(file: str) -> str:
    stem = file.rsplit(".", 1)[0]
    for prefix in ("Copy of ", "copy_of_"):
        if stem.startswith(prefix):
            stem = stem[len(prefix):]
    return COPY_SUFFIX.sub("", stem)


def parse(relpath: str, notebooks: tuple[str, ...] = (), student_id: str = "name",
          gradescope: Optional[dict[str, dict[str, Any]]] = None) -> Optional[LmsFile]:
    """What an LMS's file name (relative to the download's root) says, or None if no known format.

    `notebooks`: the assignment's notebook names (for the plain `<student>_<notebook>` form);
    `gradescope`: a Gradescope export's metadata by folder name (read_gradescope_export)."""
    parts = Path(relpath).parts
    base = parts[-1]
    for i, folder in enumerate(parts[:-1]):
        if gradescope is not None and folder in gradescope:
            return _gradescope(folder, gradescope[folder], "/".join(parts[i + 1:]))
        m = MOODLE.match(folder)
        if m:
            return LmsFile(slug(m["name"]), "/".join(parts[i + 1:]), "moodle", m["pid"], m["name"])
    m = MOODLE.match(base)
    if m and m["file"]:
        return LmsFile(slug(m["name"]), m["file"], "moodle", m["pid"], m["name"])
    plain = None
    for nb in sorted(notebooks, key=len, reverse=True):
        if base.endswith("_" + nb) and len(base) > len(nb) + 1:
            plain = LmsFile(base[: -len(nb) - 1], nb, "plain")
            break
    m = CANVAS.match(base)
    canvas = None
    if m:
        uid = m["anon"] or m["uid"]
        student = uid if m["anon"] or student_id == "user_id" else m["name"]
        canvas = LmsFile(student, m["file"], "canvas", uid, m["name"] or "",
                         late=bool(m["late"] or m["anon_late"]), extra={"attachment_id": m["aid"]})
    known = {nb.rsplit(".", 1)[0] for nb in notebooks}
    if canvas is not None and (plain is None or notebook_stem(canvas.file) in known):
        return canvas  # `<name>_<digits>_<digits>_` and a file name that is the notebook's
    return plain or canvas


def _gradescope(folder: str, meta: dict[str, Any], file: str) -> LmsFile:
    submitters = meta.get("submitters") or []
    first = submitters[0] if submitters else {}
    sid = str(first.get("sid") or "").strip()
    email = str(first.get("email") or "").strip()
    student = sid or (email.split("@")[0] if email else "") or slug(str(first.get("name") or folder))
    created = meta.get("created_at")
    when = None
    if isinstance(created, dt.datetime):
        when = utc(created)
    elif created:
        when = utc(parse_time(str(created)))
    return LmsFile(student, file, "gradescope", folder.split("_", 1)[-1], str(first.get("name") or ""),
                   submitted_at=when, extra={"group": [str(s.get("sid") or s.get("email") or "") for s in submitters[1:]]})


def read_gradescope_export(root: Path) -> Optional[dict[str, dict[str, Any]]]:
    """{folder: {submitters: [...], created_at: ...}} from a Gradescope export's metadata, whose
    keys are Ruby symbols (`:submitters:`, `:sid:`); None when `root` is not such an export."""
    path = root / GRADESCOPE_METADATA
    if not path.is_file():
        return None
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise LmsError(f"{path}: not readable YAML: {exc}") from None

    def plain(value: Any) -> Any:
        if isinstance(value, dict):
            return {str(k).lstrip(":"): plain(v) for k, v in value.items()}
        if isinstance(value, list):
            return [plain(v) for v in value]
        return value

    return {str(k): plain(v) for k, v in raw.items() if isinstance(v, dict)}


def file_id(lms_file: LmsFile, notebooks: tuple[str, ...]) -> str:
    """The name the submission is filed under: the assignment's notebook when it has one and this
    is a notebook (whatever the student or the LMS called it), else the student's own name."""
    if lms_file.file.endswith(".ipynb") and len(notebooks) == 1:
        return notebooks[0]
    for nb in notebooks:
        if notebook_stem(lms_file.file) == nb.rsplit(".", 1)[0]:
            return nb
    return lms_file.file


# --- `course collect`: the same for `course grade` ---------------------------------------------

@dataclass
class Filed:
    student: str
    path: Path
    source: str
    lms: LmsFile


def collect(source: Path, assignment_id: str, dest: Path, student_id: str = "name") -> tuple[list[Filed], list[str]]:
    """File an LMS download (a zip or a folder) as `dest/<student>/<assignment>.ipynb` (with
    timestamp.txt when the download says when, and lms.json with what the LMS said).
    Returns (filed, skipped files with why). A student with two notebooks keeps the later
    (Gradescope) or raises LmsError (no times to choose by)."""
    with tempfile.TemporaryDirectory(prefix="course-collect-") as tmp:
        root = Path(tmp) / "download"
        if source.is_file() and zipfile.is_zipfile(source):
            with zipfile.ZipFile(source) as z:
                z.extractall(root)
            _unzip_nested(root)
        elif source.is_dir():
            shutil.copytree(source, root)
        else:
            raise LmsError(f"{source}: not a zip file or a folder of downloaded submissions")
        exports = {p.parent: read_gradescope_export(p.parent) for p in root.rglob(GRADESCOPE_METADATA)}
        notebooks = (f"{assignment_id}.ipynb",)
        chosen: dict[str, Filed] = {}
        skipped: list[str] = []
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            rel = path.relative_to(root)
            if path.name == GRADESCOPE_METADATA or "__MACOSX" in rel.parts or path.name.startswith("."):
                continue
            if path.suffix not in (".ipynb", ".py"):
                skipped.append(f"{rel}: not a notebook or a .py file")
                continue
            export_root = next((r for r in exports if r in path.parents), None)
            found = parse(str(path.relative_to(export_root) if export_root else rel), notebooks, student_id,
                          exports.get(export_root) if export_root else None)
            if found is None:
                skipped.append(f"{rel}: not a Canvas, Moodle, Gradescope or <student>_{assignment_id}.ipynb name")
                continue
            if path.stem == "attention_support" or path.name.startswith("test_"):
                skipped.append(f"{rel}: given code or tests, not a submission")
                continue
            filed = Filed(found.student, path, str(rel), found)
            before = chosen.get(found.student)
            if before is not None:
                if path.suffix != before.path.suffix and ".ipynb" in (path.suffix, before.path.suffix):
                    if path.suffix == ".py":
                        skipped.append(f"{rel}: {found.student} also uploaded a notebook, which is graded")
                        continue
                    skipped.append(f"{before.source}: {found.student} also uploaded a notebook, which is graded")
                elif found.submitted_at and before.lms.submitted_at:
                    older = min((filed, before), key=lambda f: f.lms.submitted_at or dt.datetime.min)
                    skipped.append(f"{older.source}: an older submission of {found.student}")
                    if older is filed:
                        continue
                else:
                    raise LmsError(f"{found.student} has two files, {before.source} and {rel}, and the download "
                                   f"does not say which is newer; keep one")
            chosen[found.student] = filed
        dest.mkdir(parents=True, exist_ok=True)
        for student, filed in sorted(chosen.items()):
            folder = dest / student
            if folder.exists():
                shutil.rmtree(folder)
            folder.mkdir(parents=True)
            target = folder / (f"{assignment_id}{filed.path.suffix}")
            shutil.copyfile(filed.path, target)
            if filed.lms.submitted_at is not None:
                (folder / "timestamp.txt").write_text(filed.lms.submitted_at.strftime("%Y-%m-%d %H:%M:%S.%f UTC"))
            (folder / "lms.json").write_text(json.dumps({
                "lms": filed.lms.lms, "student": student, "name": filed.lms.name, "lms_user_id": filed.lms.lms_user_id,
                "file": filed.source, "late_mark": filed.lms.late}, indent=2) + "\n")
            filed.path = target
        return list(chosen.values()), skipped


def _unzip_nested(root: Path) -> None:
    """Students' own zips inside an LMS download (Canvas keeps them as uploaded)."""
    for inner in sorted(root.rglob("*.zip")):
        if zipfile.is_zipfile(inner):
            target = inner.with_suffix("")
            with zipfile.ZipFile(inner) as z:
                z.extractall(target)
            inner.unlink()


def lms_record(folder: Path) -> dict[str, Any]:
    """What `course collect` recorded about a student's folder (lms.json), if anything."""
    path = folder / "lms.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


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


def canvas_csv(out: Path, rows: list[dict[str, Any]], roster_path: Path, column: str) -> list[str]:
    """Write the grades in Canvas's import layout: Student, ID, SIS User ID, SIS Login ID, Section,
    then one column `column` (the assignment's column as Canvas names it, e.g.
    'Attention scoring (4567)') with the final scores, after a Points Possible row. `rows`:
    {student_id, score, max_score, lms_user_id (optional)}. A student is matched to the roster by
    Canvas user id, SIS login id, SIS user id or Canvas's file-name form of their name.
    Returns the students that match no roster row (their grades are not in the file)."""
    roster, _ = read_canvas_roster(roster_path)
    keys: dict[str, dict[str, str]] = {}
    for r in roster:
        for key in (r.get("ID", ""), r.get("SIS Login ID", ""), r.get("SIS User ID", ""),
                    canvas_name(r.get("Student", ""))):
            key = key.strip().lower()
            if key:
                keys.setdefault(key, r)
    unmatched = []
    lines: list[list[str]] = []
    max_score = max((float(r["max_score"]) for r in rows), default=0.0)
    for r in rows:
        match = None
        for key in (str(r.get("lms_user_id") or ""), str(r["student_id"])):
            if key and key.lower() in keys:
                match = keys[key.lower()]
                break
        if match is None:
            unmatched.append(str(r["student_id"]))
            continue
        lines.append([match.get(c, "") for c in CANVAS_FIXED] + [f"{float(r['score']):g}"])
    lines.sort(key=lambda line: line[0].lower())
    write_csv(out, [*CANVAS_FIXED, column], [["    Points Possible", "", "", "", "", f"{max_score:g}"], *lines])
    return unmatched


def canvas_column(roster_header: list[str], title: str, assignment_id: str) -> str:
    """The roster's column for this assignment ('<title> (<Canvas id>)'), else the title (Canvas
    then creates a new assignment column on import)."""
    for h in roster_header:
        base = re.sub(r"\s*\(\d+\)$", "", h).strip()
        if base.lower() in (title.lower(), assignment_id.lower()):
            return h
    return title
