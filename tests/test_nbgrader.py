"""nbgrader end to end on a temporary course, through nbgrader's own command line.

generate_assignment -> release_assignment -> submit (exchange) + zip_collect -> collect ->
autograde (the course's sandboxed grader in place of nbgrader's kernel execution) ->
generate_feedback -> export; the gradebook's scores must equal `course grade` on the same files.
Four students of 02_attention_scoring: the solutions, the untouched stubs, a buggy masked_softmax
(partial credit), and a notebook with deleted, reordered, added and edited cells.
"""
from __future__ import annotations

import ast
import copy
import csv
import datetime as dt
import html
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
import yaml

from autograder import config
from autograder.authoring import release
from autograder.grading.session import SUITES
from kit_helpers import headless_chromium, looks_blank, screenshot

# One worker runs the whole module: its nbgrader course is built once (module fixture), not per worker.
pytestmark = pytest.mark.xdist_group("nbgrader")

A = "02_attention_scoring"
REPO = config.REPO_ROOT
HOSTILE = Path(__file__).resolve().parent / "hostile"
#: eve attacks the sandbox (tests/hostile/ptrace_init.py in a cell of her own); frank, graded after
#: her by the same fork server, must not notice. lou leaves a process behind at the end of a job;
#: mary_ann is graded after him. The attacks on the fork server's own state (its limits, scheduling
#: and /proc files) are the fork server's, whichever command started it: test_isolation makes them
#: through `course grade` in both modes, each followed by a correct submission.
STUDENTS = ("alice", "bob", "carol", "dave", "eve", "frank", "hal", "ivy", "lou", "mary_ann")
#: Attackers whose own code is correct, with the hostile fixture each adds in a cell of their own.
ATTACKERS = {"eve": "ptrace_init", "lou": "setsid_survivor"}


def nbgrader(root: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=cwd or root, capture_output=True,
                          text=True, timeout=1800)
    assert proc.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    return proc


def _cells_by_id(nb) -> dict[str, int]:
    return {c.metadata.get("nbgrader", {}).get("grade_id"): i for i, c in enumerate(nb.cells)}


def _with_solutions(released, source):
    nb = nbformat.from_dict(json.loads(json.dumps(released)))
    solutions = {c.id: c.source for c in source.cells}
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = solutions[cell.id]
    return nb


def _buggy(nb):
    cell = nb.cells[_cells_by_id(nb)["masked_softmax"]]
    bug = ("torch.repeat_interleave(valid_lens, shape[1])", "valid_lens.repeat(shape[1])")
    assert bug[0] in cell.source
    cell.source = cell.source.replace(*bug)  # 1-D lengths tiled, not repeated per query: partial credit
    return nb


def _edited(nb):
    """Deleted graded and check cells, reordered solutions, own cells, an edited graded cell, a split cell."""
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id")
                not in ("test_masked_softmax", "check_masked_softmax", "test_DotProductAttention")]
    dot = nb.cells.pop(_cells_by_id(nb)["DotProductAttention"])
    nb.cells.insert(_cells_by_id(nb)["AdditiveAttention"], dot)
    seq_at = _cells_by_id(nb)["sequence_mask"]
    seq = nb.cells[seq_at]
    # Split off a cell above (JupyterLab copies the metadata: two cells with the same grade_id).
    split = nbformat.v4.new_code_cell("import torch  # my own cell\n\n\ndef _helper():\n    return 1\n",
                                      metadata=copy.deepcopy(seq.metadata))
    nb.cells[seq_at:seq_at + 1] = [split, seq]
    nb.cells.insert(seq_at + 2, nbformat.v4.new_code_cell("raise RuntimeError('my experiment crashed')"))
    nb.cells.insert(seq_at + 2, nbformat.v4.new_markdown_cell("My notes"))
    nb.cells[_cells_by_id(nb)["test_sequence_mask"]].source = "print('I rewrote the graded cell')"
    return nb


def _attacker(nb, fixture: str = "ptrace_init"):
    """A complete notebook plus a cell of their own: a hostile fixture (by default the pid 1 / ptrace /
    namespace attack), whose correct definitions replace the notebook's."""
    nb.cells.append(nbformat.v4.new_code_cell((HOSTILE / f"{fixture}.py").read_text()))
    return nb


