"""The grader's semantics, end to end through the sandbox: full marks, zero, partial credit,
no double jeopardy, determinism, notebooks and .py files, and the Gradescope results format."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.authoring import samples
from autograder.grading.results import results_json, write_results
from autograder.grading.session import SUITES, grade_file
from autograder import config
from autograder.config import ConfigError, load
from kit_helpers import (HANGS_AS_IT_LOADS, course_with_an_hour_to_load, poll, processes_mentioning,
                         reference_source, write_notebook)

ASSIGNMENTS = ["01_kernel_regression", "02_attention_scoring", "03_bahdanau", "04_multihead",
               "05_positional_encoding", "06_transformer"]


def component_scores(result) -> dict[str, float]:
    return {c.name: c.score for c in result.components}


def assert_all_components(result, assignment: str) -> None:
    """The result has every component of the assignment (so that a score of 0 or of max_score says
    something about them, not about an empty result)."""
    expected = [c.name for c in config.default().assignment(assignment).components]
    assert expected and [c.name for c in result.components] == expected


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_reference_gets_full_marks_and_stubs_zero(assignment, zygote, tmp_path):
    ref = tmp_path / "reference.py"
    ref.write_text(reference_source(assignment))
    result = grade_file(zygote, assignment, ref)
    assert_all_components(result, assignment)
    failing = [(c.name, t.name, t.output) for c in result.components for t in c.tests if not t.passed]
    assert result.score == result.max_score, failing
    assert all(c.tests for c in result.components), "every component has tests"
    stubs = tmp_path / "stubs.py"
    stubs.write_text(samples.stub_source(reference_source(assignment)))
    stubbed = grade_file(zygote, assignment, stubs)
    assert_all_components(stubbed, assignment)
    assert stubbed.score == 0


def test_notebook_submission_runs_definitions_in_cell_order_and_skips_experiments(zygote, tmp_path):
    source = reference_source("02_attention_scoring")
    head, _, rest = source.partition("class AdditiveAttention")
    nb = write_notebook(tmp_path / "student.ipynb", [
        ("markdown", "# My attention notebook"),
        ("code", "%matplotlib inline\n" + head),
        ("code", "class AdditiveAttention" + rest),
        # An experiment cell that would hang or crash the grading if it ran.
        ("code", "import time\nwhile True:\n    time.sleep(1)\n"),
        ("code", "raise RuntimeError('a failing experiment')"),
        ("code", "print('hello from the student')"),
    ])
    result = grade_file(zygote, "02_attention_scoring", nb)
    assert_all_components(result, "02_attention_scoring")
    assert result.score == result.max_score


def test_syntax_error_in_one_cell_costs_only_what_it_defines(zygote, tmp_path):
    source = reference_source("02_attention_scoring")
    head, _, rest = source.partition("class AdditiveAttention")
    nb = write_notebook(tmp_path / "student.ipynb", [
        ("code", head),
        ("code", "class AdditiveAttention" + rest.replace("def forward", "def forward(", 1)),
    ])
    result = grade_file(zygote, "02_attention_scoring", nb)
    scores = component_scores(result)
    assert scores["AdditiveAttention"] == 0 and scores["DotProductAttention"] == 0
    assert scores["sequence_mask"] == 2 and scores["masked_softmax"] == 4
    messages = [t.output for c in result.components if c.name == "AdditiveAttention" for t in c.tests]
    assert any("not defined" in m and "SyntaxError" in m for m in messages), messages[:2]


def test_no_double_jeopardy_components_use_reference_dependencies(zygote, tmp_path):
    # A masked_softmax with the course text's bug (masked entries filled with 0): only
    # masked_softmax loses points; the attention classes that call it are graded on the reference.
    buggy = reference_source("02_attention_scoring").replace("value=fill", "value=0")
    sub = tmp_path / "buggy.py"
    sub.write_text(buggy)
    scores = component_scores(grade_file(zygote, "02_attention_scoring", sub))
    assert scores["masked_softmax"] < 4
    assert scores["AdditiveAttention"] == 4 and scores["DotProductAttention"] == 4
    assert scores["sequence_mask"] == 2


def test_a_failure_shows_the_suites_message_and_inputs_never_test_source(zygote, tmp_path):
    """The plugin reports a failure by its exception's message alone: no traceback (pytest's would quote
    the suite's source around every frame), no hypothesis notes; the message carries the shrunk input."""
    sub = tmp_path / "fill0.py"
    sub.write_text(reference_source("02_attention_scoring").replace("value=fill", "value=0"))
    result = grade_file(zygote, "02_attention_scoring", sub)
    failed = [t for c in result.components for t in c.tests if not t.passed]
    assert failed and all(t.output for t in failed)
    suites = [p for d in ("public", "hidden") for p in (SUITES / d).glob("test_02_*.py")]
    source = {line.strip() for p in suites for line in p.read_text().splitlines() if len(line.strip()) > 12}
    for t in failed:
        shown = [line.strip() for line in t.output.splitlines()]
        assert not source & set(shown), (t.name, sorted(source & set(shown)))
        assert not any(s in t.output for s in ("Traceback", "Falsifying example", ".py:", "\nE ")), t.output
    compared = [t for t in failed if "expected" in t.output]
    assert compared and all("input" in t.output for t in compared), [t.output for t in compared]


