"""Symptom signatures: naming a known misconception from the text of a failure (one home for the
rules the grader and the student's self-check share).

A test is derandomized, so a mistake fails it on the same smallest input with the same text. The
grader's catalogue records, for each test, the hash of the text each known mistake produces
(`catalogue/signatures.json`); the self-check bundle carries the public tests' part with each
misconception's one-sentence summary and fix, and no code.
"""
from __future__ import annotations

import functools
import hashlib
import json
import re
from pathlib import Path
from typing import Any, Optional
from collections.abc import Callable, Collection, Sequence

from autograder.selfcheck.i18n import N_, _, every_translation

#: What the grader appends to a failure it has diagnosed (not part of the failure's signature).
DIAGNOSIS_MARK = "\n  diagnosis: "
#: The line of a diagnosis that says how to fix the mistake (shown from hint level 2 on).
FIX_MARK = "\n  fix: "
#: What the self-check appends to a crash in the student's own code: where, as the student sees it
#: (not part of the failure's signature either: it names the student's cells).
WHERE_MARK = "\n  where: "
#: The heading of what the grader appends to a crash of the student's code in the sandbox, its traceback
#: (indented deeper than the failure's own lines; not part of the signature: it names the submission's
#: file and lines, which the catalogue's in-process runs lack), in the student's language.
CRASH_HEADING = N_("where (your code):")
#: The sandbox's exception classes that carry a crash of the student's code. A test's text names the
#: student's own error instead (testing.raised); where one still shows, it is no fact: only that path has it.
SANDBOX_ERRORS = frozenset({"StudentError", "StudentAttributeError"})
#: The hint levels (course.yml feedback.hint_level, check(..., hint=)): 1 the symptom and the
#: misconception, 2 also the fix.
HINT_LEVELS = (1, 2)
#: The bundle's file: {"tests": {"<component>::<test>": {hash: [mutants]}}, "misconceptions":
#: {"<component>": {mutant: {"family", "summary", "fix"}}}, "needs": {"<component>": [same-assignment deps]}}.
BUNDLED = Path(__file__).resolve().parent / "signatures.json"


#: What a failure's text shows of the code's behaviour in every language: its numbers (values, shapes,
#: indices) and code names (`W_q`, `masked_softmax`, `NoneType`, `RuntimeError`), never its words.
_FACTS = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?|\b(?:nan|inf)\b|\b\w*_\w*\b|\b[A-Z]\w*?[a-z0-9][A-Z]\w*\b", re.ASCII)


@functools.cache
def _crash_block() -> re.Pattern[str]:
    """The sandbox's traceback block, in any language: its heading and its lines."""
    headings = "|".join(re.escape("\n  " + h) for h in sorted(every_translation(CRASH_HEADING)))
    return re.compile(f"(?:{headings})" + r"(?:\n {4}[^\n]*)*")


def facts(text: str) -> list[str]:
    """The numbers and code names of a failure's text, sorted: the same in English and in a translation,
    which words them in its own order (i18n), and the same whether the code ran in the sandbox or in
    the grading process (the catalogue's measure and signatures.json run it in-process)."""
    text = _crash_block().sub("", text.split(DIAGNOSIS_MARK)[0].split(WHERE_MARK)[0])
    return sorted(f for f in _FACTS.findall(text) if f not in SANDBOX_ERRORS)


def text_hash(text: str) -> str:
    """A failure's signature: the hash of its `facts`, so that a mistake has one signature in every language."""
    return hashlib.sha256("\x1f".join(facts(text)).encode()).hexdigest()[:20]


#: A measured value among a failure's facts: a number with a fraction or an exponent, nan or inf (the
#: values the code computed, which its weights decide), not an integer (a step, a size).
_MEASURED = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?|-?\d+e[-+]?\d+|nan|inf", re.ASCII)
#: A bracketed list without lists inside: an index (where the largest error is, which the values decide),
#: a tensor's values, or a list of sizes.
_LISTED = re.compile(r"\[[^\[\]]*\]")


def where_hash(text: str) -> str:
    """A failure's signature without what its values decide: the hash of its facts less the computed numbers
    and the bracketed lists (the index of the largest error moves with the weights), so: which steps, which
    shapes, which code names. A mistake made in a module whose weights are its own (a property test keeps
    the student's initial weights) fails the test where the catalogue's does, with other values."""
    for _depth in range(8):  # nested lists (a tensor's values), innermost first
        text, found = _LISTED.subn("", text)
        if not found:
            break
    return hashlib.sha256("\x1f".join(f for f in facts(text) if not _MEASURED.fullmatch(f)).encode()).hexdigest()[:20]


#: The tables of the catalogue's signatures.json (catalogue/diagnosis.py), each keyed by one digest of a failure's text.
SIGNATURE_TABLES: dict[str, Callable[[str], str]] = {"tests": text_hash, "where": where_hash}


def diagnosis(component: str, summary: str, fix: str) -> str:
    """What a diagnosed failure gets appended (the grader's and the self-check's): the misconception
    `summary` (the catalogue's `bug:` line, translated) and its `fix`. The marks stay as they are in every
    language: `reveal` and `text_hash` find them."""
    said = _("your {component} behaves exactly like one that {summary}").format(component=component, summary=summary)
    return f"{DIAGNOSIS_MARK}{said}{FIX_MARK}{fix}"


def most_alike(members: Sequence[str], failures: Sequence[Collection[str]]) -> list[str]:
    """Of a family's `members` (in the order given), those that reproduce the most `failures` (each: the
    members that reproduce one failure): one, or every one the failures cannot tell apart. One home for
    the rule (the grader's diagnosis, the self-check), whose words `either` joins."""
    counts = [sum(m in f for f in failures) for m in members]
    return [m for m, n in zip(members, counts) if n == max(counts)]


def either(summaries: Sequence[str], fixes: Sequence[str]) -> tuple[str, str]:
    """Mistakes the tests cannot tell apart (members of one family that fail them alike), as one summary
    and one fix for `diagnosis`: "A, or like one that B" (all given translated; a fix said once)."""
    summary, fix = summaries[0], fixes[0]
    for other in summaries[1:]:
        summary = _("{first}, or like one that {other}").format(first=summary, other=other)
    for other in dict.fromkeys(fixes[1:]):
        if other != fixes[0]:
            fix = _("{first}; or: {other}").format(first=fix, other=other)
    return summary, fix


def reveal(text: str, level: int) -> str:
    """A failure's text at hint `level`: below 2, a diagnosis keeps the misconception and loses its
    `fix:` line (the concrete change, nearly a solution). One home for the rule (self-check, results)."""
    if level >= 2 or DIAGNOSIS_MARK not in text:
        return text
    head, _, diagnosis = text.partition(DIAGNOSIS_MARK)
    kept = [line for line in diagnosis.split("\n") if not line.startswith(FIX_MARK.lstrip("\n"))]
    return head + DIAGNOSIS_MARK + "\n".join(kept)


def conclude(evidence: list[set[str]]) -> Optional[str]:
    """The one family consistent with every failure that some known mistake explains, if one is.

    A small input often fits several mistakes; together the failures usually leave one. A failure
    no known mistake reproduces is not evidence against a family (a second, unknown mistake)."""
    informative = [e for e in evidence if e]
    if not informative:
        return None
    common = set.intersection(*informative)
    return common.pop() if len(common) == 1 else None


def load(path: Path = BUNDLED) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
