"""Every instructor notebook runs top to bottom with the reference solution (short training budget)."""
from __future__ import annotations

import os
from pathlib import Path

import jupytext
import nbformat
import pytest
from nbclient import NotebookClient

from autograder import config
from autograder.authoring.support_module import write_support
from kit_helpers import this_python_kernel

ROOT = Path(__file__).resolve().parent.parent
IDS = [a.id for a in config.default().assignments]


@pytest.mark.parametrize("assignment_id", IDS)
def test_instructor_notebook_executes(assignment_id, tmp_path, monkeypatch):
    course = config.default()
    folder = tmp_path / assignment_id
    folder.mkdir()
    write_support(course, course.assignment(assignment_id), folder)
    nb = jupytext.read(ROOT / "assignments" / assignment_id / f"{assignment_id}.py")
    # Headless, one thread, and the shortest training budget the notebooks accept.
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("COURSE_EPOCHS", "1")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    client = NotebookClient(nb, timeout=600, kernel_name=this_python_kernel(tmp_path, monkeypatch),
                            resources={"metadata": {"path": str(folder)}})
    client.execute()
    outputs = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "FAIL" not in outputs, "a self-check failed on the reference solution"
    checks = [c for c in nb.cells if c.cell_type == "code" and c.source.lstrip().startswith("check(")]
    assert checks and all("PASS" in "".join(o.get("text", "") for o in c.outputs) for c in checks)
    assert not [c.source for c in checks if any(o.output_type == "execute_result" for o in c.outputs)], \
        "a check cell shows check()'s value (True/False) under its report"
    figures = list((folder / "figures").glob("*.png"))
    assert figures, "the notebook saves its plots under figures/"
    nbformat.validate(nb)
