"""Results files into plain records: one `Submission` per results file of a class, and where the
submitted file behind each one is.

The format is the one `course grade` writes (autograder/grading/results.py): Gradescope's
`score`, `max_score`, `output` and `tests[]` (each with `extra_data.component` and `.public`),
and `extra_data` with `assignment`, `submission` (the graded file's name), `isolation`,
`components[C]` (score, max_score, dependencies, withheld and, when the diagnosis recorded any,
`misconceptions`: [{id, summary, fix}]) and `grader_error` for a submission the grader failed on,
`status` "unreadable" and `problem` (why) for a file the grader could not read. A submission that
was not graded (no file to grade, an unreadable file, a grader error) has no tests. A finalized
results file (grading/final.py: overrides, late penalty) also records `student`, `raw_score` (what
the autograder gave; `score` is then the final grade) and `graded_output` (the grader's output).

Everything the report reads of a submission is the student's to shape (the results carry their
messages, the submitted file is theirs), so each analysis of one submission runs as a guarded
step (`guarded`, `ClassResults.each`): whatever it raises (RecursionError, MemoryError, a value of
the wrong type...) becomes a line of that submission's `unusable`, which the page lists among the
problems, and never stops the report of the class. A results file that cannot be read at all
becomes a submission of its own name with no tests (not graded, 0) and the reason.
"""
from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, TypeVar

from autograder import config as config_mod

T = TypeVar("T")
#: A results file larger than this is not read (course grade's are a few kB: feedback is bounded).
RESULTS_MAX_BYTES = 8 << 20


@dataclass(frozen=True)
class Misconception:
    id: str
    summary: str
    fix: str


@dataclass
class ComponentResult:
    name: str
    score: float
    max_score: float
    #: None when the results carry no diagnosis for this component; [] when it found nothing.
    misconceptions: Optional[list[Misconception]] = None
    withheld: bool = False


@dataclass
class TestResult:
    key: str  # the results' test name, "component: test"
    component: str
    public: bool
    score: float
    max_score: float
    passed: bool
    output: str

    @property
    def title(self) -> str:
        """The test's name without the component prefix."""
        prefix = f"{self.component}: "
        return self.key[len(prefix):] if self.key.startswith(prefix) else self.key


@dataclass
class Submission:
    """One results file: one student's grade for one assignment."""

    name: str  # the results file's stem: the student (or file) `course grade` named it after
    assignment: str
    score: float  # what the autograder gave (the raw score of a finalized file)
    max_score: float
    components: dict[str, ComponentResult]
    tests: list[TestResult]
    output: str
    submission_file: str = ""  # extra_data.submission: the graded file's name
    grader_error: str = ""
    isolation: str = ""
    status: str = ""  # extra_data.status when the results set one: "unreadable" (the file could not be read)
    problem: str = ""  # extra_data.problem: why it was not graded, for staff
    path: Optional[Path] = None  # the submitted file, when a submissions folder was given and holds it
    final_score: Optional[float] = None  # the grade after overrides and late penalty, when finalized
    student: str = ""  # the student id a finalized file records
    who: str = ""  # how the report names it: the student id when the class's ids are unique, else `name`
    unusable: list[str] = field(default_factory=list)  # "step: reason" of each analysis that failed on it

    @property
    def graded(self) -> bool:
        """Whether the grader ran tests (not: no file to grade, or the grader failed)."""
        return bool(self.tests)

    @property
    def fraction(self) -> float:
        return self.score / self.max_score if self.max_score else 0.0

    @property
    def grade(self) -> float:
        """The grade as recorded: the final score when finalized, else the autograder's."""
        return self.score if self.final_score is None else self.final_score


@dataclass
class ClassResults:
    """Every results file of one assignment."""

    assignment: str
    title: str
    components: list[tuple[str, float]]  # (name, points) in course order
    submissions: list[Submission]
    results_dir: Path
    submissions_dir: Optional[Path] = None
    warnings: list[str] = field(default_factory=list)  # files that could not be read, and why
    found_submissions: bool = False  # whether submissions_dir was found from the results, not given

    @property
    def max_score(self) -> float:
        return sum(points for _, points in self.components)

    def each(self, step: str, analyse: Callable[[Submission], Optional[T]]) -> dict[str, T]:
        """name -> `analyse(submission)` for every submission it did not fail on (see `guarded`) nor
        answered None for (nothing to analyse)."""
        out: dict[str, T] = {}
        for sub in self.submissions:
            done = guarded(sub, step, functools.partial(analyse, sub))
            if done is not None:
                out[sub.name] = done
        return out


