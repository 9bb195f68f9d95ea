"""The student release, built fresh: complete, reproducible, free of solutions and hidden tests, and
released only after the due dates of the assignments whose reference code it ships.

release/ is generated output of `course release` (autograder/authoring/release.py) and is not
committed (only release/README.md is). These tests never read it: the fixture `built` runs one
forced build of every assignment into a temporary nbgrader course per test run (shared by the
xdist workers) and the tests check that build; tests that change or execute a release work on a
copy of it.
"""
from __future__ import annotations

import ast
import datetime as dt
import filecmp
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from autograder import config
from autograder.authoring import notebooks, release
from autograder.grading import dependencies
from autograder.grading.session import SUITES
from kit_helpers import this_python_kernel

REPO = config.REPO_ROOT
KIT = REPO / "autograder"
LONG_AGO = dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc)
#: The assignments a build contains: every one with an instructor notebook.
IDS = [a.id for a in config.default().assignments if release.notebook_path(a.id).exists()]
#: The self-check bundle in every released folder: {path in the folder: the kit file it copies (None: generated)}.
BUNDLE = {"autograder/__init__.py": None, "autograder/sandbox/__init__.py": None,
          "autograder/sandbox/runtime/__init__.py": None,
          **{f"autograder/{rel}": KIT / rel for rel in release.BUNDLE_FILES}}
#: Modules (and their submodules) that must never be imported by a student's self-check: grading,
#: the sandbox's machinery, the kit's tools, reference code and the kit's own dependencies.
KIT_ONLY = ("autograder.grading", "autograder.sandbox.forkserver", "autograder.sandbox.bwrap", "autograder.config",
            "autograder.authoring", "autograder.integrations", "autograder.catalogue", "autograder.suites.hidden",
            "hidden", "solutions", "pydantic", "yaml")


def bundle_module(module: str) -> bool:
    """May a student's self-check import this module of the kit? Only the bundle's own: selfcheck,
    the trusted procedures it shares with the sandbox, and the package inits above them."""
    return (module in ("autograder", "autograder.sandbox", "autograder.sandbox.runtime",
                       "autograder.sandbox.runtime.procedures")
            or module == "autograder.selfcheck" or module.startswith("autograder.selfcheck."))


@dataclass(frozen=True)
class Build:
    folder: Path  # the build's release folder (<course dir>/release)
    released: tuple[str, ...]  # what release.release() returned


def _build_all(course_dir: Path) -> list[str]:
    return release.release(config.default(), [], force=True, course_dir=course_dir, echo=lambda s: None)


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> Build:
    """One forced build of every assignment (about 10 s), shared by the run's xdist workers.

    Under xdist every worker has its own session; the first to get here builds into the run's
    common temporary folder (tmp_path_factory.getbasetemp().parent) under a file lock and the others
    reuse it (the pattern of pytest-xdist's documentation). Read it, never write into it."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    try:
        from filelock import FileLock
    except ImportError:  # filelock is a dev dependency: without it every worker builds its own
        worker = None
    if worker is None:
        root = tmp_path_factory.mktemp("release-build")
        return Build(root / "release", tuple(_build_all(root)))
    shared = tmp_path_factory.getbasetemp().parent
    root, done = shared / "release-build", shared / "release-build.json"
    with FileLock(str(shared / "release-build.lock")):
        if not done.is_file():  # no build yet, or a worker's build failed half-way: (re)build
            shutil.rmtree(root, ignore_errors=True)
            done.write_text(json.dumps(_build_all(root)))
        return Build(root / "release", tuple(json.loads(done.read_text())))


def copy_of(built: Build, assignment: str, tmp_path: Path) -> Path:
    """A private copy of one released folder, to run or change."""
    folder = tmp_path / assignment
    shutil.copytree(built.folder / assignment, folder)
    return folder


def files_of(folder: Path) -> dict[str, Path]:
    return {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def git_files(*args: str) -> list[str] | None:
    """git's output lines, or None when it exits non-zero."""
    proc = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
    return proc.stdout.splitlines() if proc.returncode == 0 else None


