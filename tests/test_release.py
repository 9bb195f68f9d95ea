"""The committed student release (release/): up to date, complete, and free of solutions and hidden tests.

Regenerate it with `course release` (see autograder/release.py) after changing a notebook, a public
test suite, the kit's self-check modules or solutions/ code that a support module ships.
"""
from __future__ import annotations

import ast
import datetime as dt
import filecmp
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder import config
from autograder.authoring import notebooks, release
from autograder.grading import dependencies
from autograder.grading.session import SUITES

REPO = config.REPO_ROOT
RELEASE = REPO / "release"
RELEASED = sorted(p.name for p in RELEASE.iterdir() if p.is_dir()) if RELEASE.is_dir() else []
BUNDLE = {"autograder/__init__.py", "autograder/selfcheck.py", "autograder/plugin.py", "autograder/testing.py"}
#: Modules that must never be imported by a student's self-check (grading, sandbox, reference code).
KIT_ONLY = ("autograder.config", "autograder.grading", "autograder.runner", "autograder.sandbox",
            "autograder.handin", "autograder.remote", "autograder.batch", "autograder.support", "solutions",
            "pydantic", "yaml")


def files_of(folder: Path) -> dict[str, Path]:
    return {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def test_every_assignment_with_a_notebook_is_released(course):
    expected = [a.id for a in course.assignments if release.notebook_path(a.id).exists()
                and not release.blockers(course, a)]
    missing = sorted(set(expected) - set(RELEASED))
    assert not missing, f"not in release/: {missing}; run `course release`"
    assert set(RELEASED) <= {a.id for a in course.assignments}, RELEASED


def test_release_is_up_to_date(course, tmp_path):
    """Regenerating the release from assignments/ gives exactly the committed release/."""
    assert RELEASED, "release/ is empty: run `course release`"
    release.release(course, RELEASED, course_dir=tmp_path, force=True, echo=lambda s: None)
    fresh, committed = files_of(tmp_path / "release"), files_of(RELEASE)
    assert sorted(fresh) == sorted(committed), "files differ: run `course release`"
    stale = [rel for rel in fresh if not filecmp.cmp(fresh[rel], committed[rel], shallow=False)]
    assert not stale, f"out of date with assignments/: {stale}; run `course release`"


@pytest.mark.parametrize("assignment", RELEASED)
def test_release_holds_exactly_what_a_student_receives(assignment):
    expected = {f"{assignment}.ipynb", "attention_support.py", *BUNDLE}
    public = SUITES / "public" / f"test_{assignment}.py"
    if public.exists():
        expected.add(f"autograder/suites/public/test_{assignment}.py")
    assert set(files_of(RELEASE / assignment)) == expected


@pytest.mark.parametrize("assignment", RELEASED)
def test_released_notebook_has_stubs_and_no_outputs(assignment):
    nb = nbformat.read(RELEASE / assignment / f"{assignment}.ipynb", as_version=4)
    nbformat.validate(nb)
    stubs = 0
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, "reference output in the release"
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("solution"):
                stubs += "raise NotImplementedError()" in cell.source
                assert "YOUR CODE HERE" in cell.source
        assert "attachments" not in cell, "attached images are reference output"
    assert stubs >= len(config.default().assignment(assignment).components)


def _solution_lines(assignment_id: str) -> tuple[dict[str, set[str]], set[str]]:
    """({component: stripped lines between the solution markers}, the notebook's other lines)."""
    path = release.notebook_path(assignment_id)
    lines = path.read_text().splitlines()
    cells = notebooks.parse([line + "\n" for line in lines])
    solution: dict[str, set[str]] = {}
    other: set[str] = set()
    for cell in cells:
        inside = False
        for line in lines[cell.start:cell.end]:
            s = line.strip()
            if s in (notebooks.BEGIN, notebooks.END):
                inside = s == notebooks.BEGIN
            elif inside and cell.is_solution:
                solution.setdefault(str(cell.grade_id), set()).add(s)
            else:
                other.add(s)
    return solution, other


def _source_lines(obj_or_source) -> set[str]:
    text = obj_or_source if isinstance(obj_or_source, str) else inspect.getsource(obj_or_source)
    return {line.strip() for line in text.splitlines()}


def _release_lines(folder: Path) -> dict[str, set[str]]:
    """Stripped lines of every file of one released assignment (notebook: every cell's source)."""
    out = {}
    for rel, path in files_of(folder).items():
        if path.suffix == ".ipynb":
            nb = nbformat.read(path, as_version=4)
            out[rel] = {line.strip() for c in nb.cells for line in c.source.splitlines()}
        else:
            out[rel] = _source_lines(path.read_text())
    return out


def solution_leaks(course, assignment: str, folder: Path) -> list[tuple[str, str, str]]:
    """(file, component, line): lines of solution regions (of this assignment, or of any whose code the
    support module does not ship as earlier reference code) found in a released folder."""
    a = course.assignment(assignment)
    earlier = set(course.earlier_components(a))
    # What may legitimately appear: the stub notebook, given code, the toolkit, earlier components.
    allowed = _solution_lines(assignment)[1] | _source_lines(dependencies.HEADER)
    for module in (course.given_module, *dependencies.TOOLKIT_MODULES):
        allowed |= _source_lines(dependencies.module_source(module))
    for name in earlier:
        allowed |= _source_lines(course.reference_object(name))
    forbidden: dict[str, str] = {}
    for other in course.assignments:
        if release.notebook_path(other.id).exists():
            for comp, lines in _solution_lines(other.id)[0].items():
                if comp not in earlier:
                    forbidden.update({line: comp for line in lines if line and line not in allowed})
        for comp in other.components:  # the reference itself, even where no notebook exists yet
            if comp.name not in earlier:
                for line in _source_lines(course.reference_object(comp.name)) - allowed:
                    if len(line) > 12 and not line.startswith(('"""', "#")):
                        forbidden.setdefault(line, comp.name)
    return [(rel, forbidden[line], line) for rel, lines in _release_lines(folder).items()
            for line in lines if line in forbidden]


def hidden_test_problems(folder: Path) -> list[str]:
    """Hidden suites, hidden test names, solution markers or `solutions` imports in a released folder."""
    hidden_suites = sorted((SUITES / "hidden").glob("test_*.py"))
    public_names = set()
    for p in (SUITES / "public").glob("test_*.py"):
        public_names |= {n.name for n in ast.walk(ast.parse(p.read_text())) if isinstance(n, ast.FunctionDef)}
    hidden_names = set()
    for p in hidden_suites:
        hidden_names |= {n.name for n in ast.walk(ast.parse(p.read_text()))
                         if isinstance(n, ast.FunctionDef) and n.name.startswith("test")}
    hidden_names -= public_names
    hidden_texts = {p.read_text() for p in hidden_suites}
    name_re = re.compile(r"\b(" + "|".join(map(re.escape, sorted(hidden_names))) + r")\b") if hidden_names else None
    problems = []
    for rel, path in files_of(folder).items():
        text = path.read_text()
        if "hidden" in rel or text in hidden_texts:
            problems.append(f"{rel} is a hidden test suite")
        for marker in ("### BEGIN SOLUTION", "### END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
            if marker in text:
                problems.append(f"{rel} contains {marker}")
        if re.search(r"^\s*(from|import)\s+solutions\b", text, re.M):
            problems.append(f"{rel} imports solutions")
        found = name_re.search(text) if name_re else None
        if found:
            problems.append(f"{rel} names the hidden test {found.group(0)}")
    return problems


@pytest.mark.parametrize("assignment", RELEASED)
def test_release_contains_no_solution_code(course, assignment):
    leaks = solution_leaks(course, assignment, RELEASE / assignment)
    assert not leaks, leaks[:10]


@pytest.mark.parametrize("assignment", RELEASED)
def test_release_contains_no_hidden_tests_or_markers(assignment):
    problems = hidden_test_problems(RELEASE / assignment)
    assert not problems, problems


def test_the_scans_find_what_they_look_for(course, tmp_path):
    """The scans are not vacuous: the instructor notebook, a hidden suite and later solutions are caught."""
    import jupytext
    import shutil

    folder = tmp_path / "02_attention_scoring"
    shutil.copytree(RELEASE / "02_attention_scoring", folder)
    jupytext.write(jupytext.read(release.notebook_path("02_attention_scoring")), folder / "02_attention_scoring.ipynb")
    later = inspect.getsource(course.reference_object("MultiHeadAttention"))
    (folder / "attention_support.py").write_text((folder / "attention_support.py").read_text() + later)
    shutil.copy(SUITES / "hidden" / "test_02_attention_scoring.py", folder / "autograder" / "extra.py")
    leaks = solution_leaks(course, "02_attention_scoring", folder)
    assert {comp for _, comp, _ in leaks} >= {"sequence_mask", "masked_softmax", "AdditiveAttention",
                                              "DotProductAttention", "MultiHeadAttention"}
    problems = hidden_test_problems(folder)
    assert any("hidden test suite" in p for p in problems) and any("BEGIN SOLUTION" in p for p in problems)
    assert any("names the hidden test" in p for p in problems)


@pytest.mark.parametrize("assignment", RELEASED)
def test_self_check_bundle_imports_nothing_of_the_grader(assignment):
    """The bundle runs on its own: `autograder` is the release's copy, and no grading code is imported."""
    folder = RELEASE / assignment
    code = (
        "import sys, json, autograder, autograder.selfcheck, autograder.plugin, autograder.testing\n"
        "from autograder.selfcheck import check\n"
        "ok = check(namespace={})\n"
        "print(json.dumps({'file': autograder.__file__, 'ok': ok, 'modules': sorted(sys.modules)}))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(report["file"]).resolve().is_relative_to(folder.resolve()), report["file"]
    assert report["ok"] is False  # nothing is defined: every public test fails, and check() did not raise
    imported = [m for m in report["modules"] if m in KIT_ONLY or m.split(".")[0] == "solutions"]
    assert not imported, imported


def _execute(folder: Path, nb) -> list[str]:
    from nbclient import NotebookClient

    NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(folder)}}).execute()
    return [f"cell {i} ({o.ename}: {o.evalue})" for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
            for o in cell.outputs if o.output_type == "error"]