#: The course's deadline in the test course: the future, so that the notebooks submitted through
#: the exchange now are on time; hal and ivy come from a Gradescope export with their times.
DUE = "2027-01-01"
LATE = {"per": "day", "deduction": 10, "unit": "percent", "cap": 50, "grace_minutes": 15}
GRADESCOPE_EXPORT = """\
submission_7001:
  :submitters:
  - :name: Hal
    :sid: hal
    :email: hal@uni.edu
  :created_at: 2027-01-02 10:00:00.000000000 +00:00
submission_7002:
  :submitters:
  - :name: Ivy
    :sid: ivy
    :email: ivy@uni.edu
  :created_at: 2027-01-02 10:00:00.000000000 +00:00
"""


@pytest.fixture(scope="module")
def course_run(tmp_path_factory):
    """Run the whole nbgrader course once; the tests below check its products."""
    root = tmp_path_factory.mktemp("nbgrader-course")
    exchange = root / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    course_file = root / "course.yml"
    raw = yaml.safe_load((REPO / "course.yml").read_text())
    for a in raw["assignments"]:
        a["due"] = dt.date.fromisoformat(DUE) if a["id"] == A else a["due"]
    raw["deadlines"] = {"timezone": "UTC", "time": "23:59", "late": LATE,
                        "extensions": [{"assignment": A, "student": "ivy", "days": 2, "reason": "ill"}]}
    raw["overrides_file"] = "overrides.csv"
    course_file.write_text(yaml.safe_dump(raw, sort_keys=False))
    (root / "overrides.csv").write_text("assignment,student,component,score,by,reason,date\n"
                                        f"{A},carol,masked_softmax,3.5,ta_dana,tiling fixed in office hours,2027-01-05\n")
    (root / "nbgrader_config.py").write_text(
        (REPO / "nbgrader_config.py").read_text() + f"\nc.Exchange.root = {str(exchange)!r}\n"
        f"c.SandboxGrader.course_file = {str(course_file)!r}\n")
    # `course release` builds it here (never the repository's release/): stages nbgrader's source
    # folder, runs generate_assignment and writes the due date into the gradebook.
    kit_cli = [sys.executable, "-m", "autograder.cli", "--config", str(course_file)]
    proc = subprocess.run([*kit_cli, "release", A, "--force", "--course-dir", str(root)], capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    source_dir, release_dir = release.directories(release.nbgrader_config(root))
    assert release_dir.is_relative_to(root.resolve())

    nbgrader(root, "release_assignment", A, "--force")
    released = nbformat.read(release_dir / A / f"{A}.ipynb", as_version=4)
    source = nbformat.read(source_dir / A / f"{A}.ipynb", as_version=4)
    notebooks = {
        "alice": _with_solutions(released, source),
        "bob": nbformat.from_dict(json.loads(json.dumps(released))),
        "carol": _buggy(_with_solutions(released, source)),
        "dave": _edited(_with_solutions(released, source)),
        **{name: _attacker(_with_solutions(released, source), fixture) for name, fixture in ATTACKERS.items()},
        "frank": _with_solutions(released, source),
        "hal": _buggy(_with_solutions(released, source)),
        "ivy": _with_solutions(released, source),
        "mary_ann": _with_solutions(released, source),
    }
    for name in ("alice", "bob"):  # through the exchange
        folder = root / "students" / name / A
        shutil.copytree(release_dir / A, folder)
        nbformat.write(notebooks[name], str(folder / f"{A}.ipynb"))
        nbgrader(root, "submit", A, "--course=attention", f"--student={name}",
                 f"--Exchange.root={exchange}", cwd=folder.parent)
    nbgrader(root, "collect", A)
    archive = root / "downloaded" / A / "archive"  # downloaded from LMSs
    archive.mkdir(parents=True)
    for name in ("carol", "dave", *ATTACKERS, "mary_ann"):  # <student>_<notebook>, ids with underscores
        nbformat.write(notebooks[name], str(archive / f"{name}_{A}.ipynb"))
    with zipfile.ZipFile(archive / "canvas.zip", "w") as z:  # Canvas: name, user id, file id, re-upload
        z.writestr(f"frank_12345_67890_{A}-1.ipynb", nbformat.writes(notebooks["frank"]))
    with zipfile.ZipFile(archive / "gradescope_export.zip", "w") as z:  # SIDs and submission times
        z.writestr("assignment_42_export/submission_metadata.yml", GRADESCOPE_EXPORT)
        z.writestr(f"assignment_42_export/submission_7001/{A}.ipynb", nbformat.writes(notebooks["hal"]))
        z.writestr("assignment_42_export/submission_7002/my attention.ipynb", nbformat.writes(notebooks["ivy"]))
    zip_collect = nbgrader(root, "zip_collect", A)

    # `course grade` on the very same files, alongside nbgrader autograde (both sandboxed).
    graded = root / "course-grade"
    kit = subprocess.Popen([*kit_cli, "grade", A, str(root / "submitted"), "--out", str(graded), "--jobs", "1"],
                           cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    autograde = nbgrader(root, "autograde", A)
    kit_log = kit.communicate(timeout=1800)[0]
    assert kit.returncode == 0, kit_log
    feedback = nbgrader(root, "generate_feedback", A)
    export = nbgrader(root, "export")
    shutil.copy(root / "grades.csv", root / "nbgrader-grades.csv")
    compare = subprocess.run([*kit_cli, "export", A, str(graded), "--gradebook", str(root / "gradebook.db")],
                             capture_output=True, text=True, timeout=600)
    run = {"root": root, "log": autograde.stdout + autograde.stderr, "course_grade": graded,
           "db": f"sqlite:///{root / 'gradebook.db'}", "compare": compare, "kit_cli": kit_cli,
           "nbgrader_logs": autograde.stderr + feedback.stderr + export.stderr,
           "zip_collect": zip_collect.stdout + zip_collect.stderr}
    run["book"] = _gradebook(run["db"])

    # Then things go wrong. zed's notebook was filed under the name nbgrader's old regular
    # expression gave a Canvas download: autograde skips it; and a TA changes a score in formgrader.
    zed = root / "submitted" / "zed" / A
    zed.mkdir(parents=True)
    nbformat.write(notebooks["frank"], str(zed / f"12345_67890_{A}.ipynb"))
    run["zed_autograde"] = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", A, "--student", "zed"],
                                          cwd=root, capture_output=True, text=True, timeout=900)
    from nbgrader.api import Gradebook
    with Gradebook(run["db"]) as gb:
        gb.find_grade("test_sequence_mask", A, A, "dave").manual_score = 1.0
        gb.update_or_create_assignment("06_transformer")  # in the gradebook, not released: not exported
        gb.db.commit()
    run["zed_export"] = subprocess.run([sys.executable, "-m", "nbgrader", "export", "--to", "after.csv"],
                                       cwd=root, capture_output=True, text=True, timeout=600)
    after = root / "course-grade-after"
    shutil.copytree(graded, after)
    proc = subprocess.run([*kit_cli, "grade", A, str(zed / f"12345_67890_{A}.ipynb"), "--out", str(after), "-q"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run["zed_compare"] = subprocess.run([*kit_cli, "export", A, str(after), "--gradebook", str(root / "gradebook.db")],
                                        capture_output=True, text=True, timeout=600)
    return run


def _gradebook(db: str) -> dict[str, dict]:
    from nbgrader.api import Gradebook

    out = {}
    with Gradebook(db) as gb:
        for student in STUDENTS:
            nb = gb.find_submission_notebook(A, A, student)
            sub = gb.find_submission(A, student)
            out[student] = {"total": sub.score, "penalty": sub.late_submission_penalty, "extension": sub.extension,
                            "timestamp": sub.timestamp, "duedate": sub.duedate,
                            "grades": {g.name: (g.auto_score, g.score, g.max_score, g.needs_manual_grade)
                                       for g in nb.grades}}
    return out


def test_collect_and_zip_collect_put_every_student_in_submitted(course_run):
    """Exchange, <student>_<notebook> with underscores in the id, Canvas and a Gradescope export:
    every notebook is filed as submitted/<student>/<assignment>/<assignment>.ipynb."""
    submitted = course_run["root"] / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == sorted([*STUDENTS, "zed"])  # zed: added by hand
    for student in STUDENTS:
        assert [p.name for p in (submitted / student / A).glob("*.ipynb")] == [f"{A}.ipynb"], student
    # Gradescope's submission times became nbgrader's timestamp.txt; Canvas gives none.
    assert (submitted / "hal" / A / "timestamp.txt").read_text().startswith("2027-01-02 10:00:00")
    assert not (submitted / "frank" / A / "timestamp.txt").exists()
    # nbgrader counts the extractor's record of who and when as a skipped file: the log says which it is.
    log = course_run["zip_collect"]
    assert "is the record of who and when: nbgrader counts it as 1 of the files skipped" in log, log


def test_gradebook_scores_equal_course_grade_per_component(course_run):
    course = config.default()
    book = course_run["book"]
    for student, entry in book.items():
        kit = json.loads((course_run["course_grade"] / f"{student}.json").read_text())
        comps = kit["extra_data"]["components"]
        assert set(entry["grades"]) == {f"test_{c.name}" for c in course.assignment(A).components}
        for comp in course.assignment(A).components:
            auto, score, max_score, manual = entry["grades"][f"test_{comp.name}"]
            assert (auto, score, max_score) == (comps[comp.name]["score"], comps[comp.name]["score"], comp.points), \
                (student, comp.name)
            assert manual is False
        assert entry["total"] == pytest.approx(kit["extra_data"]["raw_score"], abs=1e-9), student
    assert book["alice"]["total"] == 14 and book["bob"]["total"] == 0
    assert book["dave"]["total"] == 14  # edited, split, reordered and deleted cells: still graded
    for attacker in ATTACKERS:  # every attack failed; their code is otherwise correct
        assert book[attacker]["total"] == 14, attacker
    for correct in ("frank", "ivy", "mary_ann"):  # graded after attackers by the same fork server
        assert book[correct]["total"] == 14, correct
    assert "ATTACK SUCCEEDED" not in course_run["log"]
    auto = book["carol"]["grades"]["test_masked_softmax"][0]
    assert 0 < auto < 4  # partial credit lands as the cell's auto_score
    assert book["carol"]["total"] == pytest.approx(10 + auto)


def test_every_graded_cell_says_what_course_grade_says_byte_for_byte(course_run):
    """nbgrader's path agrees with `course grade` on the same files in every word, not only in scores:
    each graded cell's text is the kit's results file for that student rendered for the cell (the
    load notes after it, which results files keep in their output). With test_gradescope's and
    test_cluster's byte-for-byte comparisons, the four grading paths agree with `course grade`."""
    from autograder.integrations.nbgrader_bridge import component_feedback
    root, course = course_run["root"], config.default()
    notes_heading = "  While loading your code:"
    for student in STUDENTS:
        kit = json.loads((course_run["course_grade"] / f"{student}.json").read_text())
        nb = nbformat.read(root / "autograded" / student / A / f"{A}.ipynb", as_version=4)
        ids = _cells_by_id(nb)
        for comp in course.assignment(A).components:
            cell = nb.cells[ids[f"test_{comp.name}"]]
            shown = "".join(o.get("text", "") for o in cell.outputs if o["output_type"] == "stream")
            expected = component_feedback(kit, comp.name, [])
            assert shown == expected or shown.startswith(expected + notes_heading + "\n"), (student, comp.name)
            assert float(cell.outputs[-1]["data"]["text/plain"]) == kit["extra_data"]["components"][comp.name]["score"]


def test_autograde_runs_no_notebook_code_and_restores_deleted_graded_cells(course_run):
    root = course_run["root"]
    assert "Executing notebook" not in course_run["log"]  # nbgrader's Execute is not in the pipeline
    assert "course grader: dave 02_attention_scoring: 14 / 14" in course_run["log"]
    nb = nbformat.read(root / "autograded" / "dave" / A / f"{A}.ipynb", as_version=4)
    ids = _cells_by_id(nb)
    for grade_id in ("test_masked_softmax", "test_DotProductAttention"):
        cell = nb.cells[ids[grade_id]]
        assert "was missing from the submitted notebook" in cell.source
        assert cell.outputs[-1]["output_type"] == "execute_result"
    assert ids["test_DotProductAttention"] == ids["check_DotProductAttention"] + 1
    assert ids["test_masked_softmax"] == ids["masked_softmax"] + 1
    rewritten = nb.cells[ids["test_sequence_mask"]]
    assert "I rewrote" not in rewritten.source and 'check("sequence_mask")' in rewritten.source  # nbgrader restored it
    # Only graded cells have outputs: nothing of the notebook was executed.
    assert all(not c.get("outputs") for c in nb.cells
               if c.cell_type == "code" and not c.metadata.get("nbgrader", {}).get("grade"))


def test_a_notebook_s_own_nbgrader_metadata_cannot_break_its_autograde(course_run):
    """helper-62: nbgrader's OverwriteCells restores a cell's `locked`, `points` and checksum but not `grade`
    or `solution`, which the checksum covers. A test cell flagged `solution: true`, or a plain cell given a
    test's id, raised "Inconsistent checksums": the student's autograde failed and `nbgrader export` failed
    for the class, while `course grade` gave full marks. The sanitizing step (nbgrader_bridge.DeduplicateIds)
    gives every cell with a released id its released kind, and takes the metadata of an id the release never
    had; nbgrader's own OverwriteCells and CheckCellMetadata then pass."""
    from nbgrader.preprocessors import CheckCellMetadata, OverwriteCells
    from nbgrader.utils import compute_checksum, is_grade, is_solution

    from autograder.integrations.nbgrader_bridge import DeduplicateIds

    _, release_dir = release.directories(release.nbgrader_config(course_run["root"]))
    nb = nbformat.read(release_dir / A / f"{A}.ipynb", as_version=4)
    ids = _cells_by_id(nb)
    nb.cells[ids["test_sequence_mask"]].metadata["nbgrader"]["solution"] = True  # mallory
    fake = copy.deepcopy(nb.cells[ids["test_masked_softmax"]])  # oscar: a plain cell with a test's id, last
    fake.metadata["nbgrader"].update(grade=False, locked=False)
    fake.metadata["nbgrader"].pop("points", None)
    nb.cells.append(fake)
    invented = nbformat.v4.new_code_cell("x = 1", metadata={"nbgrader": {  # an id the release never had
        "grade": True, "solution": False, "locked": True, "points": 99, "grade_id": "test_mine", "schema_version": 3}})
    nb.cells.append(invented)
    resources = {"nbgrader": {"db_url": course_run["db"], "notebook": A, "assignment": A}}
    for step in (DeduplicateIds(), OverwriteCells(), CheckCellMetadata()):
        nb, resources = step.preprocess(nb, resources)
    graded = {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if is_grade(c)}
    assert "test_mine" not in graded and "nbgrader" not in nb.cells[-1].metadata
    from nbgrader.api import Gradebook
    with Gradebook(course_run["db"]) as gb:
        for name in ("test_sequence_mask", "test_masked_softmax"):
            cell = graded[name]
            assert not is_solution(cell)
            assert compute_checksum(cell) == gb.find_source_cell(name, A, A).checksum


def test_feedback_shows_scores_and_messages_but_no_hidden_test_source(course_run):
    page = (course_run["root"] / "feedback" / "carol" / A / f"{A}.html").read_text()
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert re.search(r"masked_softmax: [0-9.]+ / 4 points", text)
    # a known mistake: named, its fix kept back at the course's hint level 1 (course.yml feedback.hint_level)
    assert "[FAIL]" in text and "diagnosis: your masked_softmax" in text and not re.search(r"^\s*fix: ", text, re.M)
    assert re.search(r"Score: 1[0-9.]+ / 14", text)
    hidden = (SUITES / "hidden" / f"test_{A}.py").read_text()
    public = (SUITES / "public" / f"test_{A}.py").read_text()
    tree = ast.parse(hidden)
    names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name.startswith("test")} - \
        {n.name for n in ast.walk(ast.parse(public)) if isinstance(n, ast.FunctionDef)}
    assert names
    assert not [n for n in names if re.search(rf"\b{re.escape(n)}\b", text)]
    docstrings = {ln.strip() for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Module))
                  for ln in (ast.get_docstring(n) or "").splitlines()}
    code = {ln.strip() for ln in hidden.splitlines()} - {ln.strip() for ln in public.splitlines()} - docstrings
    leaked = [ln for ln in code if len(ln) >= 30 and not ln.startswith(("#", '"', "'")) and ln in text]
    assert not leaked, leaked[:5]


