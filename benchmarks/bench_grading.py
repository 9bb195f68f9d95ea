"""Grading speed: the kit's sandboxed grader against nbgrader's in-kernel autograde, side by side.

    python benchmarks/bench_grading.py 02_attention_scoring -n 20
    python benchmarks/bench_grading.py --all -n 12 --class-size 100   # every assignment, and a class of 100 each

For an assignment it builds the release into a temporary folder (`course release --force`: release/
is generated, not committed), generates N synthetic submissions from its student notebook (a mix
of correct, buggy (zoo mutants), all-stub and broken notebooks), then measures, in one run:

* the torch-import floor: `python -c "import torch"`;
* `course grade A FILE` on one submission, cold (a new process: imports, sandbox start-up);
* `course grade A DIR --jobs 1`: per-submission seconds from each results file (median and mean:
  the marginal cost with a warm worker), and `--jobs <cores>`: wall time for the N;
* with `--class-size K`: the wall time of `course grade A DIR --jobs <cores>` on K generated
  submissions (the class-of-100 figure is measured, not extrapolated);
* `nbgrader autograde A` on the same notebooks with nbgrader's own pipeline (a fresh kernel per
  notebook executing it top to bottom, including the public test cells), per submission;
* peak memory (resident set of each command's whole process tree).

It prints figures only; nothing is asserted (speed targets are not tests).
"""
from __future__ import annotations

import argparse
import copy
import functools
import inspect
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parent.parent
WARM_UP = "_warm_up"
sys.path.insert(0, str(REPO))

from autograder import config as config_mod  # noqa: E402
from autograder.authoring import release  # noqa: E402
from autograder.catalogue import zoo  # noqa: E402


def tree_rss(pid: int) -> int:
    """Resident memory (bytes) of a process and all its descendants."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        total += rss.get(p, 0)
        stack += children.get(p, [])
    return total


def run(cmd: list[str], cwd: Path | None = None, env: dict | None = None) -> tuple[float, int, str]:
    """Run a command; (wall seconds, peak tree RSS bytes, output tail)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss(proc.pid))
        time.sleep(0.1)
    out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
    wall = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{out[-3000:]}")
    return wall, peak, out[-2000:]


def component_code(course: config_mod.Course, name: str) -> str:
    return inspect.getsource(course.reference_object(name))


@functools.cache
def released_notebook(assignment_id: str) -> nbformat.NotebookNode:
    """The student notebook of a fresh release build, made in a temporary nbgrader course (forced:
    the benchmark does not care about due dates); built once per assignment and run."""
    with tempfile.TemporaryDirectory(prefix="bench-release-") as tmp:
        release.release(config_mod.default(), [assignment_id], force=True, course_dir=Path(tmp), echo=lambda s: None)
        return nbformat.read(str(Path(tmp) / "release" / assignment_id / f"{assignment_id}.ipynb"), as_version=4)


def submissions(assignment_id: str, n: int, folder: Path) -> list[Path]:
    """N student notebooks: the release notebook with solution cells filled in four ways."""
    course = config_mod.default()
    a = course.assignment(assignment_id)
    template = released_notebook(assignment_id)
    mutants = [e for e in zoo.entries(assignment_id) if e.kind == "mutant"]
    kinds = ["correct", "buggy", "stub", "broken"]
    out = []
    for i in range(n):
        kind = kinds[i % len(kinds)] if i else "correct"
        nb = copy.deepcopy(template)
        mutant = mutants[i % len(mutants)] if mutants else None
        for cell in nb.cells:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            name = meta.get("grade_id")
            if not (meta.get("solution") and name in {c.name for c in a.components}):
                continue
            if kind == "stub":
                continue  # the release's own stub
            code = component_code(course, name)
            if kind == "buggy" and mutant is not None and mutant.component == name:
                code = mutant.path.read_text()
            if kind == "broken":
                code = code.replace("def ", "def (", 1)
            cell.source = code
        path = folder / f"student{i:03d}_{kind}" / assignment_id / f"{assignment_id}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(nb, str(path))
        out.append(path)
    return out


