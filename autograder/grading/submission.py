"""A submission as the grader sees it: which file is a student's, and its code cells as text.

Nothing here runs student code. One home for the rules that pick the file to grade: `course grade`
on a folder, the Gradescope runner and the cluster executor all use `pick_file`.
"""
from __future__ import annotations

import ast
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from autograder.config import Limits
from autograder.sandbox.runtime import json_bounds

SUFFIXES = (".ipynb", ".py")
#: Folders inside a submission that never hold the student's notebook.
SKIP_DIRS = frozenset({"__pycache__", ".ipynb_checkpoints", "__MACOSX", "autograder", ".git"})

Cell = tuple[str, str]  # (label for messages, source)


class SubmissionError(Exception):
    """The file cannot be read as a submission (not found, too large, not a notebook)."""


#: Cell magics whose body is Python that the kernel runs (`%%time` runs the cell and times it).
PYTHON_CELL_MAGICS = ("time", "timeit", "capture", "prun")


def parse_student_code(source: str) -> Optional[ast.Module]:
    """The syntax tree of one cell of student code, or None when Python cannot parse it: the one way
    the grading process parses a submission (its own code runs only in the sandbox). A syntax error,
    NUL bytes (ValueError), an expression nested too deep for the parser (RecursionError,
    MemoryError) are that cell's problem, never the grader's; the size was bounded by read_cells."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def read_notebook(path: Path, limits: Optional[Limits] = None) -> Optional[dict]:
    """A notebook's JSON within `limits` (size, values, depth), or None when it is over them or not a
    notebook: for looking at a file (which assignment it is for), not for grading it."""
    limits = limits or Limits()
    try:
        data = path.read_bytes() if path.stat().st_size <= limits.submission_mb * 1024 * 1024 else b""
        notebook = json_bounds.loads(data, limits.json_bounds(len(data)), "its JSON") if data else None
    except (OSError, ValueError, RecursionError):
        return None
    return notebook if isinstance(notebook, dict) else None


class Deadline:
    """The time reading one submission may take (Limits.read_seconds), checked as the scans go:
    every scan is linear, and this bounds the constant."""

    def __init__(self, seconds: float, filename: str) -> None:
        self.seconds, self.filename = seconds, filename
        self.end = time.monotonic() + seconds

    def check(self) -> None:
        if time.monotonic() > self.end:
            raise SubmissionError(f"{self.filename}: reading it took more than {self.seconds:g} s (is it "
                                  f"mostly blank lines or generated code?); submit the notebook you worked in")


def python_source(cell: str, deadline: Optional[Deadline] = None) -> str:
    """A notebook cell as the IPython kernel would run it, in plain Python (same line numbers).

    Line magics, `!` shell escapes (`files = !ls` included) and `obj?` help that start a logical
    line become the calls IPython's own input transformer makes of them, which the loader then skips
    as it skips any statement that is not a definition; the body of a cell magic that runs Python
    (`%%time`) is kept, the body of any other cell magic (`%%bash`) is not Python and is blanked out.
    One pass over the lines (and, if one of them looks like IPython syntax, one over the characters
    to find where logical lines start): linear in the cell's size, whatever it holds.
    """
    lines = cell.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    if first < len(lines) and lines[first].lstrip().startswith("%%"):
        name = lines[first].lstrip()[2:].split(maxsplit=1)
        if not name or name[0] not in PYTHON_CELL_MAGICS:
            return "\n" * cell.count("\n")
        lines[first] = ""
    candidates = [i for i, line in enumerate(lines) if _ipython_line(line) is not None]
    if not candidates:
        return "\n".join(lines)
    starts = _logical_line_starts("\n".join(lines), deadline)
    for i in candidates:
        if i in starts:
            line = lines[i]
            indent = line[:len(line) - len(line.lstrip())]
            lines[i] = indent + str(_ipython_line(line))
    return "\n".join(lines)


def _ipython_line(line: str) -> Optional[str]:
    """The call IPython makes of a line of IPython syntax, or None for a line of Python."""
    text = line.strip()
    if text.startswith("!"):
        return f"get_ipython().system({text[1:].strip()!r})"
    if text.startswith("%"):
        name, _, args = text[1:].partition(" ")
        return f"get_ipython().run_line_magic({name!r}, {args.strip()!r})"
    if text.startswith("?") or (text.endswith("?") and "#" not in text):
        target = text.strip("?").strip()
        if all(part.isidentifier() for part in target.replace("*", "x").split(".")):
            kind = "pinfo2" if text.startswith("??") or text.endswith("??") else "pinfo"
            return f"get_ipython().run_line_magic({kind!r}, {target!r})"
        return None
    target, equals, value = text.partition("=")
    value = value.strip()
    if equals and value[:1] in ("!", "%") and not value.startswith("%%") and _assignable(target):
        if value.startswith("!"):
            return f"{target.strip()} = get_ipython().getoutput({value[1:].strip()!r})"
        name, _, args = value[1:].partition(" ")
        return f"{target.strip()} = get_ipython().run_line_magic({name!r}, {args.strip()!r})"
    return None


def _assignable(target: str) -> bool:
    """`files`, `a, b`, `self.x`: the left of `files = !ls` (not of `a == !b` or `f(x=%d)`)."""
    names = target.replace(",", " ").replace(".", " ").split()
    return bool(names) and all(n.isidentifier() for n in names)


#: What changes the tokenizer's state: quotes, comments, brackets, backslashes, newlines.
_SIGNIFICANT = re.compile(r"[\"'#()\[\]{}\\\n]")


def _logical_line_starts(text: str, deadline: Optional[Deadline] = None) -> set[int]:
    """The numbers (from 0) of the lines that start a logical line: not inside a string, brackets
    or a backslash continuation. One pass over the characters that matter."""
    starts, line, depth, pos, eol = {0}, 0, 0, 0, -1
    while True:
        found = _SIGNIFICANT.search(text, pos)
        if found is None:
            return starts
        char, pos = found.group(), found.end()
        if char == "\n":
            line += 1
            if depth == 0:
                starts.add(line)
            if deadline is not None and line % 4096 == 0:
                deadline.check()
            continue
        if char == "\\":  # a continuation: the next line starts no logical line
            line += text.startswith("\n", pos)
            pos += 1
        elif char == "#":
            end = text.find("\n", pos)
            pos = len(text) if end < 0 else end
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        else:  # a string: its end, then the lines it spans
            quote = char * 3 if text.startswith(char * 2, pos) else char
            if eol < pos:  # found once per line: many strings on one line cost one search
                eol = text.find("\n", pos) % (len(text) + 1)
            end = _string_end(text, pos + len(quote) - 1, quote, eol)
            line += text.count("\n", pos, end)
            pos = end


def _string_end(text: str, pos: int, quote: str, eol: int) -> int:
    """Where the string whose contents start at `pos` ends (after its closing quote); a one-quote
    string also ends at the end of its line (`eol`), any string at the end of the text."""
    end = eol if len(quote) == 1 else len(text)
    while True:
        close = text.find(quote, pos, end)
        if close < 0:
            return end
        backslashes = 0
        while close - backslashes - 1 >= pos and text[close - backslashes - 1] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            return close + len(quote)
        pos = close + 1


def read_cells(path: Path | str, limits: Optional[Limits] = None) -> list[Cell]:
    """[(label, source)]: a .py file is one cell; a notebook's code cells in order, as the student ran
    them. The one way the grading process reads a submission: within `limits` (course.yml's, the
    course's defaults if not given) of size, JSON, code and time, or a SubmissionError saying which."""
    path = Path(path)
    limits = limits or Limits()
    if path.suffix not in SUFFIXES:
        raise SubmissionError(f"{path.name}: expected a .py or .ipynb file")
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise SubmissionError(f"cannot read {path}: {exc.strerror}") from None
    _check_size(path.name, size, limits)
    return cells_from_bytes(path.name, path.read_bytes(), limits)


def _check_size(filename: str, size: int, limits: Limits) -> None:
    cap = int(limits.submission_mb * 1024 * 1024)
    if size > cap:
        raise SubmissionError(f"{filename} is {size} bytes, over the {cap} byte limit for a submission "
                              f"({limits.submission_mb:g} MiB): clear the notebook's outputs and submit it again")


def cells_from_bytes(filename: str, data: bytes, limits: Optional[Limits] = None) -> list[Cell]:
    """The cells of a submission given as bytes (a worker that has no access to the file), read
    within `limits` as `read_cells` reads them."""
    limits = limits or Limits()
    _check_size(filename, len(data), limits)
    deadline = Deadline(limits.read_seconds, filename)
    if filename.endswith(".ipynb"):
        try:
            notebook = json_bounds.loads(data, limits.json_bounds(len(data)), "its JSON")
            cells = notebook["cells"]
        except json_bounds.JSONBoundsError as exc:
            raise SubmissionError(f"{filename} is not a notebook the grader reads: {exc}") from None
        except json.JSONDecodeError as exc:  # its position only: the message quotes none of the file
            raise SubmissionError(f"{filename} is not a readable Jupyter notebook: its JSON breaks off at line "
                                  f"{exc.lineno}, column {exc.colno} (a save or upload cut short?)") from None
        except (ValueError, KeyError, TypeError, RecursionError):
            raise SubmissionError(f"{filename} is not a readable Jupyter notebook") from None
        sources = []
        for i, cell in enumerate(cells if isinstance(cells, list) else []):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            source = cell.get("source", "")
            source = "".join(map(str, source)) if isinstance(source, list) else str(source)
            sources.append((f"cell {i + 1}", source))
    elif filename.endswith(".py"):
        sources = [(filename, data.decode("utf-8", errors="replace"))]
    else:
        raise SubmissionError(f"{filename}: expected a .py or .ipynb file")
    code = sum(len(source) for _, source in sources)
    if code > limits.source_kb * 1024:
        raise SubmissionError(f"{filename} holds {code} characters of code, over the limit of "
                              f"{limits.source_kb * 1024} ({limits.source_kb} KiB); the graded code of an "
                              f"assignment is far less: remove generated or pasted data and submit again")
    out = []
    for label, source in sources:
        deadline.check()
        out.append((label, python_source(source, deadline) if filename.endswith(".ipynb") else source))
    deadline.check()
    return out


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
