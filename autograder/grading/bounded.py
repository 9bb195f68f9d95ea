"""Text a submission controls, bounded before the grading process keeps it: one home for the rule.

Load-time notes, error messages, test outputs and printed output all come from the student's code
(through its child's replies); the results file, `grades.csv`'s notes and the report hold only as
much of them as course.yml's limits say (`notes`, `feedback_kb`), with a line saying what was cut.
"""
from __future__ import annotations

from collections.abc import Sequence

from autograder.config import Limits


def text(value: str, limit_chars: int) -> str:
    """`value`, or its beginning and end with how much was left out between them."""
    if len(value) <= limit_chars:
        return value
    half = max(limit_chars // 2, 1)
    return f"{value[:half]}\n[... {len(value) - 2 * half} characters omitted ...]\n{value[-half:]}"


def notes(values: Sequence[str], limits: Limits, total: int = 0) -> list[str]:
    """At most `limits.notes` notes of at most `limits.feedback_kb` each, then how many of `total`
    (at least `len(values)`) were left out."""
    kept = [text(v, limits.feedback_kb * 1024) for v in values[:limits.notes]]
    left_out = max(total, len(values)) - len(kept)
    if left_out > 0:
        kept.append(f"... {left_out} more notes omitted")
    return kept
