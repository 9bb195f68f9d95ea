"""The `course` command: self-check, grading, building and packaging the course."""
from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import signal
import sys
import time
from pathlib import Path
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Optional

from autograder import config as config_mod
from autograder.grading.errors import GradingFailed, GradingRefused
from autograder.printable import printable, printable_text
from autograder.selfcheck import i18n
from autograder.selfcheck.i18n import _

if TYPE_CHECKING:
    from autograder.grading.late import SubmissionTime


def _course(ns: argparse.Namespace) -> config_mod.Course:
    course = config_mod.load(ns.config) if ns.config else config_mod.default()
    return course


def cmd_check(ns: argparse.Namespace) -> int:
    course = _course(ns)
    course.assignment(ns.assignment)
    path = Path(ns.submission) if ns.submission else _default_submission(ns.assignment)
    path = _one_file(path, ns.assignment, course)
    _refuse_wrong_notebook(course, ns.assignment, path)
    from autograder.grading.one_file import check_isolation, early_zygote
    from autograder.sandbox import affinity
    zygote = early_zygote(ns.sandbox)
    try:
        from autograder.grading.results import LOADING_HEADING, format_result
        from autograder.grading.session import grade_file  # imports torch while the sandbox warms up
        check_isolation(zygote, refuse=False)  # a self-check runs the student's code for the student
        with affinity.on_one_cpu():  # the grader and its children on one CPU
            result = grade_file(zygote, ns.assignment, path, public_only=True, course=course)
    finally:
        zygote.stop()
    print(printable_text(format_result(result, verbose=True, counts_only=True)))
    notes = [f"{c.name}: {n}" for c in result.components for n in c.notes]
    all_passed = all(t.passed for c in result.components for t in c.tests)
    with i18n.using(result.language):  # a self-check: the student reads it
        if notes:
            print(printable_text("\n" + _(LOADING_HEADING) + "\n  " + "\n  ".join(n.splitlines()[-1] for n in notes)))
        print("\n" + (_("All public tests passed.") if all_passed else
                      _("Some public tests failed; the hidden tests check more than these.")))
    return 0 if all_passed else 1


class Refused(Exception):
    """The command will not run as asked; the message says why and what to do."""


def _require_submission_file(path: Path) -> None:
    from autograder.grading.submission import SUFFIXES
    if not path.exists():
        raise Refused(f"{path}: no such file")
    if path.is_file() and path.suffix not in SUFFIXES:
        raise Refused(f"{path}: not a notebook (.ipynb) or Python file (.py)")


def _one_file(path: Path, assignment_id: str, course: config_mod.Course) -> Path:
    """The submission file named, or the one in a folder named (as Gradescope picks it)."""
    from autograder.grading.submission import pick_file
    _require_submission_file(path)
    if path.is_dir():
        found, problem = pick_file(path, assignment_id, course.support_module)
        if found is None:
            raise Refused(f"{path}: {problem}")
        return found
    return path


def _require_gradable(folder: Path, assignment_id: str, course: config_mod.Course) -> None:
    from autograder.grading.submission import find_submissions
    if not any(f.path for f in find_submissions(folder, assignment_id, course.support_module)):
        raise Refused(f"{folder}: nothing to grade (no .ipynb or .py file in it or in its sub-folders)")


def _refuse_wrong_notebook(course: config_mod.Course, assignment_id: str, path: Path) -> None:
    from autograder.grading.identify import wrong_assignment
    problem = wrong_assignment(course, assignment_id, path)
    if problem:
        raise Refused(problem)


def _default_submission(assignment_id: str) -> Path:
    for candidate in (Path(f"{assignment_id}.ipynb"), Path(f"{assignment_id}.py")):
        if candidate.exists():
            return candidate
    raise SystemExit(f"course check: no {assignment_id}.ipynb or {assignment_id}.py here; name the file")


