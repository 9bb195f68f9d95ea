"""Speed of the class report: `course report A RESULTS --submissions SUBS` on a generated class.

    python benchmarks/bench_report.py                      # 300 submissions of 02, 3 runs
    python benchmarks/bench_report.py --sizes 100 300 1000 # how it grows with the class

For each size it writes N submissions and N results files without grading them (grading 300
takes minutes; the report only reads): each student's code takes, per component, the reference,
one of the catalogue's correct alternatives or one of its mutants, with local variables renamed
and sometimes reformatted, as a .py file or a notebook; a few students copy another one. Each
results file has the assignment's real tests (names, points, public/hidden, from grading the
reference in-process once), failed where the student's code is a mutant or a stub, with crashes,
missing names, ungraded submissions and misconception diagnoses sprinkled in.

It then times the `course report` command in a new process (imports included): once with an
empty cache (the released notebook's code is built, with nbgrader), then `--runs` times warm, and
once warm without similarity. It prints figures only; nothing is asserted.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder import config as config_mod  # noqa: E402
from autograder.authoring.samples import disguised_copy, stub_source  # noqa: E402
from autograder.catalogue import zoo  # noqa: E402
from autograder.grading.results import GRADER_FAILED, failed_results  # noqa: E402


def definitions(source: str) -> dict[str, str]:
    tree = ast.parse(source)
    return {n.name: ast.get_source_segment(source, n) or "" for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def template(assignment_id: str, workdir: Path) -> dict[str, Any]:
    """The results of the reference, graded in-process: the assignment's tests, all passed."""
    from autograder.grading.results import results_json
    from autograder.grading.session import run_in_process
    path = workdir / "reference.py"
    path.write_text(zoo.reference_source(assignment_id))
    return results_json(run_in_process(assignment_id, path))


def generate(assignment_id: str, n: int, folder: Path, seed: int = 0) -> tuple[Path, Path]:
    """N submissions and N results files of a synthetic class; returns (submissions, results)."""
    import nbformat

    course = config_mod.default()
    assignment = course.assignment(assignment_id)
    subs, results = folder / "submissions", folder / "results"
    subs.mkdir(parents=True)
    results.mkdir(parents=True)
    rng = random.Random(seed)
    reference = zoo.reference_source(assignment_id)
    ref_defs = definitions(reference)
    header = "\n".join(line for line in reference.splitlines() if line.startswith(("import ", "from ")))
    pools: dict[str, list[tuple[str, str, str]]] = {c.name: [("reference", "", ref_defs[c.name])]
                                                    for c in assignment.components}
    for e in zoo.entries(assignment_id):
        code = definitions(e.path.read_text()).get(e.component)
        if code:
            pools[e.component].append((e.kind, e.name, code))
    base = template(assignment_id, folder)
    bug = {e.name: e.bug for e in zoo.entries(assignment_id)}
    codes: list[tuple[str, dict[str, tuple[str, str, str]]]] = []
    for i in range(n):
        name = f"student{i:04d}"
        if codes and rng.random() < 0.02:  # a copy of an earlier student, variables renamed
            code, picks = rng.choice(codes)
            code = disguised_copy(code, f"c{i}_", reformat=False)
        else:
            picks = {c: rng.choice(pool) if rng.random() < 0.6 else pool[0] for c, pool in pools.items()}
            stubbed = rng.random() < 0.04
            parts = []
            for _, _, code in picks.values():
                if stubbed:
                    code = stub_source(code)
                parts.append(code)
            code = disguised_copy(header + "\n\n\n" + "\n\n\n".join(parts), f"v{i % 7}_", reformat=rng.random() < 0.3)
            if stubbed:
                picks = {c: ("stub", "", "") for c in picks}
        codes.append((code, picks))
        if rng.random() < 0.3:
            nb = nbformat.v4.new_notebook()
            nb.cells = [nbformat.v4.new_markdown_cell(f"# {assignment_id}")] + [
                nbformat.v4.new_code_cell(ast.unparse(stmt)) for stmt in ast.parse(code).body]
            nbformat.write(nb, str(subs / f"{name}.ipynb"))
            filename = f"{name}.ipynb"
        else:
            (subs / f"{name}.py").write_text(code)
            filename = f"{name}.py"
        roll = rng.random()
        if roll < 0.01:
            res = failed_results(assignment, GRADER_FAILED, grader_error="Traceback ...\nMemoryError")
        elif roll < 0.02:
            res = failed_results(assignment, "No notebook found in your submission: upload it.")
        else:
            res = json.loads(json.dumps(base))
            crash = roll > 0.98
            by_comp: dict[str, list[dict[str, Any]]] = {}
            for t in res["tests"]:
                by_comp.setdefault(t["extra_data"]["component"], []).append(t)
            for comp, tests in by_comp.items():
                kind, entry, _ = picks.get(comp, ("reference", "", ""))
                failing: list[dict[str, Any]] = []
                message = ""
                if kind == "stub":
                    failing, message = tests, "not implemented yet (your code raised NotImplementedError)"
                elif kind == "mutant":
                    failing = rng.sample(tests, k=min(len(tests), rng.randint(1, 4)))
                    message = f"expected ... got ...\n  hint: {bug.get(entry, '')}"
                elif crash and comp == assignment.components[-1].name:
                    failing, message = tests, "your code was stopped: it used more than 120 s of CPU time"
                for t in failing:
                    t.update(score=0.0, status="failed", output=message)
                comp_result = res["extra_data"]["components"][comp]
                comp_result["score"] = round(sum(t["score"] for t in tests), 4)
                comp_result["misconceptions"] = (
                    [{"id": entry, "summary": bug.get(entry, ""), "fix": f"see the course text on {comp}"}]
                    if kind == "mutant" and rng.random() < 0.7 else [])
            res["score"] = round(sum(c["score"] for c in res["extra_data"]["components"].values()), 4)
        res.setdefault("extra_data", {})["submission"] = filename
        (results / f"{name}.json").write_text(json.dumps(res))
    return subs, results


