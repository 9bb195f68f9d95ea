"""The Gradescope autograder zip, and `run_autograder` on a simulated Gradescope directory layout."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.authoring import samples
from autograder.grading.submission import pick_file
from autograder.integrations import gradescope
from kit_helpers import reference_source

A = "02_attention_scoring"


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gs") / f"{A}.zip"
    assert subprocess.run([sys.executable, "-m", "autograder.cli", "gradescope", A, "--out", str(out)],
                          capture_output=True, text=True).returncode == 0
    return out


def test_zip_holds_setup_run_autograder_and_the_kit_with_this_assignments_tests(autograder_zip):
    with zipfile.ZipFile(autograder_zip) as z:
        names = set(z.namelist())
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in z.infolist()}
        setup = z.read("setup.sh").decode()
        run = z.read("run_autograder").decode()
    assert {"setup.sh", "run_autograder", "course.yml", "pyproject.toml", "README.md", "autograder/cli.py",
            "autograder/sandbox/runtime/zygote.py", f"autograder/suites/public/test_{A}.py",
            f"autograder/suites/hidden/test_{A}.py", "solutions/attention_scoring.py", "solutions/given.py"} <= names
    suites = {n for n in names if n.startswith("autograder/suites/")}
    assert all(n.endswith(f"test_{A}.py") for n in suites), suites
    assert not any(n.startswith(("tests/", "release/", "assignments/")) or "__pycache__" in n for n in names)
    assert modes["setup.sh"] & stat.S_IXUSR and modes["run_autograder"] & stat.S_IXUSR
    assert '"torch==2.13.0"' in setup and "download.pytorch.org/whl/cpu" in setup and "-e \"$ROOT/source\"" in setup
    assert "GRADESCOPE_ROOT:-/autograder" in run and f"autograder.integrations.gradescope run {A}" in run


def test_zip_is_reproducible(autograder_zip, tmp_path):
    again = gradescope.build(A, tmp_path / "again.zip")
    assert again.read_bytes() == autograder_zip.read_bytes()


def test_the_submission_is_the_file_named_like_the_assignment_or_the_only_one(tmp_path):
    def pick(*files):
        folder = tmp_path / str(len(list(tmp_path.iterdir())))
        for f in files:
            (folder / f).parent.mkdir(parents=True, exist_ok=True)
            (folder / f).write_text("x = 1\n")
        path, message = pick_file(folder, A, "attention_support")
        return (str(path.relative_to(folder)) if path else None), message

    assert pick(f"{A}.ipynb", f"{A}.py", "notes.py")[0] == f"{A}.ipynb"
    assert pick("mine.ipynb")[0] == "mine.ipynb"
    assert pick(f"work/{A}.py", "scratch.ipynb")[0] == f"work/{A}.py"
    # Uploading the whole release folder: the support module and the self-check bundle are not candidates.
    assert pick("hw.ipynb", "attention_support.py", "autograder/plugin.py",
                f"autograder/suites/public/test_{A}.py", ".ipynb_checkpoints/hw-checkpoint.ipynb")[0] == "hw.ipynb"
    none, message = pick("a.ipynb", "b.py")
    assert none is None and "several files" in message and f"{A}.ipynb" in message
    none, message = pick("README.txt")
    assert none is None and "No notebook found" in message


def _layout(root: Path, autograder_zip: Path, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(autograder_zip) as z:
        z.extractall(root / "source")
    (root / "submission").mkdir(parents=True)
    for name, text in files.items():
        (root / "submission" / name).write_text(text)
    return root


def _run(root: Path) -> subprocess.Popen:
    env = {**os.environ, "GRADESCOPE_ROOT": str(root), "GRADESCOPE_PYTHON": sys.executable}
    return subprocess.Popen(["bash", str(root / "source" / "run_autograder")], env=env, cwd=root,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_run_autograder_on_a_simulated_gradescope_layout(autograder_zip, tmp_path):
    """A correct notebook-free .py, a buggy one and a broken notebook; graded from the zip's own kit."""
    reference = reference_source(A)
    roots = {
        "correct": _layout(tmp_path / "correct", autograder_zip, {f"{A}.py": reference}),
        "buggy": _layout(tmp_path / "buggy", autograder_zip,
                         {f"{A}.ipynb": json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [],
                                                               "execution_count": None,
                                                               "source": reference.replace("value=fill", "value=0")}],
                                                    "metadata": {}, "nbformat": 4, "nbformat_minor": 5})}),
        "broken": _layout(tmp_path / "broken", autograder_zip, {f"{A}.ipynb": "{ this is not a notebook"}),
        "empty": _layout(tmp_path / "empty", autograder_zip, {}),
    }
    # Two gradings at a time: the machine is shared.
    procs = {name: _run(roots[name]) for name in ("correct", "broken", "empty")}
    logs = {name: p.communicate(timeout=900)[0] for name, p in procs.items()}
    procs["buggy"] = _run(roots["buggy"])
    logs["buggy"] = procs["buggy"].communicate(timeout=900)[0]
    assert all(p.returncode == 0 for p in procs.values()), logs
    results = {name: json.loads((root / "results" / "results.json").read_text()) for name, root in roots.items()}

    assert results["correct"]["score"] == results["correct"]["max_score"] == 14
    assert all(t["status"] == "passed" for t in results["correct"]["tests"])
    # The zip's kit graded it (the run is rooted in the simulated /autograder/source).
    assert results["correct"]["extra_data"]["submission"] == f"{A}.py"

    comps = results["buggy"]["extra_data"]["components"]
    assert 0 < comps["masked_softmax"]["score"] < 4
    assert comps["sequence_mask"]["score"] == 2 and comps["AdditiveAttention"]["score"] == 4
    failed = [t for t in results["buggy"]["tests"] if t["status"] == "failed"]
    assert failed and all(t["extra_data"]["component"] == "masked_softmax" for t in failed)
    assert any(t["visibility"] == "after_published" for t in results["buggy"]["tests"])

    assert results["broken"]["score"] == 0 and "not a readable Jupyter notebook" in json.dumps(results["broken"])
    assert results["empty"]["score"] == 0 and "No notebook found" in results["empty"]["output"]


def test_a_grader_failure_leaves_no_results_so_gradescope_reports_it(autograder_zip, tmp_path):
    root = _layout(tmp_path / "gs", autograder_zip, {f"{A}.py": samples.stub_source(reference_source(A))})
    (root / "source" / "course.yml").write_text("not: [a course")  # the kit is broken, not the student
    proc = _run(root)
    log = proc.communicate(timeout=600)[0]
    assert proc.returncode != 0, log
    assert not (root / "results" / "results.json").exists()
