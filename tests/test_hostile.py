"""Hostile and broken submissions against the sandboxed grader.

Every file in tests/hostile/ is a submission for 02_attention_scoring whose docstring says what it
attacks (`attack:`) and what the grader must do about it (`expect:`). Here each one is graded in the
real sandbox (bubblewrap) against a tiny suite written below (one public and one hidden test per
component, no hypothesis) with small limits, and the tests check the score of every component, the
message a student would see, and that nothing the submission started outlives its job.

The small time limits are multiples of a baseline measured once per session (`budget`: how long the
slowest test of a correct submission takes in the same sandbox, child start-up included), with the
limits of an idle machine as the floor: a loaded machine gets proportionally longer limits instead of
failed tests, and every attack still runs into the limit it is meant to.

The expected outcomes are stated as tables (`EXPECT`): a component not listed gets full marks.
Needs bubblewrap; skipped without it (the fallback mode promises no isolation). The end-to-end run of
the installed `course` command against the real suites is marked `slow` (skip with -m "not slow").
"""
from __future__ import annotations

import copy
import inspect
import json
import re
import resource
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from autograder import config as config_mod
from autograder.grading import session
from autograder.grading.results import results_json
from autograder.grading.submission import read_cells
from autograder.config import Limits
from autograder.sandbox.bwrap import bwrap_available
from autograder.sandbox.forkserver import Zygote
from kit_helpers import poll, processes_named

HERE = Path(__file__).resolve().parent
HOSTILE = HERE / "hostile"
REPO = HERE.parent
ASSIGNMENT = "02_attention_scoring"
FULL = {"sequence_mask": 2.0, "masked_softmax": 4.0, "AdditiveAttention": 4.0, "DotProductAttention": 4.0}
COMPONENTS = list(FULL)

pytestmark = pytest.mark.skipif(not bwrap_available(), reason="bubblewrap is not usable here")

# ------------------------------------------------------------------ the tiny suite

_SUITE_HEAD = '''
import pytest
import torch

from autograder.selfcheck import testing as T


def data(seed, *shape, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def plain(out, what):
    T.check(type(out) is torch.Tensor, f"{what}: expected a plain tensor, got {type(out).__name__}")
    return out
'''

TINY_PUBLIC = _SUITE_HEAD + '''

@pytest.mark.component("sequence_mask")
def test_sequence_mask(student, ref):
    """sequence_mask keeps the first valid_len entries of each row"""
    X, lens = data(0, 3, 5), torch.tensor([1, 3, 5])
    out = plain(student.sequence_mask(X, lens), "sequence_mask")
    T.assert_close(out, ref.sequence_mask(X, lens), what="sequence_mask(X, valid_len)",
                   inputs={"X": X, "valid_len": lens})


@pytest.mark.component("masked_softmax")
def test_masked_softmax(student, ref):
    """masked_softmax with one valid length per batch item"""
    X, lens = data(1, 2, 3, 4), torch.tensor([2, 3])
    out = plain(student.masked_softmax(X, lens), "masked_softmax")
    T.assert_close(out, ref.masked_softmax(X, lens), what="masked_softmax(X, valid_lens)")


@pytest.mark.component("AdditiveAttention")
def test_additive(student, ref):
    """AdditiveAttention with the reference weights"""
    q, k, v, lens = data(2, 2, 1, 20), data(3, 2, 10, 2), data(4, 2, 10, 4), torch.tensor([2, 6])
    mine = student.AdditiveAttention(key_size=2, query_size=20, num_hiddens=8, dropout=0.0)
    theirs = ref.AdditiveAttention(key_size=2, query_size=20, num_hiddens=8, dropout=0.0)
    T.copy_weights(mine, theirs)
    mine.eval()
    theirs.eval()
    T.assert_close(plain(mine(q, k, v, lens), "output"), theirs(q, k, v, lens), what="AdditiveAttention")


@pytest.mark.component("DotProductAttention")
def test_dot_product(student, ref):
    """DotProductAttention with valid lengths"""
    q, k, v, lens = data(5, 2, 3, 4), data(6, 2, 5, 4), data(7, 2, 5, 3), torch.tensor([2, 5])
    mine = student.DotProductAttention(dropout=0.0)
    mine.eval()
    expected = ref.DotProductAttention(dropout=0.0).eval()(q, k, v, lens)
    T.assert_close(plain(mine(q, k, v, lens), "output"), expected, what="DotProductAttention")
'''