def failure_reason(exc: BaseException) -> str:
    """Why an analysis failed, in words for staff."""
    if isinstance(exc, RecursionError):
        return "nested too deeply to analyse (RecursionError)"
    if isinstance(exc, MemoryError):
        return "too large or too deeply nested to analyse (MemoryError)"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON ({exc.msg}, line {exc.lineno} column {exc.colno})"
    text = " ".join(str(exc).split())
    return f"{exc.__class__.__name__}: {text[:200]}" if text else exc.__class__.__name__


def guarded(sub: Submission, step: str, analyse: Callable[[], Optional[T]]) -> Optional[T]:
    """`analyse()`, or None with `step: reason` added to `sub.unusable` if it raised: the one way
    the report runs anything on one submission's data, so that it fails for that submission alone."""
    try:
        return analyse()
    except Exception as exc:  # the student's bytes may make any analysis raise anything
        sub.unusable.append(f"{step}: {failure_reason(exc)}")
        return None


def _float(value: Any, default: float = 0.0) -> float:
    """A number of the results; a finite one (JSON allows NaN and Infinity, figures do not)."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return default
    if not math.isfinite(number):
        raise ValueError(f"a score is not a finite number: {str(value)[:40]}")
    return number


def parse(name: str, data: dict[str, Any], assignment_id: str) -> Submission:
    """One results file's JSON as a Submission."""
    found_extra = data.get("extra_data")
    extra: dict[str, Any] = found_extra if isinstance(found_extra, dict) else {}
    components: dict[str, ComponentResult] = {}
    for cname, comp in (extra.get("components") or {}).items():
        if not isinstance(comp, dict):
            continue
        found = comp.get("misconceptions")
        misconceptions = None
        if isinstance(found, list):
            misconceptions = [Misconception(str(m.get("id", "")), str(m.get("summary", "")), str(m.get("fix", "")))
                              for m in found if isinstance(m, dict) and m.get("id")]
        components[str(cname)] = ComponentResult(str(cname), _float(comp.get("score")), _float(comp.get("max_score")),
                                                 misconceptions, bool(comp.get("withheld")))
    tests = []
    for t in data.get("tests") or []:
        if not isinstance(t, dict):
            continue
        found_t_extra = t.get("extra_data")
        t_extra: dict[str, Any] = found_t_extra if isinstance(found_t_extra, dict) else {}
        key = str(t_extra.get("test") or t.get("name", ""))  # its English name (results_json), else the shown one
        component = str(t_extra.get("component") or key.partition(": ")[0])
        score, max_score = _float(t.get("score")), _float(t.get("max_score"))
        status = t.get("status")
        passed = status == "passed" if status in ("passed", "failed") else score >= max_score > 0
        tests.append(TestResult(key, component, bool(t_extra.get("public", False)), score, max_score, passed,
                                str(t.get("output") or "")))
    finalized = "raw_score" in extra
    return Submission(name=name, assignment=str(extra.get("assignment") or assignment_id),
                      score=_float(extra["raw_score"] if finalized else data.get("score")),
                      max_score=_float(data.get("max_score")), components=components, tests=tests,
                      output=str(extra.get("graded_output") or data.get("output") or ""),
                      submission_file=str(extra.get("submission") or ""),
                      grader_error=str(extra.get("grader_error") or ""), isolation=str(extra.get("isolation") or ""),
                      status=str(extra.get("status") or ""), problem=str(extra.get("problem") or ""),
                      final_score=_float(data.get("score")) if finalized else None,
                      student=str(extra.get("student") or ""), who=name)


def read_results(path: Path, assignment_id: str) -> Submission:
    """One results file as a Submission, or an exception saying why it is not one."""
    if path.stat().st_size > RESULTS_MAX_BYTES:
        raise ValueError(f"{path.name} is over {RESULTS_MAX_BYTES >> 20} MiB: not a results file of course grade")
    data = json.loads(path.read_bytes().decode("utf-8"))
    if not isinstance(data, dict) or "score" not in data or not isinstance(data.get("tests", []), list):
        raise ValueError(f"{path.name} is not a results file (no score and tests)")
    return parse(path.stem, data, assignment_id)


