"""Code similarity between the submissions of a class, with copydetect (winnowing fingerprints,
the MOSS method), once the released stub code is excluded.

What is compared: per submission, the code of the graded components as the grader uses it: the
last top-level definition of each component (a later cell's definition replaces an earlier one),
plus the submission's own top-level functions and classes those definitions use, directly or
not. Experiments, plots and prints are left out, as the grader leaves them out.

What is excluded: the code cells of the notebook students received (signatures, docstrings,
`raise NotImplementedError()`, the given experiments), and its stubs extracted as a submission's
code is, as copydetect boilerplate: any fingerprint found in it is dropped from every submission. That notebook is built as `course release` builds
it, without the gradebook: the instructor notebook (`release.student_notebook`) through nbgrader's
own ClearSolutions preprocessor, the one step of nbgrader's generate_assignment that changes code
cells (tests/test_report.py checks the code cells equal those of a real `release.release` build).
It is cached per notebook, nbgrader configuration and nbgrader version.

How pairs are scored. copydetect fingerprints each submission (tokens filtered: names become V,
strings S, so renaming variables changes nothing; comments and whitespace are ignored). Every pair
is screened by the share of fingerprints the two have in common (one matrix product over the
fingerprints); copydetect's own comparison (`compare_files`: the copied slices and the share of
each file's tokens they cover) then scores every pair when there are at most `max_pairs` of them,
else the `max_pairs` pairs the screen ranks highest. A pair's score is the mean of the two shares.
"""
from __future__ import annotations

import ast
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from autograder import config as config_mod
from autograder.report.fingerprint import HASH_SEED
from autograder.report.loading import ClassResults, Submission

#: Pairs copydetect scores exactly; beyond, the screen picks which (every pair of up to 64 submissions).
MAX_PAIRS = 2000
#: Pairs shown side by side on the page.
TOP_PAIRS = 10
CACHE_VERSION = "2"
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


# --- what is compared -----------------------------------------------------------------------------

def _definitions(cells: Sequence[tuple[str, str]]) -> dict[str, tuple[str, set[str]]]:
    """name -> (source, names it uses) of the last top-level function or class of that name (cells
    in order), decorators included."""
    from autograder.grading.submission import parse_student_code, python_source

    found: dict[str, tuple[str, set[str]]] = {}
    for _, source in cells:
        text = python_source(source)
        tree = parse_student_code(text)
        if tree is None:
            continue  # the grader skips such a cell too
        lines = text.splitlines()
        for node in tree.body:
            if isinstance(node, DEFINITIONS):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                docs = _docstring_lines(node, lines)
                code = "\n".join(line for i, line in enumerate(lines[first - 1:node.end_lineno], start=first)
                                 if i not in docs)  # top level: whole lines
                used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                found.pop(node.name, None)  # keep definition order: a redefinition moves to the end
                found[node.name] = (code, used)
    return found


def _docstring_lines(node: ast.AST, lines: list[str]) -> set[int]:
    """The line numbers (1-based) of the docstrings in `node` that fill their lines alone. A docstring
    is prose, most often the starter's: left out, it cannot join given and written code into
    fingerprints that neither the starter nor the book has."""
    out: set[int] = set()
    for inner in ast.walk(node):
        body = getattr(inner, "body", None)
        if not isinstance(inner, DEFINITIONS) or not body:
            continue
        doc = body[0]
        if not (isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str)
                and doc.end_lineno is not None and doc.end_col_offset is not None):
            continue
        alone = (not lines[doc.lineno - 1][:doc.col_offset].strip()
                 and not lines[doc.end_lineno - 1][doc.end_col_offset:].strip())
        if alone and len(body) > 1:  # a body that is its docstring alone keeps it: the code must parse
            out.update(range(doc.lineno, doc.end_lineno + 1))
    return out