TINY_HIDDEN = _SUITE_HEAD + '''

@pytest.mark.component("sequence_mask")
def test_sequence_mask_value(student, ref):
    """sequence_mask with a fill value, float64"""
    X, lens = data(10, 2, 4, dtype=torch.float64), torch.tensor([0, 2])
    expected = ref.sequence_mask(X, lens, value=-1.0)
    T.assert_close(plain(student.sequence_mask(X, lens, value=-1.0), "sequence_mask"), expected,
                   what="sequence_mask(X, valid_len, value=-1)")


@pytest.mark.component("masked_softmax")
def test_masked_softmax_per_query(student, ref):
    """masked_softmax with one valid length per query, and with none"""
    X, lens = data(11, 2, 2, 5), torch.tensor([[1, 3], [2, 5]])
    T.assert_close(plain(student.masked_softmax(X, lens), "masked_softmax"), ref.masked_softmax(X, lens),
                   what="masked_softmax(X, valid_lens of shape (B, Q))")
    T.assert_close(plain(student.masked_softmax(X, None), "masked_softmax"), ref.masked_softmax(X, None),
                   what="masked_softmax(X, None)")


@pytest.mark.component("AdditiveAttention")
def test_additive_weights(student, ref):
    """AdditiveAttention stores its attention weights"""
    q, k, v, lens = data(12, 1, 2, 3), data(13, 1, 4, 3), data(14, 1, 4, 2), torch.tensor([3])
    mine = student.AdditiveAttention(3, 3, 5, 0.0)
    theirs = ref.AdditiveAttention(3, 3, 5, 0.0)
    T.copy_weights(mine, theirs)
    mine(q, k, v, lens)
    theirs(q, k, v, lens)
    T.assert_close(plain(mine.attention_weights, "attention_weights"), theirs.attention_weights,
                   what="AdditiveAttention.attention_weights")


@pytest.mark.component("DotProductAttention")
def test_dot_product_no_mask(student, ref):
    """DotProductAttention without valid lengths"""
    q, k, v = data(15, 1, 2, 6), data(16, 1, 3, 6), data(17, 1, 3, 2)
    mine = student.DotProductAttention(0.0)
    expected = ref.DotProductAttention(0.0)(q, k, v, None)
    T.assert_close(plain(mine(q, k, v, None), "output"), expected, what="DotProductAttention, no mask")
'''