def cmd_grade(ns: argparse.Namespace) -> int:
    course = _course(ns)
    course.assignment(ns.assignment)
    target = Path(ns.submission)
    _require_submission_file(target)
    if target.is_dir():
        _require_gradable(target, ns.assignment, course)
    if (ns.cluster or ns.cluster_file) and not target.is_dir():
        raise SystemExit("course grade: --cluster grades a directory of submissions (with --out DIR)")
    if ns.times and not target.is_dir():
        raise Refused("--times gives a class's times: grade a directory (one file: --submitted-at)")
    times = _times(ns, course)
    if target.is_dir():
        if not ns.out:
            raise SystemExit("course grade: grading a directory needs --out DIR")
        from autograder.grading.pool import grade_directory
        start = time.monotonic()
        with _terminate_interrupts() as signum:
            try:
                if ns.cluster or ns.cluster_file:
                    rows = _grade_on_cluster(ns, target)
                    if isinstance(rows, int):
                        return rows
                else:
                    rows = grade_directory(ns.assignment, target, Path(ns.out), jobs=ns.jobs,
                                           mode=ns.sandbox, progress=not ns.quiet, config_path=ns.config,
                                           allow_unisolated=ns.allow_unisolated)
            except KeyboardInterrupt:
                print(f"course: interrupted ({signal.Signals(signum[0]).name}); the submissions not yet graded "
                      f"were cancelled ({ns.out}/ has the others' results; no grades.csv)", file=sys.stderr)
                return 128 + signum[0]
        from autograder.grading.export import finalize_folder  # student ids, late penalties, overrides
        rows = finalize_folder(Path(ns.out), course, course.assignment(ns.assignment), submissions=target,
                               times=times)
        _unused_times(times, rows, ns.times)
        took = time.monotonic() - start
        print(f"graded {len(rows)} submissions in {took:.1f} s; results in {ns.out}/ (grades.csv)")
        from autograder.report.summary import class_summary
        print("\n".join(printable(line) for line in class_summary(rows, course.assignment(ns.assignment), Path(ns.out), target,
                                                                      course.scoring.degenerate_share)))
        return 0
    from autograder.grading.one_file import grade_one
    out = Path(ns.out) if ns.out else None
    graded = grade_one(course, ns.assignment, target, mode=ns.sandbox, student=ns.student or "",
                       submitted_at=_submitted_at(ns, course), out=out, allow_unisolated=ns.allow_unisolated)
    res = graded.results
    if ns.results:
        Path(ns.results).write_text(json.dumps(res, indent=2) + "\n")
    print(printable_text(graded.printed(verbose=not ns.quiet)))
    if ns.out:
        print("\n" + printable(f"{res['extra_data']['student']}: {ns.out}/{graded.name}.json; {ns.out}/grades.csv updated"))
    return 0


def _submitted_at(ns: argparse.Namespace, course: config_mod.Course) -> Optional[SubmissionTime]:
    """--submitted-at TIME (without a zone: in course.yml's deadlines.timezone)."""
    if not ns.submitted_at:
        return None
    from autograder.grading.late import written_time
    try:
        return written_time(ns.submitted_at, course.deadlines, "--submitted-at")
    except ValueError as exc:
        raise Refused(f"--submitted-at: {exc}") from None


def _times(ns: argparse.Namespace, course: config_mod.Course) -> Optional[dict[str, SubmissionTime]]:
    """--times CSV (student,submitted_at; without a zone: in course.yml's deadlines.timezone)."""
    if not getattr(ns, "times", None):
        return None
    from autograder.grading.late import DeadlineError, read_times_csv
    path = Path(ns.times)
    if not path.is_file():
        raise Refused(f"{path}: no such file")
    try:
        return read_times_csv(path, course.deadlines)
    except DeadlineError as exc:
        raise Refused(str(exc)) from None


def _unused_times(times: Optional[dict[str, SubmissionTime]], rows: list[dict[str, Any]], source: str) -> None:
    """Name the students of a --times file that no graded submission is (a typo would go unnoticed)."""
    students = {str(r.get("extra_data", {}).get("student", r["name"])) for r in rows}
    for student in sorted(set(times or {}) - students):
        print(printable(f"course: {source}: {student!r} has no graded submission: their time is unused"),
              file=sys.stderr)


@contextlib.contextmanager
def _terminate_interrupts() -> Iterator[list[int]]:
    """While a class is graded, SIGTERM (a batch scheduler, `kill`) stops it as Ctrl-C does: what was
    not graded is cancelled and no worker is left behind. Yields [the number of the signal that
    interrupted] (SIGINT unless SIGTERM came)."""
    got = [int(signal.SIGINT)]

    def on_terminate(signum: int, frame: Any) -> None:
        got[0] = signum
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_terminate)
    try:
        yield got
    finally:
        signal.signal(signal.SIGTERM, previous)


