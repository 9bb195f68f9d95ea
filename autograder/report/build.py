"""Assemble the class report of one assignment or of a folder of them: load, compute, draw, write.

    out/index.html                     the page (self-contained: figures embedded)
    out/<assignment>-scores.png, -components.png, -tests.png, -similarity.png, overview.png, students.png
    out/tests.csv, misconceptions.csv, similarity.csv, problems.csv, students.csv
"""
from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from autograder import config as config_mod
from autograder.report import figures, loading, page, stats, tables
from autograder.report.similarity import MAX_PAIRS, TOP_PAIRS, Pending, Similarity, start_similarity

#: Rows of the page's long tables (the CSV files have all of them).
TESTS_SHOWN = 25
#: Rows of each list of "What to act on" (misconceptions, students, pairs).
ACT_SHOWN = 6
PAIRS_LISTED = 25
STUDENTS_LISTED = 60


@dataclass
class Source:
    """Where one assignment's results (and, for similarity, its submitted files) are."""

    assignment: str
    results: Path
    submissions: Optional[Path] = None


@dataclass
class Figure:
    file: str
    png: bytes = field(repr=False)
    width: int = int(figures.WIDTH * figures.DPI)


@dataclass
class AssignmentView:
    """Everything the page shows of one assignment."""

    id: str
    title: str
    max_score: float
    distribution: stats.Distribution
    components: list[stats.Distribution]
    tests: list[stats.TestStat]
    graded: int
    misconceptions_recorded: bool
    misconceptions: list[stats.MisconceptionStat]
    problems: list[stats.Issue]
    load_notes: list[stats.Issue]
    similarity: Similarity
    figures: dict[str, Figure] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    help: list[stats.NeedsHelp] = field(default_factory=list)  # below the threshold or not graded, and why

    @property
    def problem_students(self) -> int:
        return len({s for i in self.problems for s in i.students})


@dataclass
class Report:
    """What write_report wrote."""

    page: Path
    files: list[Path]  # the CSV and PNG files next to it
    assignments: list[AssignmentView]
    students: list[stats.StudentRow]

    def summary(self) -> list[str]:
        """A few lines for the console."""
        lines = []
        for a in self.assignments:
            d = a.distribution
            line = (f"{a.id}: {d.n} submissions, mean {d.mean:.2f} / {a.max_score:g}, median {d.median:.2f}, "
                    f"{d.full} full marks, {d.zeros} zeros")
            if a.problem_students:
                line += f", {a.problem_students} crashed or hit limits"
            if a.similarity.pairs:
                top = a.similarity.pairs[0]
                line += f"; most similar: {top.a} and {top.b} ({100 * top.score:.0f}%)"
            lines.append(line)
            if not a.similarity.computed:
                lines.append(f"  similarity skipped: {a.similarity.reason}")
        at_risk = [r.name for r in self.students if r.at_risk]
        lines.append(f"students at risk: {len(at_risk)} of {len(self.students)}")
        return lines


def _has_results(folder: Path) -> bool:
    return folder.is_dir() and any(folder.glob("*.json"))


def discover(root: Path, course: config_mod.Course, submissions_root: Optional[Path] = None) -> list[Source]:
    """The assignments of a folder holding one folder per assignment id, in course order.

    An assignment's results are `ROOT/<id>/` or, as `course demo` writes them, `ROOT/<id>/results/`;
    its submitted files `SUBMISSIONS_ROOT/<id>/` when given, else `ROOT/<id>/submissions/` when it exists.
    """
    known = [a.id for a in course.assignments]
    folders = sorted((p for p in root.iterdir() if p.is_dir()),
                     key=lambda p: (known.index(p.name) if p.name in known else len(known), p.name))
    out = []
    for folder in folders:
        results = folder / "results" if _has_results(folder / "results") else folder
        if not _has_results(results):
            continue
        if submissions_root is not None:
            subs: Optional[Path] = submissions_root / folder.name
        else:
            subs = folder / "submissions" if (folder / "submissions").is_dir() else None
        out.append(Source(folder.name, results, subs))
    return out


def assignment_view(cls: loading.ClassResults, sim: Similarity, risk_below: float = stats.RISK_BELOW) -> AssignmentView:
    recorded, found = stats.misconceptions(cls)
    view = AssignmentView(cls.assignment, cls.title, cls.max_score, stats.score_distribution(cls),
                          stats.component_distributions(cls), stats.test_stats(cls),
                          sum(1 for s in cls.submissions if s.graded), recorded, found, stats.problems(cls),
                          stats.load_notes(cls), sim, warnings=list(cls.warnings),
                          help=stats.needs_help(cls, risk_below))
    unisolated = [s.name for s in cls.submissions if s.isolation.startswith("NOT ISOLATED")]
    if unisolated:
        view.warnings.append(f"{len(unisolated)} submission(s) were graded without isolation (--allow-unisolated).")
    if not cls.submissions:
        view.warnings.append(f"No results files in {cls.results_dir}.")
    if cls.found_submissions:
        view.warnings.append(f"Similarity: the submitted files were found in {cls.submissions_dir} (named in the "
                             "results; give --submissions DIR to choose another folder).")
    return view


