"""The catalogue's entries: what each entry file under `entries/` is (`Entry`), read from its header.

Each entry is a file `entries/<assignment>/{mutants,correct,degenerate}/<name>.py` (beside this module) that
redefines one component (or a few) and starts with a docstring header:

    component: masked_softmax
    bug: keeps one position too many: it keeps index <= valid length instead of index < valid length
    fix: keep the positions with index strictly less than the valid length and mask those with index >= valid length
    family: mask-off-by-one
    symptom: index >= valid length

`bug` is the misconception: what the code does, read as "your code behaves like one that <bug>";
`fix` (mutants) is one sentence telling the student what to change; `family` (optional, mutants) names
the misconception when several entries are the same mistake seen differently (it defaults to the
entry's own name); `symptom` (mutants only) is a phrase that the first failing test's feedback must
contain, so that the feedback names the mistake in words a student understands. Correct entries carry
a `note:` instead of a `bug:`. Degenerate entries are whole implementations that ignore their inputs
(constant, uniform, random or skipped computations with the right shapes): they must earn at most
`DEGENERATE_SHARE` of their component's points and cost no other component anything. A submission for
an entry is the reference implementation of the whole assignment followed by the entry's code.

This module only reads the catalogue: the zoo (zoo.py) grades its entries, the diagnosis
(diagnosis.py) recognises them in a failure; both import the entries from here.
"""
from __future__ import annotations

import ast
import functools
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

ZOO = Path(__file__).resolve().parent / "entries"
#: The largest share of its component's points a degenerate entry may earn.
DEGENERATE_SHARE = 0.10
#: Entry folders and the kind of their entries.
KINDS = (("mutants", "mutant"), ("correct", "correct"), ("degenerate", "degenerate"))
HEADER_KEYS = frozenset({"component", "bug", "fix", "family", "symptom", "note", "ignores"})


@dataclass
class Entry:
    assignment: str
    kind: str  # "mutant", "correct" or "degenerate"
    name: str
    path: Path
    component: str
    bug: str  # the misconception (a correct entry's note)
    symptom: str
    fix: str = ""  # what to change, in one sentence (mutants)
    family: str = ""  # the misconception's id, shared by equivalent entries; the entry's name by default
    # the contract's inputs the mistake never uses (`ignores: valid_lens`): a submission whose signature leaves
    # exactly these out behaves as this mistake does, and only such a mistake may be named for it (grading/session.judge)
    ignores: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        self.family = self.family or self.name

    @property
    def id(self) -> str:
        return f"{self.assignment}/{self.kind}/{self.name}"


def parse_header(path: Path) -> dict[str, str]:
    """The `key: value` lines of an entry's docstring (HEADER_KEYS); parsed once per version of the file
    (a grader names a diagnosis by reading the whole catalogue)."""
    stat = path.stat()
    return dict(_header(str(path), stat.st_mtime_ns, stat.st_size))


@functools.cache
def _header(path: str, mtime_ns: int, size: int) -> tuple[tuple[str, str], ...]:
    doc = inspect.cleandoc(ast_docstring(Path(path)) or "")
    out: dict[str, str] = {}
    for line in doc.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in HEADER_KEYS:
            out[key.strip()] = value.strip()
    return tuple(out.items())


def ast_docstring(path: Path) -> Optional[str]:
    return ast.get_docstring(ast.parse(path.read_text()))


def entries(assignment: Optional[str] = None, root: Path = ZOO) -> list[Entry]:
    out = []
    for folder, kind in KINDS:
        for path in sorted(root.glob(f"{assignment or '*'}/{folder}/*.py")):
            header = parse_header(path)
            if "component" not in header:
                raise ValueError(f"{path}: the docstring header needs a 'component:' line")
            out.append(Entry(path.parent.parent.name, kind, path.stem, path, header["component"],
                             header.get("bug", header.get("note", "")), header.get("symptom", ""),
                             header.get("fix", ""), header.get("family", ""),
                             frozenset(n.strip() for n in header.get("ignores", "").split(",") if n.strip())))
    return out