def _grade_on_cluster(ns: argparse.Namespace, target: Path) -> list[dict] | int:
    """`course grade A DIR --cluster ADDRESS`: the class on a Dask cluster; an exit code if it stopped."""
    from autograder.integrations import dask_cluster
    try:
        return dask_cluster.grade_on_cluster(ns.assignment, target, Path(ns.out), address=ns.cluster,
                                             scheduler_file=ns.cluster_file, mode=ns.sandbox,
                                             progress=not ns.quiet, config_path=ns.config,
                                             allow_unisolated=ns.allow_unisolated)
    except dask_cluster.ClusterError as exc:
        print(f"course: {exc}", file=sys.stderr)
        return 2


def cmd_build(ns: argparse.Namespace) -> int:
    from autograder.authoring.support_module import write_support
    course = _course(ns)
    root = config_mod.REPO_ROOT / "assignments"
    for a in course.assignments:
        if ns.assignment and a.id != ns.assignment:
            continue
        folder = root / a.id
        folder.mkdir(parents=True, exist_ok=True)
        print(write_support(course, a, folder))
    return 0


def cmd_validate(ns: argparse.Namespace) -> int:
    course = _course(ns)
    for a in course.assignments:
        for c in a.components:
            course.reference_object(c.name)
    from autograder.grading import overrides
    extensions = course.deadlines.all_extensions({a.id for a in course.assignments})  # and the extensions file
    changed = overrides.load(course)  # the overrides file, row by row
    print(f"{ns.config or config_mod.DEFAULT_CONFIG}: {len(course.assignments)} assignments, "
          f"{sum(len(a.components) for a in course.assignments)} components, late policy: "
          f"{course.deadlines.late.describe()}, {len(extensions)} extensions, {len(changed)} overrides, OK")
    return 0


def cmd_demo(ns: argparse.Namespace) -> int:
    """Grade built-in sample submissions of each assignment as a class and print the table."""
    import tempfile

    from autograder.authoring import samples
    from autograder.grading.pool import grade_directory
    course = _course(ns)
    root = Path(ns.out or tempfile.mkdtemp(prefix="course-demo-"))
    ids = [ns.assignment] if ns.assignment else [a.id for a in course.assignments]
    for assignment_id in ids:
        subs = root / assignment_id / "submissions"
        samples.write_samples(assignment_id, subs)
        start = time.monotonic()
        rows = grade_directory(assignment_id, subs, root / assignment_id / "results",
                               jobs=ns.jobs, mode=ns.sandbox, progress=False, allow_unisolated=ns.allow_unisolated)
        took = time.monotonic() - start
        print(f"\n{assignment_id}: {len(rows)} sample submissions graded in {took:.1f} s")
        for r in rows:
            print(printable(f"  {r['name']:55} {r['score']:6.2f} / {r['max_score']:g}"))
    print(f"\nresults (Gradescope JSON per submission, grades.csv): {root}")
    from autograder.report import build  # the class report of the samples, as `course report` writes it
    sources = [build.Source(a, root / a / "results", root / a / "submissions") for a in ids]
    command = (f"course report {ids[0]} {root / ids[0] / 'results'} --submissions {root / ids[0] / 'submissions'}"
               if ns.assignment else f"course report --all {root}") + f" --out {root / 'report'}"
    report = build.write_report(sources, root / "report", course=course, jobs=ns.jobs, command=command)
    print(f"class report ({command}): {report.page}")
    return 0


def cmd_release(ns: argparse.Namespace) -> int:
    """Stage nbgrader's source folder and generate the student release (release/<id>/)."""
    from autograder.authoring import release
    course = _course(ns)
    if ns.course_dir and not Path(ns.course_dir).is_dir():
        raise Refused(f"{ns.course_dir}: no such folder (--course-dir is an nbgrader course root)")
    try:
        release.release(course, [ns.assignment] if ns.assignment else [], force=ns.force,
                        course_dir=Path(ns.course_dir) if ns.course_dir else None, lang=ns.lang)
    except release.ReleaseError as exc:
        print(f"course release: {exc}", file=sys.stderr)
        return 1
    return 0


