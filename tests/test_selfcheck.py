"""autograder/selfcheck: the notebook's check(), offline, in the student's own process."""
from __future__ import annotations

import re

import importlib
import inspect
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import given, strategies as st

from autograder.catalogue import zoo
from autograder.selfcheck import check, symptoms
from autograder.selfcheck.plugin import register_hypothesis_profile

A = "02_attention_scoring"


def namespace_with(*entry_names: str) -> dict[str, Any]:
    """The reference 02 with catalogue entries' code over it, as a notebook's globals."""
    from solutions import attention_scoring
    ns: dict[str, Any] = {"__name__": "__notebook__"}
    exec(compile(inspect.getsource(attention_scoring), "<reference>", "exec"), ns)
    for name in entry_names:
        entry = next(e for e in zoo.entries(A) if e.name == name)
        exec(compile(entry.path.read_text(), str(entry.path), "exec"), ns)
    return ns


@pytest.fixture
def bundle(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """check() as in a student release of 02: its signatures.json (the course's hint level 1), and no
    report printed before."""
    import json

    from autograder import config, selfcheck
    from autograder.authoring.release import bundled_signatures
    course = config.default()
    known = json.loads(bundled_signatures(course, course.assignment(A), selfcheck.PUBLIC / f"test_{A}.py"))
    monkeypatch.setattr(symptoms, "load", lambda: known)
    monkeypatch.setattr(selfcheck, "_PRINTED", {})
    return known


def test_a_wrong_dependency_marks_the_failures_that_ran_it_and_blames_no_mistake_of_the_component(
        bundle: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    assert not check("AdditiveAttention", namespace_with("ms_fill_zero"), assignment=A)
    out = capsys.readouterr().out
    assert "NOTE  AdditiveAttention uses your masked_softmax, which fails its own check" in out
    assert "this test ran your masked_softmax, which fails its own check: this failure may come from it" in out
    assert "diagnosis:" not in out and "hint:" not in out


def test_a_failing_dependency_s_tests_name_no_mistake_of_the_component_and_the_others_do(
        bundle: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    """A wrong sequence_mask can give exactly the output of a mistake of masked_softmax's own: under a correct
    masked_softmax, one that keeps an entry too many is masked_softmax's off-by-one, which the check named
    (session 45) though the student's masked_softmax was right. The failures of tests that ran the failing
    dependency are marked and name nothing; a failure of a test that did not run it (valid_lens None) still
    names the component's own mistake. Hint level 1 (the course's) keeps the fix back; hint=2 adds it."""
    assert not check("masked_softmax", namespace_with("sm_off_by_one"), assignment=A)
    correct = capsys.readouterr().out
    assert "this test ran your sequence_mask, which fails its own check: this failure may come from it" in correct
    assert "diagnosis:" not in correct and "PASS  masked_softmax: valid_lens None" in correct

    ns = namespace_with("sm_off_by_one", "ms_none_dim1")
    assert not check("masked_softmax", ns, assignment=A)
    first = capsys.readouterr().out
    assert first.count("diagnosis:") == 1 and first.count("this failure may come from it") == 3
    assert ("names no mistake of masked_softmax's own\nFAIL  masked_softmax: valid_lens None" in first)
    assert "diagnosis: your masked_softmax behaves exactly like one that takes the softmax over dim=1" in first
    assert "fix:" not in first and "more: check('masked_softmax', hint=2)" in first
    assert not check("masked_softmax", ns, assignment=A, hint=2)
    assert "fix: with valid_lens None, take the softmax over the last axis" in capsys.readouterr().out


def test_no_mistake_of_a_correct_component_is_named_through_any_known_mistake_of_its_dependency(
        bundle: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    """The rule above over the catalogue: the reference masked_softmax under each of sequence_mask's known
    mistakes, and the reference DotProductAttention under each of masked_softmax's, are told nothing."""
    for dependency, component in (("sequence_mask", "masked_softmax"), ("masked_softmax", "DotProductAttention")):
        for entry in [e for e in zoo.entries(A) if e.kind == "mutant" and e.component == dependency]:
            check(component, namespace_with(entry.name), assignment=A)
            out = capsys.readouterr().out
            assert "diagnosis:" not in out, (entry.name, component, out)


def test_the_same_report_is_printed_once(bundle: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    ns = namespace_with("sm_off_by_one")
    check("sequence_mask", ns, assignment=A)
    report = capsys.readouterr().out
    assert "FAIL  sequence_mask" in report
    check("sequence_mask", ns, assignment=A)  # the graded cell after the check cell
    assert capsys.readouterr().out == "sequence_mask: 0/2 public tests passed, the same report as the report above (not repeated)\n"
    ns.update(namespace_with())  # fixed: a new report
    assert check("sequence_mask", ns, assignment=A)
    assert "PASS  sequence_mask" in capsys.readouterr().out


_SHAPE_MISTAKE = '''
class DotProductAttention(nn.Module):
    """Scaled dot-product attention: softmax(Q K^T / sqrt(d)) V."""

    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        """queries (B, Q, d), keys (B, K, d), values (B, K, v) -> (B, Q, v)."""
        d = queries.shape[-1]
        scores = torch.bmm(keys, queries.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''


def test_a_crash_in_the_students_code_says_where_with_the_shapes_and_the_contract(
        bundle: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A script's self-check (a notebook's is In [n]: test_a_notebooks_check_points_to_its_cells)."""
    ns = namespace_with()
    script = tmp_path / "mine.py"
    script.write_text(_SHAPE_MISTAKE)
    ns["__file__"] = str(script)
    exec(compile(_SHAPE_MISTAKE, str(script), "exec"), ns)
    assert not check("DotProductAttention", ns, assignment=A)
    out = capsys.readouterr().out
    assert ("where: mine.py, line 14, in forward: return torch.bmm(self.dropout(self.attention_weights), values)\n"
            "            shapes: self.attention_weights (2, 4, 3), values (2, 4, 7)\n"
            "            forward (its docstring): queries (B, Q, d), keys (B, K, d), values (B, K, v)"
            " -> (B, Q, v).") in out, out


def test_symptoms_conclude_needs_every_failure_to_agree() -> None:
    assert symptoms.conclude([{"a", "b"}, {"b", "c"}]) == "b"
    assert symptoms.conclude([{"a", "b"}, set()]) is None  # two candidates remain
    assert symptoms.conclude([set(), set()]) is None
    assert symptoms.conclude([{"a"}, {"b"}]) is None
    assert symptoms.text_hash("x" + symptoms.DIAGNOSIS_MARK + "anything") == symptoms.text_hash("x")
    assert symptoms.text_hash("x" + symptoms.WHERE_MARK + "In [3], line 1") == symptoms.text_hash("x")


def test_check_tells_a_family_in_the_words_of_the_member_whose_signatures_match() -> None:
    """A release's signatures name the mutants that fail a public test with a text: check() concludes on
    their families and says the words of the member that failed the most of the student's tests so."""
    from types import SimpleNamespace

    from autograder import selfcheck
    texts = ["comparison:\n  max abs error 1", "comparison:\n  max abs error 2", "comparison:\n  max abs error 3"]
    known = {"tests": {"C::test_a": {symptoms.text_hash(texts[0]): ["other_way"]},
                       "C::test_b": {symptoms.text_hash(texts[1]): ["other_way"]},
                       "C::test_c": {symptoms.text_hash(texts[2]): ["one_way"]}},
             "misconceptions": {"C": {"one_way": {"family": "f", "summary": "does it one way", "fix": "fix one"},
                                      "other_way": {"family": "f", "summary": "does it the other way",
                                                    "fix": "fix other"}}}}
    failed = [SimpleNamespace(function=f"test_{x}", output=t) for x, t in zip("abc", texts)]
    selfcheck._diagnose("C", failed, known, 2)
    assert all("does it the other way" in o.output and "fix other" in o.output for o in failed)
    assert not any("does it one way" in o.output for o in failed)


def test_the_hint_level_keeps_the_diagnosis_and_shows_the_fix_from_level_2() -> None:
    text = "masked_softmax(X):\n  max abs error 1" + symptoms.DIAGNOSIS_MARK + "your masked_softmax ..." + \
        symptoms.FIX_MARK + "fill with -1e6"
    assert symptoms.reveal(text, 1) == "masked_softmax(X):\n  max abs error 1" + symptoms.DIAGNOSIS_MARK + \
        "your masked_softmax ..."
    assert symptoms.reveal(text, 2) == text
    assert symptoms.reveal("no diagnosis\n  fix: mine", 1) == "no diagnosis\n  fix: mine"


def test_a_submissions_literals_do_not_change_the_examples_hypothesis_draws(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hypothesis draws some values from the literals of loaded non-library modules; a submission is
    one. Under the course profile the examples follow from the test alone (plugin.py,
    examples_from_the_test_alone): without it, importing the module below changes them."""
    register_hypothesis_profile()
    drawn: list[tuple[int, float]] = []

    @given(st.integers(1, 1000), st.floats(-10, 10))
    def sizes_and_scales(n: int, x: float) -> None:
        drawn.append((n, x))

    sizes_and_scales()
    before, drawn[:] = list(drawn), []
    (tmp_path / "steering_literals.py").write_text(
        "SIZES = (" + ", ".join(str(n) for n in range(500, 540)) + ")\nSCALES = (0.125, -3.5, 7.75)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("steering_literals")
    sizes_and_scales()
    assert len(before) == 20 and drawn == before


def test_the_profile_registers_in_any_thread_after_a_grading_in_another() -> None:
    """Hypothesis keeps the settings in effect per thread: a grading in a worker thread left this thread's
    settings unlike the current profile's, and registering warned (HypothesisDeprecationWarning, seen in
    the suite's summary). Each thread now grades under the course profile, with no warning."""
    import threading
    import warnings

    from hypothesis import settings

    seen: dict[str, int] = {}

    def grade_in_a_thread() -> None:
        register_hypothesis_profile(max_examples=7)
        seen["thread"] = settings.default.max_examples

    worker = threading.Thread(target=grade_in_a_thread)
    worker.start()
    worker.join()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        register_hypothesis_profile(max_examples=9)
    assert seen["thread"] == 7 and settings.default.max_examples == 9
    register_hypothesis_profile()  # the course's default again, for the tests after this one
    assert settings.default.max_examples == 20


def test_a_tests_seed_is_its_own_digest_read_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the course profile hypothesis reads a test's source once per function object (plugin.py,
    digests_computed_once): the seed is the digest hypothesis computes, and later runs (every part of a
    split test, every submission a worker grades) do not read the source again."""
    import hypothesis.core
    from hypothesis.internal import reflection

    register_hypothesis_profile()

    def a_test(n: int) -> None:  # a new function object: not yet known to the memo
        assert n >= 0

    expected = reflection.function_digest(a_test)
    reads: list[object] = []
    real_getsource = inspect.getsource
    monkeypatch.setattr(inspect, "getsource", lambda obj: reads.append(obj) or real_getsource(obj))
    assert [hypothesis.core.function_digest(a_test) for _ in range(3)] == [expected] * 3
    assert reads == [a_test]
    register_hypothesis_profile()  # a second registration keeps the memo, not a memo of the memo
    assert hypothesis.core.function_digest(a_test) == expected and reads == [a_test]



def test_no_patch_of_failing_examples_is_made_for_the_terminal() -> None:
    """Hypothesis leaves a failing test's examples on its pytest item (core._raise_to_user), and its pytest
    plugin imports libcst to write them as a patch at the teardown report; the grading plugin takes them
    off in pytest_runtest_teardown, which runs before that report."""
    import hypothesis.core
    from autograder.selfcheck.plugin import HYPOTHESIS_FAILING_EXAMPLES, GradingPlugin

    assert f".{HYPOTHESIS_FAILING_EXAMPLES} = " in inspect.getsource(hypothesis.core._raise_to_user)

    class Item:
        def get_closest_marker(self, name: str) -> None:
            return None

    item = Item()
    item.__dict__[HYPOTHESIS_FAILING_EXAMPLES] = ["test_x(n=3)"]
    GradingPlugin(provider=None, components=None).pytest_runtest_teardown(item)  # type: ignore[arg-type]
    assert HYPOTHESIS_FAILING_EXAMPLES not in item.__dict__


def test_an_attribute_the_base_class_leaves_to_the_student_is_missing_on_both_paths() -> None:
    """The given AttentionDecoder's attention_weights raises NotImplementedError for a subclass to override:
    read in this process, or through the sandbox (grading/remote.py turns the child's NotImplementedError into
    NotImplementedYet), `T.attribute` says the class does not define it, and fails only where it is used."""
    from autograder.selfcheck import testing as T
    from autograder.selfcheck.failures import NotImplementedYet

    class Decoder:  # in this process
        @property
        def attention_weights(self) -> None:
            raise NotImplementedError

    class Proxy:  # a sandboxed child's object, as the grader's proxy raises its NotImplementedError
        def __getattr__(self, name: str) -> None:
            raise NotImplementedYet("not implemented yet (your code raised NotImplementedError)")

    for obj in (Decoder(), Proxy()):
        got = T.attribute(obj, "attention_weights", "TransformerDecoder")
        assert isinstance(got, T.Missing)
        with pytest.raises(AssertionError, match="your class does not define `attention_weights`"):
            len(got)

_NOTED_SUITE = '''
import pytest
from hypothesis import given, strategies as st


@pytest.mark.component("double")
@given(x=st.integers(min_value=0, max_value=10))
def test_doubles_every_number(student, ref, x):
    """double: every number"""
    got, expected = student.double(x), ref.double(x)
    if got != expected:
        raise AssertionError(f"double({x}) returned {got}, expected {expected}")
'''


@pytest.mark.parametrize("wording", ["Falsifying example", "Failing test case"])
def test_a_failures_text_is_its_message_whatever_notes_hypothesis_adds(tmp_path: Path, wording: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Hypothesis adds the failing example to the exception as notes: a call of the test function with
    every argument's repr (the fixtures' default reprs carry memory addresses). 6.155 starts them with
    "Falsifying example:", 6.170 with "Failing test case:" (simulated here by rewording the notes this
    hypothesis adds). Either way the failure's text is the suite's message alone: no test function
    name, no address, the same on every run and every hypothesis version."""
    import types

    import hypothesis.core

    from autograder.selfcheck.plugin import GradingPlugin, LocalProvider, run_pytest

    real_add_note = hypothesis.core.add_note  # where hypothesis attaches its report to the failure

    def add_note(exc: BaseException, note: str) -> None:
        real_add_note(exc, note.replace("Falsifying example", wording))

    monkeypatch.setattr(hypothesis.core, "add_note", add_note)
    register_hypothesis_profile()
    suite = tmp_path / "public" / "test_noted.py"
    suite.parent.mkdir()
    suite.write_text(_NOTED_SUITE)
    outputs = []
    for _ in range(2):
        plugin = GradingPlugin(LocalProvider({"double": lambda x: x + 1}), None,
                               reference=lambda: types.SimpleNamespace(double=lambda x: 2 * x))
        run_pytest([suite], plugin, tmp_path)
        (outcome,) = plugin.outcomes.values()
        assert not outcome.passed
        outputs.append(outcome.output)
    assert outputs[0] == outputs[1] == "double(0) returned 1, expected 0", outputs[0]


def test_a_failure_that_does_not_happen_again_reads_as_the_failure(tmp_path: Path) -> None:
    """Helper-56 (session 41): code that failed a hypothesis test once and passed its replay (hypothesis
    raises a FlakyFailure, an exception group) read `Mismatch("...\\n  max abs error ...") [single exception
    in FlakyFailure]`: the repr of the failure inside, escaped newlines and hypothesis' class name. It now
    reads as the failure itself."""
    import types

    from autograder.selfcheck.plugin import GradingPlugin, LocalProvider, run_pytest

    register_hypothesis_profile()
    suite = tmp_path / "public" / "test_noted.py"
    suite.parent.mkdir()
    suite.write_text(_NOTED_SUITE)
    calls = []

    def double_once_wrong(x: int) -> int:
        calls.append(x)
        return x + 1 if len(calls) == 1 else 2 * x

    plugin = GradingPlugin(LocalProvider({"double": double_once_wrong}), None,
                           reference=lambda: types.SimpleNamespace(double=lambda x: 2 * x))
    run_pytest([suite], plugin, tmp_path)
    (outcome,) = plugin.outcomes.values()
    assert not outcome.passed
    assert re.fullmatch(r"double\(\d+\) returned \d+, expected \d+", outcome.output), outcome.output


_PARTED_SUITE = '''
import pytest
from hypothesis import given, settings, strategies as st

from autograder.selfcheck import testing as T

SEEN = []


@pytest.mark.component("double")
@pytest.mark.parametrize("part", ["value", "sign"])
@settings(max_examples=6)
@given(x=st.integers(-50, 50))
def test_doubles(student, part, x):
    """double: the value and its sign"""
    got = T.shared(student, lambda: student.double(x), x)
    SEEN.append((part, x))
    assert got == 2 * x if part == "value" else (got < 0) == (x < 0)
'''


def test_the_parts_of_a_test_meet_the_same_examples_and_share_one_call_per_example(tmp_path: Path) -> None:
    """A test split into parts runs the student's code once per example (testing.shared): every part meets
    the first part's examples (hypothesis would seed each part by its own id) and reuses its results, within
    one grading (here the names loaded once, `Submission`); another grading calls the code again."""
    import sys

    from autograder.selfcheck.plugin import GradingPlugin, LocalProvider, Submission, run_pytest

    register_hypothesis_profile()
    suite = tmp_path / "hidden" / "test_parted.py"
    suite.parent.mkdir()
    suite.write_text(_PARTED_SUITE)
    calls: list[int] = []

    def double(x: int) -> int:
        calls.append(x)
        return 2 * x

    class Loaded(LocalProvider):  # the zoo's in-process grading: its names are shared by a component's tests
        def namespace(self, component: str) -> Any:
            return names

    for _ in range(2):  # two gradings
        names = Submission(double=double)
        plugin = GradingPlugin(Loaded({}), None)
        run_pytest([suite], plugin, tmp_path)
        assert [o.passed for o in plugin.outcomes.values()] == [True, True]
        seen = sys.modules["hidden.test_parted"].SEEN
        value, sign = ([x for p, x in seen if p == part] for part in ("value", "sign"))
        assert value == sign and len(value) == 6, seen
        assert calls == value, "each example's call ran once, in the first part"
        seen.clear()
        calls.clear()


_STEPPED_SUITE = '''
import pytest

from autograder.selfcheck import testing as T


@pytest.mark.component("double")
@pytest.mark.parametrize("part", ["value", "sign"])
def test_one_step_at_a_time(student, part):
    """double, called one step at a time: each step's value and its sign"""
    done, stopped = T.shared(student, lambda: T.steps(lambda t: T.call(f"double({t})", student.double, t), 3))
    for t, got in enumerate(done):
        T.check(got == 2 * t if part == "value" else got >= 0, f"step {t}: double({t}) returned {got}")
    if stopped is not None:
        raise stopped
'''


def test_a_loop_of_calls_shared_by_parts_fails_each_part_where_checking_as_it_went_would(tmp_path: Path) -> None:
    """testing.steps: a loop of the student's calls runs once for all parts (testing.shared) and stops at the
    first failure; each part checks the steps that ran in order, then raises that failure. A wrong step 0
    followed by a crash at step 1 is reported as the wrong step 0 by the part that checks values, and as
    the crash by the part for which step 0 was right."""
    from autograder.selfcheck.plugin import GradingPlugin, LocalProvider, Submission, run_pytest

    suite = tmp_path / "hidden" / "test_stepped.py"
    suite.parent.mkdir()
    suite.write_text(_STEPPED_SUITE)
    calls: list[int] = []

    def double(t: int) -> int:
        calls.append(t)
        if t == 1:
            raise ValueError("no odd steps")
        return 2 * t + 1

    class Loaded(LocalProvider):
        def namespace(self, component: str) -> Any:
            return names

    names = Submission(double=double)
    plugin = GradingPlugin(Loaded({}), None)
    run_pytest([suite], plugin, tmp_path)
    value, sign = plugin.outcomes.values()
    assert (value.passed, sign.passed) == (False, False)
    assert value.output == "step 0: double(0) returned 1", value.output
    assert sign.output == "double(1) with arguments (1) raised ValueError: no odd steps", sign.output
    assert calls == [0, 1], "the loop ran once, stopped at the crash, and the second part reused it"


def test_the_fixtures_reprs_carry_no_memory_address() -> None:
    """Hypothesis shows a failing example as a call with each argument's repr; should a version put it
    where students read it, the `student` and `ref` fixtures still show no address (the same every run)."""
    from autograder.grading.remote import RemoteNamespace
    from autograder.selfcheck.plugin import LocalNamespace, Reference, Submission

    def double(x: int) -> int:
        return 2 * x

    students = [LocalNamespace({"double": double}), Submission(double=double),
                RemoteNamespace(None, [], frozenset({"double"}))]  # type: ignore[arg-type]
    assert {repr(s) for s in students} == {"<the submission's names>"}
    assert repr(Reference(double=double)) == "<the course's reference>"


def test_a_notebooks_check_points_to_its_cells_prints_once_and_sees_past_a_wrong_dependency(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The released 02 notebook (its self-check bundle, no kit on the path) run in a real kernel with a
    wrong sequence_mask, masked_softmax taking the softmax over the queries when valid_lens is None (named
    from the one test that does not run sequence_mask), and DotProductAttention's scores transposed."""
    import jupytext
    from nbclient import NotebookClient

    from autograder import config
    from autograder.authoring.release import bundle_files
    from autograder.authoring.support_module import write_support
    from kit_helpers import this_python_kernel

    course = config.default()
    folder = tmp_path / A
    folder.mkdir()
    write_support(course, course.assignment(A), folder)
    for rel, text in bundle_files(course, course.assignment(A)).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    mine = {"sequence_mask": "sm_off_by_one", "masked_softmax": "ms_none_dim1"}
    nb = jupytext.read(config.REPO_ROOT / "assignments" / A / f"{A}.py")
    cells = [c for c in nb.cells if c.cell_type == "code"]
    for cell in cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in mine:
            entry = next(e for e in zoo.entries(A) if e.name == mine[grade_id])
            cell.source = entry.path.read_text().split('"""', 2)[2]  # its code, without its description
        elif grade_id == "DotProductAttention":
            cell.source = "import math\n" + _SHAPE_MISTAKE.lstrip("\n")
        elif not cell.metadata.get("nbgrader") and not cell.source.startswith("import"):
            cell.source = "pass"  # the notebook's demonstrations (they stop at the first wrong function)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("PYTHONPATH", str(folder))
    NotebookClient(nb, timeout=600, kernel_name=this_python_kernel(tmp_path, monkeypatch),
                   resources={"metadata": {"path": str(folder)}}).execute()

    def shown(grade_id: str) -> tuple[int, str]:
        cell = next(c for c in cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
        return cell.execution_count, "".join(o.get("text", "") for o in cell.outputs)

    defined, _ = shown("DotProductAttention")
    checked, report = shown("check_DotProductAttention")
    assert f"where: In [{defined}], line 14, in forward: return torch.bmm(self.dropout(self.attention_weights), values)" \
        in report and "shapes: self.attention_weights (2, 4, 3), values (2, 4, 7)" in report, report
    # 0/5: the shape and scale tests score the output and the stored attention_weights as separate parts
    assert shown("test_DotProductAttention")[1] == (f"DotProductAttention: 0/5 public tests passed, the same report "
                                                    f"as In [{checked}] (not repeated)\n")
    _, report = shown("check_masked_softmax")
    assert "diagnosis: your masked_softmax behaves exactly like one that takes the softmax over dim=1" in report
    assert report.count("this failure may come from it") == 3 and "fix:" not in report


def test_a_grading_loads_no_pytest_plugin_the_machine_has_installed(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A suite runs with hypothesis' plugin and the kit's alone (`plugin.PLUGINS`): a pytest plugin
    installed on the machine (pytest-randomly reorders, pytest-timeout stops tests; here one that fails
    every test), or options set in PYTEST_ADDOPTS, change no grade, on the staff's machine or in a student's check()."""
    import os
    import subprocess
    import sys

    from autograder.grading.session import run_in_process
    site = tmp_path / "site"
    dist = site / "failing_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: failing-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[pytest11]\nfailing = failing_plugin\n")
    for module in ("failing_plugin", "named_plugin"):  # installed; named in the environment (PYTEST_PLUGINS)
        (site / f"{module}.py").write_text(
            "def pytest_runtest_setup(item):\n    raise RuntimeError('an installed plugin ran')\n")
    (tmp_path / "test_plain.py").write_text("def test_nothing():\n    pass\n")
    plain = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_plain.py"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120,
                           env={**{k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"},
                                "PYTHONPATH": str(site)})
    assert "an installed plugin ran" in plain.stdout, "the plugin is installed: pytest on its own runs it"

    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTEST_PLUGINS", "named_plugin")
    # options in the environment, which pytest adds to every command line (session 50: a `-p` for the kit's own
    # test run reached every grading it made): here they would deselect every test and load the failing plugin
    monkeypatch.setenv("PYTEST_ADDOPTS", "-k no_such_test -p failing_plugin")
    submission = tmp_path / f"{A}.py"
    submission.write_text(zoo.reference_source(A))
    result = run_in_process(A, submission)
    assert result.score == result.max_score, [(t.name, t.output[:200]) for c in result.components for t in c.tests
                                              if not t.passed][:3]
    assert sum(len(c.tests) for c in result.components) > 20
    assert os.environ["PYTEST_PLUGINS"] == "named_plugin" and "PYTEST_DISABLE_PLUGIN_AUTOLOAD" not in os.environ
    assert os.environ["PYTEST_ADDOPTS"] == "-k no_such_test -p failing_plugin"


def test_an_interrupt_in_the_students_own_process_stops_the_check(tmp_path: Path) -> None:
    """check() runs the student's code in the notebook's kernel: Jupyter's interrupt (a KeyboardInterrupt
    raised in whatever code runs, here the student's) stops it, rather than ending pytest's session early
    and reporting every test that did not run as failed."""
    from autograder.grading.session import run_in_process
    submission = tmp_path / f"{A}.py"
    submission.write_text(zoo.reference_source(A) + "\n\ndef sequence_mask(X, valid_len, value=0):\n"
                          "    raise KeyboardInterrupt\n")
    with pytest.raises(KeyboardInterrupt):
        run_in_process(A, submission)


@pytest.mark.parametrize("suite", ["import no_such_module_of_the_course\n",
                                   "import pytest\n\n\ndef test_x():\n    pytest.exit('stop')\n"],
                         ids=["collection error", "pytest.exit"])
def test_only_an_interrupt_stops_a_grading_as_one(tmp_path: Path, suite: str) -> None:
    """pytest reports a suite that cannot be collected (Session.Interrupted, a KeyboardInterrupt) and
    pytest.exit() through the same hook as Ctrl-C: neither may pass for Ctrl-C, which stops a whole
    class grading (`course: interrupted`)."""
    from autograder.selfcheck.plugin import run_pytest
    (tmp_path / "hidden").mkdir()
    (tmp_path / "hidden" / "test_x.py").write_text(suite)

    class Nothing:
        pass

    run_pytest([tmp_path / "hidden" / "test_x.py"], Nothing(), tmp_path)  # type: ignore[arg-type]


def test_a_comparison_of_the_students_code_with_itself_names_both_sides() -> None:
    """A test of the student's code against itself (step by step against the whole sequence) calls
    neither side "expected": the student's whole-sequence output can be the wrong one (the book's
    decoder block is right step by step and wrong on whole sequences in eval mode)."""
    import torch

    from autograder.selfcheck import testing as T
    sides = ("one at a time", "whole sequence")
    with pytest.raises(AssertionError) as failed:
        T.assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 3.0]), what="logits", sides=sides)
    text = str(failed.value)
    assert "at index [1]: one at a time 2, whole sequence 3 (" in text, text
    assert "  whole sequence: [1.0, 3.0]\n  one at a time: [1.0, 2.0]" in text, text
    assert "expected" not in text and "got" not in text, text
    with pytest.raises(AssertionError) as failed:
        T.assert_close(torch.zeros(2, 3), torch.zeros(2, 4), what="logits", sides=sides)
    assert "one at a time has shape (2, 3), whole sequence (2, 4)" in str(failed.value)
    with pytest.raises(AssertionError) as failed:  # against the course's values, the usual words
        T.assert_close(torch.tensor([2.0]), torch.tensor([3.0]), what="logits")
    assert "expected 3, got 2" in str(failed.value)


def test_assert_depends_like_judges_which_outputs_move_not_their_values():
    """testing.assert_depends_like: a wrong formula on the right inputs passes; constant outputs, and outputs that
    read a batch item they should not, fail, naming the change and the position."""
    from autograder.selfcheck import testing as T

    X = torch.randn(2, 3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    moved = X.clone()
    moved[1, 2] = 5.0
    changes = [("X[1, 2] changes", [moved])]
    T.assert_depends_like("f", lambda x: torch.relu(x) * 2, torch.tanh, [X], changes)  # values differ: fine
    with pytest.raises(AssertionError, match=r"X\[1, 2\] changes, the course's output at \[1, 2\] changes and yours"):
        T.assert_depends_like("f", lambda x: torch.zeros_like(x), torch.tanh, [X], changes)
    with pytest.raises(AssertionError, match=r"your output at \[0, 2\] changes and the course's does not"):
        T.assert_depends_like("f", lambda x: torch.tanh(x + x.flip(0)), torch.tanh, [X], changes)


def test_a_grading_under_python_oo_names_its_tests_as_any_other(tmp_path: Path) -> None:
    """helper-77: `python -OO` (or PYTHONOPTIMIZE=2) strips docstrings, which name the tests: every test was named
    by its function (`test_nw_rows_sum_to_one`), hidden tests' names shown to students and the class report's
    keys changed. The names are read from the tests' source there."""
    import subprocess
    import sys
    script = ("import json, sys\nfrom pathlib import Path\nfrom autograder.grading import session\n"
              "r = session.run_in_process(sys.argv[1], Path(sys.argv[2]))\n"
              "print(json.dumps([(t.name, t.output) for c in r.components for t in c.tests]))\n")
    one = "01_kernel_regression"  # the smallest assignment, with a mistake: names of passed and failed tests
    submission = tmp_path / f"{one}.py"
    submission.write_text(zoo.reference_source(one).replace("-diffs ** 2 / 2, dim=1)  # (n, m), rows", "-diffs ** 2, "
                                                            "dim=1)  # (n, m), rows", 1))
    seen = [subprocess.run([sys.executable, *flags, "-c", script, one, str(submission)], capture_output=True,
                           text=True, timeout=600, check=True).stdout for flags in ([], ["-OO"])]
    assert seen[0] == seen[1]
    assert "test_" not in seen[0]


def test_a_crash_shows_each_tensor_argument_s_shape_and_a_float_dtype_other_than_float32() -> None:
    """Helper-76: "expected m1 and m2 to have the same dtype, but got: double != float" beside arguments shown by
    shape alone did not say that the test fed float64. A float tensor other than float32 now carries its dtype;
    float32 and integer tensors read as before."""
    from autograder.selfcheck import testing as T

    def matmul(a: torch.Tensor, b: torch.Tensor, lens: torch.Tensor) -> torch.Tensor:
        return a @ b

    with pytest.raises(T.Crash) as crash:
        T.call("f", matmul, torch.ones(2, 3, dtype=torch.float64), torch.ones(3, 4), torch.tensor([1, 2]))
    assert str(crash.value).startswith("f with arguments ((2, 3) float64, (3, 4), (2,)) raised RuntimeError: "), \
        str(crash.value)
