"""Who a downloaded file is: the file names and export metadata of learning-management systems.

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

Grading reads these rules to name a submission's student (grading/export.py, pool.py);
integrations/lms.py uses them to file a download (`collect`).
"""
from __future__ import annotations

import datetime as dt
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml

from autograder.deadlines import parse_time, utc
from autograder.printable import printable

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
    """'Mary Ann Smith' -> 'mary_ann_smith', 'Иван Петров' -> 'иван_петров' (a student id that is a
    safe folder name: letters of any script and digits, `_` between words; '' when none)."""
    return re.sub(r"[\W_]+", "_", unicodedata.normalize("NFC", name).lower()).strip("_")


def moodle_student(name: str, pid: str) -> str:
    """A Moodle student's id: the slug of their full name, else (no letter or digit in it) the participant id."""
    return slug(name) or pid


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
            return gradescope_file(folder, gradescope[folder], "/".join(parts[i + 1:]))
        m = MOODLE.match(folder)
        if m:
            return LmsFile(moodle_student(m["name"], m["pid"]), "/".join(parts[i + 1:]), "moodle", m["pid"],
                           m["name"])
    m = MOODLE.match(base)
    if m and m["file"]:
        return LmsFile(moodle_student(m["name"], m["pid"]), m["file"], "moodle", m["pid"], m["name"])
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


def gradescope_file(folder: str, meta: dict[str, Any], file: str) -> LmsFile:
    submitters = meta.get("submitters") or []
    if not isinstance(submitters, list) or not all(isinstance(s, dict) for s in submitters):
        raise ValueError(f"{folder}: submitters is not a list of mappings")
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
    person = email.lower() or (f"sid {sid}" if sid else f"submission {folder}")  # Gradescope's own user identity
    return LmsFile(student, file, "gradescope", folder.split("_", 1)[-1], str(first.get("name") or ""),
                   submitted_at=when, extra={"person": person,
                                             "group": [str(s.get("sid") or s.get("email") or "") for s in submitters[1:]]})


def read_gradescope_export(root: Path) -> Optional[dict[str, dict[str, Any]]]:
    """{folder: {submitters: [...], created_at: ...}} from a Gradescope export's metadata, whose
    keys are Ruby symbols (`:submitters:`, `:sid:`); None when `root` is not such an export."""
    path = root / GRADESCOPE_METADATA
    if not path.is_file():
        return None
    return gradescope_metadata(path.read_text(), str(path))


#: How deeply a Gradescope export's metadata may nest (it uses 4 levels: folder, submitters, list, fields).
METADATA_DEPTH = 16


class _MetadataLoader(yaml.SafeLoader):
    """SafeLoader without aliases or anchors (a few hundred bytes of aliases expand to gigabytes)
    and with at most METADATA_DEPTH nested collections."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise yaml.YAMLError(f"YAML aliases and anchors are not accepted (line {event.start_mark.line + 1})")
        self._depth += 1
        try:
            if self._depth > METADATA_DEPTH:
                raise yaml.YAMLError(f"nested more than {METADATA_DEPTH} levels deep")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def gradescope_metadata(text: str, where: str) -> dict[str, dict[str, Any]]:
    """The metadata, each submission's entry checked to give a submission (`gradescope_file`); any
    failure is one LmsError naming the file, never a traceback."""
    try:
        raw = yaml.load(text, Loader=_MetadataLoader) or {}  # a SafeLoader
        if not isinstance(raw, dict):
            raise LmsError(f"{where}: not a Gradescope export's metadata (a mapping of submission folders)")

        def plain(value: Any) -> Any:
            if isinstance(value, dict):
                return {str(k).lstrip(":"): plain(v) for k, v in value.items()}
            if isinstance(value, list):
                return [plain(v) for v in value]
            return value

        metadata = {str(k): plain(v) for k, v in raw.items() if isinstance(v, dict)}
        for folder, meta in metadata.items():
            gradescope_file(folder, meta, "")  # raises on a malformed entry
        return metadata
    except LmsError:
        raise
    except Exception as exc:  # YAML errors, and malformed values: a wrong type, an impossible date
        raise LmsError(f"{where}: not a readable Gradescope export's metadata ({type(exc).__name__}: "
                       f"{printable(str(exc))[:300]})") from None


def file_id(lms_file: LmsFile, notebooks: tuple[str, ...]) -> str:
    """The name the submission is filed under: the assignment's notebook when it has one and this
    is a notebook (whatever the student or the LMS called it), else the student's own name."""
    if lms_file.file.endswith(".ipynb") and len(notebooks) == 1:
        return notebooks[0]
    for nb in notebooks:
        if notebook_stem(lms_file.file) == nb.rsplit(".", 1)[0]:
            return nb
    return lms_file.file