def cmd_gradescope(ns: argparse.Namespace) -> int:
    """Build the Gradescope autograder zip of one assignment."""
    from autograder.integrations import gradescope
    course = _course(ns)
    out = gradescope.build(ns.assignment, Path(ns.out or f"{ns.assignment}-gradescope.zip"), course)
    print(f"{out}: upload it as the assignment's autograder on Gradescope (Ubuntu 22.04 base image)")
    return 0


def cmd_export(ns: argparse.Namespace) -> int:
    """grades.csv again from a results folder (overrides and late policy as they are now), a
    Canvas import file, and the differences with an nbgrader gradebook."""
    from autograder.grading.export import disagreements, finalize_folder, grade_rows
    from autograder.grading.final import load_results
    course = _course(ns)
    assignment = course.assignment(ns.assignment)
    folder = Path(ns.results)
    if not folder.is_dir():
        raise Refused(f"{folder}: no such folder (the --out folder of `course grade`)")
    if not load_results(folder):
        raise Refused(f"{folder}: no results files in it (run `course grade {assignment.id} DIR --out {folder}`)")
    times = _times(ns, course)
    rows = finalize_folder(folder, course, assignment, times=times)
    _unused_times(times, rows, ns.times)
    print(f"{folder / 'grades.csv'}: {len(rows)} submissions of {assignment.id}")
    status = 0
    if ns.canvas:
        from autograder.integrations import lms
        if not ns.roster:
            raise Refused("--canvas needs --roster: the gradebook Canvas exports (Grades > Export), whose rows "
                          "give each student's Canvas ID and whose header names the assignment's column")
        roster = Path(ns.roster)
        if not roster.is_file():
            raise Refused(f"{roster}: no such file")
        try:
            _, header = lms.read_canvas_roster(roster)
            if ns.canvas_column and ns.canvas_column not in header:
                raise lms.LmsError(f"--canvas-column {ns.canvas_column!r} is not a column of {roster}")
            column, how = ((ns.canvas_column, "as given by --canvas-column") if ns.canvas_column else
                           lms.canvas_column(header, assignment.title, assignment.id, assignment.canvas_id))
        except lms.LmsError as exc:
            raise Refused(f"{roster}: {exc}") from None
        written = lms.canvas_csv(Path(ns.canvas), grade_rows(rows), roster, column, course.canvas.missing)
        print(f"{ns.canvas}: the roster's column {column!r}, found {how}; "
              f"{len(rows) - len(written.unmatched)} graded students")
        if written.absent:
            what = "0" if course.canvas.missing == "zero" else "an empty cell (Canvas keeps what it has)"
            print(f"{len(written.absent)} roster student(s) with no graded submission, written as {what} "
                  f"(course.yml canvas.missing): {', '.join(written.absent)}")
        from autograder.grading.final import row_status
        from autograder.grading.results import UNREADABLE
        unreadable = sorted(str(r.get("extra_data", {}).get("student", r["name"])) for r in rows
                            if row_status(r) == UNREADABLE)
        if unreadable:
            print(printable(f"{len(unreadable)} unreadable submission(s), written as 0: ask for a re-upload "
                            f"({', '.join(unreadable)})"))
        for student in written.unmatched:
            print(f"course export: {student} is not in the Canvas roster {roster}: not in {ns.canvas}", file=sys.stderr)
        status = 1 if written.unmatched else status
    if ns.gradebook:
        from autograder.integrations.nbgrader_bridge import gradebook_rows
        db = ns.gradebook if "://" in ns.gradebook else f"sqlite:///{Path(ns.gradebook).resolve()}"
        if "://" not in ns.gradebook and not Path(ns.gradebook).is_file():
            raise Refused(f"{ns.gradebook}: no such gradebook")
        problems = disagreements(rows, gradebook_rows(db, course, assignment))
        for problem in problems:
            print(f"DISAGREE {problem}", file=sys.stderr)
        print(f"{len(problems)} disagreement(s) between {folder} and the gradebook" if problems else
              f"the gradebook agrees with {folder}: every student, component, penalty and final score")
        status = 1 if problems else status
    return status