@pytest.fixture(scope="module")
def suites(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tiny_suites")
    for kind, text in (("public", TINY_PUBLIC), ("hidden", TINY_HIDDEN)):
        (root / kind).mkdir()
        (root / kind / f"test_{ASSIGNMENT}.py").write_text(text)
    return root


#: The small limits of an idle 2-core machine (the floor), and the seconds the slowest test of a
#: correct submission took there (child start-up included) when they were chosen: 1.5 s per test is 20
#: times that. The time limits scale with the baseline `budget` measures.
IDLE_LIMITS: dict[str, Any] = dict(test_seconds=1.5, load_seconds=2.0, component_cpu_seconds=1.0,
                                   submission_seconds=90.0, memory_mb=1024, processes=64, file_size_mb=16,
                                   output_kb=64)
IDLE_TEST_SECONDS = 0.075
TIME_LIMITS = ("test_seconds", "load_seconds", "component_cpu_seconds", "submission_seconds")


class Budget:
    """The limits for this machine as it is now: idle-machine seconds times `scale` (at least 1)."""

    def __init__(self, slowest_test: float) -> None:
        self.slowest_test = slowest_test
        self.scale = max(1.0, slowest_test / IDLE_TEST_SECONDS)

    def seconds(self, idle: float) -> float:
        return idle * self.scale

    def course(self, **changes: Any) -> config_mod.Course:
        """The real course with small limits (`changes` in idle-machine seconds), scaled."""
        limits = {**IDLE_LIMITS, **changes}
        limits.update({k: self.seconds(limits[k]) for k in TIME_LIMITS})
        return config_mod.default().model_copy(update={"limits": Limits(**limits)})


def measure_budget(zygote: Zygote, suites: Path, folder: Path) -> Budget:
    """A correct submission graded with roomy limits in the same sandbox: its slowest test."""
    path = folder / "reference.py"
    path.write_text(reference_source())
    roomy = Budget(IDLE_TEST_SECONDS).course(**dict.fromkeys(TIME_LIMITS, 60.0))
    graded = grade(zygote, path, suites, roomy)
    graded.expect({})
    return Budget(max(t.seconds for c in graded.result.components for t in c.tests))


@pytest.fixture(scope="module")
def budget(zygote: Zygote, suites: Path, tmp_path_factory: pytest.TempPathFactory) -> Budget:
    """Measured once per module; `graded_as_expected` measures again if load arrives later."""
    return measure_budget(zygote, suites, tmp_path_factory.mktemp("baseline"))


@pytest.fixture(scope="module")
def course(budget: Budget) -> config_mod.Course:
    return budget.course()


def gone_in_time(marker: str, started: float, lifetime: float) -> list[int]:
    """The `marker` processes still alive once they should be gone: polls until none is left, and
    gives up a second before the attack's processes would stop by themselves (`lifetime` seconds
    after `started`, taken before they started). Skips if the grading itself took that long."""
    deadline = started + lifetime - 1.0
    if time.monotonic() >= deadline:
        pytest.skip(f"the grading took over {lifetime - 1:g} s: {marker} processes may have stopped by "
                    "themselves, so their absence would prove nothing")
    return poll(lambda: processes_named(marker), lambda pids: not pids, deadline)


def source(name: str, **placeholders: str) -> str:
    text = (HOSTILE / f"{name}.py").read_text()
    for key, value in placeholders.items():
        text = text.replace(f"__{key}__", value)
    return text


def reference_source() -> str:
    import solutions.attention_scoring
    return inspect.getsource(solutions.attention_scoring)


class Graded:
    """One grading: scores and the texts a student sees, per component."""

    def __init__(self, result: Any) -> None:
        self.result = result
        self.json = results_json(result)
        self.scores = {c.name: c.score for c in result.components}

    def text(self, component: str) -> str:
        """What the student reads about `component`: its tests' outputs and notes, or, for a file
        that could not be read (nothing graded), the one line that says why."""
        comp = next(c for c in self.result.components if c.name == component)
        return "\n".join([self.result.unreadable] + [t.output for t in comp.tests] + comp.notes)

    def expect(self, zero: dict[str, str] | None = None, partial: dict[str, str] | None = None) -> None:
        """Components in `zero` score 0, those in `partial` some but not all of their points, and the text of
        each matches its regex; all others score full marks."""
        zero, partial = zero or {}, partial or {}
        want = {c: (0.0 if c in zero else FULL[c]) for c in COMPONENTS if c not in partial}
        got = {c: s for c, s in self.scores.items() if c not in partial}
        assert got == want, {c: self.text(c)[-600:] for c in want if got[c] != want[c]}
        assert all(0 < self.scores[c] < FULL[c] for c in partial), self.scores
        for c, pattern in {**zero, **partial}.items():
            assert re.search(pattern, self.text(c), re.S), (c, self.text(c)[-1500:])


def grade(zygote: Zygote, path: Path, suites: Path, course: config_mod.Course) -> Graded:
    return Graded(session.grade_file(zygote, ASSIGNMENT, path, course=course, suites=suites))


def graded_as_expected(zygote: Zygote, path: Path, suites: Path, budget: Budget, tmp_path: Path,
                       zero: dict[str, str], partial: dict[str, str] | None = None) -> Graded:
    """Grades with the budget's limits and checks `Graded.expect(zero, partial)`.

    A component that should get full marks but was stopped by a time limit is what load arriving
    after the budget was measured looks like (the other xdist worker starting a heavy test): then
    the baseline is measured again, now, and the submission graded once more with limits scaled to
    the slower of the two measurements. A component that is too slow on an idle machine still fails.
    """
    graded = grade(zygote, path, suites, budget.course())
    slowed = [c for c in COMPONENTS if c not in zero and graded.scores[c] < FULL[c]
              and re.search(TIME, graded.text(c))]
    if slowed:
        now = measure_budget(zygote, suites, tmp_path)
        graded = grade(zygote, path, suites, max(budget, now, key=lambda b: b.scale).course())
    graded.expect(zero, partial)
    return graded


def grade_source(zygote: Zygote, tmp_path: Path, name: str, text: str, suites: Path,
                 course: config_mod.Course) -> Graded:
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return grade(zygote, path, suites, course)


TIME = r"time limit|CPU time"

#: fixture -> {component that must score 0: regex its feedback must match}; others: full marks.
EXPECT: dict[str, dict[str, str]] = {
    "loop_at_import": {c: r"loading your code failed: .*(" + TIME + ")" for c in COMPONENTS},
    "loop_in_method": {"masked_softmax": TIME},
    "huge_allocation": {"masked_softmax": r"ran out of memory \(limit: 1024 MB above the interpreter\)"},
    "sys_exit_at_import": {},
    "os_exit_at_import": {c: r"loading your code failed: the process exited \(exit code 0\)" for c in COMPONENTS},
    "exit_in_method": {"sequence_mask": r"your code raised KeyboardInterrupt",
                       "masked_softmax": r"your code raised SystemExit",
                       "DotProductAttention": r"the process exited \(exit code 0\)"},
    "stdout_flood": {},
    "patch_comparisons": {c: r"max abs error|expected" for c in COMPONENTS},
    "subclass_always_equal": {"masked_softmax": r"max abs error"},
    "fork_chain": {},
    "ignore_signals": {"masked_softmax": TIME},
    "sys_modules_lookup": {"masked_softmax": r"MODULES: \[\]"},
    "syntax_error": {c: r"is not defined in your submission.*SyntaxError" for c in COMPONENTS},
    "missing_names": {c: rf"`{c}` is not defined in your submission" for c in COMPONENTS[1:]},
    "wrong_signatures": {**{c: r"signature: your " for c in COMPONENTS[2:]},
                         "masked_softmax": r"(?=.*signature: your )(?=.*never uses valid_lens)"},
    "zeros": {c: r"max abs error" for c in COMPONENTS},
    "nondeterministic": {"sequence_mask": r"max abs error", "masked_softmax": r"max abs error"},
    "secret_holder": {},
    "tmp_leftovers": {},
    "huge_reply": {"masked_softmax": r"reply of \d+ bytes is over the limit"},
    "meta_state_dict": {"AdditiveAttention": r"malformed reply \(tensor shapes that describe over 67108864 bytes"},
    "lazy_state_dict": {},
    "method_reads_class_data": {c: rf"`{c}` is not defined in your submission(?!: the grader graded)" for c in COMPONENTS},
    "json_depth_bomb": {"masked_softmax": r"malformed reply \(the message's JSON nests 600\d\d levels deep, over the limit of 200",
                        "AdditiveAttention": r"malformed reply \(the message's JSON of \d+ bytes is over the limit",
                        "DotProductAttention": r"malformed reply \(the message's JSON holds about \d+ values, over"},
    "note_flood": {},
    "blank_lines_notebook": {},
    "oversize_notebook": {c: r"characters of code, over the limit of 1048576 \(1024 KiB\)" for c in COMPONENTS},
}


#: fixture -> {component that keeps some but not all of its points: regex its feedback must match}.
PARTIAL: dict[str, dict[str, str]] = {
    # (wrong_signatures' masked_softmax(X), which never masks, kept a realistic mistake's floor until session 47:
    # it is degenerate now, catalogue degenerate/ms_ignores_valid_lens, and keeps at most 10%)
}


def test_every_fixture_has_a_header_and_an_expectation() -> None:
    special = {"walk_filesystem", "forge_results", "fork_storm", "peek_frames", "kill_fork_server",
               "memory_residue", "host_secrets"}
    # The isolation attacks (and their pairs, "attack (with other.py): ...") are graded in test_isolation.py.
    isolation = (HERE / "test_isolation.py").read_text()
    names = sorted(p.stem for p in HOSTILE.glob("*.py"))
    assert len(names) >= 25
    for name in names:
        text = (HOSTILE / f"{name}.py").read_text()
        assert re.match(r'"""attack( \(with \w+\.py\))?: ', text) and "\nexpect: " in text.split('"""')[1], name
        graded_there = re.search(rf"[\"']{name}(\.py)?[\"']", isolation)
        assert name in EXPECT or name in special or graded_there, f"{name} has no stated outcome"


def test_reference_gets_full_marks(zygote: Zygote, suites: Path, course: config_mod.Course,
                                   tmp_path: Path) -> None:
    graded = grade_source(zygote, tmp_path, "reference", reference_source(), suites, course)
    graded.expect({})
    assert graded.json["score"] == graded.json["max_score"] == 14.0


#: Load-time notes a student must see: fixture -> (component, text).
NOTES = {"sys_exit_at_import": ("masked_softmax", "SystemExit raised at load time"),
         "huge_allocation": ("sequence_mask", "MemoryError")}
#: Fixtures of EXPECT that a test below grades (with more checks) rather than the table's test.
DEDICATED = {"stdout_flood", "patch_comparisons", "zeros", "nondeterministic", "fork_chain", "secret_holder",
             "json_depth_bomb", "note_flood", "blank_lines_notebook", "oversize_notebook"}


#: Fixtures whose header promises that "the grader survives and grades the next submission normally".
NEXT_GRADED_NORMALLY = {"loop_at_import", "os_exit_at_import", "syntax_error"}


@pytest.mark.parametrize("name", sorted(set(EXPECT) - DEDICATED))
def test_hostile_submission(name: str, zygote: Zygote, suites: Path, course: config_mod.Course,
                            budget: Budget, tmp_path: Path) -> None:
    start = time.monotonic()
    graded = graded_as_expected(zygote, HOSTILE / f"{name}.py", suites, budget, tmp_path, EXPECT[name],
                                PARTIAL.get(name))
    took = time.monotonic() - start
    if name in NOTES:
        component, note = NOTES[name]
        assert note in graded.text(component)
    if name == "loop_at_import":  # "the grader returns within the load limit per component"
        assert took < len(COMPONENTS) * course.limits.load_seconds + budget.seconds(5), took
    if name in NEXT_GRADED_NORMALLY:
        grade_source(zygote, tmp_path, "next", reference_source(), suites, course).expect({})


def test_stdout_flood_is_truncated_and_changes_nothing(zygote: Zygote, suites: Path,
                                                      course: config_mod.Course, tmp_path: Path) -> None:
    flood = grade(zygote, HOSTILE / "stdout_flood.py", suites, course)
    flood.expect(EXPECT["stdout_flood"])
    clean = grade_source(zygote, tmp_path, "stdout_flood", reference_source(), suites, course)
    kept = flood.result.output
    assert "PASSED" in kept and "bytes of output dropped" in kept
    # limits.output_kb per child that runs the printing masked_softmax: its own and, under the
    # dependency rule (it passes its tests), AdditiveAttention's and DotProductAttention's; plus notes.
    assert len(kept) <= 3 * 64 * 1024 + 300
    assert len(flood.json["output"]) < len(clean.json["output"]) + 9000  # the results keep 8000 chars

    def without_output(j: dict) -> dict:
        j = copy.deepcopy(j)
        j.pop("execution_time")
        j.pop("output")
        return j

    assert without_output(flood.json) == without_output(clean.json)


# ------------------------------------------------------------------ what the grading process itself accepts


class Cost:
    """The grading process's own cost of a block: growth of its peak memory (MiB) and CPU seconds,
    from the kernel's accounting (a loaded machine changes neither, unlike wall-clock margins)."""

    def __enter__(self) -> Cost:
        self.start = resource.getrusage(resource.RUSAGE_SELF)
        return self

    def __exit__(self, *exc: object) -> None:
        end = resource.getrusage(resource.RUSAGE_SELF)
        self.peak_mib = (end.ru_maxrss - self.start.ru_maxrss) / 1024
        self.cpu = end.ru_utime + end.ru_stime - self.start.ru_utime - self.start.ru_stime


def notebook_of(path: Path, extra_cell: str) -> None:
    """A notebook of the course's correct code (one cell per definition) and `extra_cell`."""
    cells = ["import math\nimport torch\nfrom torch import nn\n",
             *reference_source().split("\n\n\n"), extra_cell]
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "source": c, "metadata": {}, "outputs": [],
                                           "execution_count": None} for c in cells],
                                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))