def bench_ours(assignment_id: str, subs: list[Path], work: Path, jobs: int) -> dict:
    course_cmd = [sys.executable, "-m", "autograder.cli"]
    flat = work / "ours_in"
    flat.mkdir()
    for p in subs:
        shutil.copy(p, flat / f"{p.parent.parent.name}.ipynb")
    first = flat / f"{subs[0].parent.parent.name}.ipynb"
    cold = []
    for i in range(3):
        wall, peak_cold, _ = run(course_cmd + ["grade", assignment_id, str(first), "--results",
                                               str(work / f"cold{i}.json"), "-q"], cwd=REPO)
        cold.append(wall)
    # The worker's first submission pays its one-time costs (suite import, first fork): a warm-up
    # copy, graded first (names sort), is left out of the per-submission figures.
    shutil.copy(first, flat / f"{WARM_UP}.ipynb")
    wall1, peak1, _ = run(course_cmd + ["grade", assignment_id, str(flat), "--out", str(work / "ours1"),
                                        "--jobs", "1", "-q"], cwd=REPO)
    per = {p.stem: json.loads(p.read_text())["execution_time"] for p in (work / "ours1").glob("*.json")
           if p.stem != WARM_UP}
    by_kind: dict[str, list[float]] = {}
    for stem, seconds in per.items():
        by_kind.setdefault(stem.split("_", 1)[1], []).append(seconds)
    (flat / f"{WARM_UP}.ipynb").unlink()
    wallj, peakj, _ = run(course_cmd + ["grade", assignment_id, str(flat), "--out", str(work / "oursj"),
                                        "--jobs", str(jobs), "-q"], cwd=REPO)
    scores = [json.loads(p.read_text())["score"] for p in sorted((work / "oursj").glob("*.json"))]
    return {"cold": statistics.median(cold), "own": statistics.median(by_kind["correct"]),
            "median": statistics.median(per.values()), "mean": statistics.mean(per.values()),
            "kinds": {k: statistics.median(v) for k, v in sorted(by_kind.items())},
            "wall_jobs1": wall1, "wall_jobs": wallj, "peak_jobs1": peak1, "peak_jobs": max(peakj, peak_cold),
            "scores": scores}


def bench_class(assignment_id: str, size: int, jobs: int) -> float:
    """Wall seconds of `course grade A DIR --jobs J` on a class of `size` generated submissions."""
    with tempfile.TemporaryDirectory(prefix="bench-class-") as tmp:
        work = Path(tmp)
        flat = work / "in"
        flat.mkdir()
        for p in submissions(assignment_id, size, work / "subs"):
            shutil.copy(p, flat / f"{p.parent.parent.name}.ipynb")
        wall, _, _ = run([sys.executable, "-m", "autograder.cli", "grade", assignment_id, str(flat), "--out",
                          str(work / "out"), "--jobs", str(jobs), "-q"], cwd=REPO)
    return wall


def bench_nbgrader(assignment_id: str, subs: list[Path], work: Path) -> dict:
    """A temporary nbgrader course with nbgrader's default autograde pipeline."""
    course = config_mod.default()
    root = work / "nbgrader_course"
    source = root / "source" / assignment_id
    release.stage(course, course.assignment(assignment_id), source)
    (root / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.root = {str(root)!r}\nc.CourseDirectory.course_id = 'bench'\n"
        "c.ExecutePreprocessor.timeout = 600\n")
    env = dict(os.environ, MPLBACKEND="Agg", COURSE_EPOCHS="1")
    nbgrader = [sys.executable, "-m", "nbgrader"]
    run(nbgrader + ["generate_assignment", assignment_id, "--force", "--create"], cwd=root, env=env)
    for p in subs:
        dest = root / "submitted" / p.parent.parent.name / assignment_id
        dest.mkdir(parents=True)
        shutil.copy(p, dest / p.name)
    wall, peak, _ = run(nbgrader + ["autograde", assignment_id, "--force", "--create"], cwd=root, env=env)
    return {"per_submission": wall / len(subs), "wall": wall, "peak": peak}


