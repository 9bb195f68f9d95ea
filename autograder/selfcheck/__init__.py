"""Self-check from inside a notebook: run the public tests on the notebook's own definitions.

    from autograder.selfcheck import check
    check("masked_softmax")          # one component
    check()                          # every component of this assignment

Runs in the student's kernel (their own machine, public tests only), prints one line per test
with the feedback of failures (a report printed once: the same report again is one line), and returns a `Checked`, true when everything passed (a notebook shows
nothing for it: the report is the cell's output). It never raises, so a notebook with unfinished
stubs still runs top to bottom.

This package is the student bundle: `course release` ships it (with `sandbox/runtime/procedures.py`
and the assignment's public suite) next to every notebook, so it imports nothing else of the kit.
The grader uses the same pytest plugin (`plugin`) and suite helpers (`testing`).
"""
from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any, Optional
from collections.abc import Callable

from autograder.selfcheck import i18n, symptoms
from autograder.selfcheck.i18n import _

PUBLIC = Path(__file__).resolve().parents[1] / "suites" / "public"


class Checked:
    """What check() returns: true when every public test it ran passed. A notebook displays nothing
    for it, so a cell ending in check(...) shows the report and no stray True or False."""

    def __init__(self, passed: int, total: int) -> None:
        self.passed, self.total = passed, total

    def __bool__(self) -> bool:
        return self.total > 0 and self.passed == self.total

    def __repr__(self) -> str:
        return _("Checked({passed}/{total} public tests passed)").format(passed=self.passed, total=self.total)

    def _ipython_display_(self) -> None:
        """IPython calls this instead of showing an Out[ ] value; there is nothing to add."""


def _public_files(assignment: Optional[str]) -> list[Path]:
    pattern = f"test_{assignment}.py" if assignment else "test_*.py"
    return sorted(PUBLIC.glob(pattern))


#: What check() last printed per component (None: every component), and where: a second call whose
#: report is the same (the graded cell after the check cell) says where it is instead of repeating it.
_PRINTED: dict[Optional[str], tuple[str, str]] = {}


def check(component: Optional[str] = None, namespace: Optional[dict[str, Any]] = None,
          assignment: Optional[str] = None, hint: Optional[int] = None) -> Checked:
    """Run the public tests of `component` (or all) against `namespace` (default: the caller's globals).

    A failure whose text is that of a known mistake names the misconception; `hint=2` adds the
    concrete fix (the default level is the course's: course.yml feedback.hint_level). A crash in your
    own code says where, as Jupyter shows it (`In [16], line 7`), with the shapes of the tensors on
    that line. Your dependencies (your earlier functions of this assignment) are checked too: if one
    fails its own check, the failures of tests that ran it are marked as possibly coming from it and
    name no mistake of the component's own (the other failures still do). A report identical to the
    last one printed for this component is not printed again: one line says where it is.
    """
    if namespace is None:
        namespace = sys._getframe(1).f_globals
    known = symptoms.load()
    with i18n.using(known.get("language") or _language_of_the_kit()):
        return _check(component, namespace, assignment, hint, known)


