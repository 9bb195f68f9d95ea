"""No student file names another student or dates a submission, on any collect or grade path.

nbgrader zip_collect (nbgrader_config.py: `LmsExtractor` files the download by `course collect`'s
rule, `LmsCollector` takes only what it recorded) and `course grade` on a folder of student folders
(identity and time only from lms.COLLECTED at the class folder's root, the LMS's metadata at an
export's root or nbgrader's layout). Each attack below is a download or class folder a student
could shape, run through the real command line; each failed on 087dfd0 (the comment says how).
"""
from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from nbgrader.utils import parse_utc

from autograder import config
from autograder.integrations import lms
from kit_helpers import zip_collect_course

A = "02_attention_scoring"
REPO = config.REPO_ROOT


def _notebook(text: str) -> str:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"# {text}\nx = 1\n")]
    return nbformat.writes(nb)


def _zip_bytes(files: dict[str, bytes | str], level: int = 6) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return buffer.getvalue()


def _size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) if root.exists() else 0


# --- nbgrader zip_collect ------------------------------------------------------------------------

def _zip_collect(tmp_path: Path, download: dict[str, bytes | str]) -> tuple[subprocess.CompletedProcess, Path]:
    """`nbgrader zip_collect A` in a fresh course whose archive/ holds `download` as canvas.zip."""
    root = tmp_path / "course"
    archive = zip_collect_course(root, A, _notebook("released"))
    (archive / "canvas.zip").write_bytes(_zip_bytes(download))
    proc = subprocess.run([sys.executable, "-m", "nbgrader", "zip_collect", A], cwd=root, capture_output=True,
                          text=True, timeout=300)
    return proc, root


def _submitted(root: Path) -> dict[str, str]:
    """{student: their notebook's text} in submitted/."""
    folder = root / "submitted"
    return {p.name: (p / A / f"{A}.ipynb").read_text() for p in folder.iterdir()} if folder.is_dir() else {}


def test_zip_collect_lms_names_inside_a_students_zip_belong_to_the_uploader(tmp_path):
    """attack: mallory's upload is a zip holding `alice_<id>_<later id>_<assignment>.ipynb`.
    expect: alice keeps her own notebook, the planted one is mallory's, exit 0.
    (087dfd0: nbgrader extracted the zip and the collector filed the planted file as alice's:
    two files for alice without times, so zip_collect aborted the whole class.)"""
    proc, root = _zip_collect(tmp_path, {
        f"alice_111_222_{A}.ipynb": _notebook("alice's own"),
        "mallory_333_444_hw.zip": _zip_bytes({f"alice_111_999_{A}.ipynb": _notebook("planted")}),
    })
    assert proc.returncode == 0, proc.stderr[-3000:]
    submitted = _submitted(root)
    assert set(submitted) == {"alice", "mallory"}
    assert "alice's own" in submitted["alice"] and "planted" in submitted["mallory"]


def test_zip_collect_a_planted_gradescope_export_names_no_one_and_dates_nothing(tmp_path):
    """attack: a LATE Canvas upload that is a zip holding a Gradescope export's layout: metadata
    naming alice, dated years early, and a submission folder. expect: mallory's, no timestamp.txt.
    (087dfd0: filed as alice's, with timestamp.txt 2020-01-01.)"""
    planted = _zip_bytes({
        lms.GRADESCOPE_METADATA: "submission_111:\n  :submitters:\n  - :sid: 'alice'\n"
                                 "  :created_at: 2020-01-01 00:00:00.000000000 +00:00\n",
        f"submission_111/{A}.ipynb": _notebook("mallory")})
    proc, root = _zip_collect(tmp_path, {"mallory_LATE_333_444_hw.zip": planted})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert set(_submitted(root)) == {"mallory"}
    assert not (root / "submitted" / "mallory" / A / "timestamp.txt").exists()


