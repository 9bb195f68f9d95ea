"""A submission as the grader sees it: which file is a student's, and its code cells as text.

Nothing here runs student code. One home for the rules that pick the file to grade: `course grade`
on a folder, the Gradescope runner and the cluster executor all use `pick_file`.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

MAX_SUBMISSION_BYTES = 20 * 1024 * 1024
SUFFIXES = (".ipynb", ".py")
#: Folders inside a submission that never hold the student's notebook.
SKIP_DIRS = frozenset({"__pycache__", ".ipynb_checkpoints", "__MACOSX", "autograder", ".git"})

Cell = tuple[str, str]  # (label for messages, source)


class SubmissionError(Exception):
    """The file cannot be read as a submission (not found, too large, not a notebook)."""


#: Cell magics whose body is Python that the kernel runs (`%%time` runs the cell and times it).
PYTHON_CELL_MAGICS = ("time", "timeit", "capture", "prun")
_CELL_MAGIC = re.compile(r"^\s*%%(\w+)")
_IPYTHON_SYNTAX = re.compile(r"^\s*[%!?]|[?]\s*$|=\s*[%!]", re.M)


def python_source(cell: str) -> str:
    """A notebook cell as the IPython kernel would run it, in plain Python (same line numbers).

    IPython's own input transformer (the one the kernel uses) turns line magics, `!` shell escapes
    (`files = !ls` included) and `obj?` help into calls, which the loader then skips as it skips any
    statement that is not a definition; the body of a cell magic that runs Python (`%%time`) is kept,
    the body of any other cell magic (`%%bash`) is not Python and is blanked out.
    """
    magic = _CELL_MAGIC.match(cell)
    if magic:
        _, _, body = cell.partition("\n")
        if magic.group(1) not in PYTHON_CELL_MAGICS:
            return "\n" * cell.count("\n")
        cell = "\n" + body
    if not _IPYTHON_SYNTAX.search(cell):
        return cell  # plain Python: no need to load IPython
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # pragma: no cover - IPython comes with the kit (ipykernel)
        return cell
    try:
        return TransformerManager().transform_cell(cell)
    except Exception:  # a cell IPython cannot read either: the loader reports its SyntaxError
        return cell


def read_cells(path: Path | str) -> list[Cell]:
    """[(label, source)]: a .py file is one cell; a notebook's code cells in order, as the student ran them."""
    path = Path(path)
    if path.suffix not in SUFFIXES:
        raise SubmissionError(f"{path.name}: expected a .py or .ipynb file")
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise SubmissionError(f"cannot read {path}: {exc.strerror}") from None
    if size > MAX_SUBMISSION_BYTES:
        raise SubmissionError(f"{path.name} is {size} bytes, over the {MAX_SUBMISSION_BYTES} byte limit")
    return cells_from_bytes(path.name, path.read_bytes())


def cells_from_bytes(filename: str, data: bytes) -> list[Cell]:
    """The cells of a submission given as bytes (a worker that has no access to the file)."""
    text = data.decode("utf-8", errors="replace")
    if filename.endswith(".ipynb"):
        try:
            notebook = json.loads(text)
            cells = notebook["cells"]
        except (ValueError, KeyError, TypeError):
            raise SubmissionError(f"{filename} is not a readable Jupyter notebook") from None
        out = []
        for i, cell in enumerate(cells if isinstance(cells, list) else []):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else str(source)
            out.append((f"cell {i + 1}", python_source(source)))
        return out
    if filename.endswith(".py"):
        return [(filename, text)]
    raise SubmissionError(f"{filename}: expected a .py or .ipynb file")


def pick_file(folder: Path, assignment_id: str, support_module: str) -> tuple[Optional[Path], str]:
    """The student's file to grade in a folder of uploads, or (None, a message for the student).

    A notebook named like the assignment wins, then any file so named, then the only candidate;
    the given support module, uploaded tests and hidden files are never the submission.
    """
    candidates = []
    for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
        rel = path.relative_to(folder)
        if not path.is_file() or path.suffix not in SUFFIXES or any(p in SKIP_DIRS for p in rel.parts[:-1]):
            continue
        if path.stem == support_module or path.name.startswith(("test_", ".")):
            continue
        candidates.append(path)
    named = [p for p in candidates if p.stem == assignment_id]
    for group in ([p for p in named if p.suffix == ".ipynb"], named, candidates):
        if len(group) == 1:
            return group[0], ""
    if not candidates:
        return None, (f"No notebook found in your submission: upload {assignment_id}.ipynb "
                      f"(or a .py file with your code).")
    names = ", ".join(str(p.relative_to(folder)) for p in candidates[:10])
    return None, (f"Your submission has several files ({names}) and none is named {assignment_id}.ipynb: "
                  f"upload only your notebook, named {assignment_id}.ipynb.")


@dataclass(frozen=True)
class Found:
    """One student's submission in a class folder: the file, or why there is none to grade."""

    name: str
    path: Optional[Path]
    problem: str = ""


def find_submissions(directory: Path, assignment_id: str, support_module: str) -> list[Found]:
    """A class folder: every top-level .py/.ipynb file, and one file per student sub-folder
    (nbgrader's `submitted/<student>/<id>/`, a Gradescope export, one folder per student)."""
    out: list[Found] = []
    for entry in sorted(directory.iterdir()):
        if entry.is_file() and entry.suffix in SUFFIXES and not entry.name.startswith("."):
            out.append(Found(entry.stem, entry))
        elif entry.is_dir() and not entry.name.startswith(".") and entry.name not in SKIP_DIRS:
            path, problem = pick_file(entry, assignment_id, support_module)
            out.append(Found(entry.name, path, problem))
    seen: dict[str, int] = {}
    unique = []
    for found in out:
        n = seen.get(found.name, 0)
        seen[found.name] = n + 1
        if n:  # alice.py and alice.ipynb: both graded, under distinct names
            suffix = found.path.suffix.lstrip(".") if found.path else str(n)
            found = Found(f"{found.name}-{suffix}", found.path, found.problem)
        unique.append(found)
    return unique