def test_py_submission_with_several_assignments_grades_only_the_named_one(zygote, tmp_path):
    both = reference_source("02_attention_scoring") + "\n\n" + reference_source("01_kernel_regression")
    # A broken 04 component in the same file must not matter for 02.
    both += "\n\ndef transpose_qkv(X, num_heads):\n    raise RuntimeError('broken')\n"
    sub = tmp_path / "everything.py"
    sub.write_text(both)
    result = grade_file(zygote, "02_attention_scoring", sub)
    assert result.score == result.max_score
    assert [c.name for c in result.components] == ["sequence_mask", "masked_softmax",
                                                    "AdditiveAttention", "DotProductAttention"]


def test_regrade_is_identical_whatever_was_graded_before(zygote, tmp_path):
    """A warm worker keeps the suites imported and the fork server running: grading other
    submissions in between (another bug, all stubs) must not change a submission's results."""
    reference = reference_source("02_attention_scoring")
    subs = {"scale": reference.replace("/ math.sqrt(d)", "/ d"),
            "fill": reference.replace("value=fill", "value=0"),
            "stubs": samples.stub_source(reference)}
    for name, text in subs.items():
        (tmp_path / f"{name}.py").write_text(text)

    def grade(name):
        result = results_json(grade_file(zygote, "02_attention_scoring", tmp_path / f"{name}.py"))
        result.pop("execution_time")
        return result

    first = grade("scale")
    grade("fill")
    grade("stubs")
    assert grade("scale") == first
    assert first["score"] < first["max_score"]


def test_results_follow_the_gradescope_format(zygote, tmp_path):
    sub = tmp_path / "ref.py"
    sub.write_text(reference_source("02_attention_scoring").replace("value=fill", "value=0"))
    out = tmp_path / "results.json"
    write_results(grade_file(zygote, "02_attention_scoring", sub), out)
    data = json.loads(out.read_text())
    assert set(data) >= {"score", "max_score", "tests", "output", "execution_time"}
    assert data["max_score"] == 14
    assert abs(sum(t["max_score"] for t in data["tests"]) - 14) < 1e-6
    assert abs(sum(t["score"] for t in data["tests"]) - data["score"]) < 1e-3
    for t in data["tests"]:
        assert set(t) >= {"name", "score", "max_score", "output", "visibility", "extra_data"}
        assert t["extra_data"]["component"] in {"sequence_mask", "masked_softmax", "AdditiveAttention",
                                                "DotProductAttention"}
        assert t["visibility"] in {"visible", "after_published"}
        assert "def test_" not in t["output"] and "solutions" not in t["output"]
    failed = [t for t in data["tests"] if t["score"] < t["max_score"]]
    assert failed and all(t["extra_data"]["component"] == "masked_softmax" for t in failed)