def _figure(view: AssignmentView, key: str, file: str, drawing: Callable[[], bytes]) -> None:
    """One figure of the page; a figure that cannot be drawn is a warning of its section, not a failed page."""
    try:
        view.figures[key] = Figure(file, drawing())
    except Exception as exc:  # the numbers come from files students' code influenced
        view.warnings.append(f"The figure {file} could not be drawn: {loading.failure_reason(exc)}.")


def draw(view: AssignmentView) -> None:
    a = view.id
    _figure(view, "scores", f"{a}-scores.png", lambda: figures.score_histogram(view.distribution))
    _figure(view, "components", f"{a}-components.png", lambda: figures.component_histograms(view.components))
    if view.tests:
        _figure(view, "tests", f"{a}-tests.png", lambda: figures.item_analysis(view.tests))
    draw_similarity(view)


def draw_similarity(view: AssignmentView) -> None:
    if view.similarity.pairs:
        _figure(view, "similarity", f"{view.id}-similarity.png",
                lambda: figures.similarity_histogram(view.similarity))


def finish_similarity(view: AssignmentView, cls: loading.ClassResults, started: Pending,
                      max_pairs: int, top: int) -> None:
    """The similarity section once its fingerprints are made; the problems again (fingerprinting may
    have failed on a submission). A failure of the whole comparison is the section's, not the page's."""
    try:
        view.similarity = started.finish(max_pairs, top)
    except Exception as exc:  # copydetect on the class's code
        view.similarity = Similarity(False, f"the comparison failed ({loading.failure_reason(exc)})")
    view.problems = stats.problems(cls)
    draw_similarity(view)


def _class_figure(file: str, drawing: Callable[[], bytes]) -> Optional[Figure]:
    try:
        return Figure(file, drawing())
    except Exception:  # a figure of the whole class: the page goes without it
        return None


def _start_similarity(cls: loading.ClassResults, course: config_mod.Course, boilerplate: Optional[str],
                      extra: Sequence[Path], jobs: int) -> Pending:
    try:
        return start_similarity(cls, course, boilerplate=boilerplate, extra=extra, jobs=jobs)
    except Exception as exc:  # e.g. the released notebook cannot be built: no similarity, still a page
        return Pending("", {}, [], "", None, f"it failed ({loading.failure_reason(exc)})")


def write_report(sources: Sequence[Source], out: Path, *, course: Optional[config_mod.Course] = None,
                 risk_below: float = stats.RISK_BELOW, similarity: bool = True, jobs: Optional[int] = None,
                 max_pairs: int = MAX_PAIRS, top: int = TOP_PAIRS, boilerplate: Optional[dict[str, str]] = None,
                 extra_boilerplate: Sequence[Path] = (), command: str = "course report") -> Report:
    """Write the report of `sources` into `out`. A source without a submissions folder has similarity
    when the folder is found from its results (loading.find_submissions_dir); `extra_boilerplate`
    files (the book's code) are left out of similarity besides the released code."""
    course = course or config_mod.default()
    jobs = jobs or os.cpu_count() or 1
    out.mkdir(parents=True, exist_ok=True)
    classes, views = [], []
    pending = []
    for source in sources:  # fingerprints are made in child processes while this one does the rest
        cls = loading.load_class(source.assignment, source.results, course=course,
                                 submissions_dir=source.submissions if similarity else None,
                                 find_submissions=similarity and source.submissions is None)
        classes.append(cls)
        pending.append(_start_similarity(cls, course, (boilerplate or {}).get(cls.assignment), extra_boilerplate,
                                         jobs) if similarity else None)
    for cls in classes:
        view = assignment_view(cls, Similarity(False, "switched off (--no-similarity)"), risk_below)
        draw(view)
        views.append(view)
    for view, cls, started in zip(views, classes, pending):
        if started is not None:
            finish_similarity(view, cls, started, max_pairs, top)
    students = stats.students(classes, risk_below)
    extra: dict[str, Optional[Figure]] = {"overview_figure": None, "risk_figure": None}
    if len(classes) > 1:
        extra["overview_figure"] = _class_figure("overview.png", lambda: figures.overview(
            [(c.assignment, [s.fraction for s in c.submissions]) for c in classes]))
    if students:
        extra["risk_figure"] = _class_figure("students.png", lambda: figures.risk_histogram(students, risk_below))
    written: list[Path] = []
    for fig in [f for v in views for f in v.figures.values()] + [f for f in extra.values() if f is not None]:
        (out / fig.file).write_bytes(fig.png)
        written.append(out / fig.file)
    csvs = tables.write_all(out, students, [tables.AssignmentTables(v.id, v.tests, v.misconceptions, v.problems,
                                                                     v.load_notes, v.similarity) for v in views])
    context: dict[str, Any] = dict(
        course_name=course.name, generated=dt.datetime.now().strftime("%Y-%m-%d %H:%M"), command=command,
        assignments=views, multi=len(views) > 1, students=students, at_risk=[r for r in students if r.at_risk],
        risk_below=risk_below, act_shown=ACT_SHOWN, tests_shown=TESTS_SHOWN, pairs_listed=PAIRS_LISTED, students_listed=STUDENTS_LISTED,
        max_pairs=max_pairs, files=[p.name for p in csvs + written], **extra)
    return Report(page.write(out / "index.html", context), csvs + written, views, students)