def _sheet(path: Path) -> tuple[list[str], dict[str, dict[str, str]]]:
    with path.open() as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), {r["student_id"]: r for r in reader}


def test_release_puts_the_due_date_in_the_gradebook_and_autograde_the_extensions(course_run):
    from nbgrader.api import Gradebook
    with Gradebook(course_run["db"]) as gb:
        assert gb.find_assignment(A).duedate == dt.datetime(2027, 1, 1, 23, 59)  # course.yml: due, time, UTC
    book = course_run["book"]
    assert book["ivy"]["extension"] == dt.timedelta(days=2)  # course.yml's extension, written by autograde
    assert book["ivy"]["duedate"] == dt.datetime(2027, 1, 3, 23, 59)
    assert book["alice"]["extension"] is None and book["alice"]["duedate"] == dt.datetime(2027, 1, 1, 23, 59)


def test_late_penalties_are_the_same_in_the_gradebook_and_course_grade(course_run):
    """hal submitted 10 h after the deadline (Gradescope export time): one started day, 10% of 14;
    ivy at the same time, within her extension; the exchange's submissions are on time."""
    from autograder.grading.late import LatePolicy
    book = course_run["book"]
    raw = book["hal"]["total"]
    expected, _ = LatePolicy(**LATE).penalty(10 * 3600 + 60, 14, raw)
    assert expected == 1.4
    assert book["hal"]["penalty"] == pytest.approx(expected)  # nbgrader's AssignLatePenalties + our plugin
    hal = json.loads((course_run["course_grade"] / "hal.json").read_text())
    assert hal["extra_data"]["late"]["penalty"] == expected and hal["score"] == round(raw - expected, 4)
    assert hal["extra_data"]["late"]["time_source"] == "nbgrader timestamp.txt"
    for student in ("ivy", "alice", "bob", "carol"):
        assert book[student]["penalty"] == 0
    assert "Late submission penalty (Score: -1.4)" in (course_run["root"] / "feedback" / "hal" / A / f"{A}.html").read_text()


