"""autograder/selfcheck: the notebook's check(), offline, in the student's own process."""
from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, strategies as st

from autograder.catalogue import zoo
from autograder.selfcheck import check, symptoms
from autograder.selfcheck.plugin import register_hypothesis_profile

A = "02_attention_scoring"


def namespace_with(entry_name: str) -> dict[str, Any]:
    """The reference 02 with one catalogue entry's code over it, as a notebook's globals."""
    from solutions import attention_scoring
    ns: dict[str, Any] = {"__name__": "__notebook__"}
    exec(compile(inspect.getsource(attention_scoring), "<reference>", "exec"), ns)
    entry = next(e for e in zoo.entries(A) if e.name == entry_name)
    exec(compile(entry.path.read_text(), str(entry.path), "exec"), ns)
    return ns


def test_a_wrong_dependency_is_named_first_and_the_component_is_not_blamed(capsys: pytest.CaptureFixture[str]) -> None:
    assert not check("AdditiveAttention", namespace_with("ms_fill_zero"), assignment=A)
    out = capsys.readouterr().out
    assert "AdditiveAttention uses your masked_softmax, which fails its own check: fix that first" in out
    assert "diagnosis:" not in out and "hint:" not in out


def test_a_correct_component_with_correct_dependencies_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert check("AdditiveAttention", namespace_with("add_loop_over_queries"), assignment=A)
    assert "fix that first" not in capsys.readouterr().out


def test_symptoms_conclude_needs_every_failure_to_agree() -> None:
    assert symptoms.conclude([{"a", "b"}, {"b", "c"}]) == "b"
    assert symptoms.conclude([{"a", "b"}, set()]) is None  # two candidates remain
    assert symptoms.conclude([set(), set()]) is None
    assert symptoms.conclude([{"a"}, {"b"}]) is None
    assert symptoms.text_hash("x" + symptoms.DIAGNOSIS_MARK + "anything") == symptoms.text_hash("x")


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
