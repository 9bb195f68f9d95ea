"""Load a submission's definitions into a namespace, one top-level statement at a time.

Only statements that define things run: imports, function and class definitions, and
assignments whose right-hand side calls nothing (constants, names, arithmetic) but a device's choice
(DEVICE_CALLS). Training loops,
plots and prints in a notebook are skipped, so grading never waits for a student's experiments.
A statement that fails is recorded and loading goes on with the next one.
"""
from __future__ import annotations

import ast
import contextlib
import re
import sys
import traceback
import linecache
import warnings
from collections.abc import Iterator
from typing import Any, Optional

try:
    from procedures import crash_site, say  # in the sandbox, runtime/ is the import path
except ImportError:
    from autograder.sandbox.runtime.procedures import crash_site, say

_MAGIC = re.compile(r"^(\s*)([%!]|\?\?|\?)")
#: Load-time errors reported in full; the rest are counted (the grader keeps fewer: course.yml's limits.notes).
MAX_ERRORS = 100
KEEP_SIMPLE = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Pass)


def strip_magics(source: str) -> str:
    """Blank out IPython magics and shell escapes (`%matplotlib inline`, `!pip ...`), keeping line numbers."""
    lines = source.split("\n")
    if lines and lines[0].lstrip().startswith("%%"):
        return "\n" * (len(lines) - 1)  # a cell magic: the whole cell is not Python
    return "\n".join("" if _MAGIC.match(line) else line for line in lines)


#: The calls a kept assignment may make: choosing a device, which learners' files do at the top and then use
#: in every function (`device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')`, d2l's
#: `try_gpu()`); dropping it left each of those functions a NameError (helper-69). No training runs in them.
DEVICE_CALLS = frozenset({"torch.device", "torch.cuda.is_available", "d2l.try_gpu", "d2l.try_all_gpus", "d2l.cpu"})


def _dotted(node: ast.expr) -> str:
    """`torch.cuda.is_available` for that attribute chain on a name, "" for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else ""


def _pure(node: ast.AST) -> bool:
    """True for an expression that calls nothing but DEVICE_CALLS (so it cannot run a training loop)."""
    return not any(isinstance(n, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.ListComp, ast.SetComp,
                                  ast.DictComp, ast.GeneratorExp, ast.Lambda))
                   or (isinstance(n, ast.Call) and _dotted(n.func) not in DEVICE_CALLS)
                   for n in ast.walk(node))


def _imports_self_check(stmt: ast.stmt) -> bool:
    """`from autograder.selfcheck import check`: the notebook's self-check, not part of the work."""
    if isinstance(stmt, ast.ImportFrom):
        return (stmt.module or "").split(".")[0] == "autograder"
    return isinstance(stmt, ast.Import) and any(a.name.split(".")[0] == "autograder" for a in stmt.names)