def test_nbgrader_export_and_course_grade_write_the_same_grades_csv(course_run):
    """One layout from both paths, the same numbers: components, raw, override (carol's, from the
    overrides file, with who and why), late penalty, final score, times."""
    header, ours = _sheet(course_run["course_grade"] / "grades.csv")
    book_header, book = _sheet(course_run["root"] / "nbgrader-grades.csv")
    assert header == book_header and set(ours) == set(book) == set(STUDENTS)
    for student in STUDENTS:
        assert ours[student] == book[student], student
    carol = ours["carol"]
    assert carol["masked_softmax"] == "3.5" and float(carol["override"]) > 0
    assert "by ta_dana on 2027-01-05: tiling fixed in office hours" in carol["notes"]
    assert ours["hal"]["late_penalty"] == "1.4" and ours["hal"]["hours_late"] == "10.02"
    assert float(ours["hal"]["score"]) == pytest.approx(float(ours["hal"]["raw_score"]) - 1.4)
    assert ours["ivy"]["due"] == "2027-01-03T23:59:00+00:00" and ours["ivy"]["late_penalty"] == "0.0"
    compare = course_run["compare"]
    assert compare.returncode == 0 and "the gradebook agrees" in compare.stdout, compare.stdout + compare.stderr


def test_a_submission_autograde_skipped_is_impossible_to_miss(course_run):
    """zed's notebook sits in submitted/ under a name autograde skips: nbgrader export fails and
    names him, grades.csv says NOT AUTOGRADED, and `course export --gradebook` lists him beside the
    score `course grade` gives; a formgrader score shows up as an override by formgrader."""
    assert course_run["zed_autograde"].returncode != 0
    export = course_run["zed_export"]
    assert export.returncode != 0
    assert f"NOT AUTOGRADED: zed {A}: submitted/zed/{A}/12345_67890_{A}.ipynb is not named {A}.ipynb" in export.stderr
    assert "Traceback" not in export.stderr, export.stderr[-2000:]  # the failure is its lines, no Python trace
    assert "06_transformer is not released yet (no release/06_transformer/, no submission): not exported" in export.stderr
    header, rows = _sheet(course_run["root"] / "after.csv")
    assert "PositionWiseFFN" not in header and all(r["assignment"] == A for r in rows.values())
    assert rows["zed"]["status"] == "NOT AUTOGRADED" and rows["zed"]["score"] == "0.0"
    assert "override sequence_mask = 1 (autograder: 2) by formgrader" in rows["dave"]["notes"]
    compare = course_run["zed_compare"]
    assert compare.returncode == 1
    lines = compare.stderr.splitlines()
    assert any(line.startswith("DISAGREE zed: `course grade` gives 14, the gradebook has no grade") for line in lines)
    assert "DISAGREE dave: sequence_mask is 2 by `course grade`, 1 in the gradebook" in lines


