"""Which assignment a submitted file is for, from its contents (never by running it): nbgrader
grade ids in the notebook's cell metadata (`masked_softmax`, `test_masked_softmax`,
`check_masked_softmax`) and the components its code defines at top level (`def`/`class`).

`course check 02_attention_scoring transformer.ipynb` then says "this is the notebook of
06_transformer" instead of reporting an ImportError from attention_support for every test.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from autograder.grading.submission import SubmissionError, parse_student_code, read_notebook, read_submission

if TYPE_CHECKING:
    from autograder.config import Course


def evidence(course: Course, path: Path) -> dict[str, list[str]]:
    """{assignment id: what in the file belongs to it}, for every assignment with something."""
    grade_ids: set[str] = set()
    sources: list[str] = []
    if path.suffix == ".ipynb":
        notebook = read_notebook(path, course.limits)
        if notebook is None:
            return {}
        cells = notebook.get("cells", [])
        for cell in cells if isinstance(cells, list) else []:
            if not isinstance(cell, dict):
                continue
            meta = (cell.get("metadata") or {}).get("nbgrader") or {}
            if isinstance(meta, dict) and meta.get("grade_id"):
                grade_ids.add(str(meta["grade_id"]))
            if cell.get("cell_type") == "code":
                src = cell.get("source", "")
                sources.append("".join(src) if isinstance(src, list) else str(src))
    else:
        try:  # the one way a student's file is opened: no link followed, a regular file, bounded
            sources.append(read_submission(path, course.limits).decode("utf-8", errors="replace"))
        except SubmissionError:
            return {}
    defined: set[str] = set()
    for src in sources:
        tree = parse_student_code("\n".join(line for line in src.splitlines()
                                            if not line.lstrip().startswith(("%", "!"))))
        if tree is None:
            continue
        defined |= {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    out: dict[str, list[str]] = {}
    for a in course.assignments:
        hits = []
        for c in a.components:
            ids = [g for g in (f"test_{c.name}", c.name, f"check_{c.name}") if g in grade_ids]
            if ids:
                hits.append(f"graded cell {ids[0]}" if ids[0].startswith("test_") else f"cell {ids[0]}")
            elif c.name in defined:
                hits.append(f"defines {c.name}")
        if hits:
            out[a.id] = hits
    return out


def wrong_assignment(course: Course, assignment_id: str, path: Path) -> Optional[str]:
    """Why `path` looks like another assignment's notebook, or None when it may be this one's."""
    found = evidence(course, path)
    if not found or assignment_id in found:
        return None
    other = max(found, key=lambda a: len(found[a]))
    what = ", ".join(found[other][:3]) + (", ..." if len(found[other]) > 3 else "")
    return (f"{path.name} looks like the notebook of {other}, not of {assignment_id} ({what}; nothing of "
            f"{assignment_id}'s components). Check it with `course check {other} {path}`, or pick "
            f"{assignment_id}'s notebook.")