def _released_copy(assignment: str, tmp_path: Path):
    import shutil

    folder = tmp_path / assignment
    shutil.copytree(RELEASE / assignment, folder)
    return folder, nbformat.read(folder / f"{assignment}.ipynb", as_version=4)


def test_released_notebook_with_stubs_fails_only_where_work_is_missing(tmp_path, monkeypatch):
    """Run as received: experiments that call a stub stop with NotImplementedError (or a NameError
    that follows from it), and the self-check cells print failures instead of raising."""
    monkeypatch.setenv("MPLBACKEND", "Agg")
    folder, nb = _released_copy("02_attention_scoring", tmp_path)
    errors = _execute(folder, nb)
    assert errors and all("NotImplementedError" in e or "NameError" in e for e in errors), errors
    checks = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("check_")]
    assert checks and all("FAIL" in "".join(o.get("text", "") for o in c.outputs) for c in checks)
    assert all(o.output_type != "error" for c in checks for o in c.outputs)


@pytest.mark.parametrize("assignment", ["02_attention_scoring", "05_positional_encoding"])
def test_released_notebook_completed_runs_top_to_bottom(assignment, tmp_path, monkeypatch):
    """A student who fills every stub with working code can run the released notebook top to
    bottom, with its own support module and self-check bundle (all six instructor notebooks run
    in tests/test_notebooks_execute.py)."""
    import inspect

    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    folder, nb = _released_copy(assignment, tmp_path)
    components = {c.name for c in config.default().assignment(assignment).components}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and meta.get("grade_id") in components:
            cell.source = inspect.getsource(config.default().reference_object(meta["grade_id"]))
    assert not _execute(folder, nb)
    outputs = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "PASS" in outputs and "FAIL" not in outputs