def test_nbgrader_prints_no_sqlalchemy_warnings(course_run):
    logs = course_run["nbgrader_logs"]
    assert "SAWarning" not in logs and "SADeprecationWarning" not in logs and "MovedIn20Warning" not in logs


def test_feedback_page_shows_the_final_grade_with_overrides_and_the_late_reason(course_run):
    """#24 item 3: the page's score is grades.csv's (carol: a TA's override), with who and why; a late
    penalty says when it was submitted, when due, how late and by which policy."""
    _, sheet = _sheet(course_run["course_grade"] / "grades.csv")
    carol = html.unescape(re.sub(r"<[^>]+>", "", (course_run["root"] / "feedback" / "carol" / A / f"{A}.html").read_text()))
    assert f"Score: {round(float(sheet['carol']['score']), 2)} / 14.0" in carol, carol[:600]
    assert re.search(r"masked_softmax: 3\.5 points, set by ta_dana \(autograded: [0-9.]+\): tiling fixed in office hours", carol)
    # the contents give the component's final score too (the term review: 1.0 / 4.0 beside a grade counting 3)
    assert re.search(r"masked_softmax \(Score: 3\.5 / 4\.0, set by ta_dana; autograded: [0-9.]+\)", carol), carol[:1500]
    hal = html.unescape(re.sub(r"<[^>]+>", "", (course_run["root"] / "feedback" / "hal" / A / f"{A}.html").read_text()))
    assert f"Score: {round(float(sheet['hal']['score']), 2)} / 14.0" in hal
    late_line = next(line for line in hal.splitlines() if "Late submission penalty" in line)
    assert "(Score: -1.4): submitted 2027-01-02T10:00:00+00:00, due 2027-01-01T23:59:00+00:00;" in late_line
    assert "10 h" in late_line and "late" in late_line.split(";")[1], late_line


