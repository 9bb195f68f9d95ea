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
import yaml

from autograder.authoring import samples
from autograder.grading.submission import pick_file
from autograder.integrations import gradescope
from kit_helpers import processes_mentioning, reference_source

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


def test_zip_carries_what_diagnosis_reads_of_this_assignment_and_those_it_builds_on(autograder_zip, tmp_path):
    """The catalogue's mutants and degenerate entries and the symptom signatures of the components graded
    or built on (diagnosis and the floor rule read them), and nothing of other assignments' catalogue."""
    def catalogue(zip_path: Path) -> tuple[set[str], dict]:
        with zipfile.ZipFile(zip_path) as z:
            names = {n for n in z.namelist() if n.startswith("autograder/catalogue/entries/")}
            tables = json.loads(z.read("autograder/catalogue/signatures.json"))
            assert {k.split("::")[0] for k in tables["where"]} == {k.split("::")[0] for k in tables["tests"]}
            return names, tables["tests"]

    names, signatures = catalogue(autograder_zip)
    assert f"autograder/catalogue/entries/{A}/mutants/ms_fill_zero.py" in names
    assert f"autograder/catalogue/entries/{A}/degenerate/ms_uniform_valid.py" in names
    assert {n.split("/")[3] for n in names} == {A} and not any("/correct/" in n for n in names)
    components = {"sequence_mask", "masked_softmax", "AdditiveAttention", "DotProductAttention"}
    assert signatures and {k.split("::")[0] for k in signatures} <= components
    assert "masked_softmax" in {k.split("::")[0] for k in signatures}
    names, signatures = catalogue(gradescope.build("04_multihead", tmp_path / "04.zip"))
    assert {n.split("/")[3] for n in names} == {A, "04_multihead"}  # MultiHeadAttention builds on 02's
    assert "DotProductAttention" in {k.split("::")[0] for k in signatures}
    assert "NWKernelRegression" not in {k.split("::")[0] for k in signatures}


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


#: The late policy the simulated Gradescope runs use (written into the unzipped kit's course.yml).
LATE = {"per": "day", "deduction": 10, "unit": "percent", "cap": 50}


def _layout(root: Path, autograder_zip: Path, files: dict[str, str], metadata: dict | None = None) -> Path:
    with zipfile.ZipFile(autograder_zip) as z:
        z.extractall(root / "source")
    course = yaml.safe_load((root / "source" / "course.yml").read_text())
    course["deadlines"] = {"timezone": "UTC", "time": "23:59", "late": LATE}
    (root / "source" / "course.yml").write_text(yaml.safe_dump(course, sort_keys=False))
    (root / "submission").mkdir(parents=True)
    for name, text in files.items():
        (root / "submission" / name).write_text(text)
    if metadata is not None:
        (root / "submission_metadata.json").write_text(json.dumps(metadata))
    return root


def _metadata(created: str, own_due: str | None, due: str = "2026-09-28T23:59:00.000000-07:00") -> dict:
    """Gradescope's submission_metadata.json; `own_due`: the student's due date with their extension."""
    user = {"email": "carol@uni.edu", "id": 1234, "name": "Carol"}
    if own_due:
        user["assignment"] = {"due_date": own_due, "late_due_date": None, "release_date": None}
    return {"id": 99, "created_at": created, "submission_method": "upload", "users": [user],
            "assignment": {"id": 5, "title": "02", "due_date": due, "late_due_date": None, "total_points": "14.0"},
            "previous_submissions": []}


