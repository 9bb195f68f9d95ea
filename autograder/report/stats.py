"""The numbers of the class report: score distributions, per-test pass rates and discrimination,
misconceptions, submissions that crashed or hit limits, load notes, students at risk.

Definitions (the page repeats them):

* full marks: a score within 0.001 of the maximum; zero: a score of 0 (a submission that was not
  graded, no file or a grader error, counts as 0 in the distribution and is counted apart);
* a test's pass rate: the share of the graded submissions that ran it and passed it;
* a test's discrimination: the point-biserial correlation, over those submissions, between
  passing it (1/0) and the rest-of-assignment score (the submission's score minus this test's
  points). Near 1: students who pass it do well elsewhere; near 0 or negative: passing it says
  little about the rest (a test that is unclear, too easy, or checks something the others do
  not); undefined when everyone passes or everyone fails;
* a test's cost: the points the class lost on it, summed over submissions.
"""
from __future__ import annotations

import functools
import math
import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Optional

from autograder.grading.results import LOADING_HEADING
from autograder.report.loading import ClassResults, Submission
from autograder.selfcheck import i18n
from autograder.selfcheck.i18n import N_

FULL_TOLERANCE = 1e-3
#: Default threshold of the students-at-risk list: mean share of the points below this.
RISK_BELOW = 0.5


@dataclass
class Distribution:
    """Scores of one assignment or one component over the class."""

    name: str
    max_score: float
    values: list[float]
    ungraded: int = 0  # submissions without tests (no file, grader error), counted in `values` as 0

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values) if self.values else 0.0

    @property
    def median(self) -> float:
        return statistics.median(self.values) if self.values else 0.0

    @property
    def full(self) -> int:
        return sum(1 for v in self.values if self.max_score > 0 and v >= self.max_score - FULL_TOLERANCE)

    @property
    def zeros(self) -> int:
        return sum(1 for v in self.values if v <= 0.0)


def score_distribution(cls: ClassResults) -> Distribution:
    return Distribution(cls.assignment, cls.max_score, [s.score for s in cls.submissions],
                        sum(1 for s in cls.submissions if not s.graded))


def component_distributions(cls: ClassResults) -> list[Distribution]:
    out = []
    for name, points in cls.components:
        values = [s.components[name].score if name in s.components else 0.0 for s in cls.submissions]
        out.append(Distribution(name, points, values, sum(1 for s in cls.submissions if not s.graded)))
    return out


@dataclass
class TestStat:
    """One test, or every case of a parametrised one (`test_x[a]`, `test_x[b]`: one row `test_x`)."""

    key: str  # "component: test", as in the results (a parametrised test's without its case)
    component: str
    title: str
    public: bool
    max_score: float  # the test's points (all its cases')
    n: int  # graded submissions that ran it
    passed: int  # ... and passed it (every case)
    points_lost: float
    discrimination: Optional[float]  # point-biserial, None when undefined
    cases: int = 1  # the cases of a parametrised test

    @property
    def pass_rate(self) -> float:
        return self.passed / self.n if self.n else 0.0

    @property
    def failed(self) -> int:
        return self.n - self.passed


def point_biserial(passed: list[bool], rest: list[float]) -> Optional[float]:
    """Pearson's correlation between 0/1 outcomes and a score (the point-biserial correlation);
    None when either side does not vary."""
    n = len(passed)
    if n < 2:
        return None
    x = [1.0 if p else 0.0 for p in passed]
    mx, my = sum(x) / n, sum(rest) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, rest))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in rest)
    if sxx <= 0 or syy <= 1e-18:
        return None
    return sxy / math.sqrt(sxx * syy)


_CASE = re.compile(r"\s*\[[^\[\]]*\]$")


def test_group(key: str) -> str:
    """A test's key without the case of a parametrised test: "c: test_x[3-dim]" -> "c: test_x"."""
    return _CASE.sub("", key)


