"""An otter-grader port of an assignment's public tests, for benchmarks/bench_grading.py (otter as a peer).

    python benchmarks/otter_port.py 02_attention_scoring /tmp/otter02   # writes autograder.zip there

otter-grader (benchmarks/requirements.txt) grades a notebook with `otter run -a autograder.zip NB`: it
executes the notebook top to bottom in a Jupyter kernel, then runs each test file's doctest cases
(OK format: `tests/<question>.py` defining `test = {"name", "suites": [{"cases": [{"code": ">>> ..."}]}]}`)
in the notebook's global namespace. The port is generic, so every assignment has one:

* one test file per component (the question), with the component's points from course.yml;
* one case per public test (pytest's parametrize expanded: one case per `part`), worth its share of
  the component's points by the test's `weight` mark, public (not hidden);
* a case imports `otter_public` (written here) and calls the public test function itself, with the
  notebook's globals as the `student` fixture (the self-check's `LocalNamespace`, seeded as the
  self-check seeds it): the same test bodies, checks and tolerances as the kit's public suite, once each;
* the zip's `files/` carry what the release ships next to the notebook (the support module and the
  self-check bundle with the public suite), as nbgrader's course folder has them;
* the submissions otter grades are the kit's notebooks with their `check(...)` cells tagged
  `otter_ignore`: otter runs each question's tests itself (once, after the notebook), so the kit's
  self-check cells, which run the public suite twice per component under pytest, are not run as
  well. That is otter's cheapest fair configuration (nbgrader, by contrast, runs those cells).
"""
from __future__ import annotations

import copy
import importlib.util
import itertools
import json
import pprint
import re
import shutil
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import nbformat

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder import config as config_mod  # noqa: E402
from autograder.authoring import release  # noqa: E402

#: The kit's self-check call in a notebook cell: `check("masked_softmax")`, `check()`.
CHECK_LINE = re.compile(r"^\s*check\(.*\)\s*$")
IGNORE_TAG = "otter_ignore"

HELPER = '''"""Runs one of the kit's public tests on the notebook's names (written by benchmarks/otter_port.py)."""
import importlib.util
import sys
from pathlib import Path

SUITE = Path(__file__).resolve().parent / "autograder" / "suites" / "public" / {suite!r}
_loaded = []


def _suite():
    if not _loaded:
        from autograder.selfcheck.plugin import register_hypothesis_profile
        register_hypothesis_profile({max_examples!r}, {derandomize!r})  # the grader's profile
        spec = importlib.util.spec_from_file_location("otter_public_suite", SUITE)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        _loaded.append(module)
    return _loaded[0]


def run(test, params, names):
    """Call public test `test` with the notebook's globals as `student`: nothing printed when it passes."""
    from autograder.sandbox.runtime import procedures
    from autograder.selfcheck.plugin import GRADER_SEED, LocalNamespace
    function = getattr(_suite(), test)
    procedures.seed_everything(GRADER_SEED)  # pytest_runtest_setup's seed, then the student fixture's
    procedures.seed_everything(procedures.TEST_SEED)
    function(LocalNamespace(names), **params)
'''


@dataclass
class Case:
    """One public test call: its function, parameters (one parametrize combination) and weight."""

    component: str
    function: str
    params: dict[str, Any] = field(default_factory=dict)
    weight: float = 1.0


def _marks(function: Any) -> list[Any]:
    return list(getattr(function, "pytestmark", []))


def _combinations(function: Any) -> list[dict[str, Any]]:
    """Every parameter combination of a test's parametrize marks (their product, as pytest collects)."""
    axes: list[list[dict[str, Any]]] = []
    for mark in _marks(function):
        if mark.name != "parametrize":
            continue
        names, values = mark.args[0], mark.args[1]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        rows = []
        for value in values:
            if hasattr(value, "values") and hasattr(value, "marks"):  # pytest.param(...)
                row = tuple(value.values)
            else:
                row = (value,) if len(names) == 1 else tuple(value)
            rows.append(dict(zip(names, row)))
        axes.append(rows)
    return [{k: v for part in combo for k, v in part.items()} for combo in itertools.product(*axes)]