def run_report(assignment_id: str, results: Path, subs: Path, out: Path, env: dict[str, str],
               similarity: bool = True) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system of the command and the processes it waited for)."""
    import resource
    cmd = [sys.executable, "-m", "autograder.cli", "report", assignment_id, str(results), "--out", str(out),
           "--submissions", str(subs)] + ([] if similarity else ["--no-similarity"])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("assignment", nargs="?", default="02_attention_scoring")
    parser.add_argument("--sizes", type=int, nargs="+", default=[300])
    parser.add_argument("--runs", type=int, default=3, help="warm runs per size (the median is printed)")
    parser.add_argument("--keep", help="write the classes and reports here (default: a temporary folder)")
    ns = parser.parse_args()
    root = Path(ns.keep) if ns.keep else Path(tempfile.mkdtemp(prefix="bench-report-"))
    cache = root / "cache"
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "OMP_NUM_THREADS": "1"}
    print("wall seconds (CPU seconds: the command and its children, user + system); load: 1-minute load average")
    print(f"{'size':>6} {'pairs':>8} {'cold':>13} {'warm median':>13} {'warm runs':>26} {'no similarity':>14} "
          f"{'load':>5}")
    for n in ns.sizes:
        folder = root / f"class{n}"
        subs, results = generate(ns.assignment, n, folder)
        if cache.exists():
            import shutil
            shutil.rmtree(cache)
        cold = run_report(ns.assignment, results, subs, folder / "report", env)
        warm = [run_report(ns.assignment, results, subs, folder / "report", env) for _ in range(ns.runs)]
        bare = run_report(ns.assignment, results, subs, folder / "report-bare", env, similarity=False)
        median_wall = statistics.median(w for w, _ in warm)
        median_cpu = statistics.median(c for _, c in warm)
        runs = " ".join(f"{w:.1f}" for w, _ in warm)
        print(f"{n:>6} {n * (n - 1) // 2:>8} {cold[0]:>5.1f} ({cold[1]:>4.1f}) {median_wall:>5.1f} ({median_cpu:>4.1f}) "
              f"{runs:>26} {bare[0]:>5.1f} ({bare[1]:>4.1f}) {os.getloadavg()[0]:>5.1f}", flush=True)
    print(f"classes and reports: {root}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