def test_release_folder_is_not_committed():
    """release/ is generated: git tracks only its README and ignores whatever `course release` writes."""
    if shutil.which("git") is None or git_files("rev-parse", "--is-inside-work-tree") != ["true"]:
        pytest.skip("not a git checkout")
    tracked = git_files("ls-files", "--", "release")
    assert tracked == ["release/README.md"], f"generated files committed: git rm -r --cached {tracked}"
    generated = ["release/STUDENTS.md", "release/02_attention_scoring/02_attention_scoring.ipynb",
                 "release/03_bahdanau/attention_support.py", "release/06_transformer/figures/plot.png",
                 "release/04_multihead/autograder/selfcheck/plugin.py"]
    assert git_files("check-ignore", "--no-index", "--", *generated) == generated
    assert git_files("check-ignore", "--no-index", "--", "release/README.md") is None  # exit 1: not ignored
    text = (REPO / "release" / "README.md").read_text()
    assert "course release" in text and "release_assignment" in text and "--force" in text


def test_every_assignment_with_a_notebook_is_built(built):
    assert list(built.released) == IDS
    assert sorted(p.name for p in built.folder.iterdir()) == sorted([*IDS, release.STUDENT_INDEX])
    index = (built.folder / release.STUDENT_INDEX).read_text()
    assert all(f"({a}/{a}.ipynb)" in index for a in IDS), index


def test_release_is_reproducible_and_opens_after_the_due_dates(course, built, tmp_path):
    """Built again, elsewhere and without --force on the day after the last due date, the release is
    the same, file for file and byte for byte (no dates, random ids or build paths in it)."""
    after = course.deadlines.local(max(a.due for a in course.assignments if a.due)) + dt.timedelta(days=1)
    assert release.release(course, [], course_dir=tmp_path, now=after, echo=lambda s: None) == IDS
    first, second = files_of(built.folder), files_of(tmp_path / "release")
    assert sorted(first) == sorted(second)
    differ = [rel for rel in first if not filecmp.cmp(first[rel], second[rel], shallow=False)]
    assert not differ, f"two builds differ: {differ}"


@pytest.mark.parametrize("assignment", IDS)
def test_release_holds_exactly_what_a_student_receives(built, assignment):
    folder = built.folder / assignment
    expected = {f"{assignment}.ipynb", "attention_support.py", *BUNDLE}
    public = SUITES / "public" / f"test_{assignment}.py"
    if public.exists():
        expected.add(f"autograder/suites/public/test_{assignment}.py")
    expected.add("autograder/selfcheck/signatures.json")  # generated: what check() knows of known mistakes
    assert set(files_of(folder)) == expected
    for rel, source in {**BUNDLE, f"autograder/suites/public/test_{assignment}.py": public}.items():
        if source is not None and source.exists():
            assert (folder / rel).read_text() == source.read_text(), f"{rel} is not the kit's {source}"


@pytest.mark.parametrize("assignment", IDS)
def test_the_bundled_signatures_hold_no_code_and_only_this_assignment(built, assignment):
    import json
    data = json.loads((built.folder / assignment / "autograder" / "selfcheck" / "signatures.json").read_text())
    assert set(data) == {"tests", "misconceptions", "needs", "hint_level", "language"}
    own = {c.name for c in config.default().assignment(assignment).components}
    assert {k.split("::")[0] for k in data["tests"]} <= own and set(data["misconceptions"]) <= own
    texts = [w for per in data["misconceptions"].values() for words in per.values() for w in words.values()]
    assert not [t for t in texts if "def " in t or "import " in t or "\n" in t]  # sentences, not code


@pytest.mark.parametrize("assignment", IDS)
def test_released_notebook_has_stubs_and_no_outputs(built, assignment):
    nb = nbformat.read(built.folder / assignment / f"{assignment}.ipynb", as_version=4)
    nbformat.validate(nb)
    stubs = 0
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, "reference output in the release"
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("solution"):
                stubs += "raise NotImplementedError()" in cell.source
                assert "YOUR CODE HERE" in cell.source
        assert "attachments" not in cell, "attached images are reference output"
    assert stubs >= len(config.default().assignment(assignment).components)


