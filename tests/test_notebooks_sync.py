"""The instructor notebooks agree with solutions/ and course.yml.

- every solution region equals the reference code (`python -m autograder.authoring.notebooks sync` fixes it);
- every graded test cell carries the points course.yml gives its component;
- every contract component has exactly one solution cell and one graded test cell in its
  assignment's notebook, and nbgrader grade ids are unique;
- the `nbgrader=` headers land in the cell metadata when jupytext converts the notebook.
"""
from __future__ import annotations

import ast
import inspect
import shutil
from pathlib import Path

import pytest

from autograder import config
from autograder.authoring import notebooks

REPO = Path(__file__).resolve().parent.parent
COURSE = config.default()
ASSIGNMENT_IDS = [a.id for a in COURSE.assignments]


def notebook_path(assignment_id: str) -> Path:
    return REPO / "assignments" / assignment_id / f"{assignment_id}.py"


EXISTING = [a for a in ASSIGNMENT_IDS if notebook_path(a).exists()]


def cells_of(assignment_id: str) -> list[notebooks.Cell]:
    text = notebook_path(assignment_id).read_text(encoding="utf-8")
    return notebooks.parse(text.splitlines(keepends=True))


def graded_cells(cells: list[notebooks.Cell]) -> list[notebooks.Cell]:
    return [c for c in cells if (c.nbgrader or {}).get("grade") and not c.is_solution]


def test_every_notebook_is_an_assignment() -> None:
    stray = [p for p in (REPO / "assignments").glob("*/*.py")
             if p.stem == p.parent.name and p.stem not in ASSIGNMENT_IDS]
    assert not stray, f"notebooks without an assignment in course.yml: {stray}"


@pytest.mark.parametrize("assignment_id", EXISTING)
def test_solution_regions_match_reference(assignment_id: str) -> None:
    differ = notebooks.check(notebook_path(assignment_id))
    assert not differ, (f"{assignment_id}: solution cells differ from solutions/ for {differ}; run "
                        f"`python -m autograder.authoring.notebooks sync {notebook_path(assignment_id)}`")


@pytest.mark.parametrize("assignment_id", ASSIGNMENT_IDS)
def test_one_solution_and_one_graded_cell_per_component(assignment_id: str) -> None:
    path = notebook_path(assignment_id)
    assert path.exists(), f"{assignment_id}: no notebook at {path.relative_to(REPO)}"
    cells = cells_of(assignment_id)
    for component in COURSE.assignment(assignment_id).components:
        solutions = [c for c in cells if c.is_solution and c.grade_id == component.name]
        graded = [c for c in graded_cells(cells) if c.grade_id == f"test_{component.name}"]
        assert len(solutions) == 1, f"{component.name}: {len(solutions)} solution cells, expected 1"
        assert len(graded) == 1, f"{component.name}: {len(graded)} graded test cells, expected 1"
        assert solutions[0].start < graded[0].start, f"{component.name}: graded cell before the solution"


@pytest.mark.parametrize("assignment_id", EXISTING)
def test_graded_cells_carry_course_points(assignment_id: str) -> None:
    assignment = COURSE.assignment(assignment_id)
    points = {f"test_{c.name}": c.points for c in assignment.components}
    graded = graded_cells(cells_of(assignment_id))
    assert graded, f"{assignment_id}: no graded test cells"
    for cell in graded:
        assert cell.grade_id in points, f"{assignment_id}: graded cell {cell.grade_id!r} is not a component's test"
        assert cell.nbgrader.get("locked") is True, f"{cell.grade_id}: graded cells must be locked"
        assert cell.nbgrader.get("points") == points[cell.grade_id], (
            f"{cell.grade_id}: {cell.nbgrader.get('points')} points in the notebook, "
            f"{points[cell.grade_id]} in course.yml")
    assert sum(c.nbgrader["points"] for c in graded) == assignment.max_score


@pytest.mark.parametrize("assignment_id", EXISTING)
def test_grade_ids_unique_and_solution_cells_well_formed(assignment_id: str) -> None:
    cells = [c for c in cells_of(assignment_id) if c.nbgrader is not None]
    ids = [c.grade_id for c in cells]
    assert len(ids) == len(set(ids)), f"{assignment_id}: duplicate grade ids {sorted(ids)}"
    names = {c.name for c in COURSE.assignment(assignment_id).components}
    for cell in cells:
        if cell.is_solution:
            assert cell.grade_id in names, f"{cell.grade_id}: solution cell of another assignment"
            assert cell.nbgrader.get("grade") is False and cell.nbgrader.get("locked") is False


