"""Built-in sample submissions: the reference, an all-stubs file, zoo mutants and a broken file."""
from __future__ import annotations

import ast
import inspect
import importlib
from pathlib import Path

from autograder import config as config_mod
from autograder.catalogue import zoo


def stub_source(source: str) -> str:
    """Replace the body of every function and method by `raise NotImplementedError()`."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node)
            body: list[ast.stmt] = [ast.Expr(ast.Constant(doc))] if doc else []
            node.body = body + [ast.parse("raise NotImplementedError()").body[0]]
    return ast.unparse(tree)


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
    for entry in [e for e in zoo.entries(assignment_id) if e.kind == "mutant"][:mutants]:
        paths.append(zoo.compose(entry, folder))
    return paths
