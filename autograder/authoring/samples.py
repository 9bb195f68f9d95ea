"""Built-in sample submissions: the reference, an all-stubs file, zoo mutants and a broken file; and
disguised copies (for the class report's similarity check)."""
from __future__ import annotations

import ast
import inspect
import importlib
from pathlib import Path

from autograder import config as config_mod
from autograder.catalogue import index, zoo


def stub_source(source: str) -> str:
    """Replace the body of every function and method by `raise NotImplementedError()`."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node)
            body: list[ast.stmt] = [ast.Expr(ast.Constant(doc))] if doc else []
            node.body = body + [ast.parse("raise NotImplementedError()").body[0]]
    return ast.unparse(tree)


def disguised_copy(source: str, prefix: str, reformat: bool = False) -> str:
    """The source with every function's local variables (not its parameters) renamed: what a student
    who copies and disguises code hands in (samples for the class report's similarity check); with
    `reformat`, also rewritten by ast.unparse (other parentheses and line breaks, comments gone)."""
    tree = ast.parse(source)
    spots = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        params |= {a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None}
        local = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} - params
        for n in ast.walk(fn):
            if isinstance(n, ast.Name) and n.id in local:
                spots.add((n.lineno, n.col_offset))
                n.id = prefix + n.id
    if reformat:
        return ast.unparse(tree)
    lines = source.splitlines(keepends=True)
    for lineno, col in sorted(spots, reverse=True):  # the sources are ASCII: offsets are characters
        lines[lineno - 1] = lines[lineno - 1][:col] + prefix + lines[lineno - 1][col:]
    return "".join(lines)


def write_samples(assignment_id: str, folder: Path, mutants: int = 2) -> list[Path]:
    """Write sample submissions for an assignment into `folder`; returns their paths."""
    course = config_mod.default()
    module = importlib.import_module(course.assignment(assignment_id).solution)
    reference = inspect.getsource(module)
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "reference.py": reference,
        "stubs.py": stub_source(reference),
        "broken.py": reference.replace("def ", "def (", 1),
    }
    paths = []
    for name, text in files.items():
        (folder / name).write_text(text)
        paths.append(folder / name)
    for entry in [e for e in index.entries(assignment_id) if e.kind == "mutant"][:mutants]:
        paths.append(zoo.compose(entry, folder))
    return paths