def _solution_lines(assignment_id: str) -> tuple[dict[str, set[str]], set[str]]:
    """({component: stripped lines between the solution markers}, the notebook's other lines)."""
    path = release.notebook_path(assignment_id)
    lines = path.read_text().splitlines()
    cells = notebooks.parse([line + "\n" for line in lines])
    solution: dict[str, set[str]] = {}
    other: set[str] = set()
    for cell in cells:
        inside = False
        for line in lines[cell.start:cell.end]:
            s = line.strip()
            if s in (notebooks.BEGIN, notebooks.END):
                inside = s == notebooks.BEGIN
            elif inside and cell.is_solution:
                solution.setdefault(str(cell.grade_id), set()).add(s)
            else:
                other.add(s)
    return solution, other


def _source_lines(obj_or_source) -> set[str]:
    text = obj_or_source if isinstance(obj_or_source, str) else inspect.getsource(obj_or_source)
    return {line.strip() for line in text.splitlines()}


def _release_lines(folder: Path) -> dict[str, set[str]]:
    """Stripped lines of every file of one released assignment (notebook: every cell's source)."""
    out = {}
    for rel, path in files_of(folder).items():
        if path.suffix == ".ipynb":
            nb = nbformat.read(path, as_version=4)
            out[rel] = {line.strip() for c in nb.cells for line in c.source.splitlines()}
        else:
            out[rel] = _source_lines(path.read_text())
    return out


def solution_leaks(course, assignment: str, folder: Path) -> list[tuple[str, str, str]]:
    """(file, component, line): lines of solution regions (of this assignment, or of any whose code the
    support module does not ship as earlier reference code) found in a released folder."""
    a = course.assignment(assignment)
    earlier = set(course.earlier_components(a))
    # What may legitimately appear: the stub notebook, given code, the toolkit, earlier components.
    allowed = _solution_lines(assignment)[1] | _source_lines(dependencies.HEADER)
    for module in (course.given_module, *dependencies.TOOLKIT_MODULES):
        allowed |= _source_lines(dependencies.module_source(module))
    for name in earlier:
        allowed |= _source_lines(course.reference_object(name))
    forbidden: dict[str, str] = {}
    for other in course.assignments:
        if release.notebook_path(other.id).exists():
            for comp, lines in _solution_lines(other.id)[0].items():
                if comp not in earlier:
                    forbidden.update({line: comp for line in lines if line and line not in allowed})
        for comp in other.components:  # the reference itself, even where no notebook exists yet
            if comp.name not in earlier:
                for line in _source_lines(course.reference_object(comp.name)) - allowed:
                    if len(line) > 12 and not line.startswith(('"""', "#")):
                        forbidden.setdefault(line, comp.name)
    return [(rel, forbidden[line], line) for rel, lines in _release_lines(folder).items()
            for line in lines if line in forbidden]