def cmd_collect(ns: argparse.Namespace) -> int:
    """File an LMS download as one folder per student, for `course grade`."""
    from autograder.integrations import lms
    course = _course(ns)
    course.assignment(ns.assignment)
    source = Path(ns.download)
    if not source.exists():
        raise Refused(f"{source}: no such file or folder")
    filed, skipped = lms.collect(source, ns.assignment, Path(ns.to), student_id=ns.canvas_student_id,
                                 limits=lms.CollectLimits.of(course.limits.collect))
    # every name below came from a student: printed one line each (printable)
    for f in sorted(filed, key=lambda f: f.student):
        when = f" submitted {f.lms.submitted_at.isoformat(timespec='seconds')}" if f.lms.submitted_at else ""
        print(printable(f"{f.student:24} <- {f.source} ({f.lms.lms}{', LATE mark' if f.lms.late else ''}{when})"))
    if not filed:
        raise Refused(printable(f"{source}: no submission of a known form (Canvas, Moodle, Gradescope export, "
                                f"<student>_{ns.assignment}.ipynb)" +
                                (f"; skipped {'; '.join(skipped[:5])}" if skipped else "")))
    for line in skipped:
        print(printable(f"course collect: skipped {line}"), file=sys.stderr)
    print(f"{len(filed)} submissions in {ns.to}/; next: course grade {ns.assignment} {ns.to} --out RESULTS")
    return 0


def cmd_report(ns: argparse.Namespace) -> int:
    """The class report: score distributions, tests, misconceptions, problems, similarity (HTML + CSV)."""
    from autograder.report import build
    course = _course(ns)
    if ns.all_root:
        if ns.assignment or ns.results:
            raise Refused("course report: give either --all ROOT or ASSIGNMENT RESULTS_DIR, not both")
        root = Path(ns.all_root)
        if not root.is_dir():
            raise Refused(f"{root}: no such folder (one results folder per assignment id)")
        sources = build.discover(root, course, Path(ns.submissions) if ns.submissions else None)
        if not sources:
            raise Refused(f"{root}: no folder of results files in it (ROOT/<assignment id>/*.json)")
    else:
        if not (ns.assignment and ns.results):
            raise Refused("course report: give ASSIGNMENT RESULTS_DIR (or --all ROOT)")
        course.assignment(ns.assignment)
        if not Path(ns.results).is_dir():
            raise Refused(f"{ns.results}: no such folder (the --out folder of `course grade`)")
        sources = [build.Source(ns.assignment, Path(ns.results), Path(ns.submissions) if ns.submissions else None)]
    boilerplate = [Path(p) for p in ns.boilerplate]
    missing = [str(p) for p in boilerplate if not p.is_file()]
    if missing:
        raise Refused(f"course report: no such boilerplate file: {', '.join(missing)}")
    start = time.monotonic()
    report = build.write_report(sources, Path(ns.out), course=course, risk_below=ns.risk_below,
                                similarity=not ns.no_similarity, jobs=ns.jobs, max_pairs=ns.pairs, top=ns.top,
                                extra_boilerplate=boilerplate, command=_report_command(ns))
    for line in report.summary():
        print(line)
    print(f"report: {report.page} (open it in a browser; print it from there); tables: "
          f"{', '.join(p.name for p in report.files if p.suffix == '.csv')}; in {time.monotonic() - start:.1f} s")
    return 0


