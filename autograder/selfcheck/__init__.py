"""Self-check from inside a notebook: run the public tests on the notebook's own definitions.

    from autograder.selfcheck import check
    check("masked_softmax")          # one component
    check()                          # every component of this assignment

Runs in the student's kernel (their own machine, public tests only), prints one line per test
with the feedback of failures, and returns True when everything passed. It never raises, so a
notebook with unfinished stubs still runs top to bottom.

This package is the student bundle: `course release` ships it (with `sandbox/runtime/procedures.py`
and the assignment's public suite) next to every notebook, so it imports nothing else of the kit.
The grader uses the same pytest plugin (`plugin`) and suite helpers (`testing`).
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

PUBLIC = Path(__file__).resolve().parents[1] / "suites" / "public"


def _public_files(assignment: Optional[str]) -> list[Path]:
    pattern = f"test_{assignment}.py" if assignment else "test_*.py"
    return sorted(PUBLIC.glob(pattern))


def check(component: Optional[str] = None, namespace: Optional[dict[str, Any]] = None,
          assignment: Optional[str] = None) -> bool:
    """Run the public tests of `component` (or all) against `namespace` (default: the caller's globals)."""
    from autograder.selfcheck.plugin import GradingPlugin, LocalProvider, register_hypothesis_profile, run_pytest

    if namespace is None:
        namespace = sys._getframe(1).f_globals
    register_hypothesis_profile(max_examples=10)
    files = _public_files(assignment)
    plugin = GradingPlugin(LocalProvider(namespace), [component] if component else None)
    run_pytest(files, plugin, PUBLIC.parent)
    outcomes = [plugin.outcomes[n] for n in plugin.order]
    if not outcomes:
        print(f"no public tests found for {component or 'this assignment'}")
        return False
    passed = sum(o.passed for o in outcomes)
    for o in outcomes:
        print(f"{'PASS' if o.passed else 'FAIL'}  {o.component}: {o.name}")
        if not o.passed and o.output:
            print("      " + o.output.replace("\n", "\n      "))
    print(f"{passed}/{len(outcomes)} public tests passed"
          + ("" if passed == len(outcomes) else " — the hidden tests check more than these"))
    return passed == len(outcomes)