def _run(root: Path) -> subprocess.Popen:
    env = {**os.environ, "GRADESCOPE_ROOT": str(root), "GRADESCOPE_PYTHON": sys.executable}
    return subprocess.Popen(["bash", str(root / "source" / "run_autograder")], env=env, cwd=root,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_run_autograder_on_a_simulated_gradescope_layout(autograder_zip, tmp_path):
    """A correct notebook-free .py, a buggy one and a broken notebook; graded from the zip's own kit."""
    reference = reference_source(A)
    buggy = reference.replace("torch.repeat_interleave(valid_lens, shape[1])", "valid_lens.repeat(shape[1])")
    assert buggy != reference  # masked_softmax tiles 1-D lengths wrongly: partial credit
    roots = {
        "correct": _layout(tmp_path / "correct", autograder_zip, {f"{A}.py": reference}),
        "buggy": _layout(tmp_path / "buggy", autograder_zip,
                         {f"{A}.ipynb": json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [],
                                                               "execution_count": None,
                                                               "source": buggy}],
                                                    "metadata": {}, "nbformat": 4, "nbformat_minor": 5})}),
        "broken": _layout(tmp_path / "broken", autograder_zip, {f"{A}.ipynb": "{ this is not a notebook"}),
        "empty": _layout(tmp_path / "empty", autograder_zip, {}),
        # 30 h after her own due date (an extension on Gradescope: 2 days after the assignment's).
        "late": _layout(tmp_path / "late", autograder_zip, {f"{A}.py": buggy},
                        _metadata("2026-10-02T05:59:00.000000-07:00", "2026-09-30T23:59:00.000000-07:00")),
        # On time against her own due date, 6 h late against the assignment's.
        "extended": _layout(tmp_path / "extended", autograder_zip, {f"{A}.py": reference},
                            _metadata("2026-09-29T05:59:00.000000-07:00", "2026-09-30T23:59:00.000000-07:00")),
    }
    # Two gradings at a time: the machine is shared.
    logs = {}
    procs = {}
    for batch in (("correct", "broken", "empty"), ("buggy", "late"), ("extended",)):
        started = {name: _run(roots[name]) for name in batch}
        logs |= {name: p.communicate(timeout=900)[0] for name, p in started.items()}
        procs |= started
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

    # Late work: the submission time and the student's own due date come from submission_metadata.json.
    from autograder.grading.late import LatePolicy
    late = results["late"]
    raw = results["buggy"]["score"]
    assert late["extra_data"]["raw_score"] == raw
    assert late["extra_data"]["late"]["seconds_late"] == 30 * 3600
    assert late["extra_data"]["late"]["due_source"].startswith("Gradescope")
    penalty, _ = LatePolicy(**LATE).penalty(30 * 3600, 14, raw)  # what nbgrader's plugin gives too
    assert penalty == 2.8 and late["extra_data"]["late"]["penalty"] == penalty
    assert late["score"] == round(raw - penalty, 4)
    assert "2 started days × 10% of 14 points = 2.8 points" in late["output"]
    assert late["extra_data"]["student"] == "carol@uni.edu"
    extended = results["extended"]
    assert extended["score"] == 14 and extended["extra_data"]["late"]["penalty"] == 0
    assert extended["extra_data"]["late"]["due"] == "2026-10-01T06:59:00+00:00"
    for name in ("correct", "buggy"):  # no metadata: no lateness
        assert results[name]["extra_data"]["late"]["submitted_at"] == ""


def test_a_grader_failure_leaves_no_results_so_gradescope_reports_it(autograder_zip, tmp_path):
    root = _layout(tmp_path / "gs", autograder_zip, {f"{A}.py": samples.stub_source(reference_source(A))})
    (root / "source" / "course.yml").write_text("not: [a course")  # the kit is broken, not the student
    proc = _run(root)
    log = proc.communicate(timeout=600)[0]
    assert proc.returncode != 0, log
    assert not (root / "results" / "results.json").exists()