def test_zip_collect_an_unsafe_student_id_is_skipped_and_nothing_written_outside(tmp_path):
    """attack: a Gradescope export whose SID is a path (`../../outside`). expect: that submission is
    skipped with a line saying why, the others collected, nothing written outside submitted/.
    (087dfd0: filed as course/../outside/02_attention_scoring/, outside the course.)"""
    metadata = ("submission_111:\n  :submitters:\n  - :sid: '../../outside'\n"
                "  :created_at: 2026-09-29 10:30:00.000000000 -07:00\n"
                "submission_222:\n  :submitters:\n  - :sid: 's-dan'\n"
                "  :created_at: 2026-09-28 12:00:00.000000000 +00:00\n")
    proc, root = _zip_collect(tmp_path, {
        f"export/{lms.GRADESCOPE_METADATA}": metadata,
        f"export/submission_111/{A}.ipynb": _notebook("escape"),
        f"export/submission_222/{A}.ipynb": _notebook("dan"),
    })
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert set(_submitted(root)) == {"s-dan"}
    assert "not a safe folder name" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["course"]
    assert not (root / "outside").exists()
    stamp = parse_utc((root / "submitted" / "s-dan" / A / "timestamp.txt").read_text())
    assert stamp.isoformat() == "2026-09-28T12:00:00"  # the export's time, nbgrader's naive UTC


def test_zip_collect_a_zip_bomb_is_skipped_and_never_unpacked(tmp_path):
    """attack: a 100 KB upload holding 100 MB of zeros as the notebook. expect: skipped with a line
    naming it, the others collected, the course folder stays small.
    (087dfd0: nbgrader unpacked the 100 MB into extracted/ and filed it as mallory's notebook.)"""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        with z.open(f"{A}.ipynb", "w") as f:
            for _ in range(100):
                f.write(bytes(1 << 20))
    proc, root = _zip_collect(tmp_path, {"mallory_333_444_hw.zip": buffer.getvalue(),
                                         f"eve_12345_67890_{A}.ipynb": _notebook("eve")})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert set(_submitted(root)) == {"eve"}
    assert "compressed more than 200:1" in proc.stderr and "mallory" in proc.stderr
    assert _size(root) < 1_000_000


def test_zip_collect_refuses_an_extracted_folder_it_did_not_file(tmp_path):
    """A custom or default extractor (nbgrader's unpacks by the students' names): the collector
    fails loudly instead of reading file names."""
    root = tmp_path / "course"
    archive = zip_collect_course(root, A, _notebook("released"))
    (archive / f"eve_12345_67890_{A}.ipynb").write_text(_notebook("eve"))
    proc = subprocess.run([sys.executable, "-m", "nbgrader", "zip_collect", A,
                           "--extractor=nbgrader.plugins.ExtractorPlugin"], cwd=root, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode != 0 and "was not filed by LmsExtractor" in proc.stderr, proc.stderr[-3000:]
    assert not (root / "submitted").exists()


# --- course grade on a folder of student folders --------------------------------------------------

PLANTED_RECORD = {"lms": "canvas", "student": "alice", "name": "alice", "lms_user_id": "111",
                  "file": f"alice_111_222_{A}.ipynb", "late_mark": False}
EARLY = "2020-01-01 00:00:00.000000 UTC"


def _plant(folder: Path, text: str) -> None:
    """A student's folder: their notebook, and the identity and time files they chose."""
    folder.mkdir(parents=True)
    (folder / f"{A}.ipynb").write_text(_notebook(text))
    (folder / "lms.json").write_text(json.dumps(PLANTED_RECORD))
    (folder / "timestamp.txt").write_text(EARLY)
    (folder / lms.COLLECTED).write_text(json.dumps({"alice": {**PLANTED_RECORD, "file": f"{A}.ipynb"}}))


def _course_grade(directory: Path, out: Path) -> dict[str, dict]:
    proc = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", A, str(directory), "--out", str(out),
                           "--jobs", "1", "-q"], capture_output=True, text=True, timeout=600, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {p.stem: json.loads(p.read_text())["extra_data"] for p in out.glob("*.json")}


