"""A submission as the grader sees it: which file is a student's, and its code cells as text.

Nothing here runs student code. One home for the rules that pick the file to grade: `course grade`
on a folder, the Gradescope runner and the cluster executor all use `pick_file`.
"""
from __future__ import annotations

import ast
import functools
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from autograder.config import Limits
from autograder.grading.student_files import SubmissionError, read_bounded
from autograder.sandbox.runtime import json_bounds
from autograder.selfcheck.i18n import N_

SUFFIXES = (".ipynb", ".py")
NOT_A_SUBMISSION = N_("{name}: expected a .py or .ipynb file")
#: Folders inside a submission that never hold the student's notebook.
SKIP_DIRS = frozenset({"__pycache__", ".ipynb_checkpoints", "__MACOSX", "autograder", ".git"})

Cell = tuple[str, str]  # (label for messages, source)


#: Cell magics whose body is Python that the kernel runs (`%%time` runs the cell and times it).
PYTHON_CELL_MAGICS = ("time", "timeit", "capture", "prun")


def parse_student_code(source: str) -> Optional[ast.Module]:
    """The syntax tree of one cell of student code, or None when Python cannot parse it: the one way
    the grading process parses a submission (its own code runs only in the sandbox). A syntax error,
    NUL bytes (ValueError), an expression nested too deep for the parser (RecursionError,
    MemoryError) are that cell's problem, never the grader's; the size was bounded by read_cells."""
    from autograder.sandbox.runtime import loader
    try:
        return loader.parse(source)  # whatever the machine's warnings filter
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


@functools.lru_cache(maxsize=2)
def cell_trees(cells: tuple[Cell, ...]) -> tuple[Optional[ast.Module], ...]:
    """The syntax tree of each cell (None: it does not parse), its magics stripped as the sandbox's loader
    strips them: parsed once per submission, for the readers of its definitions and calls (dependencies,
    signatures), which ask many times while one submission is graded (a 06 grading had parsed its cells
    about 300 times). The trees are shared: read them, never change them. The two latest submissions'
    trees are kept (a worker grades one at a time)."""
    from autograder.sandbox.runtime import loader
    return tuple(parse_student_code(loader.strip_magics(source)) for _label, source in cells)


#: How the trusted process opens a student's file: never through a symbolic link (the last
#: component; the folders above it are walked with lstat by pick_file/find_submissions), never
#: waiting (a FIFO or a device opens at once and is then refused as not a regular file).
def read_submission(path: Path | str, limits: Optional[Limits] = None) -> bytes:
    """The bytes of a submitted file within `limits.submission_mb` (read_bounded), or a
    SubmissionError: a symbolic link, not a regular file, unreadable, or over the size limit."""
    path = Path(path)
    limits = limits or Limits()
    data, size = read_bounded(path, int(limits.submission_mb * 1024 * 1024))
    _check_size(path.name, size, limits)
    return data