@pytest.mark.parametrize("assignment_id", EXISTING)
def test_jupytext_puts_nbgrader_metadata_in_cells(assignment_id: str) -> None:
    jupytext = pytest.importorskip("jupytext")
    nb = jupytext.read(notebook_path(assignment_id))
    from_ipynb = [c.metadata["nbgrader"] for c in nb.cells if "nbgrader" in c.metadata]
    from_headers = [c.nbgrader for c in cells_of(assignment_id) if c.nbgrader is not None]
    assert from_ipynb == from_headers


@pytest.mark.parametrize("assignment_id", EXISTING)
def test_nbgrader_release_stubs_every_region(assignment_id: str) -> None:
    """nbgrader's ClearSolutions accepts the notebook and leaves valid Python stubs.

    It matches the markers as substrings of any line, in markdown too: narrative that quotes
    both markers on one line, or on two lines of a markdown cell, breaks the release.
    """
    jupytext = pytest.importorskip("jupytext")
    preprocessors = pytest.importorskip("nbgrader.preprocessors")
    nb = jupytext.read(notebook_path(assignment_id))
    expected = sum(c.source.count(notebooks.BEGIN) for c in nb.cells
                   if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution"))
    released, _ = preprocessors.ClearSolutions().preprocess(nb, {})
    stubs = sum(c.source.count("raise NotImplementedError()") for c in released.cells
                if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution"))
    assert stubs == expected > 0
    for cell in released.cells:
        assert "BEGIN SOLUTION" not in cell.source and "END SOLUTION" not in cell.source
        if cell.cell_type == "code":
            ast.parse("\n".join(line for line in cell.source.splitlines()
                                if not line.lstrip().startswith(("%", "!"))))


def test_regions_wrap_every_body_after_its_docstring() -> None:
    source = inspect.getsource(COURSE.reference_object("AdditiveAttention"))
    generated = notebooks.regions_from_reference("AdditiveAttention")
    assert generated.count(notebooks.BEGIN) == generated.count(notebooks.END) == 2
    unwrapped = "".join(line for line in generated.splitlines(keepends=True)
                        if line.strip() not in (notebooks.BEGIN, notebooks.END))
    assert unwrapped == source.rstrip("\n") + "\n"
    ast.parse(generated)


def test_wrap_regions_handles_signatures_without_docstrings() -> None:
    source = ("def f(a,\n      b: dict[str, int] = {}):  # note\n    # body comment\n"
              "    def g():\n        return 1\n    return g\n")
    assert notebooks.wrap_regions(source) == (
        "def f(a,\n      b: dict[str, int] = {}):  # note\n    ### BEGIN SOLUTION\n"
        "    # body comment\n    def g():\n        return 1\n    return g\n    ### END SOLUTION\n")


def test_sync_rewrites_only_solution_cells(tmp_path: Path) -> None:
    text = ("# %% [markdown]\n# text\n\n"
            '# %% nbgrader={"grade": false, "grade_id": "sequence_mask", "locked": false, '
            '"schema_version": 3, "solution": true, "task": false}\n'
            "def sequence_mask(X, valid_len, value=0):\n    pass\n\n\n"
            "# %%\nprint('after')  \n")
    path = tmp_path / "nb.py"
    path.write_text(text)
    assert notebooks.check(path) == ["sequence_mask"]
    assert notebooks.sync(path) is True
    assert notebooks.check(path) == []
    assert notebooks.sync(path) is False
    new = path.read_text()
    assert new.startswith("# %% [markdown]\n# text\n\n# %% nbgrader=")
    assert new.endswith("    ### END SOLUTION\n\n\n# %%\nprint('after')  \n")
    assert notebooks.main(["check", str(path)]) == 0
    shutil.copy(path, tmp_path / "copy.py")
    (tmp_path / "copy.py").write_text(new.replace("masked_fill", "masked_fill_"))
    assert notebooks.main(["check", str(tmp_path / "copy.py")]) == 1