def test_course_grade_keeps_identity_and_time_where_the_lms_and_course_tools_wrote_them(tmp_path):
    """attack: planted lms.json ({"student": "alice"}), timestamp.txt (2020) and a class record in
    the student's own folder of (1) a Gradescope export graded directly, (2) a plain folder of
    uploads. expect: (1) the export's SID and time, (2) the folder's name and no time.
    (087dfd0: both were graded as alice's, submitted 2020-01-01.)"""
    export = tmp_path / "export"
    export.mkdir()
    (export / lms.GRADESCOPE_METADATA).write_text(
        "submission_111:\n  :submitters:\n  - :sid: 's-mallory'\n  :created_at: 2026-10-30 12:00:00.000000000 +00:00\n")
    _plant(export / "submission_111", "mallory")
    plain = tmp_path / "uploads"
    _plant(plain / "mallory", "mallory")
    (plain / "bob").mkdir()
    (plain / "bob" / f"{A}.ipynb").write_text(_notebook("bob"))

    graded = _course_grade(export, tmp_path / "out-export")
    assert graded["submission_111"]["student"] == "s-mallory"
    assert graded["submission_111"]["late"]["time_source"] == "Gradescope export"
    assert graded["submission_111"]["late"]["submitted_at"].startswith("2026-10-30")

    graded = _course_grade(plain, tmp_path / "out-plain")
    assert {name: extra["student"] for name, extra in graded.items()} == {"mallory": "mallory", "bob": "bob"}
    assert graded["mallory"]["late"]["submitted_at"] in ("", None)
    assert "lms" not in graded["mallory"]


def test_course_grade_reads_course_collects_record_and_only_for_what_it_filed(tmp_path):
    """`course collect` then `course grade`: the record at the class folder's root names each
    student and dates Gradescope's submissions; a folder added by hand afterwards, with a planted
    lms.json and timestamp.txt, is only its folder's name."""
    download = tmp_path / "gs.zip"
    download.write_bytes(_zip_bytes({
        f"export/{lms.GRADESCOPE_METADATA}": "submission_111:\n  :submitters:\n  - :sid: 's-carol'\n"
                                             "  :created_at: 2026-09-29 10:30:00.000000000 -07:00\n",
        f"export/submission_111/{A}.ipynb": _notebook("carol")}))
    klass = tmp_path / "class"
    proc = subprocess.run([sys.executable, "-m", "autograder.cli", "collect", A, str(download), "--to", str(klass)],
                          capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    _plant(klass / "mallory", "mallory")
    (klass / "mallory" / lms.COLLECTED).unlink()
    graded = _course_grade(klass, tmp_path / "out")
    assert graded["s-carol"]["student"] == "s-carol" and graded["s-carol"]["lms"]["lms"] == "gradescope"
    assert graded["s-carol"]["late"]["submitted_at"].startswith("2026-09-29")
    assert graded["mallory"]["student"] == "mallory" and "lms" not in graded["mallory"]
    assert graded["mallory"]["late"]["submitted_at"] in ("", None)


@pytest.mark.parametrize("record", [
    {"../x": {"student": "../x", "file": f"{A}.ipynb"}},
    {"alice": {"student": "bob", "file": f"{A}.ipynb"}},
    {"alice": {"student": "alice", "file": "../../etc/passwd"}},
    ["alice"],
])
def test_a_class_record_that_is_not_collects_shape_names_no_one(tmp_path, record):
    (tmp_path / lms.COLLECTED).write_text(json.dumps(record))
    assert lms.collected(tmp_path) == {}


def test_a_folder_of_downloads_keeps_a_students_loose_zip_as_theirs(tmp_path):
    """archive/ as an instructor fills it: a Canvas download unpacked (its files loose, mallory's
    upload a zip holding a planted Canvas name for alice) beside another download kept zipped. A
    top-level zip is a download of its own only when no LMS name makes it a student's file."""
    folder = tmp_path / "archive"
    folder.mkdir()
    (folder / f"alice_111_222_{A}.ipynb").write_text(_notebook("alice's own"))
    (folder / "mallory_333_444_hw.zip").write_bytes(_zip_bytes({f"alice_111_999_{A}.ipynb": _notebook("planted")}))
    (folder / "section2.zip").write_bytes(_zip_bytes({f"eve_12345_67890_{A}.ipynb": _notebook("eve")}))
    filed, skipped = lms.collect(folder, A, tmp_path / "class")
    texts = {f.student: f.path.read_text() for f in filed}
    assert set(texts) == {"alice", "mallory", "eve"}, skipped
    assert "alice's own" in texts["alice"] and "planted" in texts["mallory"] and "# eve" in texts["eve"]
    assert {s: r["source"] for s, r in lms.collected(tmp_path / "class").items()}["eve"] == \
        f"section2.zip/eve_12345_67890_{A}.ipynb"