def test_stats(cls: ClassResults) -> list[TestStat]:
    """Every test any graded submission ran, the cases of a parametrised test as one (passed: every
    case passed; its points: the cases' sum), the costliest first (points lost, then pass rate)."""
    # group -> submission name -> (submission, passed every case, points got, points possible)
    rows: dict[str, dict[str, tuple[Submission, bool, float, float]]] = {}
    meta: dict[str, tuple[str, bool, dict[str, float]]] = {}  # group -> component, public, case -> points
    for sub in cls.submissions:
        for t in sub.tests:
            group = test_group(t.key)
            mine = rows.setdefault(group, {})
            _, ok, got, possible = mine.get(sub.name, (sub, True, 0.0, 0.0))
            mine[sub.name] = (sub, ok and t.passed, got + t.score, possible + t.max_score)
            component, public, cases = meta.setdefault(group, (t.component, t.public, {}))
            cases[t.key] = max(cases.get(t.key, 0.0), t.max_score)
    order = {name: i for i, (name, _) in enumerate(cls.components)}
    out = []
    for group, by_sub in rows.items():
        component, public, cases = meta[group]
        outcomes = list(by_sub.values())
        passed = [ok for _, ok, _, _ in outcomes]
        rest = [sub.score - got for sub, _, got, _ in outcomes]
        lost = sum(max(0.0, possible - got) for _, _, got, possible in outcomes)
        prefix = f"{component}: "
        title = group[len(prefix):] if group.startswith(prefix) else group
        out.append(TestStat(group, component, title, public, sum(cases.values()), len(outcomes), sum(passed),
                            round(lost, 4), point_biserial(passed, rest), len(cases)))
    out.sort(key=lambda t: (-t.points_lost, t.pass_rate, order.get(t.component, len(order)), t.key))
    return out


@dataclass
class MisconceptionStat:
    component: str
    id: str
    summary: str
    fix: str
    students: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.students)


def misconceptions(cls: ClassResults) -> tuple[bool, list[MisconceptionStat]]:
    """(whether any results file carries a diagnosis, the misconceptions found, most frequent first)."""
    recorded = False
    found: dict[tuple[str, str], MisconceptionStat] = {}
    for sub in cls.submissions:
        for comp in sub.components.values():
            if comp.misconceptions is None:
                continue
            recorded = True
            for m in comp.misconceptions:
                stat = found.setdefault((comp.name, m.id), MisconceptionStat(comp.name, m.id, m.summary, m.fix))
                if sub.who not in stat.students:
                    stat.students.append(sub.who)
    fixes = _catalogue_fixes(cls.assignment) if any(not m.fix or not m.summary for m in found.values()) else {}
    for stat in found.values():  # results written at a hint level below the fix's carry no fix: the catalogue's
        summary, fix = fixes.get(stat.id, ("", ""))
        stat.summary, stat.fix = stat.summary or summary, stat.fix or fix
    order = {name: i for i, (name, _) in enumerate(cls.components)}
    return recorded, sorted(found.values(), key=lambda m: (-m.count, order.get(m.component, len(order)), m.id))


def _catalogue_fixes(assignment: str) -> dict[str, tuple[str, str]]:
    """misconception id (an entry's family) -> (the catalogue's bug, its fix), for the staff's page."""
    from autograder.catalogue.index import entries

    try:
        return {e.family: (e.bug, e.fix) for e in entries(assignment) if e.kind == "mutant"}
    except (OSError, ValueError, SyntaxError):  # the catalogue is the kit's; a broken entry costs only the fix text
        return {}


@dataclass
class Issue:
    """One kind of problem (a crash, a limit, a load note) and the submissions that had it."""

    kind: str
    message: str
    students: list[str] = field(default_factory=list)
    components: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.students)

    def add(self, student: str, component: str = "") -> None:
        if student not in self.students:
            self.students.append(student)
        if component and component not in self.components:
            self.components.append(component)


class Said:
    """A student-facing message of the kit found in results of any language (i18n.every_translation):
    `search` gives the first language's match, group 1 its `{group}` placeholder; the text from its first
    other placeholder on is matched by `rest`. The patterns are built on first use (the catalogues load then)."""

    def __init__(self, message: str, group: str = "", rest: str = r"[^\n]*") -> None:
        self.message, self.group, self.rest = message, group, rest

    @functools.cached_property
    def patterns(self) -> list[re.Pattern[str]]:
        out = []
        for text in sorted(i18n.every_translation(self.message)):
            pattern = ""
            for part in re.split(r"(\{\w+\})", text):
                if part == f"{{{self.group}}}":
                    pattern += r"([^\n`]+?)" if "`" in text else r"([^\n]+)"
                elif part.startswith("{") and part.endswith("}"):
                    pattern += self.rest
                    break
                else:
                    pattern += re.escape(part)
            out.append(re.compile(pattern))
        return out

    def search(self, text: str) -> Optional[re.Match[str]]:
        return next((m for p in self.patterns if (m := p.search(text)) is not None), None)


_STOPPED = Said(N_("your code was stopped: {reason}"), "reason")
_LOAD_FAILED = Said(N_("loading your code failed: {reason}"), "reason")
_MEMORY = Said(N_("your code ran out of memory (limit: {limit} MB above the interpreter): {message}"), rest=r"[^)）\n]*[)）]")
_SUBMISSION_TIME = Said(N_("the whole submission ran past its time limit ({seconds} s)"))
_SANDBOX = Said(N_("the grader's sandbox failed ({error}); ask your instructor to regrade"))
_MISSING = Said(N_("`{name}` is not defined in your submission"), "name")
_NOT_IMPLEMENTED = "not implemented yet"
_NUMBERS = re.compile(r"\b(line|cell) \d+")