def graded_code(cells: Sequence[tuple[str, str]], components: Sequence[str]) -> str:
    """The code of the graded components in a submission's cells: each component's last top-level
    definition, then the submission's own functions and classes they use (transitively)."""
    defs = _definitions(cells)
    chosen = [c for c in components if c in defs]
    todo = list(chosen)
    while todo:
        for name in sorted(defs[todo.pop()][1]):
            if name in defs and name not in chosen:
                chosen.append(name)
                todo.append(name)
    return "\n\n\n".join(defs[name][0] for name in chosen)


def _cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "attention-course-kit" / "released-code"


def _sources(assignment_id: str) -> tuple[Path, Path]:
    """(the instructor notebook, nbgrader_config.py): release.notebook_path and release.NBGRADER_CONFIG,
    without importing authoring.release (which imports torch) when the cache answers."""
    root = config_mod.REPO_ROOT
    return root / "assignments" / assignment_id / f"{assignment_id}.py", root / "nbgrader_config.py"


def released_cells(course: config_mod.Course, assignment_id: str, *,
                   use_cache: bool = True) -> tuple[list[str], str]:
    """(the code cells of the notebook students received, where they came from)."""
    import json

    assignment = course.assignment(assignment_id)
    notebook, nbgrader_config = _sources(assignment_id)
    if not notebook.exists():  # no instructor notebook: the reference module with every body stubbed
        import importlib
        import inspect

        from autograder.authoring.samples import stub_source
        module = importlib.import_module(assignment.solution)
        return [stub_source(inspect.getsource(module))], f"the stubbed reference module {assignment.solution}"
    from importlib.metadata import PackageNotFoundError, version
    try:
        nbgrader_version = version("nbgrader")
    except PackageNotFoundError:  # pragma: no cover - nbgrader is a dependency
        nbgrader_version = "?"
    key = hashlib.sha256()
    for part in (CACHE_VERSION, nbgrader_version, notebook.read_text(),
                 nbgrader_config.read_text() if nbgrader_config.exists() else ""):
        key.update(part.encode() + b"\0")
    cached = _cache_dir() / f"{assignment_id}-{key.hexdigest()[:20]}.json"
    how = f"the code cells of the released notebook of {assignment_id} (nbgrader ClearSolutions on {notebook.name})"
    if use_cache and cached.is_file():
        try:
            cells = json.loads(cached.read_text())
            if isinstance(cells, list) and all(isinstance(c, str) for c in cells):
                return cells, how
        except (OSError, ValueError):
            pass  # rebuilt below
    from nbgrader.preprocessors import ClearSolutions

    from autograder.authoring import release
    nb = release.student_notebook(course, assignment)
    nb, _ = ClearSolutions(config=release.nbgrader_config()).preprocess(nb, {})
    cells = [str(cell.source) for cell in nb.cells if cell.cell_type == "code"]
    if use_cache:
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            tmp = cached.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(cells))
            tmp.replace(cached)
        except OSError:
            pass  # an unwritable cache costs time, not results
    return cells, how


def _text_blocks(text: str) -> list[tuple[str, str]]:
    """A text file of prose and code (a chapter of the course text) as cells: runs of lines between
    blank lines, an indented run joined to the run before it (the rest of a definition)."""
    blocks: list[list[str]] = []
    run: list[str] = []
    for line in text.splitlines() + [""]:
        if line.strip():
            run.append(line)
            continue
        if run:
            if blocks and run[0][:1].isspace():
                blocks[-1] += [""] + run
            else:
                blocks.append(run)
        run = []
    return [(f"block {i}", "\n".join(b)) for i, b in enumerate(blocks, start=1)]


def boilerplate_file(path: Path, components: Sequence[str], limits: Optional[config_mod.Limits] = None) -> str:
    """The code of one extra boilerplate file (`course report --boilerplate FILE`, the book's code), as
    copydetect boilerplate: its text (a notebook: its code cells), then its definitions of the graded
    components and their helpers extracted as a submission's code is (graded_code), so that the
    places where two of them meet in a submission's extracted code are boilerplate too. A .py or
    .ipynb file is read as the grader reads a submission; any other file (text, Markdown) is prose and
    code: its runs of lines that parse as Python count."""
    from autograder.grading.submission import read_cells

    if path.suffix in (".py", ".ipynb"):
        cells = [(label, source) for label, source in read_cells(path, limits)]
        text = "\n\n".join(source for _, source in cells)
    else:
        text = path.read_text(encoding="utf-8", errors="replace")
        cells = _text_blocks(text)
    return text + "\n\n\n" + graded_code(cells, components)