def load_class(assignment_id: str, results_dir: Path, *, course: Optional[config_mod.Course] = None,
               submissions_dir: Optional[Path] = None, find_submissions: bool = False) -> ClassResults:
    """Read every `<name>.json` results file of `results_dir` (other JSON files are skipped with a
    warning) and, with `submissions_dir` (or, with `find_submissions`, the folder find_submissions_dir
    finds), the file each one graded."""
    course = course or config_mod.default()
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise FileNotFoundError(f"{results_dir}: no such folder")
    known = next((a for a in course.assignments if a.id == assignment_id), None)
    warnings: list[str] = []
    submissions: list[Submission] = []
    for path in sorted(results_dir.glob("*.json")):
        placeholder = Submission(name=path.stem, assignment=assignment_id, score=0.0, max_score=0.0, components={},
                                 tests=[], output="", who=path.stem)
        sub = guarded(placeholder, "its results file", functools.partial(read_results, path, assignment_id))
        if sub is not None and sub.assignment != assignment_id:
            warnings.append(f"{path.name}: results of {sub.assignment}, not {assignment_id}; left out")
            continue
        submissions.append(sub or placeholder)
    if known is not None:
        components = [(c.name, c.points) for c in known.components]
        title = known.title
    else:  # an assignment course.yml does not know: its components as the results name them
        seen: dict[str, float] = {}
        for sub in submissions:
            for c in sub.components.values():
                seen.setdefault(c.name, c.max_score)
        components, title = list(seen.items()), assignment_id
    ids = [s.student for s in submissions]
    if all(ids) and len(set(ids)) == len(ids):
        for s in submissions:
            s.who = s.student
    result = ClassResults(assignment_id, title, components, submissions, results_dir, submissions_dir, warnings)
    if submissions_dir is None and find_submissions:
        submissions_dir = result.submissions_dir = find_submissions_dir(results_dir, submissions)
        if submissions_dir is not None:
            result.found_submissions = True
    if submissions_dir is not None:
        locate_files(result, Path(submissions_dir), course.support_module)
    return result


def find_submissions_dir(results_dir: Path, submissions: list[Submission]) -> Optional[Path]:
    """The folder `course grade` graded, found from the results (each records its file's name, and is
    named after its student folder or file): the first folder beside the results folder (`submissions`
    first) or above it that holds most of the recorded files; None when none does."""
    recorded = [(s.name, s.submission_file) for s in submissions if s.submission_file]
    if not recorded:
        return None
    parent = results_dir.resolve().parent
    beside = sorted((p for p in parent.iterdir() if p.is_dir() and p.resolve() != results_dir.resolve()),
                    key=lambda p: (p.name != "submissions", p.name))
    for folder in beside + [parent]:
        found = sum(1 for name, file in recorded
                    if _plain_file(folder, (file,)) or _plain_file(folder, (name, file)))
        if 2 * found > len(recorded):
            return folder
    return None


def locate_files(results: ClassResults, directory: Path, support_module: str) -> None:
    """Set each submission's `path`: the file `course grade` graded for it in `directory`, found by
    the grader's own discovery (one file per top-level entry or student folder, same names), else by
    the file name the results record."""
    from autograder.grading.submission import find_submissions

    if not directory.is_dir():
        results.warnings.append(f"{directory}: no such submissions folder; similarity not computed")
        return
    found = {f.name: f.path for f in find_submissions(directory, results.assignment, support_module)}
    for sub in results.submissions:
        path = found.get(sub.name)
        if path is None and sub.submission_file:  # names from a results file: each part a real folder or file
            candidates = [(sub.submission_file,), (sub.name, sub.submission_file)]
            path = next((directory.joinpath(*c) for c in candidates if _plain_file(directory, c)), None)
        sub.path = path


def _plain_file(directory: Path, parts: tuple[str, ...]) -> bool:
    """Whether `directory`/parts... is a regular file reached through real folders: each part one
    name, none of them a symbolic link (lstat), so the report opens nothing a link points to."""
    import stat
    if any(not p or p in (".", "..") or "/" in p or "\0" in p for p in parts):
        return False
    here = directory
    for i, part in enumerate(parts):
        here = here / part
        try:
            mode = here.lstat().st_mode
        except OSError:
            return False
        if not (stat.S_ISREG(mode) if i == len(parts) - 1 else stat.S_ISDIR(mode)):
            return False
    return True
