"""LMS downloads (Canvas, Moodle, Gradescope exports, plain `<student>_<notebook>` names with
underscores in the student id): the parsers, `course collect`, and nbgrader's own `zip_collect`
command line with the kit's collector plugin."""
from __future__ import annotations

import datetime as dt
import io
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder import config
from autograder.grading import lms_names
from autograder.integrations import lms
from kit_helpers import zip_collect_course

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
    assert lms_names.file_id(found, NB) == f"{A}.ipynb"  # one notebook per assignment: filed under its name


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
        assert _students(dest) == expected, out
        for student in expected:
            assert sorted(p.name for p in (dest / student).iterdir()) == [f"{A}.ipynb"]  # nothing but the file
            assert _recorded(dest, student)["student"] == student
    jane = _recorded(tmp_path / "class" / "canvas", "doejane")
    assert jane["late_mark"] is True and jane["lms_user_id"] == "23456"
    carol = tmp_path / "class" / "gs" / "s-carol"
    assert _recorded(carol.parent, "s-carol")["submitted_at"] == "2026-09-29T17:30:00.123456+00:00"
    assert _recorded(tmp_path / "class" / "canvas", "eve")["submitted_at"] is None  # Canvas gives no times
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
    archive = zip_collect_course(root, A, _notebook("released"))
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


# --- `course collect` treats every student byte as hostile ---------------------------------------
# Each test below builds its malicious download and runs the real command line; each failed on the
# kit before (commit 087dfd0: rmtree outside --to, a forged time, a planted file filed as another
# student's or aborting the class, 300 MB unpacked from a 300 KB upload, forged console lines).

def _run_collect(download: Path, to: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.cli", "collect", A, str(download), "--to", str(to),
                           *extra], capture_output=True, text=True, timeout=300, cwd=REPO)