def test_feedback_page_names_components_has_no_stray_outputs_and_renders_math_offline(course_run):
    page = (course_run["root"] / "feedback" / "carol" / A / f"{A}.html").read_text()
    toc = page[page.index('<div id="toc">'):page.index("</ol>", page.index('<div id="toc">'))]
    assert "Test cell" not in page
    for comp in ("sequence_mask", "masked_softmax", "AdditiveAttention", "DotProductAttention"):
        assert f'<a href="#test_{comp}">{comp}</a>' in toc
        assert f"<code>{comp}</code> (autograded)" in page
    assert "Out[" not in page  # neither the score nbgrader reads nor check()'s True/False
    assert "mathjax" not in page.lower() and "cdnjs" not in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)  # nothing to fetch (CSS comments name URLs)
    assert page.count("<math") > 20 and "white-space: pre-wrap" in page


def test_feedback_page_in_chromium(course_run, tmp_path):
    """The page as a student sees it, offline: not blank, math drawn (no `$...$` or `\\(` left in
    the visible text), every feedback line inside its box, nothing fetched from the network."""
    with headless_chromium(tmp_path / "profile", "1200,1400") as driver:
        driver.get((course_run["root"] / "feedback" / "carol" / A / f"{A}.html").as_uri())
        text = driver.execute_script("return document.body.innerText")
        assert "masked_softmax (Score: " in text and "Test cell" not in text
        assert "set by ta_dana" in text and "tiling fixed in office hours" in text  # the override, visible
        assert not re.search(r"\$[^$\s][^$\n]{0,80}\$", text), re.search(r"\$[^$\s][^$\n]{0,80}\$", text)
        assert "\\(" not in text and "\\mathbf" not in text and "\\frac" not in text
        sizes = driver.execute_script("return Array.from(document.querySelectorAll('math')).map("
                                      "m => [m.getBoundingClientRect().width, m.getBoundingClientRect().height])")
        assert len(sizes) > 20 and all(w > 0 and h > 5 for w, h in sizes), sizes[:5]
        cut = driver.execute_script("return Array.from(document.querySelectorAll('.output_area pre'))"
                                    ".filter(p => p.scrollWidth > p.clientWidth + 1).length")
        assert cut == 0  # hints and messages wrap at the box edge
        remote = driver.execute_script("return performance.getEntriesByType('resource').map(r => r.name)"
                                       ".filter(n => !n.startsWith('file:') && !n.startsWith('data:'))")
        assert remote == []
        driver.execute_script("document.querySelector('a[name=test_masked_softmax]').scrollIntoView()")
        assert not looks_blank(screenshot(driver)), "the screenshot looks blank"
        driver.execute_script("window.scrollTo(0, 0)")
        assert not looks_blank(screenshot(driver)), "the top of the page looks blank"


