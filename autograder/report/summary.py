"""What `course grade DIR` prints at its end: the class in a few lines (the distribution, full marks
and zeros), every submission that needs a human, by name and why, and where the grades are.

The problems are the class report's (report.stats.problems: unreadable, crashed, stopped, limits,
nothing to grade, the grader's failures), read from the finalized results; with them the submissions
graded without isolation, the late ones, those an LMS marked late without a time, and the overridden
ones. Nothing here imports torch.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from autograder.config import Assignment
from autograder.report import loading, stats

#: Score bins of the distribution line, as shares of the maximum (the last bin is full marks).
BINS = (0.2, 0.4, 0.6, 0.8, 1.0 - stats.FULL_TOLERANCE)


def _who(row: dict[str, Any]) -> str:
    return str(row.get("extra_data", {}).get("student") or row["name"])


def _overrides(done: list[dict[str, Any]]) -> str:
    return ", ".join(f"{o.get('component')} by {o.get('by')}" for o in done)


def needs_a_human(rows: list[dict[str, Any]], assignment: Assignment, share: float = 0.1) -> list[tuple[str, list[str]]]:
    """(why, [who, with its detail]) per reason: report.stats.problems' kinds, not isolated, late, overridden, and a
    component that may have met a mistake the catalogue does not know (`unknown_mistake_cliffs`, `share`: course.yml
    scoring.degenerate_share)."""
    subs = [loading.parse(r["name"], r, assignment.id) for r in rows]
    for sub, row in zip(subs, rows):
        sub.who = _who(row)
    cls = loading.ClassResults(assignment.id, assignment.title, [(c.name, c.points) for c in assignment.components],
                               subs, Path("."))
    found = [(f"{issue.kind} ({issue.message})", list(issue.students)) for issue in stats.problems(cls)]
    extras = [(r, r.get("extra_data", {})) for r in rows]
    found.append(("not isolated (graded without the sandbox's isolation)",
                  [_who(r) for r, e in extras if str(e.get("isolation", "")).startswith("NOT ISOLATED")]))
    found.append(("late", [f"{_who(r)} ({float(late['seconds_late']) / 3600:.1f} h, -{float(late.get('penalty') or 0):g})"
                           for r, e in extras if (late := e.get("late") or {}).get("seconds_late")]))
    found.append(("marked late by the LMS, no submission time (give it with --times)",
                  [_who(r) for r, e in extras if e.get("lms_note") and not (e.get("late") or {}).get("submitted_at")]))
    found.append(("overridden", [f"{_who(r)} ({_overrides(done)})" for r, e in extras if (done := e.get("overrides"))]))
    found.append(("a component kept at most the degenerate share though it passed many of its tests, and no degenerate "
                  "version explains it: a mistake the catalogue does not know may cost more than it should",
                  [f"{_who(r)} ({', '.join(cliff)})" for r in rows if (cliff := unknown_mistake_cliffs(r, share))]))
    return [(why, who) for why, who in found if who]


#: A component at or below the degenerate share that passed at least this share of its tests is flagged.
CLIFF_PASSED = 0.3


def unknown_mistake_cliffs(row: dict[str, Any], share: float = 0.1) -> list[str]:
    """The components of one results file that kept at most `share` of their points (course.yml
    scoring.degenerate_share) while passing at least CLIFF_PASSED of their tests, with no degenerate version
    named (`component passed/total`). Credit beyond the outputs is in proportion to the outputs' agreement
    with the course's, and only a catalogued mistake's floor opens it: code with a mistake nobody catalogued
    (relu for tanh, `P[:, T]` for `P[:, :T]`) keeps as little as degenerate code. Staff decide; the grade stays."""
    passed: dict[str, list[bool]] = {}
    for test in row.get("tests", []):
        component = (test.get("extra_data") or {}).get("component")
        if isinstance(component, str):
            passed.setdefault(component, []).append(test.get("status") == "passed")
    out = []
    for name, comp in (row.get("extra_data", {}).get("components") or {}).items():
        seen, top = passed.get(name, []), float(comp.get("max_score") or 0)
        degenerate = comp.get("degenerate") or any(str(m.get("id", "")).startswith("degenerate:")
                                                   for m in comp.get("misconceptions") or [])
        if top > 0 and float(comp.get("score") or 0) <= share * top + 1e-9 and seen and not degenerate \
                and sum(seen) >= CLIFF_PASSED * len(seen):
            out.append(f"{name} {sum(seen)}/{len(seen)}")
    return out


def class_summary(rows: list[dict[str, Any]], assignment: Assignment, out: Path, submissions: Path,
                  share: float = 0.1) -> list[str]:
    """The lines `course grade DIR --out OUT` ends with (rows: export.finalize_folder's; `share`: course.yml
    scoring.degenerate_share)."""
    top = assignment.max_score
    finals = [float(r.get("score", 0.0)) for r in rows]
    dist = stats.Distribution(assignment.id, top, finals)
    lines = [f"{assignment.id}: {dist.n} submissions, mean {dist.mean:.2f} / {top:g}, median {dist.median:.2f}, "
             f"{dist.full} full marks, {dist.zeros} zeros"]
    if top > 0 and finals:
        counts, low = [], 0.0
        shares = [round(v / top, 6) for v in finals]  # 11.2 of 14 is 80%, not 79.99...%
        for high, label in zip(BINS, ("0-20%", "20-40%", "40-60%", "60-80%", "80-<100%")):
            counts.append(f"{label}: {sum(1 for f in shares if low <= f < high)}")
            low = high
        counts.append(f"100%: {dist.full}")
        lines.append("  scores: " + " | ".join(counts))
    human = needs_a_human(rows, assignment, share)
    names = {who.split(" (")[0] for _, whos in human for who in whos}
    lines.append(f"needs a human: {len(names)} of {len(rows)} submissions" if human else "needs a human: none")
    lines += [f"  {why}: {', '.join(who)}" for why, who in human]
    lines.append(f"grades: {out}/grades.csv; results: {out}/<name>.json; class report: "
                 f"course report {assignment.id} {out} --submissions {submissions}")
    return lines