def _zip_bytes(files: dict[str, bytes | str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return buffer.getvalue()


def _students(dest: Path) -> set[str]:
    """The student folders of a class folder (not its record, lms.COLLECTED)."""
    return {p.name for p in dest.iterdir() if p.name != lms.COLLECTED}


def _recorded(dest: Path, student: str) -> dict:
    """What `course collect` recorded about `student` at `dest`."""
    return lms.collected(dest)[student]


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.parametrize("student, safe", [
    ("eve", True), ("s-carol", True), ("dan.doe", True), ("mary_ann_smith", True), ("anon_Ab1cD", True),
    ("obrienseán", True), ("a+b@uni.edu", True), ("12345", True),
    ("", False), (".", False), ("..", False), ("../x", False), ("x/..", False), ("/etc", False), ("a/b", False),
    ("a\\b", False), (".hidden", False), ("-rf", False), ("a..b", False), ("eve\n", False), ("e\x1bve", False),
    ("e\u202eve", False), ("a b", False), ("x" * 101, False), ("C:x", False),
])
def test_student_ids_are_single_safe_path_components(student, safe):
    if safe:
        assert lms.safe_student_id(student) == student
    else:
        with pytest.raises(lms.UnsafeStudentId) as info:
            lms.safe_student_id(student)
        assert "\n" not in str(info.value) and "\x1b" not in str(info.value)


def _gradescope_export(path: Path, metadata: str, files: dict[str, bytes | str]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("assignment_4242_export/submission_metadata.yml", metadata)
        for name, data in files.items():
            z.writestr(f"assignment_4242_export/{name}", data)
    return path


PLANTED_YML = """\
submission_111:
  :submitters:
  - :name: Carol Chen
    :sid: '{sid}'
  :created_at: 2020-01-01 00:00:00.000000000 +00:00
"""


@pytest.mark.parametrize("sid", ["../victim", "{victim}"])
def test_collect_writes_and_deletes_nothing_outside_to(tmp_path, sid):
    """attack: a student id that is a path (`../victim`, an absolute path), in the export's own
    metadata (a SID a student may edit) and in a submission_metadata.yml planted in the student's
    own folder. expect: that submission is skipped with a line, the rest of the class is filed,
    nothing outside --to is written or deleted."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious")
    sid = sid.format(victim=victim)
    metadata = GRADESCOPE_YML.replace("'s-carol'", repr(sid))
    download = _gradescope_export(tmp_path / "gs.zip", metadata, {
        f"submission_111/{A}.ipynb": _notebook("carol"),
        "submission_222/mine.ipynb": _notebook("dan"),
        f"submission_222/{lms.GRADESCOPE_METADATA}": PLANTED_YML.format(sid=sid).replace("submission_111",
                                                                                        "submission_222"),
    })
    proc = _run_collect(download, tmp_path / "class")
    assert proc.returncode == 0, proc.stderr
    assert _tree(victim) == {"keep.txt"} and (victim / "keep.txt").read_text() == "precious"
    assert _tree(tmp_path / "class") == {"dan.doe", f"dan.doe/{A}.ipynb", lms.COLLECTED}
    assert "not a safe folder name" in proc.stderr and "submission_111" in proc.stderr
    assert set(_tree(tmp_path)) - {"gs.zip"} - {f"class/{p}" for p in _tree(tmp_path / "class")} == {
        "class", "victim", "victim/keep.txt"}


def test_a_planted_metadata_file_cannot_forge_the_submission_time(tmp_path):
    """attack: submission_metadata.yml inside the student's own submission folder, dating it years
    earlier, and a submission_999/ folder beside it. expect: the time is the export's."""
    download = _gradescope_export(tmp_path / "gs.zip", GRADESCOPE_YML, {
        f"submission_111/{A}.ipynb": _notebook("carol"),
        f"submission_111/{lms.GRADESCOPE_METADATA}": PLANTED_YML.format(sid="s-carol"),
        f"submission_111/submission_999/{lms.GRADESCOPE_METADATA}": PLANTED_YML.format(sid="s-carol"),
    })
    proc = _run_collect(download, tmp_path / "class")
    assert proc.returncode == 0, proc.stderr
    assert _recorded(tmp_path / "class", "s-carol")["submitted_at"] == "2026-09-29T17:30:00.123456+00:00"
    assert "2020-01-01" not in proc.stdout


def test_a_late_canvas_upload_cannot_plant_a_gradescope_export(tmp_path):
    """attack: a LATE Canvas upload that is a zip holding a Gradescope export's layout (metadata
    dating it on time, a submission folder). expect: still mallory's, LATE mark kept, no time."""
    planted = _zip_bytes({lms.GRADESCOPE_METADATA: PLANTED_YML.format(sid="mallory"),
                          f"submission_111/{A}.ipynb": _notebook("mallory")})
    download = tmp_path / "canvas.zip"
    with zipfile.ZipFile(download, "w") as z:
        z.writestr("mallory_LATE_333_444_hw.zip", planted)
    proc = _run_collect(download, tmp_path / "class")
    assert proc.returncode == 0, proc.stderr
    mallory = tmp_path / "class" / "mallory"
    assert _recorded(mallory.parent, "mallory")["late_mark"] is True
    assert _recorded(mallory.parent, "mallory")["submitted_at"] is None and "LATE mark" in proc.stdout


@pytest.mark.parametrize("alice_own", [f"alice_111_222_{A}.ipynb", f"alice_111_222_{A}.py"])
def test_lms_names_inside_a_students_zip_belong_to_the_uploader(tmp_path, alice_own):
    """attack: mallory uploads a zip holding `alice_<id>_<id>_<assignment>.ipynb` (a later
    attachment id than alice's own). expect: alice's own file is filed as alice's, the planted one
    is mallory's; the class is collected (exit 0)."""
    download = tmp_path / "canvas.zip"
    with zipfile.ZipFile(download, "w") as z:
        z.writestr(alice_own, _notebook("alice's own") if alice_own.endswith(".ipynb") else "# alice's own\n")
        z.writestr("mallory_333_444_hw.zip", _zip_bytes({f"alice_111_999_{A}.ipynb": _notebook("planted")}))
        z.writestr(f"eve_12345_67890_{A}.ipynb", _notebook("eve"))
    proc = _run_collect(download, tmp_path / "class")
    assert proc.returncode == 0, proc.stderr
    alice = next((tmp_path / "class" / "alice").glob(f"{A}.*"))
    assert "alice's own" in alice.read_text() and "planted" not in alice.read_text()
    assert "planted" in (tmp_path / "class" / "mallory" / f"{A}.ipynb").read_text()
    assert _recorded(tmp_path / "class", "mallory")["lms_user_id"] == "333"
    assert (tmp_path / "class" / "eve" / f"{A}.ipynb").is_file()


def test_a_students_several_files_are_resolved_by_the_lms_record_not_an_abort(tmp_path):
    """Two Canvas uploads of one student (the later attachment id is filed), a Moodle folder with
    two notebooks (the first by name, reported), and two Canvas students with one name (neither
    filed: two people, reported): the rest of the class is filed, exit 0."""
    download = tmp_path / "mixed.zip"
    with zipfile.ZipFile(download, "w") as z:
        z.writestr(f"eve_12345_67890_{A}.ipynb", _notebook("eve first"))
        z.writestr(f"eve_12345_67999_{A}-1.ipynb", _notebook("eve later"))
        z.writestr(f"Frank Li_991_assignsubmission_file_/{A}.ipynb", _notebook("frank a"))
        z.writestr(f"Frank Li_991_assignsubmission_file_/{A} (1).ipynb", _notebook("frank b"))
        z.writestr(f"sam_1_10_{A}.ipynb", _notebook("sam one"))
        z.writestr(f"sam_2_20_{A}.ipynb", _notebook("sam two"))
        z.writestr(f"mary_ann_{A}.ipynb", _notebook("mary ann"))
    proc = _run_collect(download, tmp_path / "class")
    assert proc.returncode == 0, proc.stderr
    assert _students(tmp_path / "class") == {"eve", "frank_li", "mary_ann"}
    assert "eve later" in (tmp_path / "class" / "eve" / f"{A}.ipynb").read_text()
    assert f"eve_12345_67890_{A}.ipynb: eve also has eve_12345_67999_{A}-1.ipynb, which is filed " \
           "(a later submission)" in proc.stderr
    assert "which is filed (first by name" in proc.stderr
    assert proc.stderr.count("both filed as sam (canvas 1, canvas 2)") == 2


def _zeros_zip(megabytes: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        with z.open(f"{A}.ipynb", "w") as f:
            for _ in range(megabytes):
                f.write(bytes(1 << 20))
    return buffer.getvalue()


def test_a_zip_bomb_is_skipped_with_one_line_and_the_class_collected(tmp_path):
    """attack: a 300 KB upload holding 300 MB of zeros as the notebook. expect: one line naming
    it, nothing of it written (class folder and TMPDIR stay small), the others filed, exit 0."""
    bomb = _zeros_zip(300)
    assert len(bomb) < 400_000
    download = tmp_path / "canvas.zip"
    with zipfile.ZipFile(download, "w") as z:
        z.writestr("mallory_333_444_hw.zip", bomb)
        z.writestr(f"eve_12345_67890_{A}.ipynb", _notebook("eve"))
    proc = _run_collect(download, tmp_path / "class")
    assert proc.returncode == 0, proc.stderr
    assert _students(tmp_path / "class") == {"eve"}
    lines = [line for line in proc.stderr.splitlines() if "mallory" in line]
    assert len(lines) == 1 and lines[0].endswith("(the submission of mallory); not filed"), proc.stderr
    assert "compressed more than 200:1 (300 MiB in" in lines[0]
    assert sum(p.stat().st_size for p in (tmp_path / "class").rglob("*") if p.is_file()) < 100_000


def test_caps_on_ratio_entries_nesting_and_the_class(tmp_path):
    """Each cap of CollectLimits, set low: a highly compressed file, a zip of many files, zips
    nested too deep, and a class over its total: each such submission gets one line, the others
    are filed."""
    limits = lms.CollectLimits(ratio=50, ratio_from=1 << 20, submission_entries=20, nesting=2,
                               class_bytes=3000)
    deep = _zip_bytes({"inner.zip": _zip_bytes({"inner.zip": _zip_bytes({f"{A}.ipynb": _notebook("deep")})})})
    download = tmp_path / "canvas.zip"
    with zipfile.ZipFile(download, "w") as z:
        z.writestr("ratio_1_1_hw.zip", _zeros_zip(2))
        z.writestr("many_2_2_hw.zip", _zip_bytes({f"f{i}.txt": "" for i in range(30)}))
        z.writestr("deep_3_3_hw.zip", deep)
        z.writestr(f"ok_4_4_{A}.ipynb", _notebook("ok"))
        z.writestr(f"zz_5_5_{A}.ipynb", _notebook("late in the alphabet") + " " * 3000)
    filed, skipped = lms.collect(download, A, tmp_path / "class", limits=limits)
    assert {f.student for f in filed} == {"ok"}
    text = "\n".join(skipped)
    assert "ratio_1_1_hw.zip" in text and "compressed more than 50:1" in text
    assert "many_2_2_hw.zip: more than 20 files in one submission" in text
    assert "deep_3_3_hw.zip/inner.zip/inner.zip: a zip nested more than 2 deep" in text
    assert f"zz_5_5_{A}.ipynb: more than" in text and "in the whole download" in text


def test_names_with_control_characters_cannot_forge_console_lines(tmp_path):
    """attack: file names holding a newline, a carriage return and an escape sequence, printed by
    collect. expect: each name on its own line, escaped; no forged line."""
    download = tmp_path / "canvas.zip"
    with zipfile.ZipFile(download, "w") as z:
        z.writestr(f"eve_12345_67890_{A}.ipynb", _notebook("eve"))
        z.writestr("zoe_1_2_x\rFORGED zoe <- ok\x1b[2J.ipynb", _notebook("zoe"))
        z.writestr("mallory_333_444_\x1b[2J\nFORGED skipped nothing.txt", "x")
        z.writestr("notes\u202egnp.ipynb", "{}")
    proc = _run_collect(download, tmp_path / "class")
    assert proc.returncode == 0, proc.stderr
    for line in (proc.stdout + proc.stderr).splitlines():
        assert not line.startswith("FORGED"), line
    assert "\x1b" not in proc.stdout + proc.stderr and "\r" not in proc.stdout + proc.stderr
    assert "\u202e" not in proc.stderr and "notes\\u202egnp.ipynb" in proc.stderr
    assert "zoe_1_2_x\\rFORGED zoe <- ok\\x1b[2J.ipynb" in proc.stdout
    assert "mallory_333_444_\\x1b[2J\\nFORGED skipped nothing.txt: not a notebook" in proc.stderr


def test_a_folder_download_never_follows_symbolic_links(tmp_path):
    """attack: an unpacked download whose student folder holds a link to a file outside it (unzip
    recreates links from a zip) and a linked folder. expect: neither is read; the link is reported."""
    secret = tmp_path / "secret.ipynb"
    secret.write_text(_notebook("instructor's secret"))
    download = tmp_path / "moodle"
    student = download / "Frank Li_991_assignsubmission_file_"
    student.mkdir(parents=True)
    (student / f"{A}.ipynb").symlink_to(secret)
    (download / "Grace Hopper_992_assignsubmission_file_").symlink_to(tmp_path)
    (download / f"eve_12345_67890_{A}.ipynb").write_text(_notebook("eve"))
    proc = _run_collect(download, tmp_path / "class")
    assert proc.returncode == 0, proc.stderr
    assert _students(tmp_path / "class") == {"eve"}
    assert proc.stderr.count("a symbolic link; not followed") == 2


def test_a_link_in_the_class_folder_is_not_written_through(tmp_path):
    """A student's folder in --to that is a symbolic link elsewhere: that student is skipped with a
    line, the target is untouched, the others are filed."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("precious")
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "eve").symlink_to(elsewhere)
    proc = _run_collect(_canvas_zip(tmp_path / "canvas.zip"), tmp_path / "class")
    assert proc.returncode == 0, proc.stderr
    assert _tree(elsewhere) == {"keep.txt"}
    assert "symbolic link" in proc.stderr and (tmp_path / "class" / "doejane" / f"{A}.ipynb").is_file()


def test_course_yml_sets_the_caps_of_course_collect(tmp_path):
    """The caps live in course.yml's `limits.collect` (one place): a course that lowers file_mb to 1
    skips a 2 MiB notebook that the default caps file."""
    import os

    import yaml
    text = (REPO / "course.yml").read_text()
    data = yaml.safe_load(text)
    data["limits"]["collect"]["file_mb"] = 1
    low = tmp_path / "course.yml"
    low.write_text(yaml.safe_dump(data))
    big = _notebook("eve").replace('"metadata": {}', '"metadata": {"pad": "' + os.urandom(1 << 20).hex() + '"}', 1)
    assert len(big) > 2 << 20
    download = tmp_path / "canvas.zip"
    with zipfile.ZipFile(download, "w") as z:
        z.writestr(f"eve_12345_67890_{A}.ipynb", big)
        z.writestr(f"bob_12346_67891_{A}.ipynb", _notebook("bob"))
    default = _run_collect(download, tmp_path / "default")
    assert default.returncode == 0 and _students(tmp_path / "default") == {"eve", "bob"}, default.stderr
    proc = subprocess.run([sys.executable, "-m", "autograder.cli", "--config", str(low), "collect", A, str(download),
                           "--to", str(tmp_path / "low")], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0 and _students(tmp_path / "low") == {"bob"}, proc.stderr
    assert [line for line in proc.stderr.splitlines() if "eve" in line and "1 MiB" in line], proc.stderr


# --- review 2 (commit 2fe3832): each test below failed on the kit before it --------------------

MOODLE_DIR = "{name}_{pid}_assignsubmission_file_"
FORGED_YML = """\
submission_1:
  :submitters:
  - :name: Bob
    :sid: '{sid}'
  :created_at: 2020-01-01 00:00:00.000000000 +00:00
"""


def _moodle_download(path: Path, files: dict[str, bytes | str]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return path


@pytest.mark.parametrize("sid", ["bob_fine", "alice_good"])
def test_metadata_planted_in_a_moodle_students_folder_is_only_her_file(tmp_path, sid):
    """attack: mallory's Moodle upload holds submission_metadata.yml and submission_1/ filing her
    notebook as a classmate with a forged time. expect: it is mallory's; alice and bob are filed
    from their own folders (before: mallory's notebook was filed as bob / alice and bob skipped)."""
    mallory, alice, bob = (MOODLE_DIR.format(name=n, pid=p) for n, p in
                           (("Mallory Evil", 991), ("Alice Good", 992), ("Bob Fine", 993)))
    download = _moodle_download(tmp_path / "moodle.zip", {
        f"{mallory}/{lms.GRADESCOPE_METADATA}": FORGED_YML.format(sid=sid),
        f"{mallory}/submission_1/{A}.ipynb": _notebook("mallory"),
        f"{alice}/{A}.ipynb": _notebook("alice"), f"{bob}/{A}.ipynb": _notebook("bob")})
    proc = _run_collect(download, tmp_path / "class")
    assert proc.returncode == 0, proc.stderr
    assert _students(tmp_path / "class") == {"mallory_evil", "alice_good", "bob_fine"}, proc.stderr
    for student in ("alice_good", "bob_fine"):
        record = _recorded(tmp_path / "class", student)
        assert record["lms"] == "moodle" and record["submitted_at"] is None
        assert student.split("_")[0] in (tmp_path / "class" / student / f"{A}.ipynb").read_text()


BAD_METADATA = {
    "unreadable": "a: [unclosed\n",
    "deep": "submission_1:\n  :x: " + "[" * 5000 + "]" * 5000 + "\n",
    "bad time": GRADESCOPE_YML.replace("2026-09-29 10:30:00.123456000 -07:00", "garbage"),
    "bad submitters": GRADESCOPE_YML.replace("  - :name: Carol Chen", "  - just a string\n  - :name: Carol Chen"),
    "old time": GRADESCOPE_YML.replace("2026-09-29 10:30:00.123456000 -07:00", "0001-01-01 00:00:00 +05:00"),
    "alias bomb": "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)),
}


@pytest.mark.parametrize("case", sorted(BAD_METADATA))
def test_malformed_export_metadata_is_one_clear_message(tmp_path, case):
    """attack: an export's metadata that is not YAML, nested 5000 deep, with an impossible time or
    submitters, or a 400-byte alias bomb. expect: one message naming the file, no traceback, fast
    and small (before: tracebacks, and 2 GB for the bomb)."""
    download = _gradescope_export(tmp_path / "gs.zip", BAD_METADATA[case], {
        f"submission_111/{A}.ipynb": _notebook("carol")})
    proc = subprocess.run(["prlimit", "--as=2000000000", sys.executable, "-m", "autograder.cli", "collect", A,
                           str(download), "--to", str(tmp_path / "class")],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    assert f"{lms.GRADESCOPE_METADATA}: not a readable Gradescope export's metadata" in proc.stderr, proc.stderr
    assert len(proc.stderr.splitlines()) == 1


def test_a_student_zip_with_an_undecodable_name_costs_only_that_student(tmp_path):
    """attack: eve's zip has an entry whose name is flagged UTF-8 but is not. expect: eve's skip
    line, bob filed (before: UnicodeDecodeError for the whole class)."""
    inner = bytearray(_zip_bytes({"work\u00e9.ipynb": _notebook("eve")}))
    assert inner.count("\u00e9".encode()) == 2
    inner = inner.replace("\u00e9".encode(), b"\xff\xfe")
    download = _moodle_download(tmp_path / "canvas.zip", {
        "eve_1_2_work.zip": bytes(inner), f"bob_3_4_{A}.ipynb": _notebook("bob")})
    proc = _run_collect(download, tmp_path / "class")
    assert proc.returncode == 0, proc.stderr
    assert _students(tmp_path / "class") == {"bob"}
    assert [line for line in proc.stderr.splitlines() if "eve_1_2_work.zip" in line], proc.stderr


@pytest.mark.parametrize("victim, attacker", [("12345", "12345@evil.example"), ("alice@uni.edu", "alice@evil.example")])
def test_two_gradescope_users_with_one_derived_id_are_a_conflict(tmp_path, victim, attacker):
    """attack: a Gradescope user without SID whose e-mail's local part is the victim's SID (or
    another alice@). expect: neither filed, both reported (before: the later one was the victim's)."""
    victim_sid, victim_mail = (victim, "victor@uni.edu") if "@" not in victim else ("", victim)
    metadata = (f"submission_1:\n  :submitters:\n  - :name: V\n    :sid: '{victim_sid}'\n    :email: {victim_mail}\n"
                f"  :created_at: 2026-09-28 12:00:00 +00:00\n"
                f"submission_2:\n  :submitters:\n  - :name: M\n    :sid: ''\n    :email: {attacker}\n"
                f"  :created_at: 2026-09-29 12:00:00 +00:00\n"
                f"submission_3:\n  :submitters:\n  - :name: C\n    :sid: 'carol'\n"
                f"  :created_at: 2026-09-29 12:00:00 +00:00\n")
    download = _gradescope_export(tmp_path / "gs.zip", metadata, {
        f"submission_{n}/{A}.ipynb": _notebook(str(n)) for n in (1, 2, 3)})
    proc = _run_collect(download, tmp_path / "class")
    assert proc.returncode == 0, proc.stderr
    assert _students(tmp_path / "class") == {"carol"}, proc.stderr
    conflict = [line for line in proc.stderr.splitlines() if "two LMS records" in line]
    assert len(conflict) == 2 and attacker in conflict[0], proc.stderr


def test_one_submission_with_too_many_files_costs_only_that_student(tmp_path):
    """attack: a submission folder of a Gradescope export with more files than the caps allow.
    expect: that student's skip line, the class filed (before: the whole export was refused)."""
    import yaml
    data = yaml.safe_load((REPO / "course.yml").read_text())
    data["limits"]["collect"].update(class_files=50, submission_files=40)
    low = tmp_path / "course.yml"
    low.write_text(yaml.safe_dump(data))
    junk = {f"submission_222/junk/{i}.txt": "x" for i in range(60)}
    download = _gradescope_export(tmp_path / "gs.zip", GRADESCOPE_YML, {
        f"submission_111/{A}.ipynb": _notebook("carol"), f"submission_222/{A}.ipynb": _notebook("dan"), **junk})
    proc = subprocess.run([sys.executable, "-m", "autograder.cli", "--config", str(low), "collect", A, str(download),
                           "--to", str(tmp_path / "class")], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert _students(tmp_path / "class") == {"s-carol"}, proc.stderr
    assert [line for line in proc.stderr.splitlines() if "submission_222" in line and "dan.doe" in line], proc.stderr


def test_moodle_names_in_any_script_are_filed(tmp_path):
    """Moodle students named 王伟, Иван Петров, Zoë Ångström, or with no letter at all (the
    participant id). Before: the first two and the last had the empty id and were never filed."""
    names = {"王伟": 1001, "Иван Петров": 1002, "Zoë Ångström": 1003, "-- --": 1004}
    download = _moodle_download(tmp_path / "moodle.zip", {
        f"{MOODLE_DIR.format(name=n, pid=p)}/{A}.ipynb": _notebook(n) for n, p in names.items()})
    proc = _run_collect(download, tmp_path / "class")
    assert proc.returncode == 0, proc.stderr
    assert _students(tmp_path / "class") == {"王伟", "иван_петров", "zoë_ångström", "1004"}, proc.stderr


def _export_canvas(tmp_path: Path, roster: str, results: dict[str, tuple[float, str]]) -> tuple[
        subprocess.CompletedProcess, list[list[str]]]:
    """`course export --canvas` of a results folder with {student: (score, Canvas user id)}."""
    import csv
    import json
    out = tmp_path / "results"
    out.mkdir()
    for student, (score, uid) in results.items():
        extra = {"assignment": A, "student": student, "lms": {"lms": "canvas", "lms_user_id": uid} if uid else {}}
        (out / f"{student}.json").write_text(json.dumps({"score": score, "max_score": 14.0, "tests": [], "extra_data": extra}))
    (tmp_path / "roster.csv").write_text(roster)
    proc = subprocess.run([sys.executable, "-m", "autograder.cli", "export", A, str(out), "--canvas",
                           str(tmp_path / "import.csv"), "--roster", str(tmp_path / "roster.csv")],
                          capture_output=True, text=True, timeout=300, cwd=REPO)
    return proc, list(csv.reader((tmp_path / "import.csv").open()))[2:] if (tmp_path / "import.csv").exists() else []


ROSTER = ("Student,ID,SIS User ID,SIS Login ID,Section,Attention scoring functions (99)\n"
          "    Points Possible,,,,,14\n"
          "1234567,111,s111,att,S1,\n"
          '"Vic, Victim",1234567,s222,vic,S1,\n')


def test_canvas_export_matches_ids_and_names_in_separate_name_spaces(tmp_path):
    """attack: a student whose display name is the victim's Canvas ID. expect: each student's grade
    on their own row (before: the attacker's row twice, with 0 and 14, the victim none)."""
    proc, lines = _export_canvas(tmp_path, ROSTER, {"1234567": (0.0, "111"), "vicvictim": (14.0, "1234567")})
    assert proc.returncode == 0, proc.stderr
    assert sorted(line[:2] + line[-1:] for line in lines) == [["1234567", "111", "0"],
                                                              ["Vic, Victim", "1234567", "14"]], lines


def test_canvas_export_reports_ambiguous_matches_and_writes_neither(tmp_path):
    """Two results matching one roster row (no Canvas user ids: one by ID, one by name), and a SIS
    login that is two roster rows: each reported on one line, none written, exit 1."""
    roster = ROSTER + '"Twin, One",555,s555,twin,S1,\n"Twin, Two",556,s556,twin,S1,\n'
    proc, lines = _export_canvas(tmp_path, roster, {"1234567": (0.0, ""), "vicvictim": (14.0, ""),
                                                    "twin": (7.0, "")})
    assert proc.returncode == 1, proc.stderr
    assert [line for line in lines if line[-1] != "0"] == [], lines  # nothing but roster students without a result
    written = {line[0] for line in lines}
    assert not written & {"Twin, One", "Twin, Two"}, lines  # a roster row an ambiguous result matched: not a 0
    for student in ("1234567", "vicvictim", "twin"):
        assert len([line for line in proc.stderr.splitlines() if f" {student} (ambiguous" in line]) == 1, proc.stderr


def test_nbgrader_zip_collect_ignores_metadata_planted_in_a_moodle_folder(tmp_path):
    """attack (finding 1 via nbgrader): mallory's Moodle folder holds a submission_metadata.yml
    naming bob. expect: bob's own notebook in submitted/bob_fine, mallory's under her name."""
    root = tmp_path / "course"
    archive = zip_collect_course(root, A, _notebook("released"))
    mallory, bob = (MOODLE_DIR.format(name=n, pid=p) for n, p in (("Mallory Evil", 991), ("Bob Fine", 993)))
    _moodle_download(archive / "moodle.zip", {
        f"{mallory}/{lms.GRADESCOPE_METADATA}": FORGED_YML.format(sid="bob_fine"),
        f"{mallory}/submission_1/{A}.ipynb": _notebook("mallory"), f"{bob}/{A}.ipynb": _notebook("bob")})
    proc = _nbgrader(root, "zip_collect", A)
    assert proc.returncode == 0, proc.stderr[-4000:]
    submitted = root / "submitted"
    assert {p.name for p in submitted.iterdir()} == {"mallory_evil", "bob_fine"}, proc.stderr[-3000:]
    assert "# bob" in (submitted / "bob_fine" / A / f"{A}.ipynb").read_text()
    assert not (submitted / "bob_fine" / A / "timestamp.txt").exists()