def _normalize(message: str) -> str:
    """A message with its line and cell numbers out, so that the same mistake groups together."""
    return _NUMBERS.sub(lambda m: f"{m.group(1)} N", message).strip()


def _sorted(issues: Iterable[Issue]) -> list[Issue]:
    return sorted(issues, key=lambda i: (-i.count, i.kind, i.message))


#: The problems' kind of what the report itself could not read or analyse of a submission.
REPORT_FAILED = "the report could not use it"
#: The kind (and results' status) of a submission whose file the grader could not read.
UNREADABLE = "unreadable"


def problems(cls: ClassResults) -> list[Issue]:
    """Submissions that crashed, timed out or hit limits, the grader's own failures, submissions
    with nothing to grade or an unreadable file and those the report could not read or analyse (loading.guarded),
    grouped by message, most frequent first."""
    found: dict[tuple[str, str], Issue] = {}

    def add(kind: str, message: str, student: str, component: str = "") -> None:
        found.setdefault((kind, message), Issue(kind, message)).add(student, component)

    for sub in cls.submissions:
        for failure in sub.unusable:
            step, _, reason = failure.partition(": ")
            add(REPORT_FAILED, f"{step}: {_normalize(reason)}", sub.who)
        if sub.unusable and not sub.graded:
            continue  # its results could not be read: nothing else to say
        first_line = sub.output.strip().splitlines()[0] if sub.output.strip() else ""
        if sub.status == UNREADABLE:
            add(UNREADABLE, sub.problem or first_line, sub.who)
            continue
        if sub.grader_error:
            last = sub.grader_error.strip().splitlines()[-1] if sub.grader_error.strip() else ""
            add("grader error", f"{first_line} ({last[:200]})" if last else first_line, sub.who)
            continue
        if not sub.graded:
            add("not graded", first_line or "no tests ran", sub.who)
            continue
        for t in sub.tests:
            # One kind per failed test, the most specific that its message says: a call cut by the
            # submission's time limit is "your code was stopped: the whole submission ran past ...".
            for pattern, kind in _KINDS:
                if m := pattern.search(t.output):
                    add(kind, _normalize(m.group(0)), sub.who, t.component)
                    break
    return _sorted(found.values())


#: The problems a failed test's message can say, most specific first (`problems` takes the first).
_KINDS = ((_MEMORY, "out of memory"), (_SUBMISSION_TIME, "submission time limit"), (_SANDBOX, "sandbox failure"),
          (_LOAD_FAILED, "loading failed"), (_STOPPED, "stopped"))


def _load_note_blocks(output: str, components: list[str]) -> list[tuple[str, str]]:
    """(component, last line) of each note of the results' "While loading your code:" section."""
    marker = next((m + "\n" for m in sorted(i18n.every_translation(LOADING_HEADING)) if m + "\n" in output), "")
    if not marker:
        return []
    section = output.split(marker, 1)[1].split("\n\n", 1)[0]
    blocks: list[tuple[str, list[str]]] = []
    for line in section.splitlines():
        comp = next((c for c in components if line.startswith(f"{c}: ")), None)
        if comp is not None:
            blocks.append((comp, [line[len(comp) + 2:]]))
        elif blocks:
            blocks[-1][1].append(line)
    out = []
    for comp, lines in blocks:
        lines = [ln for ln in lines if ln.strip()]
        if len(lines) == 1:  # "where: error" on one line: drop the where
            where, sep, error = lines[0].partition(": ")
            out.append((comp, error if sep else where))
        elif lines:
            out.append((comp, lines[-1].strip()))
    return out


def load_notes(cls: ClassResults) -> list[Issue]:
    """What went wrong while loading the submissions' code, grouped by message: statements the
    loader skipped because they raised (or cells that do not parse), names the grader looked for
    and did not find, and components left unimplemented."""
    names = [name for name, _ in cls.components]
    found: dict[tuple[str, str], Issue] = {}

    def add(kind: str, message: str, student: str, component: str) -> None:
        found.setdefault((kind, message), Issue(kind, message)).add(student, component)

    for sub in cls.submissions:
        for comp, message in _load_note_blocks(sub.output, names):
            kind = "cell not parsed" if message.startswith("SyntaxError") else "statement skipped (it raised)"
            add(kind, _normalize(message), sub.who, comp)
        for t in sub.tests:
            m = _MISSING.search(t.output)
            if m:
                add("missing name", f"`{m.group(1)}` is not defined in your submission", sub.who, t.component)
            elif t.output.startswith(_NOT_IMPLEMENTED):
                add("not implemented", f"{t.component} raises NotImplementedError", sub.who, t.component)
    return _sorted(found.values())


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:160] if text.strip() else ""


