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
import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder import config
from autograder.authoring import release
from autograder.grading.session import SUITES

# One worker runs the whole module: its nbgrader course is built once (module fixture), not per worker.
pytestmark = pytest.mark.xdist_group("nbgrader")

A = "02_attention_scoring"
REPO = config.REPO_ROOT
HOSTILE = Path(__file__).resolve().parent / "hostile"
#: eve attacks the sandbox (tests/hostile/ptrace_init.py in a cell of her own); frank, graded after
#: her by the same fork server, must not notice.
STUDENTS = ("alice", "bob", "carol", "dave", "eve", "frank")


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
    assert "value=fill" in cell.source
    cell.source = cell.source.replace("value=fill", "value=0")  # the course text's bug: partial credit
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


def _attacker(nb):
    """A complete notebook plus a cell of her own: the pid 1 / ptrace / namespace attack fixture."""
    nb.cells.append(nbformat.v4.new_code_cell((HOSTILE / "ptrace_init.py").read_text()))
    return nb


@pytest.fixture(scope="module")
def course_run(tmp_path_factory):
    """Run the whole nbgrader course once; the tests below check its products."""
    root = tmp_path_factory.mktemp("nbgrader-course")
    exchange = root / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    (root / "nbgrader_config.py").write_text(
        (REPO / "nbgrader_config.py").read_text() + f"\nc.Exchange.root = {str(exchange)!r}\n")
    course = config.default()
    # Built here, never read from the repository's release/ (generated, not committed).
    source_dir, release_dir = release.directories(release.nbgrader_config(root))
    assert release_dir.is_relative_to(root.resolve())
    release.stage(course, course.assignment(A), source_dir / A)  # what `course release` stages

    nbgrader(root, "generate_assignment", A, "--force")
    nbgrader(root, "release_assignment", A, "--force")
    released = nbformat.read(release_dir / A / f"{A}.ipynb", as_version=4)
    source = nbformat.read(source_dir / A / f"{A}.ipynb", as_version=4)
    notebooks = {
        "alice": _with_solutions(released, source),
        "bob": nbformat.from_dict(json.loads(json.dumps(released))),
        "carol": _buggy(_with_solutions(released, source)),
        "dave": _edited(_with_solutions(released, source)),
        "eve": _attacker(_with_solutions(released, source)),
        "frank": _with_solutions(released, source),
    }
    for name in ("alice", "bob"):  # through the exchange
        folder = root / "students" / name / A
        shutil.copytree(release_dir / A, folder)
        nbformat.write(notebooks[name], str(folder / f"{A}.ipynb"))
        nbgrader(root, "submit", A, "--course=attention", f"--student={name}",
                 f"--Exchange.root={exchange}", cwd=folder.parent)
    nbgrader(root, "collect", A)
    archive = root / "downloaded" / A / "archive"  # downloaded from an LMS
    archive.mkdir(parents=True)
    for name in ("carol", "dave", "eve", "frank"):
        nbformat.write(notebooks[name], str(archive / f"{name}_{A}.ipynb"))
    nbgrader(root, "zip_collect", A)

    # `course grade` on the very same files, alongside nbgrader autograde (both sandboxed).
    graded = root / "course-grade"
    kit = subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade", A, str(root / "submitted"),
                            "--out", str(graded), "--jobs", "1"], cwd=root, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    autograde = nbgrader(root, "autograde", A)
    kit_log = kit.communicate(timeout=1800)[0]
    assert kit.returncode == 0, kit_log
    nbgrader(root, "generate_feedback", A)
    nbgrader(root, "export")
    return {"root": root, "log": autograde.stdout + autograde.stderr, "course_grade": graded,
            "db": f"sqlite:///{root / 'gradebook.db'}"}


def _gradebook(run) -> dict[str, dict]:
    from nbgrader.api import Gradebook

    out = {}
    with Gradebook(run["db"]) as gb:
        for student in STUDENTS:
            nb = gb.find_submission_notebook(A, A, student)
            out[student] = {"total": gb.find_submission(A, student).score,
                            "grades": {g.name: (g.auto_score, g.score, g.max_score, g.needs_manual_grade)
                                       for g in nb.grades}}
    return out


def test_collect_and_zip_collect_put_every_student_in_submitted(course_run):
    submitted = course_run["root"] / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == list(STUDENTS)
    for student in STUDENTS:
        assert (submitted / student / A / f"{A}.ipynb").is_file()


def test_gradebook_scores_equal_course_grade_per_component(course_run):
    course = config.default()
    book = _gradebook(course_run)
    for student, entry in book.items():
        kit = json.loads((course_run["course_grade"] / f"{student}.json").read_text())
        comps = kit["extra_data"]["components"]
        assert set(entry["grades"]) == {f"test_{c.name}" for c in course.assignment(A).components}
        for comp in course.assignment(A).components:
            auto, score, max_score, manual = entry["grades"][f"test_{comp.name}"]
            assert (auto, score, max_score) == (comps[comp.name]["score"], comps[comp.name]["score"], comp.points), \
                (student, comp.name)
            assert manual is False
        assert entry["total"] == pytest.approx(kit["score"], abs=1e-9), student
    assert book["alice"]["total"] == 14 and book["bob"]["total"] == 0
    assert book["dave"]["total"] == 14  # edited, split, reordered and deleted cells: still graded
    assert book["eve"]["total"] == 14  # every attack failed; her code is otherwise correct
    assert book["frank"]["total"] == 14  # graded after the attacker by the same fork server
    auto = book["carol"]["grades"]["test_masked_softmax"][0]
    assert 0 < auto < 4  # partial credit lands as the cell's auto_score
    assert book["carol"]["total"] == 10 + auto


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


def test_feedback_shows_scores_and_messages_but_no_hidden_test_source(course_run):
    page = (course_run["root"] / "feedback" / "carol" / A / f"{A}.html").read_text()
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert re.search(r"masked_softmax: [0-9.]+ / 4 points", text)
    assert "[FAIL]" in text and "hint:" in text
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


def test_export_has_the_gradebook_totals(course_run):
    with open(course_run["root"] / "grades.csv") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f)}
    book = _gradebook(course_run)
    assert set(rows) == set(book)
    for student, row in rows.items():
        assert float(row["score"]) == pytest.approx(book[student]["total"]) and float(row["max_score"]) == 14
