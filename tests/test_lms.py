"""LMS downloads (Canvas, Moodle, Gradescope exports, plain `<student>_<notebook>` names with
underscores in the student id): the parsers, `course collect`, and nbgrader's own `zip_collect`
command line with the kit's collector plugin."""
from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder import config
from autograder.integrations import lms

A = "02_attention_scoring"
NB = (f"{A}.ipynb",)
REPO = config.REPO_ROOT

GRADESCOPE_YML = """\
submission_111:
  :submitters:
  - :name: Carol Chen
    :sid: 's-carol'
    :email: carol@uni.edu
  :created_at: 2026-09-29 10:30:00.123456000 -07:00
  :score: 0.0
submission_222:
  :submitters:
  - :name: Dan Doe
    :sid: ''
    :email: dan.doe@uni.edu
  :created_at: 2026-09-28 12:00:00.000000000 +00:00
"""


@pytest.mark.parametrize("name, student, lms_name, late, file", [
    (f"eve_12345_67890_{A}.ipynb", "eve", "canvas", False, f"{A}.ipynb"),
    (f"doejane_LATE_12345_67890_{A}-1.ipynb", "doejane", "canvas", True, f"{A}-1.ipynb"),
    (f"van_der_berg_23456_78901_{A}.ipynb", "van_der_berg", "canvas", False, f"{A}.ipynb"),
    (f"anon_Ab1cD_67890_{A}.ipynb", "anon_Ab1cD", "canvas", False, f"{A}.ipynb"),
    (f"LATE_anon_Ab1cD_67890_{A}.ipynb", "anon_Ab1cD", "canvas", True, f"{A}.ipynb"),
    ("eve_12345_67890_my homework.ipynb", "eve", "canvas", False, "my homework.ipynb"),
    (f"mary_ann_{A}.ipynb", "mary_ann", "plain", False, f"{A}.ipynb"),
    (f"s1234_5678_{A}.ipynb", "s1234_5678", "plain", False, f"{A}.ipynb"),
    (f"alice_{A}.ipynb", "alice", "plain", False, f"{A}.ipynb"),
    (f"Mary Ann Smith_123456_assignsubmission_file_/{A}.ipynb", "mary_ann_smith", "moodle", False, f"{A}.ipynb"),
    ("Mary Ann Smith_123456_assignsubmission_file_hw2.ipynb", "mary_ann_smith", "moodle", False, "hw2.ipynb"),
    ("notes.ipynb", None, None, False, None),
])
def test_lms_file_names(name, student, lms_name, late, file):
    found = lms.parse(name, NB)
    if student is None:
        assert found is None
        return
    assert (found.student, found.lms, found.late, found.file) == (student, lms_name, late, file)
    assert lms.file_id(found, NB) == f"{A}.ipynb"  # one notebook per assignment: filed under its name


def test_canvas_user_id_as_student_id_and_canvas_names():
    assert lms.parse(f"eve_12345_67890_{A}.ipynb", NB, student_id="user_id").student == "12345"
    assert lms.canvas_name("Doe, Jane") == "doejane" and lms.canvas_name("O'Brien, Seán") == "obrienseán"


def _notebook(text: str) -> str:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"# {text}\nx = 1\n")]
    return nbformat.writes(nb)


def _canvas_zip(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"eve_12345_67890_{A}.ipynb", _notebook("eve"))
        z.writestr(f"doejane_LATE_23456_78901_{A}-1.ipynb", _notebook("jane"))
        z.writestr(f"mary_ann_{A}.ipynb", _notebook("mary ann"))
        z.writestr("eve_12345_67891_attention_support.py", "given = 1\n")  # the given module, uploaded too
    return path


def _moodle_zip(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"Frank Li_991_assignsubmission_file_/{A}.ipynb", _notebook("frank"))
        z.writestr(f"Grace Hopper_992_assignsubmission_file_/Copy of {A}.ipynb", _notebook("grace"))
    return path