def test_run_autograder_in_process_mode_ends_the_attackers_jobs(autograder_zip, tmp_path):
    """Gradescope's container as root without bubblewrap (a `bwrap` on PATH that fails: process mode):
    a submission that leaves a process behind to kill later jobs (tests/hostile/setsid_survivor.py)
    and one that lowers the fork server's limits (limit_fork_server.py), then a correct one on the
    same machine. Every attack fails: full marks for all three, and nothing of the attacker's jobs
    (whose command line names the simulated /autograder) is alive after its run."""
    if os.getuid() != 0:
        pytest.skip("Gradescope runs the autograder as root; process mode isolates only as root")
    hostile = Path(__file__).resolve().parent / "hostile"
    no_bwrap = tmp_path / "no-bwrap"
    no_bwrap.mkdir()
    (no_bwrap / "bwrap").write_text("#!/bin/sh\nexit 1\n")
    (no_bwrap / "bwrap").chmod(0o755)
    path = f"{no_bwrap}{os.pathsep}{os.environ.get('PATH', '')}"
    scores, logs = {}, {}
    for name, source in (("setsid_survivor", (hostile / "setsid_survivor.py").read_text()),
                         ("limit_fork_server", (hostile / "limit_fork_server.py").read_text()),
                         ("correct", reference_source(A))):
        root = _layout(tmp_path / name, autograder_zip, {f"{A}.py": source})
        proc = subprocess.Popen(["bash", str(root / "source" / "run_autograder")], cwd=root,
                                env={**os.environ, "PATH": path, "GRADESCOPE_ROOT": str(root),
                                     "GRADESCOPE_PYTHON": sys.executable},
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        logs[name] = proc.communicate(timeout=900)[0]
        assert proc.returncode == 0, logs[name]
        results = json.loads((root / "results" / "results.json").read_text())
        assert results["extra_data"]["isolation"].startswith("isolated: an unprivileged user"), results["extra_data"]
        assert "ATTACK SUCCEEDED" not in results["output"] + json.dumps(results["tests"]), name
        scores[name] = results["score"]
        assert processes_mentioning(str(root)) == [], (name, processes_mentioning(str(root)))
    assert scores == {"setsid_survivor": 14, "limit_fork_server": 14, "correct": 14}, logs


#: Zoo mutants graded both ways by the test below: a mistake the floor rule counts (masked_softmax filling
#: with 0, the issue's 0.26 against 0.64), a mask off by one and an unscaled dot product.
SAME_GRADE_MUTANTS = ("ms_fill_zero", "sm_off_by_one", "dot_no_scale")


def _graded(results: dict) -> dict:
    """Results as grading made them: without the time it took and the student's id (a class folder's
    name for `course grade`, the file's for a Gradescope run without submission_metadata.json)."""
    extra = {k: v for k, v in results["extra_data"].items() if k != "student"}
    return {**{k: v for k, v in results.items() if k != "execution_time"}, "extra_data": extra}


def test_gradescope_grades_zoo_mutants_as_course_grade_does(autograder_zip, tmp_path):
    """The same submissions through `course grade` (a class, the kit's own checkout) and through the
    Gradescope runner (the zip's kit): the same results, scores, diagnoses and messages byte for byte
    (timings aside). Before, the zip lacked the catalogue and signatures.json: no diagnosis, no floor."""
    from autograder.catalogue import zoo
    entries = {e.name: e for e in zoo.entries(A) if e.kind == "mutant" and e.name in SAME_GRADE_MUTANTS}
    assert sorted(entries) == sorted(SAME_GRADE_MUTANTS)
    sources = {name: zoo.compose(entry, tmp_path / "composed").read_text() for name, entry in entries.items()}
    for name, source in sources.items():
        (tmp_path / "class" / name).mkdir(parents=True)
        (tmp_path / "class" / name / f"{A}.py").write_text(source)
    local = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", A, str(tmp_path / "class"),
                            "--out", str(tmp_path / "results"), "--jobs", "1"],
                           cwd=gradescope.config_mod.REPO_ROOT, capture_output=True, text=True, timeout=1800)
    assert local.returncode == 0, local.stdout + local.stderr
    for name, source in sources.items():
        root = tmp_path / "gs" / name
        with zipfile.ZipFile(autograder_zip) as z:
            z.extractall(root / "source")
        (root / "submission").mkdir(parents=True)
        (root / "submission" / f"{A}.py").write_text(source)
        proc = _run(root)
        log = proc.communicate(timeout=900)[0]
        assert proc.returncode == 0, log
        ours = (tmp_path / "results" / f"{name}.json").read_text()
        theirs = (root / "results" / "results.json").read_text()
        assert json.dumps(_graded(json.loads(theirs)), indent=2) == json.dumps(_graded(json.loads(ours)), indent=2), name
    diagnosed = json.loads((tmp_path / "results" / "ms_fill_zero.json").read_text())
    assert diagnosed["extra_data"]["components"]["masked_softmax"]["misconceptions"], diagnosed["extra_data"]


def test_an_upload_can_neither_date_nor_name_itself_nor_submit_a_link(autograder_zip, tmp_path):
    """F3: an upload holding `submission_metadata.json` (alice, long before the due date) and
    `submission/02_attention_scoring.py` had its own metadata read (the nearest to the picked file):
    mallory's late work lost nothing and was alice's. Now only Gradescope's own
    <root>/submission_metadata.json counts: mallory, 1 day 6 h late, 2 started days x 10%.
    F1: an upload that is only a link to the kit's reference got 14/14; now 0 with the message."""
    real = _metadata("2026-09-30T05:59:00.000000-07:00", None)
    real["users"][0]["email"] = "mallory@uni.edu"
    planted = _metadata("2026-09-01T00:00:00.000000-07:00", None)
    planted["users"][0]["email"] = "alice@uni.edu"
    root = _layout(tmp_path / "planted", autograder_zip, {"submission_metadata.json": json.dumps(planted)}, real)
    (root / "submission" / "submission").mkdir()
    (root / "submission" / "submission" / f"{A}.py").write_text(reference_source(A))
    proc = _run(root)
    log = proc.communicate(timeout=900)[0]
    assert proc.returncode == 0, log
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["extra_data"]["raw_score"] == 14, results["output"]
    assert results["extra_data"]["student"] == "mallory@uni.edu"
    assert results["extra_data"]["late"]["submitted_at"] == "2026-09-30T12:59:00+00:00"
    assert results["extra_data"]["late"]["penalty"] == 2.8 and results["score"] == 11.2

    linked = _layout(tmp_path / "linked", autograder_zip, {})
    (linked / "submission" / f"{A}.py").symlink_to(linked / "source" / "solutions" / "attention_scoring.py")
    proc = _run(linked)
    log = proc.communicate(timeout=300)[0]
    assert proc.returncode == 0, log
    results = json.loads((linked / "results" / "results.json").read_text())
    assert results["score"] == 0 and f"{A}.py is a symbolic link; submit the file itself" in results["output"]