def _lost(cls: ClassResults, sub: Submission) -> list[str]:
    """Why a graded submission lost points, per component that lost any: its misconceptions, else
    what stopped it (a stub, a missing name, a crash), else the points and the first failed test."""
    out = []
    for name, points in cls.components:
        comp = sub.components.get(name)
        score = comp.score if comp is not None else 0.0
        if points <= 0 or score >= points - FULL_TOLERANCE:
            continue
        failed = [t for t in sub.tests if t.component == name and not t.passed]
        if comp is not None and comp.misconceptions:
            what = "; ".join(m.summary or m.id for m in comp.misconceptions)
        elif failed and failed[0].output.startswith(_NOT_IMPLEMENTED):
            what = "not implemented"
        elif failed and (m := _MISSING.search(failed[0].output)):
            what = f"`{m.group(1)}` not defined"
        elif failed and (m := _STOPPED.search(failed[0].output) or _LOAD_FAILED.search(failed[0].output)):
            what = m.group(0)
        elif failed:
            what = f"fails {test_group(failed[0].title)}" + (f" and {len(failed) - 1} more" if len(failed) > 1 else "")
        else:
            what = "lost points"
        out.append(f"{name} {round(score, 2):g}/{points:g}: {what}")
    return out


@dataclass
class NeedsHelp:
    """A student of one assignment below the threshold, or not graded, and why."""

    name: str
    score: float
    max_score: float
    why: list[str]


def needs_help(cls: ClassResults, below: float = RISK_BELOW) -> list[NeedsHelp]:
    """The submissions graded below `below` of the points or not graded, lowest first, with why."""
    out = []
    for sub in cls.submissions:
        top = sub.max_score or cls.max_score
        if sub.graded and top > 0 and sub.grade / top >= below:
            continue
        why = _lost(cls, sub) if sub.graded else [f"not graded: {_first_line(sub.problem or sub.output) or 'no tests ran'}"]
        out.append(NeedsHelp(sub.who, sub.grade, top, why or ["lost points (no test failed: a late penalty?)"]))
    return sorted(out, key=lambda h: (h.score / h.max_score if h.max_score else 0.0, h.name))


@dataclass
class StudentRow:
    """One student across the assignments of the report (grades as recorded: final when finalized)."""

    name: str
    scores: dict[str, Optional[tuple[float, float]]]  # assignment -> (grade, max) or None: no results
    at_risk: bool = False
    reasons: list[str] = field(default_factory=list)  # the mean, then what went wrong: never only the mean

    @property
    def why(self) -> list[str]:
        """What went wrong (the reasons after the mean)."""
        return self.reasons[1:]

    @property
    def mean_fraction(self) -> float:
        """Mean share of the points over the assignments (no results counts as 0)."""
        shares = []
        for value in self.scores.values():
            score, max_score = value if value is not None else (0.0, 0.0)
            shares.append(score / max_score if max_score else 0.0)
        return statistics.fmean(shares) if shares else 0.0


def students(classes: list[ClassResults], risk_below: float = RISK_BELOW) -> list[StudentRow]:
    """Every student of any of the classes; at risk: a mean share of the points below `risk_below`
    over the report's assignments (an assignment without results counts as 0). Lowest mean first."""
    names = sorted({s.who for c in classes for s in c.submissions})
    by_class = [{s.who: s for s in c.submissions} for c in classes]
    rows = []
    for name in names:
        scores: dict[str, Optional[tuple[float, float]]] = {}
        reasons = []
        for cls, subs in zip(classes, by_class):
            sub = subs.get(name)
            scores[cls.assignment] = (sub.grade, sub.max_score or cls.max_score) if sub else None
            where = f"{cls.assignment}: " if len(classes) > 1 else ""
            if sub is None:
                reasons.append(f"no results for {cls.assignment}")
            elif not sub.graded:
                reasons.append(f"{where}not graded ({_first_line(sub.problem or sub.output) or 'no tests ran'})")
            else:
                reasons += [where + why for why in _lost(cls, sub)]
        row = StudentRow(name, scores)
        row.at_risk = row.mean_fraction < risk_below
        row.reasons = [f"mean {100 * row.mean_fraction:.0f}% over {len(classes)} assignment"
                       f"{'s' if len(classes) != 1 else ''}"] + reasons
        rows.append(row)
    rows.sort(key=lambda r: (r.mean_fraction, r.name))
    return rows