def test_release_gate_follows_the_due_dates(course, monkeypatch):
    a02, a03 = course.assignment("02_attention_scoring"), course.assignment("03_bahdanau")
    assert release.blockers(course, a02, dt.date(2000, 1, 1)) == []  # ships no earlier solutions
    due02 = a02.due
    before = release.blockers(course, a03, due02)
    assert before and "02_attention_scoring" in before[0] and str(due02) in before[0]
    assert release.blockers(course, a03, due02 + dt.timedelta(days=1)) == []

    staged = []
    monkeypatch.setattr(release, "stage", lambda c, a, folder, root=REPO: staged.append(a.id) or [])
    monkeypatch.setattr(release, "generate", lambda cfg, assignment_id: None)
    with pytest.raises(release.ReleaseError, match="--force"):
        release.release(course, ["03_bahdanau"], course_dir=Path("/nonexistent-course"), today=due02,
                        echo=lambda s: None)
    assert staged == []
    messages: list[str] = []
    done = release.release(course, [], course_dir=Path("/nonexistent-course"), today=due02, echo=messages.append)
    assert "03_bahdanau" not in done and any(m.startswith("skipped 03_bahdanau") for m in messages)
    assert release.release(course, ["03_bahdanau"], course_dir=Path("/nonexistent-course"), today=due02,
                           force=True, echo=lambda s: None) == ["03_bahdanau"]


def test_graded_cells_must_match_course_yml(course):
    a = course.assignment("02_attention_scoring")

    def graded(grade_id, points):
        return {"metadata": {"nbgrader": {"grade": True, "solution": False, "grade_id": grade_id,
                                          "points": points}}, "source": ""}

    good = [graded(f"test_{c.name}", c.points) for c in a.components]
    release.check_cells(a, good)
    with pytest.raises(release.ReleaseError, match="test_sequence_mask has 3 points"):
        release.check_cells(a, [graded("test_sequence_mask", 3)] + good[1:])
    with pytest.raises(release.ReleaseError, match="expected one graded cell test_masked_softmax"):
        release.check_cells(a, [c for c in good if "masked_softmax" not in c["metadata"]["nbgrader"]["grade_id"]])
    with pytest.raises(release.ReleaseError, match="not test_<component>"):
        release.check_cells(a, good + [graded("test_extra", 1)])