def bounded_and_next_graded(graded: Graded, cost: Cost, zygote: Zygote, suites: Path, course: config_mod.Course,
                            tmp_path: Path, peak_mib: float = 256, cpu: float = 60) -> None:
    """The attack cost the grading process little, its results file is small, the next one is graded."""
    assert cost.peak_mib < peak_mib, f"the grading process grew by {cost.peak_mib:.0f} MiB"
    assert cost.cpu < cpu, f"the grading took {cost.cpu:.1f} s of the grading process's CPU"
    assert len(json.dumps(graded.json)) < 100_000, len(json.dumps(graded.json))
    grade_source(zygote, tmp_path, "next", reference_source(), suites, course).expect({})


def test_json_bombs_in_replies_are_refused_before_parsing(zygote: Zygote, suites: Path, course: config_mod.Course,
                                                         budget: Budget, tmp_path: Path) -> None:
    with Cost() as cost:
        graded = graded_as_expected(zygote, HOSTILE / "json_depth_bomb.py", suites, budget, tmp_path,
                                    EXPECT["json_depth_bomb"])
    bounded_and_next_graded(graded, cost, zygote, suites, course, tmp_path)


def test_a_flood_of_load_notes_is_cut_to_the_limit(zygote: Zygote, suites: Path, course: config_mod.Course,
                                                   budget: Budget, tmp_path: Path) -> None:
    path = tmp_path / "note_flood.py"
    text = source("note_flood")
    flood = next(line for line in text.splitlines() if line.endswith("# FLOOD"))
    path.write_text(text + (flood + "\n") * 5000)
    with Cost() as cost:
        graded = graded_as_expected(zygote, path, suites, budget, tmp_path, EXPECT["note_flood"])
    for comp in graded.result.components:
        assert len(comp.notes) == course.limits.notes + 1, len(comp.notes)
        assert comp.notes[-1] == f"... {5001 - course.limits.notes} more notes omitted", comp.notes[-1]
    assert "ZeroDivisionError" in graded.json["output"] and "more notes omitted" in graded.json["output"]
    bounded_and_next_graded(graded, cost, zygote, suites, course, tmp_path)


