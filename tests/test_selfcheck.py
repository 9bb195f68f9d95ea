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
