"""The `course` command: self-check, grading, building and packaging the course."""
from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from autograder import config as config_mod
from autograder.grading.errors import GradingRefused

if TYPE_CHECKING:
    from autograder.sandbox.forkserver import Zygote


def _course(ns: argparse.Namespace) -> config_mod.Course:
    course = config_mod.load(ns.config) if ns.config else config_mod.default()
    return course


def cmd_check(ns: argparse.Namespace) -> int:
    course = _course(ns)
    course.assignment(ns.assignment)
    path = Path(ns.submission) if ns.submission else _default_submission(ns.assignment)
    _require_submission_file(path)
    zygote = _early_zygote(ns.sandbox)
    try:
        from autograder.grading.results import format_result
        from autograder.grading.session import grade_file  # imports torch while the sandbox warms up
        _check_isolation(zygote, refuse=False)  # a self-check runs the student's code for the student
        result = grade_file(zygote, ns.assignment, path, public_only=True, course=course)
    finally:
        zygote.stop()
    print(format_result(result, verbose=True, counts_only=True))
    notes = [f"{c.name}: {n}" for c in result.components for n in c.notes]
    if notes:
        print("\nWhile loading your code:\n  " + "\n  ".join(n.splitlines()[-1] for n in notes))
    all_passed = all(t.passed for c in result.components for t in c.tests)
    print("\nAll public tests passed." if all_passed else
          "\nSome public tests failed; the hidden tests check more than these.")
    return 0 if all_passed else 1


class Refused(Exception):
    """The command will not run as asked; the message says why and what to do."""


def _require_submission_file(path: Path) -> None:
    from autograder.grading.submission import SUFFIXES
    if not path.exists():
        raise Refused(f"{path}: no such file")
    if path.is_file() and path.suffix not in SUFFIXES:
        raise Refused(f"{path}: not a notebook (.ipynb) or Python file (.py)")


def _check_isolation(zygote: Zygote, refuse: bool, allow: bool = False) -> None:
    """Start the sandbox and say how it confines student code; refuse to grade without isolation."""
    zygote.start()
    isolation = zygote.isolation
    if isolation is None or isolation.isolated:
        return
    print(f"course: WARNING: {isolation.describe()}", file=sys.stderr)
    if refuse and not allow:
        zygote.stop()
        raise Refused("refusing to grade untrusted code without isolation: install bubblewrap (see README, "
                      "Security), or pass --allow-unisolated to grade anyway; every results file will say so")


def _early_zygote(mode: str) -> Zygote:
    """The sandbox's fork server for one submission, launched before this process imports torch and
    the test stack so that both warm up at the same time, without the optimizers' warm-up (only a
    training test needs it, in its own child): a cold `course check` is about two seconds shorter."""
    from autograder.sandbox import bwrap
    launched = bwrap.launch(mode, warm_optimizers=False)
    try:
        from autograder.sandbox.forkserver import Zygote
    except BaseException:
        launched.proc.kill()
        raise
    return Zygote(mode, launched=launched)


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
    if (ns.cluster or ns.cluster_file) and not target.is_dir():
        raise SystemExit("course grade: --cluster grades a directory of submissions (with --out DIR)")
    if target.is_dir():
        if not ns.out:
            raise SystemExit("course grade: grading a directory needs --out DIR")
        from autograder.grading.pool import grade_directory
        start = time.monotonic()
        if ns.cluster or ns.cluster_file:
            rows = _grade_on_cluster(ns, target)
            if isinstance(rows, int):
                return rows
        else:
            rows = grade_directory(ns.assignment, target, Path(ns.out), jobs=ns.jobs,
                                   mode=ns.sandbox, progress=not ns.quiet, config_path=ns.config,
                                   allow_unisolated=ns.allow_unisolated)
        took = time.monotonic() - start
        print(f"graded {len(rows)} submissions in {took:.1f} s; results in {ns.out}/ (grades.csv)")
        return 0
    zygote = _early_zygote(ns.sandbox)
    try:
        from autograder.grading.results import format_result, write_results
        from autograder.grading.session import grade_file  # imports torch while the sandbox warms up
        _check_isolation(zygote, refuse=True, allow=ns.allow_unisolated)
        result = grade_file(zygote, ns.assignment, target, course=course)
    finally:
        zygote.stop()
    if ns.results:
        write_results(result, ns.results)
    print(format_result(result, verbose=not ns.quiet, tests=not ns.quiet))
    return 0


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
    except KeyboardInterrupt:
        print(f"course: interrupted; the submissions not yet graded were cancelled ({ns.out}/ has the others)",
              file=sys.stderr)
        return 130


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
    print(f"{ns.config or config_mod.DEFAULT_CONFIG}: {len(course.assignments)} assignments, "
          f"{sum(len(a.components) for a in course.assignments)} components, OK")
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
            print(f"  {r['name']:55} {r['score']:6.2f} / {r['max_score']:g}")
    print(f"\nresults (Gradescope JSON per submission, grades.csv): {root}")
    return 0


def cmd_release(ns: argparse.Namespace) -> int:
    """Stage nbgrader's source folder and generate the student release (release/<id>/)."""
    from autograder.authoring import release
    course = _course(ns)
    try:
        release.release(course, [ns.assignment] if ns.assignment else [], force=ns.force,
                        course_dir=Path(ns.course_dir) if ns.course_dir else None)
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
    g.add_argument("--out", help="output directory (a directory of submissions)")
    g.add_argument("--jobs", type=int, default=None, help="parallel workers (default: CPU count)")
    g.add_argument("--sandbox", default="auto", choices=["auto", "bwrap", "process"])
    g.add_argument("--allow-unisolated", action="store_true",
                   help="grade even where student code cannot be isolated (results files say so)")
    where = g.add_mutually_exclusive_group()
    where.add_argument("--cluster", metavar="tcp://HOST:PORT",
                       help="grade a directory on this running Dask scheduler (README, Grading at scale)")
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
    r.set_defaults(func=cmd_release)

    gs = sub.add_parser("gradescope", help="build an assignment's Gradescope autograder zip")
    gs.add_argument("assignment")
    gs.add_argument("--out", help="zip to write (default: <assignment>-gradescope.zip)")
    gs.set_defaults(func=cmd_gradescope)
    return p


def main(argv: Optional[list[str]] = None) -> int:
    ns = build_parser().parse_args(argv)
    try:
        return int(ns.func(ns) or 0)
    except (config_mod.ConfigError, Refused, GradingRefused) as exc:
        print(f"course: {exc}", file=sys.stderr)
        return 2


def run() -> None:
    """The `course` command: main(), then exit without the interpreter's final garbage collection
    walking every object torch created at import (~0.4 s of a 2-3 s command): gc.freeze() moves
    them out of its reach; atexit handlers and flushing still run."""
    code = main()
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    run()