def test_a_cell_of_blank_lines_is_read_in_linear_time(zygote: Zygote, suites: Path, course: config_mod.Course,
                                                       budget: Budget, tmp_path: Path) -> None:
    path = tmp_path / f"{ASSIGNMENT}.ipynb"
    notebook_of(path, source("blank_lines_notebook").split('"""\n', 1)[1].replace("# BLANK LINES\n", "\n" * 250_000))
    with Cost() as reading:
        cells = read_cells(path, course.limits)
    assert "run_line_magic('time', 'x')" in cells[-1][1] and cells[-1][1].count("\n") > 250_000
    assert reading.cpu < 5, f"reading the notebook took {reading.cpu:.1f} s of CPU"
    with Cost() as cost:
        graded = graded_as_expected(zygote, path, suites, budget, tmp_path, EXPECT["blank_lines_notebook"])
    bounded_and_next_graded(graded, cost, zygote, suites, course, tmp_path)


def test_an_oversize_notebook_is_refused_before_parsing(zygote: Zygote, suites: Path, course: config_mod.Course,
                                                        budget: Budget, tmp_path: Path) -> None:
    path = tmp_path / f"{ASSIGNMENT}.ipynb"
    padding = "# padding padding padding padding padding padding padding padding padding padding\n"
    notebook_of(path, source("oversize_notebook").replace("# PADDING\n", padding * (1100 * 1024 // len(padding))))
    with Cost() as cost:
        graded = graded_as_expected(zygote, path, suites, budget, tmp_path, EXPECT["oversize_notebook"])
    bounded_and_next_graded(graded, cost, zygote, suites, course, tmp_path)


def test_grader_side_comparisons_are_untouched(zygote: Zygote, suites: Path, course: config_mod.Course) -> None:
    import _pytest.reports
    import torch
    before = (torch.allclose, torch.equal, torch.testing.assert_close, torch.Tensor.__eq__,
              _pytest.reports.BaseReport.passed)
    patched = grade(zygote, HOSTILE / "patch_comparisons.py", suites, course)
    zeros = grade(zygote, HOSTILE / "zeros.py", suites, course)
    zeros.expect(EXPECT["zeros"])
    patched.expect(EXPECT["patch_comparisons"])
    assert patched.scores == zeros.scores
    assert before == (torch.allclose, torch.equal, torch.testing.assert_close, torch.Tensor.__eq__,
                      _pytest.reports.BaseReport.passed)
    assert not torch.allclose(torch.zeros(2), torch.ones(2))


def test_zeros_score_nothing_against_the_real_suites() -> None:
    """zeros.py's header, "every component scores 0", against the course's own suites: lazy outputs
    of the right shape must not collect points from tests of shapes, invariances or independence.
    Graded in-process as the zoo grades (the file is harmless; where it runs changes no score)."""
    result = session.run_in_process(ASSIGNMENT, HOSTILE / "zeros.py")
    assert {c.name: c.score for c in result.components} == dict.fromkeys(COMPONENTS, 0.0), [
        (c.name, [t.name for t in c.tests if t.passed]) for c in result.components if c.score]


def kit_paths(*extra: Path) -> list[str]:
    """Paths whose names must never show up inside the sandbox."""
    paths = [REPO, REPO / "solutions", REPO / "autograder" / "suites", HOSTILE, *extra]
    return [str(p.resolve()) for p in paths]


def test_file_system_walk_finds_nothing(zygote: Zygote, suites: Path, decoy: Path, tmp_path: Path,
                                       budget: Budget) -> None:
    slow = budget.course(test_seconds=60, component_cpu_seconds=60)  # a full walk takes a few seconds
    graded = grade(zygote, HOSTILE / "walk_filesystem.py", suites, slow)
    graded.expect({"masked_softmax": r"FOUND: \["})
    message = graded.text("masked_softmax")
    found = re.search(r"FOUND: (\[.*?\])", message).group(1)
    for path in kit_paths(suites, decoy, tmp_path):
        assert path not in found, (path, found[:3000])
    assert found == "[]", found


class SharedSandbox:
    """The module's warm sandbox handed to the CLI, which would otherwise start (and stop) its own."""

    def __init__(self, zygote: Zygote) -> None:
        self._zygote = zygote

    def __getattr__(self, name: str) -> Any:
        return getattr(self._zygote, name)

    def stop(self) -> None:
        pass


def test_forged_results_are_impossible_or_harmless(zygote: Zygote, suites: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch, budget: Budget) -> None:
    """`course --config LOW grade A FILE --results R` on a submission that writes forged results to
    R, to the --out directory of a class run, to its working directory, /tmp and /dev/shm."""
    import yaml

    from autograder import cli
    results = tmp_path / "results" / "r.json"
    out = tmp_path / "out"
    results.parent.mkdir()
    out.mkdir()
    host_tmp = Path("/tmp/hx_forged_results.json")
    host_tmp.unlink(missing_ok=True)
    path = tmp_path / "forge_results.py"
    path.write_text(source("forge_results", RESULTS_PATH=str(results), OUT_DIR=str(out)))
    raw = yaml.safe_load(config_mod.DEFAULT_CONFIG.read_text())
    raw["limits"] = budget.course().limits.model_dump()
    low = tmp_path / "course.yml"
    low.write_text(yaml.safe_dump(raw))
    real_grade_file = session.grade_file
    monkeypatch.setattr(session, "grade_file", lambda z, a, p, **kw: real_grade_file(z, a, p, **{**kw, "suites": suites}))
    from autograder.grading import one_file
    monkeypatch.setattr(one_file, "early_zygote", lambda mode="auto": SharedSandbox(zygote))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--config", str(low), "grade", ASSIGNMENT, str(path), "--results", str(results), "-q"]) == 0
    written = json.loads(results.read_text())
    comps = {c: v["score"] for c, v in written["extra_data"]["components"].items()}
    assert comps == {**FULL, "masked_softmax": 0.0} and written["score"] == 10.0
    assert "FORGED" not in json.dumps(written) and "forged" not in written["extra_data"]
    # Nothing else reached the host: not the --out directory, the working directory or /tmp.
    assert list(out.iterdir()) == [] and not host_tmp.exists() and not (tmp_path / "results.json").exists()
    forged = [p for p in tmp_path.rglob("*") if p.is_file() and p != path and b"FORGED" in p.read_bytes()]
    assert forged == []


#: How long the processes of fork_storm.py and fork_chain.py live unless the sandbox kills them.
STORM_SECONDS, CHAIN_SECONDS = 60.0, 20.0


def test_fork_storm_does_not_hang_and_leaves_nothing(zygote: Zygote, suites: Path, course: config_mod.Course,
                                                     budget: Budget) -> None:
    start = time.monotonic()
    graded = grade(zygote, HOSTILE / "fork_storm.py", suites, course)
    took = time.monotonic() - start
    graded.expect({"sequence_mask": r"the test ran past its time limit \("})
    # Each test ends at its own limit, none waits for the storm's children to let go of the pipe.
    longest = max(t.seconds for c in graded.result.components for t in c.tests)
    bound = course.limits.test_seconds + budget.seconds(5)
    if bound >= STORM_SECONDS - 1:
        pytest.skip(f"limits scaled to {course.limits.test_seconds:g} s per test: too slow to tell a "
                    f"hang on the storm's pipe ({STORM_SECONDS:g} s) from a timeout")
    assert longest < bound, (longest, bound)
    assert took < 2 * course.limits.test_seconds + budget.seconds(20), took  # two timeouts, six quick tests
    assert gone_in_time("hx_storm", start, STORM_SECONDS) == []
    assert "storm child holding the pipe" in graded.result.output


def test_hopping_processes_do_not_outlive_their_job(zygote: Zygote, suites: Path, budget: Budget) -> None:
    roomy = budget.course(test_seconds=10)  # 20 chains forking flat out starve the child of 2 cores
    start = time.monotonic()
    graded = grade(zygote, HOSTILE / "fork_chain.py", suites, roomy)
    graded.expect(EXPECT["fork_chain"])
    assert gone_in_time("hx_chain", start, CHAIN_SECONDS) == [], "hopping processes outlived their job"


def test_stack_frames_are_child_side_only(zygote: Zygote, suites: Path, course: config_mod.Course) -> None:
    graded = grade(zygote, HOSTILE / "peek_frames.py", suites, course)
    graded.expect({"masked_softmax": r"FRAMES: \["})
    frames = re.search(r"FRAMES: \[(.*?)\]\n", graded.text("masked_softmax") + "\n", re.S).group(1)
    entries = [e.strip(" '\"") for e in frames.split("', ")]
    assert entries and all(e.startswith("/sandbox/runtime/") for e in entries), entries
    assert all("leaks=[]" in e for e in entries), entries
    for bad in ("pytest", "suites", "autograder", "solutions", str(REPO)):
        assert bad not in frames


def test_nondeterministic_output_loses_points_deterministically(zygote: Zygote, suites: Path,
                                                                course: config_mod.Course) -> None:
    first = grade(zygote, HOSTILE / "nondeterministic.py", suites, course)
    second = grade(zygote, HOSTILE / "nondeterministic.py", suites, course)
    first.json.pop("execution_time")
    second.json.pop("execution_time")
    assert first.json == second.json
    first.expect(EXPECT["nondeterministic"])


def test_killing_the_fork_server_costs_only_that_component(zygote: Zygote, suites: Path,
                                                           course: config_mod.Course, tmp_path: Path) -> None:
    server = zygote.proc.pid if zygote.proc else None
    graded = grade(zygote, HOSTILE / "kill_fork_server.py", suites, course)
    graded.expect({"AdditiveAttention": r"expected"})
    assert "sandbox" not in graded.text("AdditiveAttention")
    again = grade_source(zygote, tmp_path, "after", reference_source(), suites, course)
    again.expect({})
    assert zygote.proc is not None and zygote.proc.pid == server, "the fork server was killed and restarted"


def test_no_residue_of_other_submissions_in_memory(zygote: Zygote, suites: Path,
                                                   course: config_mod.Course) -> None:
    grade(zygote, HOSTILE / "secret_holder.py", suites, course).expect(EXPECT["secret_holder"])
    graded = grade(zygote, HOSTILE / "memory_residue.py", suites, course)
    graded.expect({"masked_softmax": r"RESIDUE: \d+"})
    count = int(re.search(r"RESIDUE: (\d+)", graded.text("masked_softmax")).group(1))
    assert count < 10, f"{count} copies of another submission's text in the child's memory"


def test_host_secrets_are_out_of_reach(zygote: Zygote, suites: Path, course: config_mod.Course) -> None:
    graded = grade(zygote, HOSTILE / "host_secrets.py", suites, course)
    graded.expect({"masked_softmax": r"SECRETS: \[\]"})
    sizes = re.search(r"TMPFS: (\{.*?\})", graded.text("masked_softmax")).group(1)
    reported = dict(re.findall(r"'(/[\w/]+)': (\d+|None)", sizes))
    assert set(reported) == {"/tmp", "/dev/shm"}, sizes
    for folder, size in reported.items():  # a size the child could not read is not a small tmpfs
        assert size != "None" and int(size) <= 1024, (folder, size)


# ------------------------------------------------------------------ a class at once, through the CLI

BATCH = {  # submission -> components that must score 0 (regex of their feedback)
    "correct_a": {},
    "correct_b": {},
    "loop_in_method": EXPECT["loop_in_method"],
    "os_exit_at_import": EXPECT["os_exit_at_import"],
    "forge_results": {"masked_softmax": r"max abs error"},
    "fork_storm": {"sequence_mask": r"time limit"},
}


def make_class(directory: Path, out: Path) -> None:
    directory.mkdir()
    for name in BATCH:
        text = reference_source() if name.startswith("correct") else source(
            name, OUT_DIR=str(out), RESULTS_PATH=str(out / "results.json"))
        (directory / f"{name}.py").write_text(text)


def check_class(out: Path, zero: dict[str, dict[str, str]], full: dict[str, float], exact: bool = True) -> None:
    """Every submission has its results file and a grades.csv row; components in `zero` score 0 (or,
    with exact=False, less than full marks), the others full marks; nothing else is in OUT."""
    import csv
    rows = {r["submission"]: r for r in csv.DictReader((out / "grades.csv").open())}
    assert set(rows) == set(zero)
    for name, expected_zero in zero.items():
        res = json.loads((out / f"{name}.json").read_text())
        assert "FORGED" not in json.dumps(res) and "forged" not in res["extra_data"], name
        comps = {c: v["score"] for c, v in res["extra_data"]["components"].items()}
        for c, points in full.items():
            if c not in expected_zero:
                assert comps[c] == points, (name, c, comps, res["output"][-1500:])
            elif exact:
                assert comps[c] == 0.0, (name, c, comps)
            else:
                assert comps[c] < points, (name, c, comps)
        assert float(rows[name]["score"]) == res["score"] and rows[name]["status"] == "graded"
        text = json.dumps(res["tests"])
        for comp, pattern in expected_zero.items():
            assert re.search(pattern, text), (name, comp)
    assert sorted(p.name for p in out.iterdir()) == sorted([f"{n}.json" for n in zero] + ["grades.csv"])


def test_class_batch_through_the_cli(tmp_path: Path, suites: Path, monkeypatch: pytest.MonkeyPatch,
                                     budget: Budget) -> None:
    """`course grade 02_attention_scoring DIR --out OUT` (in-process, against the tiny suite and small
    limits: the batch's worker processes are forked from here, so they inherit the two patches)."""
    from autograder import cli
    course = budget.course(test_seconds=3, load_seconds=5)  # two workers and two sandboxes share the CPUs
    real_grade_file = session.grade_file
    monkeypatch.setattr(config_mod, "default", lambda: course)
    monkeypatch.setattr(session, "grade_file",
                        lambda z, a, p, **kw: real_grade_file(z, a, p, **{**kw, "course": course, "suites": suites}))
    directory, out = tmp_path / "class", tmp_path / "out"
    make_class(directory, out)
    start = time.monotonic()
    assert cli.main(["grade", ASSIGNMENT, str(directory), "--out", str(out), "--jobs", "2", "-q"]) == 0
    check_class(out, BATCH, FULL)
    assert gone_in_time("hx_storm", start, STORM_SECONDS) == []


REAL_HIDDEN = REPO / "autograder" / "suites" / "hidden" / f"test_{ASSIGNMENT}.py"


@pytest.mark.slow
@pytest.mark.skipif(not REAL_HIDDEN.exists(), reason="the real suite for 02_attention_scoring is not written yet")
def test_class_batch_against_the_real_suites(tmp_path: Path) -> None:
    """End to end: the installed `course` command, the real suites and course.yml's limits, on the
    correct submissions and the hostile ones that fail fast (about a minute: marked slow)."""
    quick = {k: v for k, v in BATCH.items() if k in ("correct_a", "correct_b", "os_exit_at_import", "forge_results")}
    directory, out = tmp_path / "class", tmp_path / "out"
    directory.mkdir()
    for name in quick:
        text = reference_source() if name.startswith("correct") else source(name, OUT_DIR=str(out))
        (directory / f"{name}.py").write_text(text)
    proc = subprocess.run(["course", "grade", ASSIGNMENT, str(directory), "--out", str(out), "--jobs", "2", "-q"],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    full = {c.name: c.points for c in config_mod.default().assignment(ASSIGNMENT).components}
    zero = {"correct_a": {}, "correct_b": {}, "os_exit_at_import": {c: "the process exited" for c in full},
            "forge_results": {"masked_softmax": ""}}
    check_class(out, zero, full, exact=False)