# --- scoring ------------------------------------------------------------------------------------

@dataclass
class Pair:
    a: str
    b: str
    score: float  # mean of the two shares
    share_a: float  # share of a's (non-boilerplate) tokens found in b
    share_b: float
    overlap_tokens: int
    highlighted_a: str = ""  # a's compared code as HTML (escaped by copydetect), similar regions marked
    highlighted_b: str = ""


@dataclass
class Similarity:
    computed: bool
    reason: str = ""  # why not, when not computed
    boilerplate: str = ""  # where the excluded code came from
    compared: list[str] = field(default_factory=list)  # submissions with code of their own to compare
    no_code: list[str] = field(default_factory=list)  # submissions whose graded code is all boilerplate (or none)
    no_file: list[str] = field(default_factory=list)  # results without a submitted file to read
    pairs: list[Pair] = field(default_factory=list)  # the pairs copydetect scored, most similar first
    total_pairs: int = 0  # pairs among `compared`
    screened: bool = False  # whether the screen chose the pairs to score (more than max_pairs)
    median: float = 0.0  # median score of the scored pairs (those sharing nothing included)

    @property
    def top(self) -> list[Pair]:
        return [p for p in self.pairs if p.highlighted_a or p.highlighted_b]


#: Distinct codes per fingerprinting child at least: a child's start (an interpreter, numpy,
#: copydetect and the matplotlib it imports) costs as much as fingerprinting about 150 of them.
CODES_PER_CHILD = 150