def _report_command(ns: argparse.Namespace) -> str:
    """The command line of a report, for its page (from the parsed arguments: main(argv) has no sys.argv)."""
    words = ["course", "report"] + (["--all", ns.all_root] if ns.all_root else [ns.assignment, ns.results])
    words += ["--out", ns.out] + (["--submissions", ns.submissions] if ns.submissions else [])
    words += ["--no-similarity"] if ns.no_similarity else []
    words += ["--boilerplate", *ns.boilerplate] if ns.boilerplate else []
    return " ".join(words)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="course", description=__doc__)
    p.add_argument("--config", help="course file (default: the repository's course.yml)")
    sub = p.add_subparsers(dest="command", required=True)

    c = sub.add_parser("check", help="self-check a notebook or .py file with the public tests")
    c.add_argument("assignment")
    c.add_argument("submission", nargs="?")
    c.add_argument("--sandbox", default="auto", choices=["auto", "bwrap", "process"])
    c.set_defaults(func=cmd_check)

    g = sub.add_parser("grade", help="grade a submission (or a directory of them) with all tests")
    g.add_argument("assignment")
    g.add_argument("submission", help="a .ipynb/.py file, or a directory of submissions")
    g.add_argument("--results", help="write Gradescope-format results JSON here (one submission)")
    g.add_argument("--out", help="results folder: <name>.json per submission and grades.csv (a directory of "
                   "submissions; or one file, regraded into an existing class's folder)")
    g.add_argument("--student", help="one file: the student id in grades.csv (default: from its folder or name)")
    g.add_argument("--submitted-at", metavar="TIME",
                   help="one file: when it was submitted (default: course collect's record or nbgrader's timestamp.txt)")
    g.add_argument("--times", metavar="CSV", help="a directory: the students' submission times, a CSV with "
                   "the columns student,submitted_at (without a zone: course.yml's time zone); wins over the others")
    g.add_argument("--jobs", type=int, default=None, help="parallel workers (default: CPU count)")
    g.add_argument("--sandbox", default="auto", choices=["auto", "bwrap", "process"])
    g.add_argument("--allow-unisolated", action="store_true",
                   help="grade even where student code cannot be isolated (results files say so)")
    where = g.add_mutually_exclusive_group()
    where.add_argument("--cluster", metavar="tcp://HOST:PORT",
                       help="grade a directory on this running Dask scheduler (docs/scale.md)")
    where.add_argument("--cluster-file", metavar="SCHEDULER_FILE", help="as --cluster, from a Dask scheduler file")
    g.add_argument("-q", "--quiet", action="store_true",
                   help="only the scores (per component; a directory: no progress bar)")
    g.set_defaults(func=cmd_grade)

    b = sub.add_parser("build", help="generate each assignment's attention_support.py from solutions/")
    b.add_argument("assignment", nargs="?")
    b.set_defaults(func=cmd_build)

    d = sub.add_parser("demo", help="grade built-in sample submissions (reference, stubs, mutants, broken)")
    d.add_argument("assignment", nargs="?")
    d.add_argument("--out", help="where to write samples and results (default: a temporary folder)")
    d.add_argument("--jobs", type=int, default=None)
    d.add_argument("--sandbox", default="auto", choices=["auto", "bwrap", "process"])
    d.add_argument("--allow-unisolated", action="store_true", help="as for course grade")
    d.set_defaults(func=cmd_demo)

    v = sub.add_parser("validate", help="validate course.yml against solutions/")
    v.set_defaults(func=cmd_validate)

    r = sub.add_parser("release", help="generate the student release (release/<id>/) with nbgrader")
    r.add_argument("assignment", nargs="?")
    r.add_argument("--force", action="store_true",
                   help="release even before the due dates of the assignments whose solutions it contains")
    r.add_argument("--course-dir", help="nbgrader course root (default: the repository)")
    r.add_argument("--lang", choices=("en", "zh"),
                   help="the students' language (default: course.yml's); another than course.yml's is "
                        "released into release-<lang>/")
    r.set_defaults(func=cmd_release)

    gs = sub.add_parser("gradescope", help="build an assignment's Gradescope autograder zip")
    gs.add_argument("assignment")
    gs.add_argument("--out", help="zip to write (default: <assignment>-gradescope.zip)")
    gs.set_defaults(func=cmd_gradescope)
    ex = sub.add_parser("export", help="grades.csv from a results folder (overrides, late penalties), a Canvas "
                        "import file, differences with an nbgrader gradebook")
    ex.add_argument("assignment")
    ex.add_argument("results", help="the --out folder of `course grade`")
    ex.add_argument("--canvas", metavar="CSV", help="also write the final scores in Canvas's gradebook import layout")
    ex.add_argument("--roster", metavar="CSV", help="Canvas's own gradebook export (students' Canvas ids)")
    ex.add_argument("--canvas-column", help="the assignment's column in Canvas (default: from the roster's header)")
    ex.add_argument("--times", metavar="CSV", help="submission times to apply (student,submitted_at; without a "
                    "zone: course.yml's time zone): they win over the recorded ones")
    ex.add_argument("--gradebook", metavar="DB", help="nbgrader's gradebook.db: list every disagreement, exit 1 if any")
    ex.set_defaults(func=cmd_export)

    co = sub.add_parser("collect", help="file an LMS download (Canvas, Moodle, Gradescope export; zip or "
                        "folder) as one folder per student, for `course grade`")
    co.add_argument("assignment")
    co.add_argument("download", help="the zip or folder the LMS gave")
    co.add_argument("--to", required=True, help="class folder to write (<student>/<assignment>.ipynb)")
    co.add_argument("--canvas-student-id", choices=["name", "user_id"], default="name",
                    help="Canvas: the student id is the name in the file name (default) or the Canvas user id")
    co.set_defaults(func=cmd_collect)

    rp = sub.add_parser("report", help="class report: score distributions, costliest tests, misconceptions, "
                        "crashes, students at risk, code similarity (an HTML page, PNG figures, CSV tables)")
    rp.add_argument("assignment", nargs="?", help="the assignment (with RESULTS_DIR)")
    rp.add_argument("results", nargs="?", help="the --out folder of `course grade`")
    rp.add_argument("--all", dest="all_root", metavar="ROOT",
                    help="every assignment: ROOT holds one results folder per assignment id (ROOT/<id>/ or "
                    "ROOT/<id>/results/, as `course demo` writes them)")
    rp.add_argument("--out", required=True, help="folder to write index.html, the figures and the CSV files into")
    rp.add_argument("--submissions", help="the folder `course grade` graded (with --all: one folder per assignment "
                    "id; default ROOT/<id>/submissions/ when it exists; else the folder beside the results that "
                    "holds the files they name): needed for code similarity")
    rp.add_argument("--boilerplate", nargs="+", default=[], metavar="FILE",
                    help="code every student may copy, left out of similarity besides the released code: the "
                    "course text's code (the d2l book: .py, .ipynb, or text/Markdown whose code is found)")
    rp.add_argument("--risk-below", type=float, default=0.5,
                    help="students at risk: mean share of the points below this (default 0.5)")
    rp.add_argument("--no-similarity", action="store_true", help="skip code similarity")
    from autograder.report.similarity import MAX_PAIRS, TOP_PAIRS
    rp.add_argument("--pairs", type=int, default=MAX_PAIRS,
                    help="pairs copydetect scores exactly; with more pairs, those a screen on shared fingerprints "
                    f"ranks highest (default {MAX_PAIRS}: every pair of up to 64 submissions)")
    rp.add_argument("--top", type=int, default=TOP_PAIRS, help=f"pairs shown side by side (default {TOP_PAIRS})")
    rp.add_argument("--jobs", type=int, default=None, help="processes fingerprinting code (default: CPU count)")
    rp.set_defaults(func=cmd_report)
    return p