def _gradescope_zip(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("assignment_4242_export/submission_metadata.yml", GRADESCOPE_YML)
        z.writestr(f"assignment_4242_export/submission_111/{A}.ipynb", _notebook("carol"))
        z.writestr("assignment_4242_export/submission_222/mine.ipynb", _notebook("dan"))
    return path


def test_course_collect_files_each_download_by_student(tmp_path, capsys):
    from autograder import cli
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    _canvas_zip(downloads / "canvas.zip")
    with zipfile.ZipFile(downloads / "canvas.zip") as z:
        z.extractall(downloads / "canvas")
    for source, expected in [(downloads / "canvas.zip", {"eve", "doejane", "mary_ann"}),
                             (downloads / "canvas", {"eve", "doejane", "mary_ann"}),
                             (_moodle_zip(downloads / "moodle.zip"), {"frank_li", "grace_hopper"}),
                             (_gradescope_zip(downloads / "gs.zip"), {"s-carol", "dan.doe"})]:
        dest = tmp_path / "class" / source.stem
        assert cli.main(["collect", A, str(source), "--to", str(dest)]) == 0
        out = capsys.readouterr()
        assert {p.name for p in dest.iterdir()} == expected, out
        for student in expected:
            assert (dest / student / f"{A}.ipynb").is_file()
            assert json.loads((dest / student / "lms.json").read_text())["student"] == student
    jane = json.loads((tmp_path / "class" / "canvas" / "doejane" / "lms.json").read_text())
    assert jane["late_mark"] is True and jane["lms_user_id"] == "23456"
    carol = tmp_path / "class" / "gs" / "s-carol"
    assert (carol / "timestamp.txt").read_text() == "2026-09-29 17:30:00.123456 UTC"
    assert not (tmp_path / "class" / "canvas" / "eve" / "timestamp.txt").exists()  # Canvas gives no times
    # `course grade` then reads who and when from the folder.
    from autograder.grading.export import identify
    who = identify("s-carol", carol / f"{A}.ipynb", tmp_path / "class" / "gs", A)
    assert who.student == "s-carol" and who.when.submitted_at == dt.datetime(2026, 9, 29, 17, 30, 0, 123456,
                                                                              tzinfo=dt.timezone.utc)
    who = identify("doejane", tmp_path / "class" / "canvas" / "doejane" / f"{A}.ipynb", tmp_path / "class" / "canvas", A)
    assert who.lms == "canvas" and who.lms_user_id == "23456" and who.note == "LATE mark in the LMS download"


def test_course_grade_reads_student_ids_from_lms_names_in_a_flat_folder(tmp_path):
    from autograder.grading.export import identify
    folder = tmp_path / "flat"
    folder.mkdir()
    (folder / f"eve_12345_67890_{A}.ipynb").write_text(_notebook("eve"))
    who = identify(f"eve_12345_67890_{A}", folder / f"eve_12345_67890_{A}.ipynb", folder, A)
    assert (who.student, who.lms, who.lms_user_id) == ("eve", "canvas", "12345")


def _nbgrader(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=root, capture_output=True, text=True,
                          timeout=600)


def test_nbgrader_zip_collect_files_canvas_moodle_gradescope_and_underscored_ids(tmp_path):
    """nbgrader's own zip_collect with the kit's collector (nbgrader_config.py): every notebook is
    filed under <student>/<assignment>.ipynb, Gradescope's times become timestamp.txt."""
    root = tmp_path / "course"
    (root / "release" / A).mkdir(parents=True)
    shutil.copy(REPO / "nbgrader_config.py", root / "nbgrader_config.py")
    (root / "release" / A / f"{A}.ipynb").write_text(_notebook("released"))
    archive = root / "downloaded" / A / "archive"
    archive.mkdir(parents=True)
    _canvas_zip(archive / "canvas.zip")
    _moodle_zip(archive / "moodle.zip")
    _gradescope_zip(archive / "gradescope.zip")
    (archive / f"s1234_5678_{A}.ipynb").write_text(_notebook("underscores"))
    proc = _nbgrader(root, "zip_collect", A)
    assert proc.returncode == 0, proc.stderr[-4000:]
    submitted = root / "submitted"
    students = {"eve", "doejane", "mary_ann", "frank_li", "grace_hopper", "s-carol", "dan.doe", "s1234_5678"}
    assert {p.name for p in submitted.iterdir()} == students, proc.stderr[-3000:]
    for student in students:
        files = sorted(p.name for p in (submitted / student / A).iterdir())
        assert f"{A}.ipynb" in files and set(files) <= {f"{A}.ipynb", "timestamp.txt"}, (student, files)
    assert "# mary ann" in (submitted / "mary_ann" / A / f"{A}.ipynb").read_text()
    from nbgrader.utils import parse_utc
    stamp = parse_utc((submitted / "s-carol" / A / "timestamp.txt").read_text())
    assert stamp == dt.datetime(2026, 9, 29, 17, 30, 0, 123456)  # nbgrader's naive UTC
    assert not (submitted / "eve" / A / "timestamp.txt").exists()
