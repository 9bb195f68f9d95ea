"""autograder/grading/submission.py: reading notebooks as the kernel reads them, and picking files."""
from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from autograder.grading.session import run_in_process
from autograder.grading.submission import find_submissions, pick_file, python_source, read_cells

A = "02_attention_scoring"

#: Every form of IPython syntax IPython's documentation lists, as students leave them in notebooks.
IPYTHON_FORMS = {
    "line magic": "%matplotlib inline\n",
    "line magic with assignment": "t = %timeit -o -q sum(range(3))\n",
    "shell escape": "!pip install d2l\n",
    "shell escape with assignment": "files = !ls\n",
    "help": "torch.softmax?\n",
    "more help": "torch.softmax??\n",
    "help before": "?torch.softmax\n",
    "pinfo of own name": "masked_softmax?\n",
    "env magic": "%env OMP_NUM_THREADS=1\n",
}


def notebook(tmp_path: Path, cells: list[str]) -> Path:
    path = tmp_path / f"{A}.ipynb"
    nb = {"cells": [{"cell_type": "code", "source": c, "metadata": {}, "outputs": [], "execution_count": None}
                    for c in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb))
    return path


def reference_cells() -> list[str]:
    from solutions import attention_scoring
    source = inspect.getsource(attention_scoring)
    head, _, rest = source.partition("\n\n\ndef sequence_mask")
    parts = ("def sequence_mask" + rest).split("\n\n\n")
    return [head] + parts


@pytest.mark.parametrize("form", sorted(IPYTHON_FORMS))
def test_every_ipython_form_becomes_python(form: str) -> None:
    import ast
    ast.parse(python_source(IPYTHON_FORMS[form]))


@pytest.mark.parametrize("magic", ["%%time", "%%timeit -n1 -r1", "%%capture out"])
def test_definitions_under_a_python_cell_magic_load(magic: str) -> None:
    cell = f"{magic}\ndef f(x):\n    return x + 1\n"
    assert "def f(x):" in python_source(cell)
    assert python_source(cell).count("\n") == cell.count("\n")  # line numbers in tracebacks still match


def test_other_cell_magics_are_not_python() -> None:
    assert python_source("%%bash\nls -l\necho hi\n").strip() == ""
    assert python_source("%%writefile x.py\ndef f():\n    pass\n").strip() == ""


def test_a_correct_notebook_full_of_ipython_syntax_gets_full_marks(tmp_path: Path) -> None:
    cells = reference_cells()
    cells[1] = "%%time\n" + cells[1]  # the cell that defines sequence_mask
    cells.insert(2, "files = !ls\nprint(files)\n")
    cells.insert(3, "masked_softmax?\n")
    cells.append("".join(IPYTHON_FORMS.values()))
    result = run_in_process(A, notebook(tmp_path, cells))
    assert result.score == result.max_score, [n for c in result.components for n in c.notes]


def test_pick_file_prefers_the_assignment_notebook(tmp_path: Path) -> None:
    for name in (f"{A}.ipynb", "scratch.py", "attention_support.py", "test_mine.py"):
        (tmp_path / name).write_text("{}")
    assert pick_file(tmp_path, A, "attention_support") == (tmp_path / f"{A}.ipynb", "")
    (tmp_path / f"{A}.ipynb").unlink()
    path, problem = pick_file(tmp_path, A, "attention_support")
    assert path == tmp_path / "scratch.py" and problem == ""
    (tmp_path / "other.py").write_text("")
    path, problem = pick_file(tmp_path, A, "attention_support")
    assert path is None and "several files" in problem


def test_find_submissions_one_per_student_folder_and_top_level_files(tmp_path: Path) -> None:
    (tmp_path / "alice.py").write_text("")
    (tmp_path / "alice.ipynb").write_text("{}")
    (tmp_path / "bob" / A).mkdir(parents=True)
    (tmp_path / "bob" / A / f"{A}.ipynb").write_text("{}")
    (tmp_path / "carol").mkdir()  # uploaded nothing
    found = {f.name: f for f in find_submissions(tmp_path, A, "attention_support")}
    assert set(found) == {"alice", "alice-py", "bob", "carol"}
    assert found["carol"].path is None and "No notebook" in found["carol"].problem


def test_reading_a_notebook_keeps_code_cells_in_order(tmp_path: Path) -> None:
    cells = read_cells(notebook(tmp_path, ["a = 1\n", "b = 2\n"]))
    assert cells == [("cell 1", "a = 1\n"), ("cell 2", "b = 2\n")]