def public_cases(assignment_id: str) -> list[Case]:
    """The public tests of an assignment in file order, one Case per parameter combination."""
    path = REPO / "autograder" / "suites" / "public" / f"test_{assignment_id}.py"
    spec = importlib.util.spec_from_file_location(f"_otter_port_{assignment_id}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cases = []
    for name, function in vars(module).items():
        if not (name.startswith("test_") and callable(function)):
            continue
        marks = {m.name: m for m in _marks(function)}
        if "component" not in marks:
            continue
        weight = float(marks["weight"].args[0]) if "weight" in marks else 1.0
        for params in _combinations(function):
            cases.append(Case(marks["component"].args[0], name, params, weight))
    return cases


def test_files(assignment_id: str, course: Optional[config_mod.Course] = None) -> dict[str, str]:
    """{file name: OK-format source}: one file per component, one case per public test."""
    course = course or config_mod.default()
    assignment = course.assignment(assignment_id)
    cases = public_cases(assignment_id)
    files = {}
    for component in assignment.components:
        mine = [c for c in cases if c.component == component.name]
        if not mine:
            continue
        total = sum(c.weight for c in mine)
        ok_cases = [{"name": c.function + "".join(f"[{v}]" for v in c.params.values()),
                     "points": component.points * c.weight / total, "hidden": False,
                     "code": (">>> import otter_public as _otter_public\n"
                              f">>> _otter_public.run({c.function!r}, {c.params!r}, globals())\n")}
                    for c in mine]
        spec = {"name": component.name,
                "suites": [{"type": "doctest", "scored": True, "setup": "", "teardown": "", "cases": ok_cases}]}
        files[f"{component.name}.py"] = "OK_FORMAT = True\n\ntest = " + pprint.pformat(spec, sort_dicts=False, width=200) + "\n"
    return files


def build_autograder(assignment_id: str, folder: Path, course: Optional[config_mod.Course] = None) -> Path:
    """`folder/autograder.zip`: otter_config.json, tests/ and files/ (what the release ships next to the
    notebook, and the otter_public helper)."""
    course = course or config_mod.default()
    assignment = course.assignment(assignment_id)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "autograder.zip"
    with tempfile.TemporaryDirectory(prefix="otter-port-") as tmp:
        staged = Path(tmp) / "stage"
        release.stage(course, assignment, staged)
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("otter_config.json", json.dumps({"lang": "python", "print_summary": False}))
            for name, source in test_files(assignment_id, course).items():
                zf.writestr(f"tests/{name}", source)
            for path in sorted(staged.rglob("*")):
                if path.is_file() and path.suffix != ".ipynb" and "__pycache__" not in path.parts:
                    zf.write(path, f"files/{path.relative_to(staged).as_posix()}")
            zf.writestr("files/otter_public.py", HELPER.format(
                suite=f"test_{assignment_id}.py", max_examples=course.hypothesis.max_examples,
                derandomize=course.hypothesis.derandomize))
    return target


def is_check_cell(cell: Any) -> bool:
    """A code cell that only calls the kit's check() (comments and blank lines aside)."""
    if cell.get("cell_type") != "code":
        return False
    lines = [ln for ln in cell.source.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return bool(lines) and all(CHECK_LINE.match(ln) for ln in lines)


def otter_notebook(source: Path, dest: Path) -> Path:
    """A copy of a submission with its check() cells tagged otter_ignore (otter runs the tests itself)."""
    nb = nbformat.read(str(source), as_version=4)
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if is_check_cell(cell):
            tags = cell.setdefault("metadata", {}).setdefault("tags", [])
            if IGNORE_TAG not in tags:
                tags.append(IGNORE_TAG)
    dest.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(dest))
    return dest


def find_otter(explicit: Optional[str] = None) -> Optional[Path]:
    """The `otter` command: `explicit` (--otter), else the one on PATH; None when there is none."""
    found = explicit if explicit else shutil.which("otter")
    if not found or not Path(found).is_file():
        return None
    return Path(found).resolve() if explicit else Path(found)


def otter_python(otter: Path) -> str:
    """The interpreter of an `otter` console script (its shebang): the kernel must import otter too."""
    first = otter.read_bytes().split(b"\n", 1)[0].decode(errors="replace")
    if first.startswith("#!"):
        interpreter = first[2:].strip().split()[0]
        if Path(interpreter).exists():
            return interpreter
    return sys.executable


def kernel_env(otter: Path, folder: Path, base: dict[str, str]) -> dict[str, str]:
    """`base` with JUPYTER_PATH leading to a `python3` kernel spec of otter's own interpreter: otter
    runs the notebook in the kernel its metadata names (python3), and that kernel imports otter."""
    spec = folder / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [otter_python(otter), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (otter)", "language": "python"}))
    paths = [str(folder / "jupyter")] + ([base["JUPYTER_PATH"]] if base.get("JUPYTER_PATH") else [])
    return dict(base, JUPYTER_PATH=":".join(paths))


def otter_version(otter: Path) -> str:
    import subprocess
    out = subprocess.run([otter_python(otter), "-c", "import otter; print(otter.__version__)"],
                         capture_output=True, text=True)
    return out.stdout.strip() or "?"


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Write the otter-grader port of an assignment's public tests.")
    parser.add_argument("assignment")
    parser.add_argument("folder", type=Path)
    ns = parser.parse_args()
    print(build_autograder(ns.assignment, ns.folder))