def _check(component: Optional[str], namespace: dict[str, Any], assignment: Optional[str], hint: Optional[int],
           known: dict[str, Any]) -> Checked:
    """check() in the student's language (the release's, else course.yml's)."""
    from autograder.selfcheck.plugin import GradingPlugin, LocalProvider, register_hypothesis_profile, run_pytest

    register_hypothesis_profile(max_examples=10)
    if hint is None:
        hint = known.get("hint_level") or _hint_level_of_the_kit()
    level = min(max(int(hint), min(symptoms.HINT_LEVELS)), max(symptoms.HINT_LEVELS))
    needs: dict[str, list[str]] = known.get("needs") or _needs_from_the_kit()
    wanted = [component] if component else None
    if component:
        wanted = [d for d in needs.get(component, []) if d in namespace] + [component]
    plugin = GradingPlugin(LocalProvider(namespace), wanted, where=_crash_site(namespace))
    if component:
        plugin.watch = {code: d for d in needs.get(component, []) for code in _codes(namespace.get(d))}
    run_pytest(_public_files(assignment), plugin, PUBLIC.parent)
    outcomes = [plugin.outcomes[n] for n in plugin.order]
    if not outcomes:
        print(_("no public tests found for {component}").format(component=component) if component
              else _("no public tests found for this assignment"))
        return Checked(0, 0)
    failing = {o.component for o in outcomes if not o.passed}
    shown = [o for o in outcomes if component is None or o.component == component]
    lines = []
    for name in dict.fromkeys(o.component for o in shown):
        failed = [o for o in shown if o.component == name and not o.passed]
        broken = [d for d in needs.get(name, []) if d in failing]
        ran = {o.nodeid: [d for d in broken if d in plugin.calls.get(o.nodeid, set())] for o in failed}
        if broken and failed:
            note = (_("NOTE  {name} uses your {dependency}, which fails its own check: a failure of a test that ran "
                      "it may come from it (marked below) and names no mistake of {name}'s own")
                    if len(broken) == 1 else
                    _("NOTE  {name} uses your {dependencies}, which fail their own check: a failure of a test that "
                      "ran them may come from them (marked below) and names no mistake of {name}'s own"))
            lines.append(note.format(name=name, dependency=broken[0], dependencies=", ".join(broken)))
        # A wrong dependency can give exactly the output of a mistake of the component's own (a sequence_mask
        # that keeps one entry too many under a correct masked_softmax is masked_softmax's off-by-one), so
        # only the failures of tests that did not run it are evidence (on their own texts, before the notes).
        _diagnose(name, [o for o in failed if not ran[o.nodeid]], known, level)
        for o in failed:
            if ran[o.nodeid]:
                note = (_("this test ran your {dependencies}, which fails its own check: this failure may come "
                          "from it") if len(ran[o.nodeid]) == 1 else
                        _("this test ran your {dependencies}, which fail their own check: this failure may come "
                          "from them"))
                o.output += "\n  " + note.format(dependencies=", ".join(ran[o.nodeid]))
    passed = sum(o.passed for o in shown)
    for o in shown:
        lines.append(f"{'PASS' if o.passed else 'FAIL'}  {o.component}: {o.name}")
        if not o.passed and o.output:
            lines.append("      " + o.output.replace("\n", "\n      "))
    lines.append(_("{passed}/{total} public tests passed").format(passed=passed, total=len(shown)) if passed == len(shown)
                 else _("{passed}/{total} public tests passed — the hidden tests check more than these").format(
                     passed=passed, total=len(shown)))
    if level < max(symptoms.HINT_LEVELS) and any(symptoms.DIAGNOSIS_MARK in o.output for o in shown):
        call = f"check({component!r}, hint={level + 1})" if component else f"check(hint={level + 1})"
        lines.append(_("more: {call} adds how to fix the named mistakes").format(call=call))
    report = "\n".join(lines)
    before = _PRINTED.get(component)
    if before is not None and before[0] == report:
        print(_("{what}: {passed}/{total} public tests passed, the same report as {where} (not repeated)").format(
            what=component or _("this assignment"), passed=passed, total=len(shown), where=before[1]))
    else:
        print(report)
        _PRINTED[component] = (report, _here())
    return Checked(passed, len(shown))


def _diagnose(component: str, failed: list[Any], known: dict[str, Any], level: int) -> None:
    """Name the known mistake every failure of `component` that some known mistake explains is
    consistent with, if there is one, on the failures it explains (at hint `level`: symptoms.reveal)."""
    tests, mistakes = known.get("tests", {}), known.get("misconceptions", {}).get(component, {})
    failing = [tests.get(f"{component}::{o.function}", {}).get(symptoms.text_hash(o.output), []) for o in failed]
    evidence = [{mistakes[m]["family"] for m in names if m in mistakes} for names in failing]
    family = symptoms.conclude(evidence)
    # In the words of the family's members that fail the most of these tests as the student's code does.
    members = sorted(m for m, w in mistakes.items() if w["family"] == family)
    told = [mistakes[m] for m in symptoms.most_alike(members, failing)]
    if family and told:
        said = symptoms.either([_(w.get("summary", "")) for w in told], [_(w.get("fix", "")) for w in told])
        for o, found in zip(failed, evidence):
            if family in found:
                o.output = symptoms.reveal(o.output + symptoms.diagnosis(component, *said), level)


def _codes(obj: Any) -> list[Any]:
    """The code objects of a function, or of a class's own methods (what running it runs first)."""
    if inspect.isclass(obj):
        return [v.__code__ for v in vars(obj).values() if inspect.isfunction(v)]
    code = getattr(obj, "__code__", None)
    return [code] if code is not None else []


def _crash_site(namespace: dict[str, Any]) -> Callable[[BaseException], str]:
    """Where a crash happened in the notebook's cells (IPython's names for them: In [n]) or in the
    caller's own file (a script's self-check)."""
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    cells: dict[str, int] = getattr(getattr(shell, "compile", None), "_filename_map", None) or {}
    own = namespace.get("__file__")

    def label(filename: str) -> Optional[str]:
        if filename in cells:
            return f"In [{cells[filename]}]"
        return Path(filename).name if own and filename == own else None

    from autograder.sandbox.runtime import procedures  # here: it loads torch, which importing check() need not

    procedures.use_words({key: _(text) for key, text in procedures.WORDS.items()})
    return lambda exc: procedures.crash_site(exc, label)


def _here() -> str:
    """The running cell as Jupyter numbers it (In [n]), else "the report above"."""
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    count = getattr(shell, "execution_count", None)
    return f"In [{count}]" if isinstance(count, int) and count > 0 else _("the report above")


def _language_of_the_kit() -> str:
    """Outside a student release (the instructor's notebooks): course.yml's language."""
    try:
        from autograder import config
    except ImportError:
        return i18n.SOURCE
    return config.default().language


def _hint_level_of_the_kit() -> int:
    """Outside a student release (the instructor's notebooks): course.yml's feedback.hint_level."""
    try:
        from autograder import config
    except ImportError:
        return 1
    return config.default().feedback.hint_level


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