class Fingerprinting:
    """copydetect's CodeFingerprint of each code, boilerplate excluded (identical codes once), being
    made with a fixed string-hash seed (fingerprint.py) in up to `jobs` child interpreters;
    `result()` waits for them."""

    def __init__(self, codes: dict[str, str], boilerplate: str, jobs: int = 1) -> None:
        import pickle
        import subprocess
        import sys
        import tempfile

        self.codes = codes
        self.failed: dict[str, str] = {}
        unique = list(dict.fromkeys(codes.values()))
        jobs = max(1, min(jobs, len(unique) // CODES_PER_CHILD))
        self.chunks = [unique[i::jobs] for i in range(jobs)]
        env = {**os.environ, "PYTHONHASHSEED": HASH_SEED, "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
        self.tmp = tempfile.TemporaryDirectory(prefix="course-report-")
        self.procs: list[tuple[Any, Path]] = []
        for i, chunk in enumerate(self.chunks):
            src, dst = Path(self.tmp.name) / f"in{i}.pickle", Path(self.tmp.name) / f"out{i}.pickle"
            src.write_bytes(pickle.dumps((boilerplate, chunk)))
            self.procs.append((subprocess.Popen([sys.executable, "-m", "autograder.report.fingerprint", str(src),
                                                 str(dst)], env=env, stderr=subprocess.PIPE), dst))

    def result(self) -> dict[str, Any]:
        """name -> its fingerprint, for every code fingerprinted; `failed` gets name -> why for the others
        (copydetect raised on that code, or the child that had it died)."""
        import pickle

        try:
            by_code: dict[str, Any] = {}
            for (proc, dst), chunk in zip(self.procs, self.chunks):
                _, err = proc.communicate()
                if proc.returncode != 0:
                    last = err.decode(errors="replace").strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
                    by_code.update((code, f"the fingerprinting child failed: {last[0][:200]}") for code in chunk)
                    continue
                with dst.open("rb") as f:  # written just now by our own child, from our own data
                    by_code.update(zip(chunk, pickle.load(f)))
        finally:
            for proc, _ in self.procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            self.tmp.cleanup()
        self.failed = {name: by_code[code] for name, code in self.codes.items() if isinstance(by_code[code], str)}
        return {name: by_code[code] for name, code in self.codes.items() if name not in self.failed}


def fingerprints(codes: dict[str, str], boilerplate: str, jobs: int = 1) -> dict[str, Any]:
    """copydetect's CodeFingerprint of each code (see Fingerprinting)."""
    return Fingerprinting(codes, boilerplate, jobs).result()


def _screen(names: list[str], fps: dict[str, Any]) -> Any:
    """Shares of fingerprints in common, every pair: shared / mean of the two counts (n x n)."""
    import numpy as np

    arrays = [np.fromiter(fps[n].hashes, dtype=np.int64, count=len(fps[n].hashes)) for n in names]
    vocabulary = np.unique(np.concatenate(arrays)) if arrays else np.zeros(0, dtype=np.int64)
    n = len(names)
    shared = np.zeros((n, n), dtype=np.float32)
    block = 4096
    columns = [np.searchsorted(vocabulary, a) for a in arrays]
    for start in range(0, len(vocabulary), block):
        stop = min(start + block, len(vocabulary))
        incidence = np.zeros((n, stop - start), dtype=np.float32)
        for i, cols in enumerate(columns):
            inside = cols[(cols >= start) & (cols < stop)]
            incidence[i, inside - start] = 1.0
        shared += incidence @ incidence.T
    sizes = np.array([len(a) for a in arrays], dtype=np.float32)
    return shared / np.maximum(1.0, (sizes[:, None] + sizes[None, :]) / 2)


def compare(codes: dict[str, str], boilerplate: str, *, max_pairs: int = MAX_PAIRS, top: int = TOP_PAIRS,
            jobs: int = 1, started: Optional[Fingerprinting] = None) -> tuple[list[Pair], list[str], int, bool, float]:
    """Score the pairs of `codes` (name -> code) with copydetect.

    Returns (the pairs scored that share code, most similar first, the `top` first with
    highlighted code; the names with code of their own to compare; the number of pairs among
    those; whether the screen chose the pairs; the median score of all pairs scored)."""
    import statistics

    import matplotlib
    import numpy as np
    matplotlib.use("Agg")  # copydetect imports pyplot: no backend to look for
    from copydetect import compare_files
    from copydetect.utils import highlight_overlap

    fps = (started or Fingerprinting(codes, boilerplate, jobs)).result()
    names = sorted(n for n in fps if len(fps[n].hashes) > 0)
    n = len(names)
    total = n * (n - 1) // 2
    screened = total > max_pairs
    if screened:  # the max_pairs pairs (i < j) the screen ranks highest, without listing every pair
        screen = _screen(names, fps)
        rows = np.arange(n)
        screen[rows[:, None] >= rows[None, :]] = -1.0
        best = np.argpartition(-screen.ravel(), max_pairs - 1)[:max_pairs]
        i_idx, j_idx = np.divmod(best, n)
    else:
        i_idx, j_idx = np.triu_indices(n, 1)
    pairs = []
    scores = []
    for i, j in zip(i_idx.tolist(), j_idx.tolist()):
        overlap, (s1, s2), _ = compare_files(fps[names[i]], fps[names[j]])
        scores.append((float(s1) + float(s2)) / 2)
        if overlap > 0:
            pairs.append(Pair(names[i], names[j], round((float(s1) + float(s2)) / 2, 4), round(float(s1), 4),
                              round(float(s2), 4), int(overlap)))
    pairs.sort(key=lambda p: (-p.score, -p.overlap_tokens, p.a, p.b))
    for p in pairs[:top]:
        _, _, (slices_a, slices_b) = compare_files(fps[p.a], fps[p.b])
        p.highlighted_a = highlight_overlap(fps[p.a].raw_code, slices_a, "<mark>", "</mark>", escape_html=True)[0]
        p.highlighted_b = highlight_overlap(fps[p.b].raw_code, slices_b, "<mark>", "</mark>", escape_html=True)[0]
    return pairs, names, total, screened, statistics.median(scores) if scores else 0.0


@dataclass
class Pending:
    """A class's similarity with its fingerprints being made (start_similarity); finish() scores."""

    how: str
    codes: dict[str, str]
    no_file: list[str]
    boilerplate: str
    fingerprinting: Optional[Fingerprinting] = None
    not_computed: str = ""
    submissions: dict[str, Submission] = field(default_factory=dict)  # by `who`: where a failure is told

    def finish(self, max_pairs: int = MAX_PAIRS, top: int = TOP_PAIRS) -> Similarity:
        if self.fingerprinting is None:
            return Similarity(False, self.not_computed, self.how, no_file=sorted(self.no_file))
        pairs, compared, total, screened, median = compare(self.codes, self.boilerplate, max_pairs=max_pairs,
                                                           top=top, started=self.fingerprinting)
        for who, why in self.fingerprinting.failed.items():
            self.submissions[who].unusable.append(f"similarity fingerprinting: {why}")
        no_code = sorted(set(self.codes) - set(compared) - set(self.fingerprinting.failed))
        return Similarity(True, "", self.how, compared, no_code, sorted(self.no_file), pairs, total, screened, median)


def start_similarity(cls: ClassResults, course: Optional[config_mod.Course] = None, *,
                     boilerplate: Optional[str] = None, extra: Sequence[Path] = (), jobs: int = 1) -> Pending:
    """Extract each submission's graded code and start fingerprinting it (child processes), so that
    the caller can do other work meanwhile; needs the submitted files (`cls.submissions_dir`).
    `boilerplate` replaces the released code; `extra` files (the book's code) are boilerplate too."""
    from autograder.grading.submission import read_cells

    if cls.submissions_dir is None:
        return Pending("", {}, [], "", None, "no submissions folder given, and none found next to the results "
                       f"({cls.results_dir}): course report ... --submissions DIR")
    course = course or config_mod.default()
    components = [name for name, _ in cls.components]
    # an unreadable file is among the problems (stats.problems), not a missing file nor the report's failure
    readable = [sub for sub in cls.submissions if sub.status != "unreadable"]
    no_file = [sub.who for sub in readable if sub.path is None]
    read = cls.each("reading its submitted file",
                    lambda sub: read_cells(sub.path, course.limits)
                    if sub.path is not None and sub.status != "unreadable" else None)
    extracted = cls.each("extracting its code for similarity",
                         lambda sub: graded_code(read[sub.name], components) if sub.name in read else None)
    codes = {sub.who: extracted[sub.name] for sub in cls.submissions if sub.name in extracted}
    if boilerplate is None:
        cells, how = released_cells(course, cls.assignment)
        # the cells as students got them, and their stubs extracted as a submission's code is (so that
        # where two stubs meet in extracted code is boilerplate too)
        boilerplate = "\n\n".join(cells) + "\n\n\n" + graded_code([("release", c) for c in cells], components)
    else:
        how = "the boilerplate given"
    if extra:
        boilerplate += "".join("\n\n\n" + boilerplate_file(p, components, course.limits) for p in extra)
        how += " and " + ", ".join(p.name for p in extra)
    if not codes:
        return Pending(how, {}, no_file, boilerplate, None, "none of the submitted files was found")
    return Pending(how, codes, no_file, boilerplate, Fingerprinting(codes, boilerplate, jobs),
                   submissions={sub.who: sub for sub in cls.submissions})


def class_similarity(cls: ClassResults, course: Optional[config_mod.Course] = None, *,
                     boilerplate: Optional[str] = None, extra: Sequence[Path] = (), max_pairs: int = MAX_PAIRS,
                     top: int = TOP_PAIRS, jobs: int = 1) -> Similarity:
    """The similarity section of one class: needs the submitted files (`cls.submissions_dir`)."""
    return start_similarity(cls, course, boilerplate=boilerplate, extra=extra, jobs=jobs).finish(max_pairs, top)