def hidden_test_problems(folder: Path) -> list[str]:
    """Hidden suites, hidden test names, solution markers or `solutions` imports in a released folder."""
    hidden_suites = sorted((SUITES / "hidden").glob("test_*.py"))
    public_names = set()
    for p in (SUITES / "public").glob("test_*.py"):
        public_names |= {n.name for n in ast.walk(ast.parse(p.read_text())) if isinstance(n, ast.FunctionDef)}
    hidden_names = set()
    for p in hidden_suites:
        hidden_names |= {n.name for n in ast.walk(ast.parse(p.read_text()))
                         if isinstance(n, ast.FunctionDef) and n.name.startswith("test")}
    hidden_names -= public_names
    hidden_texts = {p.read_text() for p in hidden_suites}
    name_re = re.compile(r"\b(" + "|".join(map(re.escape, sorted(hidden_names))) + r")\b") if hidden_names else None
    problems = []
    for rel, path in files_of(folder).items():
        text = path.read_text()
        if "hidden" in rel or text in hidden_texts:
            problems.append(f"{rel} is a hidden test suite")
        for marker in ("### BEGIN SOLUTION", "### END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
            if marker in text:
                problems.append(f"{rel} contains {marker}")
        if re.search(r"^\s*(from|import)\s+solutions\b", text, re.M):
            problems.append(f"{rel} imports solutions")
        found = name_re.search(text) if name_re else None
        if found:
            problems.append(f"{rel} names the hidden test {found.group(0)}")
    return problems


@pytest.mark.parametrize("assignment", IDS)
def test_release_contains_no_solution_code(course, built, assignment):
    leaks = solution_leaks(course, assignment, built.folder / assignment)
    assert not leaks, leaks[:10]


@pytest.mark.parametrize("assignment", IDS)
def test_release_contains_no_hidden_tests_or_markers(built, assignment):
    problems = hidden_test_problems(built.folder / assignment)
    assert not problems, problems


def test_the_scans_find_what_they_look_for(course, built, tmp_path):
    """The scans are not vacuous: the instructor notebook, a hidden suite and later solutions are caught."""
    import jupytext

    folder = copy_of(built, "02_attention_scoring", tmp_path)
    jupytext.write(jupytext.read(release.notebook_path("02_attention_scoring")), folder / "02_attention_scoring.ipynb")
    later = inspect.getsource(course.reference_object("MultiHeadAttention"))
    (folder / "attention_support.py").write_text((folder / "attention_support.py").read_text() + later)
    shutil.copy(SUITES / "hidden" / "test_02_attention_scoring.py", folder / "autograder" / "extra.py")
    leaks = solution_leaks(course, "02_attention_scoring", folder)
    assert {comp for _, comp, _ in leaks} >= {"sequence_mask", "masked_softmax", "AdditiveAttention",
                                              "DotProductAttention", "MultiHeadAttention"}
    problems = hidden_test_problems(folder)
    assert any("hidden test suite" in p for p in problems) and any("BEGIN SOLUTION" in p for p in problems)
    assert any("names the hidden test" in p for p in problems)


def kit_only(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in KIT_ONLY)


def test_kit_only_follows_the_kit_layout():
    """KIT_ONLY names modules that exist (a rename would make the check below vacuous), none of the
    bundle's own, and the bundle (release.BUNDLE_FILES) ships nothing of the kit but selfcheck/ and
    the trusted procedures."""
    import importlib.util

    for name in KIT_ONLY:
        if name != "hidden":  # the hidden suites' module name under pytest's importlib mode
            assert importlib.util.find_spec(name) is not None, name
    bundled = ["autograder." + rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
               for rel in release.BUNDLE_FILES]
    assert all(bundle_module(m) for m in bundled), f"the bundle ships kit code beyond selfcheck/: {bundled}"
    assert not [m for m in bundled if kit_only(m)]
    assert kit_only("autograder.grading.session") and not kit_only("autograder.selfcheck.plugin")
    assert not bundle_module("autograder.sandbox.forkserver") and not bundle_module("autograder.config")


@pytest.mark.parametrize("assignment", IDS)
def test_self_check_bundle_imports_nothing_of_the_grader(built, assignment, tmp_path):
    """The bundle runs on its own: `autograder` is the release's copy, it imports only the bundle's
    modules, and never grading code, the sandbox's machinery, the kit's tools or reference code."""
    folder = copy_of(built, assignment, tmp_path)
    code = (
        "import sys, json, autograder, autograder.selfcheck, autograder.selfcheck.plugin, autograder.selfcheck.testing\n"
        "from autograder.selfcheck import check\n"
        "ok = bool(check(namespace={}))\n"
        "files = {n: getattr(m, '__file__', None) for n, m in sys.modules.items() if n.split('.')[0] == 'autograder'}\n"
        "print(json.dumps({'ok': ok, 'modules': sorted(sys.modules), 'files': files}))\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["ok"] is False  # nothing is defined: every public test fails, and check() did not raise
    outside = {n: f for n, f in report["files"].items() if not Path(f).resolve().is_relative_to(folder.resolve())}
    assert not outside, f"imported from the kit instead of the release: {outside}"
    assert all(map(bundle_module, report["files"])), [m for m in report["files"] if not bundle_module(m)]
    imported = [m for m in report["modules"] if kit_only(m)]
    assert not imported, imported


def _execute(folder: Path, nb, kernel: str) -> list[str]:
    from nbclient import NotebookClient

    NotebookClient(nb, timeout=600, kernel_name=kernel, allow_errors=True,
                   resources={"metadata": {"path": str(folder)}}).execute()
    return [f"cell {i} ({o.ename}: {o.evalue})" for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
            for o in cell.outputs if o.output_type == "error"]


def _released_copy(built: Build, assignment: str, tmp_path: Path):
    folder = copy_of(built, assignment, tmp_path)
    return folder, nbformat.read(folder / f"{assignment}.ipynb", as_version=4)


def test_released_notebook_with_stubs_fails_only_where_work_is_missing(built, tmp_path, monkeypatch):
    """Run as received: experiments that call a stub stop with NotImplementedError (or a NameError
    that follows from it), and the self-check cells print failures instead of raising."""
    monkeypatch.setenv("MPLBACKEND", "Agg")
    folder, nb = _released_copy(built, "02_attention_scoring", tmp_path)
    errors = _execute(folder, nb, this_python_kernel(tmp_path, monkeypatch))
    assert errors and all("NotImplementedError" in e or "NameError" in e for e in errors), errors
    checks = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("check_")]
    assert checks and all("FAIL" in "".join(o.get("text", "") for o in c.outputs) for c in checks)
    assert all(o.output_type != "error" for c in checks for o in c.outputs)


@pytest.mark.parametrize("assignment", ["02_attention_scoring", "05_positional_encoding"])
def test_released_notebook_completed_runs_top_to_bottom(built, assignment, tmp_path, monkeypatch):
    """A student who fills every stub with working code can run the released notebook top to
    bottom, with its own support module and self-check bundle (all six instructor notebooks run
    in tests/test_notebooks_execute.py)."""
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    folder, nb = _released_copy(built, assignment, tmp_path)
    components = {c.name for c in config.default().assignment(assignment).components}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and meta.get("grade_id") in components:
            cell.source = inspect.getsource(config.default().reference_object(meta["grade_id"]))
    assert not _execute(folder, nb, this_python_kernel(tmp_path, monkeypatch))
    outputs = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "PASS" in outputs and "FAIL" not in outputs


def shipped_references(course, built: Build, assignment: str) -> dict[str, set[str]]:
    """{other assignment: its components whose reference code is in the built support module}, found
    by looking for the reference source itself (not by asking course.earlier_components)."""
    support = (built.folder / assignment / f"{course.support_module}.py").read_text()
    out: dict[str, set[str]] = {}
    for other in course.assignments:
        for comp in other.components:
            if other.id != assignment and inspect.getsource(course.reference_object(comp.name)) in support:
                out.setdefault(other.id, set()).add(comp.name)
    return out


@pytest.mark.parametrize("assignment", IDS)
def test_built_references_are_behind_the_due_date_gate(course, built, assignment, tmp_path):
    """Every earlier assignment whose reference code the built support module contains holds the
    gate: up to its due date an unforced build refuses (naming it) and writes nothing, so a forced
    build is the only way to get that code before then; the day after the last such date it opens."""
    a = course.assignment(assignment)
    shipped = shipped_references(course, built, assignment)
    expected: dict[str, set[str]] = {}
    for name in course.earlier_components(a):
        expected.setdefault(course.owner(name).id, set()).add(name)
    assert shipped == expected, "the support module ships other references than the gate knows of"
    if not shipped:
        assert release.blockers(course, a, LONG_AGO) == []
        return
    for owner_id, names in shipped.items():
        due = course.assignment(owner_id).due
        assert due is not None, f"{owner_id} has no due date: {assignment} could never be released unforced"
        for when in (LONG_AGO, course.deadlines.local(due)):
            with pytest.raises(release.ReleaseError, match=rf"{owner_id}.*--force") as refused:
                release.release(course, [assignment], course_dir=tmp_path, now=when, echo=lambda s: None)
            assert all(n in str(refused.value) for n in names), (names, str(refused.value))
            assert not list(tmp_path.iterdir()), "a refused build wrote files"
    last = course.deadlines.local(max(course.assignment(o).due for o in shipped))
    assert release.blockers(course, a, last) and release.blockers(course, a, last + dt.timedelta(days=1)) == []
    # The gate opening is built for real in test_release_is_reproducible_and_opens_after_the_due_dates.


def test_release_gate_follows_the_due_dates(course, monkeypatch):
    a02, a03 = course.assignment("02_attention_scoring"), course.assignment("03_bahdanau")
    assert release.blockers(course, a02, LONG_AGO) == []  # ships no earlier solutions
    due02 = course.deadlines.local(a02.due)
    before = release.blockers(course, a03, due02)
    gate = course.deadlines.show(due02 + dt.timedelta(minutes=course.deadlines.late.grace_minutes))
    assert before and "02_attention_scoring" in before[0] and gate in before[0]
    assert release.blockers(course, a03, due02 + dt.timedelta(days=1)) == []

    staged = []
    monkeypatch.setattr(release, "stage", lambda c, a, folder, root=REPO, lang="en": staged.append(a.id) or [])
    monkeypatch.setattr(release, "generate", lambda cfg, assignment_id: None)
    with pytest.raises(release.ReleaseError, match="--force"):
        release.release(course, ["03_bahdanau"], course_dir=Path("/nonexistent-course"), now=due02,
                        echo=lambda s: None)
    assert staged == []
    messages: list[str] = []
    done = release.release(course, [], course_dir=Path("/nonexistent-course"), now=due02, echo=messages.append)
    assert "03_bahdanau" not in done and any(m.startswith("skipped 03_bahdanau") for m in messages)
    assert release.release(course, ["03_bahdanau"], course_dir=Path("/nonexistent-course"), now=due02,
                           force=True, echo=lambda s: None) == ["03_bahdanau"]


def test_graded_cells_must_match_course_yml(course):
    a = course.assignment("02_attention_scoring")

    def graded(grade_id, points):
        return {"metadata": {"nbgrader": {"grade": True, "solution": False, "grade_id": grade_id,
                                          "points": points}}, "source": ""}

    good = [graded(f"test_{c.name}", c.points) for c in a.components]
    release.check_cells(a, good)
    with pytest.raises(release.ReleaseError, match="test_sequence_mask has 3 points"):
        release.check_cells(a, [graded("test_sequence_mask", 3)] + good[1:])
    with pytest.raises(release.ReleaseError, match="expected one graded cell test_masked_softmax"):
        release.check_cells(a, [c for c in good if "masked_softmax" not in c["metadata"]["nbgrader"]["grade_id"]])
    with pytest.raises(release.ReleaseError, match="not test_<component>"):
        release.check_cells(a, good + [graded("test_extra", 1)])


def test_release_gate_holds_until_the_last_extended_due_date(tmp_path):
    """03's support module ships 02's reference: with carol's 3-day extension on 02 (course.yml in
    tmp_path), the gate stays shut after 02's class due date until carol's own due instant and
    its grace have passed; in a time zone behind UTC it compares instants, not dates."""
    import yaml
    raw = yaml.safe_load(config.DEFAULT_CONFIG.read_text())
    raw["deadlines"].update({"timezone": "America/Los_Angeles", "time": "23:59", "extensions": [
        {"assignment": "02_attention_scoring", "student": "carol", "days": 3, "reason": "ill"}]})
    (tmp_path / "course.yml").write_text(yaml.safe_dump(raw, sort_keys=False))
    course = config.load(tmp_path / "course.yml")
    a02, a03 = course.assignment("02_attention_scoring"), course.assignment("03_bahdanau")
    grace = dt.timedelta(minutes=course.deadlines.late.grace_minutes)
    class_due = course.deadlines.local(a02.due)
    carol_due = class_due + dt.timedelta(days=3)
    for when in (class_due + dt.timedelta(days=1), carol_due, carol_due + grace):
        held = release.blockers(course, a03, when)
        assert held and "02_attention_scoring" in held[0] and "carol" not in held[0], (when, held)
    assert release.blockers(course, a03, carol_due + grace + dt.timedelta(seconds=1)) == []
    # the day after 02's due date (UTC), 02 is still open in Los Angeles for a few hours more
    no_ext = config.load(tmp_path / "course.yml").model_copy(
        update={"deadlines": course.deadlines.model_copy(update={"extensions": ()})})
    utc_next_day = dt.datetime.combine(a02.due + dt.timedelta(days=1), dt.time(1, 0), tzinfo=dt.timezone.utc)
    assert release.blockers(no_ext, a03, utc_next_day)