def torch_floor() -> float:
    return statistics.median(run([sys.executable, "-c", "import torch"])[0] for _ in range(3))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("assignment", nargs="?", default="02_attention_scoring")
    parser.add_argument("-n", type=int, default=20, help="synthetic submissions per assignment")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--all", action="store_true", help="every assignment")
    parser.add_argument("--class-size", type=int, default=0,
                        help="also grade a generated class of this size per assignment with --jobs (wall time)")
    parser.add_argument("--no-nbgrader", action="store_true", help="skip the nbgrader side")
    ns = parser.parse_args()
    ids = [a.id for a in config_mod.default().assignments] if ns.all else [ns.assignment]
    floor = torch_floor()
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}, torch {_torch_version()}; "
          f"date {time.strftime('%Y-%m-%d %H:%M')}")
    print(f"torch-import floor (python -c 'import torch'), median of 3: {floor:.2f} s\n")
    print(f"{'assignment':24} {'N':>3} {'ours median':>11} {'ours mean':>9} {'nbgrader':>8} {'ratio':>6} "
          f"{'class wall':>10} {'cold':>6} {'cold/(floor+own)':>16} {'peak MB ours/nbg':>17}")
    kinds: list[str] = []
    classes: list[str] = []
    class_total = 0.0
    for assignment_id in ids:
        with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
            work = Path(tmp)
            subs = submissions(assignment_id, ns.n, work / "subs")
            ours = bench_ours(assignment_id, subs, work, ns.jobs)
            nbg = None if ns.no_nbgrader else bench_nbgrader(assignment_id, subs, work)
        ratio = f"{nbg['per_submission'] / ours['mean']:.1f}x" if nbg else "-"
        nbg_s = f"{nbg['per_submission']:.2f}" if nbg else "-"
        nbg_mb = f"{nbg['peak'] / 2**20:.0f}" if nbg else "-"
        cold_ratio = ours["cold"] / (floor + ours["own"])
        print(f"{assignment_id:24} {ns.n:>3} {ours['median']:>11.2f} {ours['mean']:>9.2f} {nbg_s:>8} {ratio:>6} "
              f"{ours['wall_jobs']:>9.1f}s {ours['cold']:>5.1f}s {cold_ratio:>16.2f} "
              f"{ours['peak_jobs'] / 2**20:>8.0f}/{nbg_mb}", flush=True)
        kinds.append(f"{assignment_id:24} " + "  ".join(f"{k} {v:.2f}" for k, v in ours["kinds"].items()))
        if ns.class_size:
            wall = bench_class(assignment_id, ns.class_size, ns.jobs)
            class_total += wall
            classes.append(f"{assignment_id:24} {wall:7.1f} s")
    print("\nours, seconds per submission by kind (median, warm worker, --jobs 1):")
    print("\n".join(kinds))
    if ns.class_size:
        print(f"\na class of {ns.class_size} submissions per assignment, `course grade A DIR --jobs {ns.jobs}`:")
        print("\n".join(classes))
        print(f"{'total':24} {class_total:7.1f} s = {class_total / 60:.1f} min")
    print("\nours median/mean: per-submission seconds in a warm worker (--jobs 1, warm-up submission left out),"
          "\n  full public + hidden suite, over the mix of correct, buggy (zoo mutant), all-stub and broken notebooks;"
          "\nnbgrader: `nbgrader autograde` wall / N on the same notebooks (a fresh kernel per notebook running it"
          "\n  top to bottom with the public test cells); ratio = nbgrader / ours mean;"
          "\ncold: `course grade A FILE` on a correct submission in a new process; own = the warm time of a correct"
          "\n  submission (the tests' own compute); the target is cold <= 2 x (floor + own).")


def _torch_version() -> str:
    out = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
    return out.stdout.strip()


if __name__ == "__main__":
    main()
