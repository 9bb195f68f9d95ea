"""The mutant zoo: realistic buggy and alternative correct implementations that prove the tests.

Each entry is a file `tests/zoo/<assignment>/{mutants,correct}/<name>.py` that redefines one
component (or a few) and starts with a docstring header:

    component: masked_softmax
    bug: masked positions are filled with 0 before the softmax, so they keep weight
    symptom: masked

`symptom` (mutants only) is a phrase that the first failing test's feedback must contain, so that
the feedback names the mistake in words a student understands. A submission for an entry is the
reference implementation of the whole assignment followed by the entry's code.
"""
from __future__ import annotations

import argparse
import inspect
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from autograder import config as config_mod

ZOO = Path(__file__).resolve().parent.parent / "tests" / "zoo"


@dataclass
class Entry:
    assignment: str
    kind: str  # "mutant" or "correct"
    name: str
    path: Path
    component: str
    bug: str
    symptom: str

    @property
    def id(self) -> str:
        return f"{self.assignment}/{self.kind}/{self.name}"


def parse_header(path: Path) -> dict[str, str]:
    doc = inspect.cleandoc((ast_docstring(path) or ""))
    out: dict[str, str] = {}
    for line in doc.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in {"component", "bug", "symptom", "note"}:
            out[key.strip()] = value.strip()
    return out


def ast_docstring(path: Path) -> Optional[str]:
    import ast
    return ast.get_docstring(ast.parse(path.read_text()))


def entries(assignment: Optional[str] = None, root: Path = ZOO) -> list[Entry]:
    out = []
    for folder, kind in (("mutants", "mutant"), ("correct", "correct")):
        for path in sorted(root.glob(f"{assignment or '*'}/{folder}/*.py")):
            header = parse_header(path)
            if "component" not in header:
                raise ValueError(f"{path}: the docstring header needs a 'component:' line")
            out.append(Entry(path.parent.parent.name, kind, path.stem, path, header["component"],
                             header.get("bug", header.get("note", "")), header.get("symptom", "")))
    return out


def reference_source(assignment_id: str) -> str:
    """The whole reference module of an assignment, as a submission would define it."""
    course = config_mod.default()
    module = importlib.import_module(course.assignment(assignment_id).solution)
    return inspect.getsource(module)


def compose(entry: Entry, out_dir: Path) -> Path:
    """Write the submission for an entry: the assignment's reference, then the entry's code."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{entry.assignment}__{entry.kind}__{entry.name}.py"
    path.write_text(reference_source(entry.assignment) + "\n\n# ---- zoo entry ----\n" + entry.path.read_text())
    return path


def main(argv: Optional[list[str]] = None) -> int:
    from autograder.runner import format_result, run_in_process
    parser = argparse.ArgumentParser(description="Grade zoo entries in-process (kit development).")
    parser.add_argument("assignment", nargs="?")
    parser.add_argument("--name", help="only entries whose name contains this")
    parser.add_argument("-v", "--verbose", action="store_true")
    ns = parser.parse_args(argv)
    import tempfile
    tmp = Path(tempfile.mkdtemp())
    bad = 0
    for entry in entries(ns.assignment):
        if ns.name and ns.name not in entry.name:
            continue
        result = run_in_process(entry.assignment, compose(entry, tmp))
        comp = {c.name: c for c in result.components}
        lost = [c.name for c in result.components if c.score < c.points]
        if entry.kind == "correct":
            ok = not lost
        else:
            ok = lost == [entry.component]
        first = next((t for t in comp[entry.component].tests if not t.passed), None) if entry.component in comp else None
        symptom_ok = entry.kind == "correct" or (first is not None and entry.symptom.lower() in first.output.lower() + first.name.lower())
        status = "ok" if ok and symptom_ok else "BAD"
        bad += status == "BAD"
        print(f"{status:3} {entry.id:60} {result.score:g}/{result.max_score:g} lost={lost}"
              + ("" if symptom_ok else f"  (symptom {entry.symptom!r} not in first failure)"))
        if ns.verbose or status == "BAD":
            print(format_result(result, verbose=True))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