def test_unreadable_submission_scores_zero_with_a_message(zygote, tmp_path):
    sub = tmp_path / "notebook.ipynb"
    sub.write_text("{ this is not json")
    result = grade_file(zygote, "02_attention_scoring", sub)
    assert_all_components(result, "02_attention_scoring")
    assert result.score == 0
    # nothing to test: one status and one line for the student, not a failed test per test
    assert not any(c.tests for c in result.components)
    assert result.unreadable.startswith("notebook.ipynb is not a readable Jupyter notebook: its JSON breaks off")
    data = results_json(result)
    assert data["tests"] == [] and data["extra_data"]["status"] == "unreadable"
    assert data["extra_data"]["problem"].endswith("ask for a re-upload")
    assert len(data["output"].splitlines()) == 1 and "not a readable Jupyter notebook" in data["output"]


def test_cli_grades_a_class_directory_and_writes_csv(tmp_path):
    subs = tmp_path / "subs"
    samples.write_samples("02_attention_scoring", subs, mutants=0)
    (subs / "hangs.py").write_text("class X:\n    while True:\n        pass\n")  # runs at load time
    # The course's own file with a short load limit: the hang costs 3 s of a core, not the default 20.
    course_file = tmp_path / "course.yml"
    course_file.write_text(config.DEFAULT_CONFIG.read_text().replace("  load_seconds: 20 ", "  load_seconds: 3 "))
    assert load(course_file).limits.load_seconds == 3
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "autograder.cli", "--config", str(course_file), "grade",
                           "02_attention_scoring", str(subs), "--out", str(out), "--jobs", "2"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = (out / "grades.csv").read_text().splitlines()
    assert rows[0].startswith("submission,score,max_score,sequence_mask")
    by_name = {r.split(",")[0]: r.split(",") for r in rows[1:]}
    assert set(by_name) == {"reference", "stubs", "broken", "hangs"}
    assert float(by_name["reference"][1]) == 14 and float(by_name["stubs"][1]) == 0
    assert {p.name for p in out.glob("*.json")} == {"reference.json", "stubs.json", "broken.json", "hangs.json"}


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_stopped_class_grading_leaves_no_process_behind(tmp_path, stop):
    """`course grade DIR` stopped by a batch scheduler or `kill`: SIGTERM cancels the rest and ends the
    submissions in flight at once (exit 143, one line, no traceback) and SIGKILL leaves no choice; either
    way no pool worker or fork server lives on (they had: the workers outlived the parent for good, each
    holding a warm sandbox). After the reference, every submission hangs as it loads, under a load limit
    of an hour: a grading that waited for the ones in flight (as SIGTERM's did) outlasts the wait below."""
    subs = tmp_path / "class"
    subs.mkdir()
    (subs / "a_reference.py").write_text(reference_source("02_attention_scoring"))
    for i in range(6):
        (subs / f"hangs_{i}.py").write_text(HANGS_AS_IT_LOADS)
    course_file = course_with_an_hour_to_load(tmp_path)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "autograder.cli", "--config", str(course_file), "grade",
                             "02_attention_scoring", str(subs), "--out", str(out), "--jobs", "2", "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    poll(lambda: list(out.glob("*.json")) or proc.poll() is not None, bool, time.monotonic() + 300)
    assert proc.poll() is None, proc.communicate()[0][-2000:]
    assert [p.name for p in out.glob("*.json")] == ["a_reference.json"]
    proc.send_signal(stop)
    try:
        output = proc.communicate(timeout=300)[0]
    finally:
        proc.kill()
    if stop == signal.SIGTERM:
        assert proc.returncode == 143, output
        assert "course: interrupted (SIGTERM)" in output and "Traceback" not in output, output
    assert [p.name for p in out.glob("*.json")] == ["a_reference.json"] and not (out / "grades.csv").exists()
    left = poll(lambda: processes_mentioning(str(out)), lambda found: not found, time.monotonic() + 30)
    assert not left, left


