"""Keep the solution regions of the instructor notebooks equal to the reference code in solutions/.

The notebooks are jupytext percent files (`assignments/<id>/<id>.py`). A *solution cell* is a code
cell whose header carries nbgrader metadata with `"solution": true` and a `grade_id` that is a
component of course.yml, e.g.

    # %% nbgrader={"grade": false, "grade_id": "masked_softmax", ..., "solution": true, ...}

Its source is the component's reference code where the body of every `def` (after the docstring)
sits between `### BEGIN SOLUTION` and `### END SOLUTION`, so nbgrader's release keeps signatures and
docstrings and replaces only the bodies.

    python -m autograder.authoring.notebooks sync PATH...    # rewrite solution cells from solutions/
    python -m autograder.authoring.notebooks check PATH...   # exit 1 and list the cells that differ
"""
from __future__ import annotations

import ast
import inspect
import io
import json
import re
import sys
import textwrap
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

from autograder import config

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
_HEADER = re.compile(r"^# %%(?!%)")
_NBGRADER = "nbgrader="


@dataclass
class Cell:
    """One percent-format cell: lines[start] is its `# %%` header, lines[start+1:end] its content."""

    start: int
    end: int
    header: str
    nbgrader: Optional[dict[str, Any]]

    @property
    def grade_id(self) -> Optional[str]:
        return (self.nbgrader or {}).get("grade_id")

    @property
    def is_solution(self) -> bool:
        return bool((self.nbgrader or {}).get("solution"))


def header_metadata(header: str) -> Optional[dict[str, Any]]:
    """The JSON object after `nbgrader=` in a `# %%` header line, or None if there is none."""
    at = header.find(_NBGRADER)
    if at < 0:
        return None
    value, _ = json.JSONDecoder().raw_decode(header, at + len(_NBGRADER))
    if not isinstance(value, dict):
        raise ValueError(f"nbgrader metadata is not a JSON object: {header.strip()}")
    return value


def parse(lines: list[str]) -> list[Cell]:
    """The cells of a percent-format notebook given as lines (with their line endings)."""
    starts = [i for i, line in enumerate(lines) if _HEADER.match(line)]
    return [Cell(s, e, lines[s], header_metadata(lines[s]))
            for s, e in zip(starts, starts[1:] + [len(lines)])]


def _def_body_lines(node: Union[ast.FunctionDef, ast.AsyncFunctionDef],
                    lines: list[str]) -> Optional[tuple[int, int, int]]:
    """(first, last, indent) 0-based lines of the body after the docstring, None if no body."""
    body = node.body
    has_doc = (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
               and isinstance(body[0].value.value, str))
    rest = body[1:] if has_doc else body
    if not rest:
        return None
    if has_doc:
        first = _end(body[0])  # 1-based line of the docstring's end = 0-based next line
    else:
        first = _signature_end(node, lines)
    if rest[0].lineno - 1 < first or first <= node.lineno - 1:
        raise ValueError(f"{node.name}: put the body on its own lines, not after the `:`")
    return first, _end(node) - 1, rest[0].col_offset


def _end(node: ast.AST) -> int:
    """A parsed node's last line (always set by ast.parse)."""
    end = getattr(node, "end_lineno", None)
    assert end is not None
    return int(end)


def _signature_end(node: Union[ast.FunctionDef, ast.AsyncFunctionDef], lines: list[str]) -> int:
    """0-based index of the line after the one holding the `:` that ends the `def` signature."""
    text = "".join(lines[node.lineno - 1:])
    depth = 0
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        elif tok.type == tokenize.OP and tok.string == ":" and depth == 0:
            return node.lineno - 1 + tok.start[0]
    raise ValueError(f"{node.name}: cannot find the end of the signature")


def _defs(nodes: list[ast.stmt]) -> list[Union[ast.FunctionDef, ast.AsyncFunctionDef]]:
    """Outermost function definitions in `nodes`, looking inside classes (methods)."""
    out: list[Union[ast.FunctionDef, ast.AsyncFunctionDef]] = []
    for node in nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(node)
        elif isinstance(node, ast.ClassDef):
            out += _defs(node.body)
    return out


def wrap_regions(source: str) -> str:
    """`source` with the body of every (outermost) def after its docstring between the markers."""
    lines = source.splitlines(keepends=True)
    spans = [s for s in (_def_body_lines(d, lines) for d in _defs(ast.parse(source).body)) if s]
    for first, last, indent in sorted(spans, reverse=True):
        pad = " " * indent
        lines[last + 1:last + 1] = [f"{pad}{END}\n"]
        lines[first:first] = [f"{pad}{BEGIN}\n"]
    return "".join(lines)


def regions_from_reference(component_name: str) -> str:
    """The component's reference code with its bodies wrapped in solution markers."""
    obj = config.default().reference_object(component_name)
    return wrap_regions(textwrap.dedent(inspect.getsource(obj))).rstrip("\n") + "\n"


def component_names() -> set[str]:
    """Every contract component of course.yml."""
    return {c.name for a in config.default().assignments for c in a.components}


def solution_cells(cells: list[Cell]) -> list[Cell]:
    """The cells that hold a component's solution code."""
    names = component_names()
    return [c for c in cells if c.is_solution and c.grade_id in names]


def _content_span(lines: list[str], cell: Cell) -> tuple[int, int]:
    """[first, stop) of the cell's code: after the header, without the trailing blank lines."""
    stop = cell.end
    while stop > cell.start + 1 and not lines[stop - 1].strip():
        stop -= 1
    return cell.start + 1, stop


def _read(path: Union[str, Path]) -> list[str]:
    with open(path, encoding="utf-8", newline="") as f:
        return f.read().splitlines(keepends=True)


def check(path: Union[str, Path]) -> list[str]:
    """Components whose solution cell in the notebook at `path` differs from the reference."""
    lines = _read(path)
    differ = []
    for cell in solution_cells(parse(lines)):
        first, stop = _content_span(lines, cell)
        if cell.grade_id is None or "".join(lines[first:stop]) != regions_from_reference(cell.grade_id):
            differ.append(str(cell.grade_id))
    return differ


def sync(path: Union[str, Path]) -> bool:
    """Rewrite the solution cells of `path` from the reference; True if the file changed."""
    lines = _read(path)
    for cell in reversed(solution_cells(parse(lines))):
        first, stop = _content_span(lines, cell)
        lines[first:stop] = regions_from_reference(str(cell.grade_id)).splitlines(keepends=True)
    new = "".join(lines)
    if new == "".join(_read(path)):
        return False
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(new)
    return True


def main(argv: Optional[list[str]] = None) -> int:
    """CLI: `sync PATH...` or `check PATH...`; returns the exit status."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2 or args[0] not in ("sync", "check"):
        print("usage: python -m autograder.authoring.notebooks {sync,check} PATH...", file=sys.stderr)
        return 2
    status = 0
    for path in args[1:]:
        if args[0] == "sync":
            print(f"{path}: {'updated' if sync(path) else 'up to date'}")
        else:
            differ = check(path)
            if differ:
                status = 1
                print(f"{path}: solution regions differ from solutions/: {', '.join(differ)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
