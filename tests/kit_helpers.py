"""Helpers shared by the kit's tests (importable: tests/ is on pytest's pythonpath)."""
from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import nbformat

from autograder import config


def reference_source(assignment_id: str) -> str:
    module = importlib.import_module(config.default().assignment(assignment_id).solution)
    return inspect.getsource(module)


def write_notebook(path: Path, cells: list[tuple[str, str]]) -> Path:
    """A notebook of (kind, source) cells, kind "code" or "markdown"."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) if kind == "code" else nbformat.v4.new_markdown_cell(src)
                for kind, src in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))
    return path