def adds_to_a_class(stmt: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    """Whether a definition is decorated with d2l 1.0's `add_to_class(C)`, which makes it a method of C and
    binds its own name to None."""
    return any(adds_to_a_class_decorator(d) for d in stmt.decorator_list)


def adds_to_a_class_decorator(decorator: ast.expr) -> bool:
    return isinstance(decorator, ast.Call) and (getattr(decorator.func, "attr", None) == "add_to_class"
                                                or getattr(decorator.func, "id", None) == "add_to_class")


def keeps(stmt: ast.stmt) -> bool:
    """Whether a top-level statement is a definition the grader runs."""
    if _imports_self_check(stmt):
        return False
    if isinstance(stmt, KEEP_SIMPLE):
        return True
    if isinstance(stmt, ast.Expr):
        return isinstance(stmt.value, ast.Constant)  # a docstring
    if isinstance(stmt, ast.Assign):
        return all(isinstance(t, (ast.Name, ast.Tuple)) for t in stmt.targets) and _pure(stmt.value)
    if isinstance(stmt, ast.AnnAssign):
        return isinstance(stmt.target, ast.Name) and (stmt.value is None or _pure(stmt.value))
    if isinstance(stmt, ast.If):
        return _pure(stmt.test) and all(keeps(s) for s in stmt.body + stmt.orelse)
    if isinstance(stmt, ast.Try):
        return all(keeps(s) for s in stmt.body + stmt.orelse + stmt.finalbody) and all(
            keeps(s) for h in stmt.handlers for s in h.body)
    return False


def assigned_names(stmt: ast.stmt) -> set[str]:
    """The names a statement binds."""
    return {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


#: What `defines` says of a statement that may bind any name (`from m import *`, a cell that does not parse).
ANY_NAME = "*"


def defines(stmt: Optional[ast.stmt]) -> list[str]:
    """The names a statement would have bound at the top level, had it run (a load note says so: a missing name's
    message shows the notes of the statements that would have bound it as its cause, and the others as others)."""
    if stmt is None:
        return [ANY_NAME]
    names = assigned_names(stmt)
    for node in ast.walk(stmt):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(ANY_NAME if a.name == "*" else a.asname or a.name.partition(".")[0] for a in node.names)
    return sorted(names)


def student_traceback(exc: BaseException, limit_chars: int = 2000, error: bool = True) -> str:
    """Where `exc` broke the submission's code (procedures.crash_site: its cells as labelled, e.g.
    `In [16], line 7`, the line, the shapes of the tensors on it), then, if `error`, the exception."""
    text = crash_site(exc, submission_label, limit_chars)
    if error:
        text = (text + "\n" if text else "") + "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return text[-limit_chars:]


def submission_label(filename: str) -> Optional[str]:
    """The label of a cell the loader compiled (its file name is `<label>`), None for any other file."""
    if filename.startswith("<") and filename.endswith(">") and not filename.startswith(("<frozen", "<string",
                                                                                          "<course ")):
        return filename[1:-1]
    return None


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """ast.parse of a cell, its compile-time warnings (SyntaxWarning, DeprecationWarning: `'\\d'`, `x is 1`) never
    errors: a machine's warnings filter (PYTHONWARNINGS=error, `python -W error`) must not make a cell unparsable
    for the grader, which reads its definitions, and parsable for the sandbox's child, which runs them with the
    default filter (helper-77: a misspelt class beside a `'\\d+'` lost its whole score, 5.73 -> 0 of 6)."""
    with _warnings_ignored():
        return ast.parse(source, filename=filename)


@contextlib.contextmanager
def _warnings_ignored() -> Iterator[None]:
    """No warning while a cell is parsed or compiled (`parse`), whatever the process's filter."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def load(cells: list[tuple[str, str]], namespace: dict[str, Any]) -> dict[str, Any]:
    """Run the kept statements of each (label, source) cell in order into `namespace`.

    Returns a report: {"errors": [{"where", "error"}], "omitted": errors beyond MAX_ERRORS,
    "skipped": int, "defined": [names]}.
    """
    errors: list[dict[str, Any]] = []
    omitted = 0
    skipped = 0
    unset: set[str] = set()  # names that only skipped statements (experiments) assign
    for label, source in cells:
        filename = f"<{label}>"
        source = strip_magics(source)
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # lines for crash reports
        try:
            tree = parse(source, filename)
        except SyntaxError as exc:
            if len(errors) >= MAX_ERRORS:
                omitted += 1
                continue
            errors.append({"where": label, "error": say("syntax", message=exc.msg, line=exc.lineno), "defines": defines(None)})
            continue
        except (RecursionError, MemoryError, ValueError) as exc:  # nested too deeply for the parser, NUL bytes
            if len(errors) >= MAX_ERRORS:
                omitted += 1
                continue
            errors.append({"where": label, "error": say("unparsable", error=type(exc).__name__), "defines": defines(None)})
            continue
        for stmt in tree.body:
            if not keeps(stmt):
                skipped += 1
                unset |= assigned_names(stmt)
                continue
            with _warnings_ignored():  # as `parse`: the filter never makes a statement uncompilable
                code = compile(ast.Module(body=[stmt], type_ignores=[]), filename, "exec")
            try:
                exec(code, namespace)
            except BaseException as exc:
                if isinstance(exc, NameError) and getattr(exc, "name", None) in unset:
                    unset |= assigned_names(stmt)  # follows from a skipped experiment: not worth a note
                elif len(errors) >= MAX_ERRORS:
                    omitted += 1
                elif isinstance(exc, (SystemExit, KeyboardInterrupt)) or not isinstance(exc, Exception):
                    kind = type(exc).__name__
                    errors.append({"where": say("where", where=label, line=stmt.lineno),
                                   "error": say("at_load", error=kind), "defines": defines(stmt)})
                else:
                    errors.append({"where": say("where", where=label, line=stmt.lineno), "error": student_traceback(exc),
                                   "defines": defines(stmt)})
    defined = sorted(k for k in namespace if not k.startswith("__"))
    return {"errors": errors, "omitted": omitted, "skipped": skipped, "defined": defined}


if __name__ == "__main__":  # pragma: no cover - manual use: python loader.py file.py
    ns: dict[str, Any] = {"__name__": "__submission__"}
    print(load([("file", open(sys.argv[1]).read())], ns))