def main(argv: Optional[list[str]] = None) -> int:
    ns = build_parser().parse_args(argv)
    try:
        return int(ns.func(ns) or 0)
    except KeyboardInterrupt:  # Ctrl-C: one line; a grading stopped midway writes no grade (a class: cmd_grade)
        print(f"course {ns.command}: interrupted", file=sys.stderr)
        return 130
    except (config_mod.ConfigError, Refused, GradingRefused, GradingFailed) as exc:
        print(f"course: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a course file, an LMS download or a path the command cannot use: one line
        from autograder.grading.late import DeadlineError
        from autograder.grading.overrides import OverrideError
        from autograder.integrations.lms import LmsError
        if isinstance(exc, (DeadlineError, OverrideError, LmsError, FileNotFoundError, PermissionError,
                            NotADirectoryError, IsADirectoryError, FileExistsError)):
            print(f"course: {exc}", file=sys.stderr)
            return 2
        raise


def run() -> None:
    """The `course` command: main(), then exit without the interpreter's final garbage collection
    walking every object torch created at import (~0.4 s of a 2-3 s command): gc.freeze() moves
    them out of its reach; atexit handlers and flushing still run. Where the reader of its output leaves first
    (`course grade ... | head`), it ends quietly as a pipe's writer does (status 141): what it wrote to files stands."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the interpreter's last flush fails no more
        code = 141
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    run()