def test_autograde_grades_a_corrupt_upload_unreadable_and_carries_on(tmp_path):
    """A submitted notebook cut short (not valid JSON) does not fail nbgrader autograde with a traceback:
    its graded cells are put back with 0 and the one unreadable line (the reason, said once: on the first
    graded cell), the other students are graded, and autograde exits 0."""
    root = tmp_path / "course"
    root.mkdir()
    course_file = root / "course.yml"
    course_file.write_text((REPO / "course.yml").read_text())
    (root / "nbgrader_config.py").write_text((REPO / "nbgrader_config.py").read_text()
                                             + f"\nc.SandboxGrader.course_file = {str(course_file)!r}\n")
    proc = subprocess.run([sys.executable, "-m", "autograder.cli", "--config", str(course_file), "release", A,
                           "--force", "--course-dir", str(root)], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    released = (root / "release" / A / f"{A}.ipynb").read_bytes()
    for student, data in (("amy", released), ("zoe", released[:3000])):
        (root / "submitted" / student / A).mkdir(parents=True)
        (root / "submitted" / student / A / f"{A}.ipynb").write_bytes(data)
    log = nbgrader(root, "autograde", A)
    assert "Traceback" not in log.stdout + log.stderr
    assert "course grader: amy" in log.stderr and "course grader: zoe" in log.stderr
    nb = nbformat.read(root / "autograded" / "zoe" / A / f"{A}.ipynb", as_version=4)
    graded = {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")}
    assert set(graded) == {f"test_{c.name}" for c in config.default().assignment(A).components}
    texts = [cell.outputs[0]["text"] for cell in graded.values()]
    components = [grade_id[len("test_"):] for grade_id in graded]
    assert texts[0].startswith(f"{components[0]}: 0 points: Your submission could not be read"), texts[0]
    assert "is not a readable Jupyter notebook: its JSON breaks off" in texts[0]
    for component, text in zip(components[1:], texts[1:]):  # the reason once, on the first graded cell
        assert text == f"{component}: 0 points (your submission could not be read: see the first graded cell)\n"
    assert all(cell.outputs[1]["data"]["text/plain"] == "0.0" for cell in graded.values())
    nbgrader(root, "export")
    _, rows = _sheet(root / "grades.csv")
    assert rows["zoe"]["status"] == "unreadable" and rows["zoe"]["notes"].endswith("ask for a re-upload"), rows
    assert rows["amy"]["status"] == "graded"
