"""Self-check from inside a notebook: run the public tests on the notebook's own definitions.

    from autograder.selfcheck import check
    check("masked_softmax")          # one component
    check()                          # every component of this assignment

Runs in the student's kernel (their own machine, public tests only), prints one line per test
with the feedback of failures, and returns a `Checked`, true when everything passed (a notebook shows
nothing for it: the report is the cell's output). It never raises, so a notebook with unfinished
stubs still runs top to bottom.

This package is the student bundle: `course release` ships it (with `sandbox/runtime/procedures.py`
and the assignment's public suite) next to every notebook, so it imports nothing else of the kit.
The grader uses the same pytest plugin (`plugin`) and suite helpers (`testing`).
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

from autograder.selfcheck import symptoms

PUBLIC = Path(__file__).resolve().parents[1] / "suites" / "public"


class Checked:
    """What check() returns: true when every public test it ran passed. A notebook displays nothing
    for it, so a cell ending in check(...) shows the report and no stray True or False."""

    def __init__(self, passed: int, total: int) -> None:
        self.passed, self.total = passed, total

    def __bool__(self) -> bool:
        return self.total > 0 and self.passed == self.total

    def __repr__(self) -> str:
        return f"Checked({self.passed}/{self.total} public tests passed)"

    def _ipython_display_(self) -> None:
        """IPython calls this instead of showing an Out[ ] value; there is nothing to add."""


def _public_files(assignment: Optional[str]) -> list[Path]:
    pattern = f"test_{assignment}.py" if assignment else "test_*.py"
    return sorted(PUBLIC.glob(pattern))


def check(component: Optional[str] = None, namespace: Optional[dict[str, Any]] = None,
          assignment: Optional[str] = None) -> Checked:
    """Run the public tests of `component` (or all) against `namespace` (default: the caller's globals).

    The component's own dependencies (your earlier functions of this assignment) are checked first:
    if one fails its own check, that is said first, and the component's failures name no mistake of
    its own. A failure whose text is that of a known mistake names the mistake and its fix.
    """
    from autograder.selfcheck.plugin import GradingPlugin, LocalProvider, register_hypothesis_profile, run_pytest

    if namespace is None:
        namespace = sys._getframe(1).f_globals
    register_hypothesis_profile(max_examples=10)
    known = symptoms.load()
    needs: dict[str, list[str]] = known.get("needs") or _needs_from_the_kit()
    wanted = [component] if component else None
    if component:
        wanted = [d for d in needs.get(component, []) if d in namespace] + [component]
    plugin = GradingPlugin(LocalProvider(namespace), wanted)
    run_pytest(_public_files(assignment), plugin, PUBLIC.parent)
    outcomes = [plugin.outcomes[n] for n in plugin.order]
    if not outcomes:
        print(f"no public tests found for {component or 'this assignment'}")
        return Checked(0, 0)
    failing = {o.component for o in outcomes if not o.passed}
    shown = [o for o in outcomes if component is None or o.component == component]
    for name in dict.fromkeys(o.component for o in shown):
        broken = [d for d in needs.get(name, []) if d in failing]
        if broken:
            print(f"NOTE  {name} uses your {', '.join(broken)}, which fails its own check: fix that first "
                  f"(the failures below may come from it)")
        else:
            _diagnose(name, [o for o in shown if o.component == name and not o.passed], known)
    passed = sum(o.passed for o in shown)
    for o in shown:
        print(f"{'PASS' if o.passed else 'FAIL'}  {o.component}: {o.name}")
        if not o.passed and o.output:
            print("      " + o.output.replace("\n", "\n      "))
    print(f"{passed}/{len(shown)} public tests passed"
          + ("" if passed == len(shown) else " — the hidden tests check more than these"))
    return Checked(passed, len(shown))


def _diagnose(component: str, failed: list[Any], known: dict[str, Any]) -> None:
    """Name the known mistake every failure of `component` is consistent with, if there is one."""
    tests = known.get("tests", {})
    evidence = [set(tests.get(f"{component}::{o.function}", {}).get(symptoms.text_hash(o.output), []))
                for o in failed]
    family = symptoms.conclude(evidence)
    words = known.get("misconceptions", {}).get(component, {}).get(family or "", {})
    if family and words:
        for o in failed:
            o.output += (f"{symptoms.DIAGNOSIS_MARK}your {component} behaves exactly like one that "
                         f"{words.get('summary', '')}\n  fix: {words.get('fix', '')}")


def _needs_from_the_kit() -> dict[str, list[str]]:
    """Outside a student release (the instructor's notebooks): what each component builds on within
    its own assignment, from course.yml. (A release carries it in signatures.json.)"""
    try:
        from autograder import config
    except ImportError:
        return {}
    course = config.default()
    out = {}
    for a in course.assignments:
        own = [c.name for c in a.components]
        out.update({c: [d for d in course.closure([c]) if d in own] for c in own})
    return out