def read_notebook(path: Path, limits: Optional[Limits] = None) -> Optional[dict]:
    """A notebook's JSON within `limits` (size, values, depth), or None when it is over them, not a
    notebook or not a file read_bounded opens: for looking at a file (which assignment it is for),
    not for grading it."""
    limits = limits or Limits()
    try:
        data = read_submission(path, limits)
        notebook = json_bounds.loads(data, limits.json_bounds(len(data)), "its JSON") if data else None
    except (SubmissionError, ValueError, RecursionError):
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
            raise SubmissionError.said(N_("{name}: reading it took more than {seconds} s (is it mostly blank lines or "
                                          "generated code?); submit the notebook you worked in"),
                                       name=self.filename, seconds=f"{self.seconds:g}")


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
    them. The one way the grading process reads a submission (read_submission: no symbolic link, a
    regular file only, one bounded read): within `limits` (course.yml's, the course's defaults if not
    given) of size, JSON, code and time, or a SubmissionError saying which."""
    path = Path(path)
    limits = limits or Limits()
    if path.suffix not in SUFFIXES:
        raise SubmissionError.said(NOT_A_SUBMISSION, name=path.name)
    return cells_from_bytes(path.name, read_submission(path, limits), limits)


def _check_size(filename: str, size: int, limits: Limits) -> None:
    cap = int(limits.submission_mb * 1024 * 1024)
    if size > cap:
        raise SubmissionError.said(N_("{name} is {size} bytes, over the {cap} byte limit for a submission ({mib} MiB): "
                                      "clear the notebook's outputs and submit it again"),
                                   name=filename, size=size, cap=cap, mib=f"{limits.submission_mb:g}")


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
            raise SubmissionError.said(N_("{name} is not a notebook the grader reads: {error}"), name=filename,
                                       error=exc) from None
        except json.JSONDecodeError as exc:  # its position only: the message quotes none of the file
            raise SubmissionError.said(N_("{name} is not a readable Jupyter notebook: its JSON breaks off at line "
                                          "{line}, column {column} (a save or upload cut short?)"),
                                       name=filename, line=exc.lineno, column=exc.colno) from None
        except (ValueError, KeyError, TypeError, RecursionError):
            raise SubmissionError.said(N_("{name} is not a readable Jupyter notebook"), name=filename) from None
        sources = []
        for i, cell in enumerate(cells if isinstance(cells, list) else []):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            source = cell.get("source", "")
            source = "".join(map(str, source)) if isinstance(source, list) else str(source)
            sources.append((cell_label(cell, i), source))
    elif filename.endswith(".py"):
        sources = [(filename, data.decode("utf-8", errors="replace"))]
    else:
        raise SubmissionError.said(NOT_A_SUBMISSION, name=filename)
    code = sum(len(source) for _, source in sources)
    if code > limits.source_kb * 1024:
        raise SubmissionError.said(N_("{name} holds {code} characters of code, over the limit of {limit} ({kib} KiB); "
                                      "the graded code of an assignment is far less: remove generated or pasted data "
                                      "and submit again"),
                                   name=filename, code=code, limit=limits.source_kb * 1024, kib=limits.source_kb)
    out = []
    for label, source in sources:
        deadline.check()
        out.append((label, python_source(source, deadline) if filename.endswith(".ipynb") else source))
    deadline.check()
    return out


def cell_label(cell: dict[str, Any], index: int) -> str:
    """A code cell as Jupyter shows it: `In [16]` (its execution count when it was run), else `cell 23`
    (its position among all the notebook's cells, from 1)."""
    count = cell.get("execution_count")
    return f"In [{count}]" if type(count) is int and count > 0 else f"cell {index + 1}"


def _not_a_file(name: str, entry: os.DirEntry[str]) -> str:
    """Why the entry `name` of a listing is no file to grade ("" when it is a regular file), from
    lstat: a symbolic link is never followed, whatever it points to."""
    if entry.is_symlink():
        return f"{name} is a symbolic link; submit the file itself"
    if not entry.is_file(follow_symlinks=False):
        return f"{name} is not a regular file; submit the file itself"
    return ""


def _walk(folder: Path) -> tuple[list[tuple[str, os.DirEntry[str]]], list[str]]:
    """([(path relative to `folder`, entry)] of every entry below it but folders, sorted; [symbolic
    links to folders]): the folders walked are real ones (lstat), never a link's target; SKIP_DIRS
    are not entered."""
    entries: list[tuple[str, os.DirEntry[str]]] = []
    linked: list[str] = []
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            with os.scandir(folder / rel if rel else folder) as it:
                listing = list(it)
        except OSError:
            continue
        for entry in listing:
            sub = f"{rel}/{entry.name}" if rel else entry.name
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIP_DIRS:
                    stack.append(sub)
            elif entry.is_symlink() and entry.is_dir():  # stat only: what it points to is never read
                if entry.name not in SKIP_DIRS and not entry.name.startswith("."):
                    linked.append(sub)
            else:
                entries.append((sub, entry))
    return sorted(entries, key=lambda e: Path(e[0])), sorted(linked)


def pick_file(folder: Path, assignment_id: str, support_module: str) -> tuple[Optional[Path], str]:
    """The student's file to grade in a folder of uploads, or (None, a message for the student).

    A notebook named like the assignment wins (the shallowest: the notebook itself before a copy in a
    sub-folder), then any file so named (the same), then the only candidate;
    the given support module, uploaded tests and hidden files are never the submission. Only
    regular files in real folders are graded: where the file these rules pick, or one that could be
    picked as well, is a symbolic link (to the reference, to /proc/...) or not a regular file (a FIFO),
    the folder is refused with a message saying so; such a file beside the assignment's own notebook
    is left alone, as nbgrader leaves it (helper-62: a stray `notes.py` link gave `course grade` 0
    and nbgrader full marks). A symbolic link to a folder is not entered.
    """
    candidates, refused = [], {}
    entries, linked = _walk(folder) if folder.is_dir() else ([], [])
    for rel, entry in entries:
        name = entry.name
        if Path(name).suffix not in SUFFIXES or Path(name).stem == support_module or name.startswith(("test_", ".")):
            continue
        candidates.append(folder / rel)
        problem = _not_a_file(rel, entry)
        if problem:
            refused[folder / rel] = problem
    named = [p for p in candidates if p.stem == assignment_id]
    for group in (shallowest([p for p in named if p.suffix == ".ipynb"], folder), shallowest(named, folder),
                  candidates):
        if len(group) == 1 and group[0] not in refused:
            return group[0], ""
        if group and (len(group) == 1 or refused):
            break
    if refused:
        problems = list(refused.values())
        return None, problems[0] + (f" ({len(problems) - 1} more such files)" if len(problems) > 1 else "")
    if not candidates:
        links = f" ({', '.join(linked[:5])}: symbolic links to folders are not followed)" if linked else ""
        return None, (f"No notebook found in your submission: upload {assignment_id}.ipynb "
                      f"(or a .py file with your code).{links}")
    names = ", ".join(str(p.relative_to(folder)) for p in candidates[:10])
    if named:
        return None, (f"Your submission has several files named {assignment_id} ({names}), none of them above the "
                      f"others: upload only your notebook, named {assignment_id}.ipynb.")
    return None, (f"Your submission has several files ({names}) and none is named {assignment_id}.ipynb: "
                  f"upload only your notebook, named {assignment_id}.ipynb.")


def shallowest(paths: list[Path], folder: Path) -> list[Path]:
    """Those of `paths` nearest to `folder`: the notebook at the top beside an old copy in backup/ (helper-64:
    nbgrader grades the top one, and `course grade` refused the folder as holding several)."""
    if not paths:
        return paths
    depth = min(len(p.relative_to(folder).parts) for p in paths)
    return [p for p in paths if len(p.relative_to(folder).parts) == depth]


@dataclass(frozen=True)
class Found:
    """One student's submission in a class folder: the file, or why there is none to grade."""

    name: str
    path: Optional[Path]
    problem: str = ""


def find_submissions(directory: Path, assignment_id: str, support_module: str) -> list[Found]:
    """A class folder: every top-level .py/.ipynb file, and one file per student sub-folder
    (nbgrader's `submitted/<student>/<id>/`, a Gradescope export, one folder per student). Entries
    are classified by lstat: a symbolic link (a file or a student's folder, to the reference or to
    /proc) or a .py/.ipynb that is not a regular file is listed with that problem (0, the message)
    and never opened or entered; inside a student's folder, pick_file's rules."""
    out: list[Found] = []
    with os.scandir(directory) as it:
        listing = sorted(it, key=lambda e: e.name)
    for entry in listing:
        if entry.name.startswith(".") or entry.name in SKIP_DIRS:
            continue
        path = directory / entry.name
        if entry.is_dir(follow_symlinks=False):
            picked, problem = pick_file(path, assignment_id, support_module)
            out.append(Found(entry.name, picked, problem))
        elif path.suffix in SUFFIXES:
            problem = _not_a_file(entry.name, entry)
            out.append(Found(path.stem, None if problem else path, problem))
        elif entry.is_symlink() and entry.is_dir():  # a student's folder as a link: stat only, never entered
            out.append(Found(entry.name, None, f"{entry.name} is a symbolic link; submit the folder itself"))
    return distinct_names(out)


def distinct_names(found: list[Found]) -> list[Found]:
    """Every submission under a name of its own, the name its results file and grades row take: a name
    met again (alice.py beside alice.ipynb or a folder alice/) gets its file's suffix, then a number,
    until no submission has it (helper-62: `alice.py` renamed `alice-py` took the name of `alice-py.py`,
    which was then never graded and `alice.py`'s score shown as its)."""
    taken = {f.name for f in found}
    used: set[str] = set()
    unique = []
    for f in found:
        name = f.name
        if name in used:
            base = f"{name}-{f.path.suffix.lstrip('.') if f.path else 'entry'}"
            name, n = base, 2
            while name in taken or name in used:
                name, n = f"{base}-{n}", n + 1
        used.add(name)
        unique.append(f if name == f.name else Found(name, f.path, f.problem))
    return unique
