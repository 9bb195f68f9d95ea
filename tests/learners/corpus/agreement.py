"""How the grader agrees with the hand verdicts of the real learners' corpus (verdicts.json).

Run `python3 tests/learners/corpus/agreement.py` from the repository root: it grades every corpus file
once in the sandbox and prints, per file and component, the verdict, the score and agree/disagree, then
the totals and each disagreement with the first failing test's message. tests/test_learner_corpus.py
asserts the same rule (`judge`) per file.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Optional

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
MANIFEST = HERE / "verdicts.json"
VERDICTS = ("correct", "naming", "buggy", "absent")
NOTHING_RIGHT = "nothing right"  # a buggy verdict whose why says this may score 0

if __name__ == "__main__":  # run as a script from anywhere: the checkout's kit, not an installed one
    sys.path.insert(0, str(ROOT))

from autograder.config import Scoring  # noqa: E402
from autograder.grading import scoring, session, signatures  # noqa: E402
from autograder.grading.scoring import ComponentScore  # noqa: E402
from autograder.sandbox.forkserver import Zygote  # noqa: E402


def manifest() -> dict[str, dict[str, Any]]:
    """{slug: {"source", "assignment", "components": {name: {"verdict", "why", "misconception"}}}}."""
    data: dict[str, dict[str, Any]] = json.loads(MANIFEST.read_text())
    return data


def path_of(slug: str, entry: dict[str, Any]) -> Path:
    return HERE / entry["assignment"] / f"{slug}.py"


def naming_allowance(comp: ComponentScore, policy: Scoring) -> float:
    """What a naming difference may cost (issue #23): the component's naming tests (its parameters'
    names, `test_*_contract_names`, and its own name, `test_<component>_contract_name`: a component
    graded under another name or as a method, signatures.naming_tests), and the tests about a stored
    attribute it does not have under the contract's name (`attention_weights`, `P`), and the test of the stored values
    (`test_<component>_contract_attributes`: one written as a method, or spelt with a slip): the failed ones'
    max shares. Nothing of the tests about its outputs."""
    def about_names(outcome: Any) -> bool:
        first = outcome.output.split("\n", 1)[0]
        return ("_contract_names" in outcome.function or outcome.function == signatures.naming_test(comp.name)
                or outcome.function == signatures.attribute_test(comp.name)  # a stored value misspelt, or a method
                or outcome.part in scoring.STORED or "has no attribute `" in first or "attention_weights:" in first
                or "is a method, and the contract reads it as an attribute" in first)
    return sum(sh.max_score for sh in scoring.shares(comp.points, comp.tests, policy)
               if not sh.outcome.passed and about_names(sh.outcome))


def judge(comp: ComponentScore, verdict: dict[str, Any], policy: Scoring) -> Optional[str]:
    """None when the grade agrees with the hand verdict, else why not (one line)."""
    kind, score, points = verdict["verdict"], comp.score, comp.points
    if kind not in VERDICTS:
        return f"unknown verdict {kind!r}"
    if kind in ("correct", "naming") and comp.misconceptions:
        return f"{kind} code diagnosed as {', '.join(d.family for d in comp.misconceptions)}"
    if kind == "correct" and score != points:
        return f"correct but scored {score:g}/{points:g}"
    if kind == "naming" and points - score > naming_allowance(comp, policy) + 1e-9:
        return f"naming only but scored {score:g}/{points:g} (naming tests may cost {naming_allowance(comp, policy):g})"
    if kind == "buggy":
        zero_ok = NOTHING_RIGHT in verdict["why"]
        if score >= points or (score <= 0 and not zero_ok):
            return f"buggy but scored {score:g}/{points:g}"
    return None


def first_failure(comp: ComponentScore) -> str:
    failed = [t for t in comp.tests if not t.passed]
    return f"{failed[0].function}: {failed[0].output.splitlines()[0][:160]}" if failed else "(no failing test)"


def main() -> int:
    policy = session.config_mod.default().scoring
    entries = manifest()
    zygote = Zygote()
    zygote.start()
    rows, disagreements = [], []
    files_agreeing = components_agreeing = components = 0
    try:
        for slug, entry in entries.items():
            result = session.grade_file(zygote, entry["assignment"], path_of(slug, entry))
            scores = {c.name: c for c in result.components}
            file_ok = True
            for name, verdict in entry["components"].items():
                comp = scores[name]
                problem = judge(comp, verdict, policy)
                components += 1
                components_agreeing += problem is None
                file_ok = file_ok and problem is None
                rows.append(f"{slug:26} {name:24} {verdict['verdict']:8} {comp.score:7.4g}/{comp.points:<3g} "
                            f"{'agree' if problem is None else 'DISAGREE'}")
                if problem is not None:
                    disagreements.append(f"{slug} {name} [{verdict['verdict']}] {comp.score:g}/{comp.points:g}: "
                                         f"{first_failure(comp)}")
            files_agreeing += file_ok
    finally:
        zygote.stop()
    print("\n".join(rows))
    print(f"\nfiles agreeing: {files_agreeing}/{len(entries)}; components agreeing: {components_agreeing}/{components}")
    if disagreements:
        print("\ndisagreements (first failing test):")
        print("\n".join(f"- {d}" for d in disagreements))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
