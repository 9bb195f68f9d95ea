"""Real learners' code (issue #23): the grader against a careful human's verdicts.

tests/learners/corpus/<assignment>/<slug>.py are learners' own implementations from public d2l study
repositories (source, commit and every edit in each file's header), judged by hand against
docs/course-api.md in tests/learners/corpus/verdicts.json, per component:
- correct: full marks, and no diagnosis;
- naming: the maths is right but names or stored tensors differ from the contract: full marks less at
  most the shares of the failed naming tests (`*_contract_names*`), and no diagnosis;
- buggy: some but not all points; 0 only where the verdict says "nothing right" (code that cannot run
  in any environment: typos, undefined names). Code written for another contract (d2l 1.0 signatures,
  another argument order) whose computation is right keeps part of its points;
- absent: not part of the submission; nothing asserted.
Each file is graded once in the real sandbox; `agreement.judge` is the rule, shared with agreement.py,
which prints the whole table. Tests fail for today's disagreements on purpose: fix the grader, never a
verdict.
"""
from __future__ import annotations

from typing import Any

import pytest

from autograder import config
from autograder.grading import session
from autograder.sandbox.forkserver import Zygote
from learners.corpus import agreement

ENTRIES = agreement.manifest()


@pytest.mark.parametrize("slug", sorted(ENTRIES))
def test_grade_agrees_with_the_hand_verdict(zygote: Zygote, slug: str) -> None:
    entry: dict[str, Any] = ENTRIES[slug]
    result = session.grade_file(zygote, entry["assignment"], agreement.path_of(slug, entry))
    scores = {c.name: c for c in result.components}
    assert set(entry["components"]) == set(scores), "the manifest names every component of the assignment"
    policy = config.default().scoring
    problems = [f"{name}: {problem} ({agreement.first_failure(scores[name])})"
                for name, verdict in entry["components"].items()
                if (problem := agreement.judge(scores[name], verdict, policy)) is not None]
    assert not problems, "\n".join(problems)