@pytest.mark.parametrize("command", ["grade", "check"])
def test_ctrl_c_during_a_grading_records_no_grade(tmp_path, command):
    """Ctrl-C while the suites run: pytest ends its session early and returns, and the grading had
    scored every test that never ran as failed (`course grade FILE` exited 0 and wrote 0/14 to
    grades.csv; `course check` listed the failures). Now the command says it was interrupted, exits 130
    and writes nothing. The submission hangs as it loads, under an hour's limit, in the first job."""
    if os.getuid() != 0:
        pytest.skip("process mode gives jobs a uid of their own only as root")
    from kit_helpers import descendants
    hangs = tmp_path / "02_attention_scoring.py"
    hangs.write_text(reference_source("02_attention_scoring") + "\n\n" + HANGS_AS_IT_LOADS)
    course_file = course_with_an_hour_to_load(tmp_path)
    out = tmp_path / "out"
    extra = ["--out", str(out)] if command == "grade" else []
    # A background process of a shell ignores SIGINT: the command gets Python's own handler back.
    start = ("import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
             "sys.argv = ['course', *sys.argv[1:]]; runpy.run_module('autograder.cli', run_name='__main__')")
    proc = subprocess.Popen([sys.executable, "-c", start, "--config", str(course_file), command,
                             "02_attention_scoring", str(hangs), "--sandbox", "process", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        # In process mode the fork server is the command's child and a job its grandchild: a job runs.
        tree = poll(lambda: descendants(proc.pid), lambda found: any(d >= 2 for _, d in found),
                    time.monotonic() + 300)
        assert any(d >= 2 for _, d in tree) and proc.poll() is None, proc.communicate()[0][-2000:]
        proc.send_signal(signal.SIGINT)
        output = proc.communicate(timeout=300)[0]
    finally:
        proc.kill()
    assert proc.returncode == 130, output[-2000:]
    assert output.strip() == f"course {command}: interrupted", output[-2000:]
    assert not out.exists()


def test_course_yml_errors_are_clear(tmp_path):
    bad = tmp_path / "course.yml"
    bad.write_text("name: x\nassignments:\n  - id: 2_bad\n    title: t\n    solution: s\n    components: {a: {points: -1}}\n")
    with pytest.raises(ConfigError) as err:
        load(bad)
    assert "assignments.0.id" in str(err.value) and "points" in str(err.value)
    bad.write_text("name: x\nassignments: [\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load(bad)
    bad.write_text("name: x\nfeedback: {hint_level: 3}\nassignments: []\n")
    with pytest.raises(ConfigError, match=r"feedback\.hint_level"):
        load(bad)
    bad.write_text("name: x\nassignments: []\n")
    assert load(bad).feedback.hint_level == 1


def test_grading_reads_no_folder_outside_the_suites(tmp_path, monkeypatch):
    """pytest collects a test file by scanning the folders above it down from its confcutdir: the
    grader's pytest must stop at the suites, or each grading pays for the folders above the kit
    (a /tmp of 2000 entries made every grading 30% slower)."""
    from autograder.grading.session import run_in_process
    path = tmp_path / "pe.py"
    path.write_text(reference_source("05_positional_encoding"))
    scanned: list[str] = []
    real_scandir = os.scandir

    def scandir(folder="."):
        scanned.append(os.path.abspath(folder))
        return real_scandir(folder)

    monkeypatch.setattr(os, "scandir", scandir)
    result = run_in_process("05_positional_encoding", path)
    assert result.score == result.max_score
    suites = str(SUITES.resolve())
    assert scanned and all(f == suites or f.startswith(suites + os.sep) for f in scanned), scanned


def test_notes_and_outputs_in_the_results_hold_at_their_edges() -> None:
    """course.yml's limits.notes and feedback_kb: at the bound kept whole, one over cut with a line
    saying how much (a flood of 24,000 load notes made a 110 MiB results file)."""
    from autograder.config import Limits
    from autograder.grading import bounded
    from autograder.grading.results import results_json
    from autograder.grading.scoring import ComponentScore, Result
    from autograder.selfcheck.plugin import TestOutcome

    limits = Limits(notes=3, feedback_kb=1)
    assert bounded.notes(["a", "b", "c"], limits) == ["a", "b", "c"]
    assert bounded.notes(["a", "b", "c", "d"], limits) == ["a", "b", "c", "... 1 more notes omitted"]
    assert bounded.notes(["a"], limits, total=5001) == ["a", "... 5000 more notes omitted"]

    def results(output: str, notes: list[str]) -> dict:
        test = TestOutcome("t", "t", "sequence_mask", 1.0, True, passed=False, output=output)
        comp = ComponentScore("sequence_mask", 2.0, 0.0, [test], notes=notes)
        return results_json(Result("02_attention_scoring", "s.py", [comp], limits=limits))

    whole = results("x" * 1024, ["n"] * 3)
    assert whole["tests"][0]["output"] == "x" * 1024 and "omitted" not in whole["output"]
    cut = results("x" * 1025, ["n"] * 4)
    assert len(cut["tests"][0]["output"]) < 1100 and "[... 1 characters omitted ...]" in cut["tests"][0]["output"]
    assert cut["output"].count("sequence_mask: n") == 3 and "sequence_mask: ... 1 more notes omitted" in cut["output"]


ESCAPES = "\x1b[2J\x1b[H\x1b]52;c;ZXZpbA==\x07\x1b]0;title\x07\x1b[8m"  # clear, home, clipboard, title, conceal


@pytest.mark.parametrize("command", ["grade", "check"])
def test_a_message_cannot_drive_the_staff_terminal(tmp_path, command):
    """A student's exception text carrying terminal escape sequences (a cleared screen and a fake score
    table, an OSC 52 clipboard write) reaches the console of `course grade FILE` and `course check`
    escaped: no ESC or BEL byte is printed."""
    source = reference_source("02_attention_scoring") + (
        f"\n\ndef masked_softmax(X, valid_lens):\n    raise ValueError({ESCAPES + 'masked_softmax: 4 / 4'!r})\n")
    path = tmp_path / "02_attention_scoring.py"
    path.write_text(source)
    proc = subprocess.run([sys.executable, "-m", "autograder.cli", command, "02_attention_scoring", str(path)],
                          capture_output=True, text=True, timeout=300, cwd=config.REPO_ROOT)
    assert "ValueError" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "\x1b" not in proc.stdout + proc.stderr and "\x07" not in proc.stdout + proc.stderr
    assert "\\x1b]52;c;" in proc.stdout


def test_graded_feedback_points_to_the_cell_as_jupyter_shows_it_and_keeps_the_fix_to_the_hint_level(zygote, tmp_path):
    """A crash in the student's code: In [n] (the cell's execution count; an unrun cell: its position),
    the line, the shapes on it and the stub's docstring. A diagnosis shows its fix only at hint level 2."""
    from autograder.grading.results import format_result
    source = reference_source("02_attention_scoring")
    head, _, rest = source.partition("class DotProductAttention")
    wrong = ("class DotProductAttention" + rest).replace("torch.bmm(queries, keys.transpose(1, 2))",
                                                        "torch.bmm(keys, queries.transpose(1, 2))")
    assert wrong != "class DotProductAttention" + rest
    path = write_notebook(tmp_path / "student.ipynb", [("markdown", "# mine"), ("code", head.replace(
        "fill = torch.finfo(X.dtype).min", "fill = 0")), ("code", wrong)])
    nb = json.loads(path.read_text())
    nb["cells"][2]["execution_count"] = 7  # the DotProductAttention cell was run as In [7]; the other never
    path.write_text(json.dumps(nb))
    result = grade_file(zygote, "02_attention_scoring", path)
    dot = next(c for c in result.components if c.name == "DotProductAttention")
    crash = next(t.output for t in dot.tests if "where (your code)" in t.output)
    assert "In [7], line " in crash and "in forward: return torch.bmm(self.dropout(self.attention_weights), values)" in crash
    assert "shapes: self.attention_weights (" in crash and "values (B, K, v) -> (B, Q, v)" in crash
    assert "<cell" not in crash
    report = json.dumps(results_json(result))
    assert "diagnosis: your masked_softmax behaves exactly like one that replaces the masked scores by 0" in report
    assert "fix: fill masked positions" not in report and "fix: fill masked positions" not in format_result(result)
    result.hint_level = 2
    assert "fix: fill masked positions" in json.dumps(results_json(result))


def test_the_submission_time_limit_bounds_loading_too(zygote, tmp_path):
    """course.yml's submission_seconds is the wall clock of a whole submission: loading waited for its own
    limit in full (load_seconds), so a submission that hangs as it loads ran for that limit instead (here
    an hour, against 3 s). Every component says which limit it met."""
    course = config.default()
    course = course.model_copy(update={"limits": course.limits.model_copy(
        update={"submission_seconds": 3.0, "load_seconds": 3600.0})})
    hangs = tmp_path / "hangs.py"
    hangs.write_text(reference_source("02_attention_scoring") + "\n\n" + HANGS_AS_IT_LOADS)
    result = grade_file(zygote, "02_attention_scoring", hangs, course=course)
    assert result.score == 0
    said = {t.output for c in result.components for t in c.tests} | {n for c in result.components for n in c.notes}
    assert any("the whole submission ran past its time limit (3 s)" in s for s in said), sorted(said)[:3]


#: A sequence_mask that never returns once called.
HANGS_WHEN_CALLED = """

def sequence_mask(X, valid_len, value=0):
    import time
    time.sleep(10 ** 6)
"""


def test_a_call_that_runs_past_a_time_limit_is_told_which_limit(zygote, tmp_path):
    """A call cut short by the wall clock said "it ran past the time limit (wall clock)", whether it was
    the test's limit or the whole submission's. Now it names the limit: the first hanging tests meet the
    test's (3 s), a later one the submission's (8 s), and what is left says the submission's."""
    course = config.default()
    course = course.model_copy(update={"limits": course.limits.model_copy(
        update={"test_seconds": 3.0, "submission_seconds": 8.0})})
    hangs = tmp_path / "hangs.py"
    hangs.write_text(reference_source("02_attention_scoring") + HANGS_WHEN_CALLED)
    result = grade_file(zygote, "02_attention_scoring", hangs, course=course)
    said = [t.output for t in result.components[0].tests]
    assert result.components[0].name == "sequence_mask" and result.components[0].score == 0
    assert said[0].startswith("your code was stopped: the test ran past its time limit (3 s)"), said[0]
    assert any(s.startswith("your code was stopped: the whole submission ran past its time limit (8 s)")
               for s in said), said
    assert not any("wall clock" in s for c in result.components for t in c.tests for s in [t.output]), said


def test_a_load_that_runs_past_its_limit_is_told_so(zygote, tmp_path):
    """Loading cut by its own limit (load_seconds) said "it ran past the time limit (wall clock)"."""
    course = config.default()
    course = course.model_copy(update={"limits": course.limits.model_copy(update={"load_seconds": 2.0})})
    hangs = tmp_path / "hangs.py"
    hangs.write_text(reference_source("02_attention_scoring") + "\n\n" + HANGS_AS_IT_LOADS)
    result = grade_file(zygote, "02_attention_scoring", hangs, course=course)
    said = {t.output for c in result.components for t in c.tests}
    assert result.score == 0 and said == {"loading your code failed: it ran past the time limit for loading (2 s)"}, said


def test_only_the_workers_of_an_assignment_that_trains_warm_the_optimizers_up(tmp_path, monkeypatch):
    """Building torch's optimizers up front costs a worker and its fork server about a second each;
    only suites that train a model (testing.fit) use them. Same grades either way (a training test
    in a fork server that did not build them imports that machinery in its own child)."""
    from autograder.grading import pool, session
    assert {a: session.trains(a) for a in ("01_kernel_regression", "02_attention_scoring", "03_bahdanau",
                                           "04_multihead", "05_positional_encoding", "06_transformer")} == {
        "01_kernel_regression": True, "02_attention_scoring": False, "03_bahdanau": True,
        "04_multihead": False, "05_positional_encoding": False, "06_transformer": True}
    said = tmp_path / "optimizers"
    real = pool._init_worker

    def init(*args):  # runs in the pool's forked workers
        said.write_text(str(args[-1]))
        real(*args)

    monkeypatch.setattr(pool, "_init_worker", init)
    for assignment, warmed in (("02_attention_scoring", "False"), ("01_kernel_regression", "True")):
        subs = tmp_path / assignment
        subs.mkdir()
        (subs / "ref.py").write_text(reference_source(assignment))
        rows = pool.grade_directory(assignment, subs, tmp_path / f"{assignment}-out", jobs=1, progress=False)
        assert said.read_text() == warmed and rows[0]["score"] == rows[0]["max_score"], (assignment, rows[0]["output"][:500])


#: `course grade` whose grading workers fail as they start (as when the sandbox cannot start on a machine).
WORKERS_FAIL_TO_START = """
import sys
from autograder.grading import pool
def _init_worker(*args):
    raise RuntimeError("this machine's sandbox cannot start")
pool._init_worker = _init_worker  # the pool's workers are forked from this process
from autograder import cli
sys.exit(cli.main(sys.argv[1:]))
"""


def test_workers_that_die_as_they_start_end_the_grading_with_one_line(tmp_path):
    """A worker that died in its initializer had no submission in flight, so the pool put every
    submission back and started a new pool: for ever. Now two such rounds in a row end the command:
    one line, exit 2, the submissions named as not graded."""
    subs = tmp_path / "class"
    subs.mkdir()
    for name in ("a", "b", "c"):
        (subs / f"{name}.py").write_text(reference_source("02_attention_scoring"))
    proc = subprocess.run([sys.executable, "-c", WORKERS_FAIL_TO_START, "grade", "02_attention_scoring", str(subs),
                           "--out", str(tmp_path / "out"), "--jobs", "2", "-q"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last == ("course: the grading workers stopped as they started, 2 times in a row (their "
                    "errors are above); 3 submissions were not graded"), proc.stderr[-2000:]
    assert "this machine's sandbox cannot start" in proc.stderr
    assert not list((tmp_path / "out").glob("*.json"))


def test_a_worker_that_dies_as_it_starts_is_charged_to_no_submission(tmp_path, monkeypatch):
    """A review found: a worker that died as it started broke the pool while another graded `flaky`,
    the only submission in flight, which was charged with that death; its own first crash then made
    two, and it got 0 ("died 2 times") though it crashed once. A death as a worker starts is no
    submission's: `flaky` gets its second chance and full marks."""
    from pathlib import Path

    from autograder.grading import pool, session
    real_init, real_grade = pool._init_worker, session.grade_file
    started = tmp_path / "flaky-started"

    def init(*args):  # runs in the pool's forked workers; the second worker to start dies, once
        n = next(i for i in range(1, 100) if _created(tmp_path / f"init-{i}"))
        if n == 2:
            poll(started.exists, bool, time.monotonic() + 300)
            raise RuntimeError("this worker could not start")
        real_init(*args)

    def grade_file(zygote, assignment_id, path, **kw):
        if Path(path).stem == "flaky":
            attempt = next(i for i in range(1, 100) if _created(tmp_path / f"flaky-{i}"))
            started.touch()
            if attempt == 1:
                time.sleep(3600)  # in flight when the other worker dies as it starts
            if attempt == 2:
                os.kill(os.getpid(), signal.SIGKILL)  # its own crash, once
        return real_grade(zygote, assignment_id, path, **kw)

    monkeypatch.setattr(pool, "_init_worker", init)
    monkeypatch.setattr(session, "grade_file", grade_file)
    rows = _pool_grades_references(tmp_path, ("flaky", "other"))
    assert rows["flaky"]["score"] == 14, rows["flaky"]["output"][:500]
    assert rows["other"]["score"] == 14, rows["other"]["output"][:500]


def _pool_grades_references(tmp_path, names):
    """The rows of a class of the 02 reference under `names`, graded by the pool with two workers."""
    from autograder.grading import pool
    subs = tmp_path / "class"
    subs.mkdir()
    for name in names:
        (subs / f"{name}.py").write_text(reference_source("02_attention_scoring"))
    return {r["name"]: r for r in pool.grade_directory("02_attention_scoring", subs, tmp_path / "out", jobs=2,
                                                       progress=False)}


def _created(path):
    """Whether this process created `path` (atomic among processes: one of them does)."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL))
        return True
    except FileExistsError:
        return False


def test_a_worker_that_dies_is_charged_to_its_own_submission_only(tmp_path, monkeypatch):
    """A grading worker dies (the OS's OOM killer, a grader crash: here the worker grading `killer` kills
    itself) while another submission is in flight: Python's pool ends every worker, and each submission
    in flight had an attempt counted, so an innocent one graded beside the killer twice got 0 ("the
    grader's worker process died 2 times"). Those in flight together are now graded again alone, where a
    death is the submission's own."""
    from pathlib import Path

    from autograder.grading import session
    real = session.grade_file
    flag = tmp_path / "innocent-started"
    calls = tmp_path / "innocent-calls"

    def grade_file(zygote, assignment_id, path, **kw):  # runs in the pool's forked workers
        if Path(path).stem == "killer":
            poll(flag.exists, bool, time.monotonic() + 300)  # the innocent submission is in flight
            os.kill(os.getpid(), signal.SIGKILL)
        if Path(path).stem == "innocent":
            with calls.open("a") as f:
                f.write("x")
            flag.touch()
            if calls.read_text() == "x":  # its first grading: in flight until the killer's death ends it
                time.sleep(3600)
        return real(zygote, assignment_id, path, **kw)

    monkeypatch.setattr(session, "grade_file", grade_file)
    rows = _pool_grades_references(tmp_path, ("innocent", "killer"))
    assert rows["innocent"]["score"] == 14, rows["innocent"]["output"][:500]
    assert rows["killer"]["score"] == 0 and "died 2 times" in rows["killer"]["output"], rows["killer"]["output"][:500]


def test_a_command_whose_reader_leaves_first_ends_quietly_as_a_pipe_s_writer(tmp_path: Path) -> None:
    """Helper-81's F10: `course grade A FILE | head` ended in a BrokenPipeError traceback (and status 1). The reader
    leaving first is no failure: no traceback, status 141 (a writer killed by SIGPIPE), the results file written."""
    submission, results = tmp_path / "reference.py", tmp_path / "results.json"
    submission.write_text(reference_source("05_positional_encoding"))
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.argv = ['course', *sys.argv[1:]]; "
                             "from autograder.cli import run; run()", "grade", "05_positional_encoding",
                             str(submission), "--results", str(results)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    proc.stdout.close()  # the reader leaves before a line is written
    _out, err = proc.communicate(timeout=300)
    assert proc.returncode == 141 and "Traceback" not in err, err[-2000:]
    assert json.loads(results.read_text())["score"] == 6
