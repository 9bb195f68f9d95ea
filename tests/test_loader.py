"""The sandbox's statement loader: which top-level statements of a submission run, and which
load-time errors a student is told about."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "autograder" / "sandbox" / "runtime"))
import loader

sys.path.pop(0)


def load(*cells: str) -> tuple[dict[str, Any], dict[str, Any]]:
    namespace: dict[str, Any] = {"__name__": "__submission__"}
    report = loader.load([(f"cell {i}", c) for i, c in enumerate(cells)], namespace)
    return namespace, report


def test_definitions_run_and_calls_are_skipped() -> None:
    ns, report = load("import math\nSCALE = 2\ndef f(x):\n    return SCALE * x\n",
                      "print('training...')\nresult = f(3)\n", "class A:\n    size = SCALE\n")
    assert ns["f"](2) == 4 and ns["A"].size == 2 and "result" not in ns
    assert report["skipped"] == 2 and report["errors"] == []


@pytest.mark.parametrize("statement", ["x = train()", "x = [i for i in range(10**9)]", "x = (lambda: 1)",
                                       "x = (y := 3)", "x = torch.device(train())", "x = d2l.train_ch8()"])
def test_anything_that_can_run_code_is_skipped(statement: str) -> None:
    ns, report = load(statement)
    assert "x" not in ns and report["skipped"] == 1


def test_a_device_chosen_at_the_top_is_kept() -> None:
    """`device = torch.device(...)` at the top of a learner's file (yhli00/my-d2l-code, helper-69), used in every
    function: skipped, each of them raised NameError (masked_softmax 0.81 of 4, PositionalEncoding 0 of 6; with
    `device = 'cpu'`, which calls nothing, 2.17 and 2.22). Choosing a device calls nothing else (DEVICE_CALLS)."""
    ns, report = load("import torch\n"
                      "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
                      "cpu = torch.device('cpu')\n")
    assert ns["device"] == ns["cpu"] == __import__("torch").device("cpu") and report["skipped"] == 0
    assert loader.keeps(loader.ast.parse("device = d2l.try_gpu()").body[0])


def test_experiment_statements_depending_on_skipped_ones_are_not_reported() -> None:
    """`q = 2 * keys` after `keys = torch.randn(...)` (skipped): a consequence of skipping, no note."""
    ns, report = load("keys = make_keys()\nq = 2 * keys\nr = q + 1\n")
    assert report["errors"] == [] and "q" not in ns and "r" not in ns


def test_a_real_name_error_is_reported_with_its_cell_and_line() -> None:
    _ns, report = load("keys = make_keys()\n", "LIMIT = 2 * undefined_constant\n")
    assert [e["where"] for e in report["errors"]] == ["cell 1, line 1"]
    assert "NameError: name 'undefined_constant' is not defined" in report["errors"][0]["error"]


def test_a_syntax_error_costs_only_its_cell() -> None:
    ns, report = load("def f(:\n    pass\n", "def g():\n    return 1\n")
    assert ns["g"]() == 1 and "f" not in ns
    assert [e["where"] for e in report["errors"]] == ["cell 0"]
    assert report["errors"][0]["error"].startswith("SyntaxError")


def test_exits_at_load_time_are_contained_and_reported() -> None:
    ns, report = load("class A:\n    raise SystemExit(3)\n", "def g():\n    return 1\n")
    assert ns["g"]() == 1
    assert report["errors"][0]["error"] == "SystemExit raised at load time"


def test_the_self_check_import_and_magics_are_ignored() -> None:
    ns, report = load("%matplotlib inline\nfrom autograder.selfcheck import check\ndef f():\n    return 1\n")
    assert report["errors"] == [] and "check" not in ns and ns["f"]() == 1


def test_errors_past_the_first_hundred_are_counted_not_kept() -> None:
    """A flood of failing statements: the child reports MAX_ERRORS of them and how many more (the
    grader keeps fewer still: course.yml's limits.notes)."""
    _, report = load("x = 1 / 0\n" * loader.MAX_ERRORS)
    assert len(report["errors"]) == loader.MAX_ERRORS and report["omitted"] == 0
    _, report = load("x = 1 / 0\n" * (loader.MAX_ERRORS + 1), "def f(:\n")
    assert len(report["errors"]) == loader.MAX_ERRORS and report["omitted"] == 2


def test_a_cell_too_deep_for_the_parser_costs_only_that_cell() -> None:
    namespace, report = load("x = " + "-" * 200_000 + "1\n", "def f():\n    return 1\n")
    assert "f" in namespace and report["errors"][0]["where"] == "cell 0"
    assert "cannot parse this cell" in report["errors"][0]["error"]


def test_a_crash_in_loaded_code_says_where_with_the_line_and_the_shapes_on_it() -> None:
    import torch
    ns, _ = load("import torch\n", "def scores(queries, keys):\n    \"\"\"queries (B, Q, d), keys (B, K, d) -> (B, Q, K).\"\"\"\n"
                 "    return torch.bmm(keys, queries)\n")
    with pytest.raises(RuntimeError) as err:
        ns["scores"](torch.zeros(2, 3, 5), torch.zeros(2, 4, 5))
    assert loader.student_traceback(err.value, error=False) == (
        "cell 1, line 3, in scores: return torch.bmm(keys, queries)\n"
        "  shapes: keys (2, 4, 5), queries (2, 3, 5)\n"
        "  scores (its docstring): queries (B, Q, d), keys (B, K, d) -> (B, Q, K).")
    assert loader.student_traceback(err.value).splitlines()[-1].startswith("RuntimeError: Expected size")
