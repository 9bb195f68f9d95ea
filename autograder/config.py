"""Load and validate course.yml: assignments, components, points, dependencies and limits."""
from __future__ import annotations

import datetime as dt
import functools
import importlib
from pathlib import Path
from typing import Any, Literal, Optional

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from autograder.deadlines import Deadlines
from autograder.sandbox.runtime.json_bounds import Bounds as JSONBounds

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG = REPO_ROOT / "course.yml"


class ConfigError(Exception):
    """course.yml is missing, malformed or inconsistent; the message says where."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CollectCaps(_Strict):
    """The most `course collect` and nbgrader's zip_collect read from an LMS download (a 1 MB zip can
    hold 1 GB of zeros): checked on an archive's declared sizes before reading and on the bytes read.
    A submission over a cap is skipped with one line; the rest of the class is filed."""

    file_mb: float = Field(32, gt=0)  # one notebook or .py file, uncompressed
    submission_mb: float = Field(64, gt=0)  # everything read for one submission (its files, its zips)
    submission_files: int = Field(10_000, gt=0)  # files in one submission's own zips
    class_mb: float = Field(8192, gt=0)  # the notebooks and .py files kept for the whole class
    class_files: int = Field(200_000, gt=0)  # files of the submissions kept (their own zips included)
    ratio: int = Field(200, gt=0)  # uncompressed / compressed size of one zip entry over 1 MiB
    nesting: int = Field(2, ge=0)  # zips inside the download: a student's own zip, and one more level


class Limits(_Strict):
    """Resource limits: per test, per component (one sandboxed child) and per submission.

    The one declaration of the grader's limits: course.yml sets them, the sandbox applies them.
    """

    test_seconds: float = Field(20, gt=0)
    load_seconds: float = Field(20, gt=0)
    component_cpu_seconds: float = Field(120, gt=0)
    submission_seconds: float = Field(600, gt=0)
    memory_mb: int = Field(3072, gt=0)
    processes: int = Field(64, gt=0)
    file_size_mb: int = Field(16, gt=0)
    output_kb: int = Field(64, gt=0)
    # What the trusted grading process accepts from a submission, checked before it parses or keeps it.
    submission_mb: float = Field(20, gt=0)  # the submitted file (a notebook with its outputs)
    source_kb: int = Field(1024, gt=0)  # the code of its code cells, in total
    read_seconds: float = Field(10, gt=0)  # reading it: the notebook's JSON, IPython syntax to Python
    reply_kb: int = Field(8192, gt=0)  # the JSON of one reply from a child (tensor bytes come apart)
    json_items: int = Field(250_000, gt=0)  # values in a reply's or a notebook's JSON
    json_depth: int = Field(200, gt=0)  # nesting of a reply's or a notebook's JSON
    notes: int = Field(20, gt=0)  # load-time notes kept per component
    feedback_kb: int = Field(16, gt=0)  # one test's output, or one note, in the results
    collect: CollectCaps = CollectCaps()  # what is read from an LMS download

    def child_rlimits(self) -> dict[str, float]:
        """What the fork server applies to a child as resource limits (runtime/zygote.py)."""
        return {"cpu_seconds": self.component_cpu_seconds, "memory_mb": self.memory_mb,
                "processes": self.processes, "file_size_mb": self.file_size_mb}

    def json_bounds(self, max_bytes: int) -> JSONBounds:
        """The bounds of JSON from a submission (a child's reply, a notebook) of at most `max_bytes`."""
        return JSONBounds(max_bytes=max_bytes, max_items=self.json_items, max_depth=self.json_depth)

    def reply_bounds(self) -> JSONBounds:
        """What the grader accepts as the JSON of one reply from a child (forkserver.Child)."""
        return self.json_bounds(self.reply_kb * 1024)


class Scoring(_Strict):
    """How a component's points are shared among its tests (one home: grading/scoring.py).

    A test's weight is `kinds[kind]` times its `@pytest.mark.weight` (default 1), unless `tests`
    sets it ("<component>::<test function>": weight). With `gate: proportional`, property and
    structure tests count in proportion to the share of the component's reference comparisons it
    passes, so code that ignores its inputs (which passes invariance checks trivially) earns
    almost nothing, while one realistic bug keeps most of its credit.
    """

    kinds: dict[str, float] = Field(default_factory=lambda: {"reference": 3.0, "dependence": 1.0, "reads": 1.0,
                                                             "property": 1.0, "structure": 1.0})
    gate: Literal["proportional", "none"] = "proportional"
    #: The least property and structure tests count when the diagnosis names one known realistic
    #: mistake that explains the component's failures: such a mistake, which breaks every reference
    #: comparison (a missing 1/sqrt(d)), keeps this share of that credit; code that is wrong in no
    #: known way, or that a degenerate catalogue entry reproduces, earns only its proportion.
    floor: float = Field(0.5, ge=0, le=1)
    #: The most a component earns, whatever its tests pass, when a degenerate catalogue entry reproduces
    #: its failures (its outputs do not depend on its inputs the way the course's do): a stored side
    #: output right beside constant outputs passes reference tests of its own.
    degenerate_share: float = Field(0.1, ge=0, le=1)
    #: The least property and structure tests count when every `dependence` test of the component passed: its
    #: outputs depend on its inputs where the course's do and only there (it is not degenerate), though their
    #: values differ in a way the catalogue does not know (`relu` for `tanh`). Its failed comparisons earn nothing.
    dependence_gate: float = Field(0.5, ge=0, le=1)
    tests: dict[str, float] = Field(default_factory=dict)
    #: "<component>::<test function>": kind, for a test whose marker (or its use of the reference)
    #: does not say what it really checks; kept here so that the suites' sources do not change.
    kinds_of: dict[str, str] = Field(default_factory=dict)

    @field_validator("kinds_of")
    @classmethod
    def _kinds_are_known(cls, value: dict[str, str]) -> dict[str, str]:
        bad = [f"{k}: {v}" for k, v in value.items() if v not in TEST_KINDS]
        if bad:
            raise ValueError(f"kinds must be one of {', '.join(TEST_KINDS)}: {'; '.join(bad)}")
        return value

    @field_validator("kinds", "tests")
    @classmethod
    def _positive(cls, value: dict[str, float]) -> dict[str, float]:
        bad = [k for k, w in value.items() if not w >= 0]
        if bad:
            raise ValueError(f"weights must be >= 0: {', '.join(bad)}")
        return value

    @field_validator("kinds")
    @classmethod
    def _known_kinds(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = set(value) - set(TEST_KINDS)
        missing = set(TEST_KINDS) - set(value)
        if unknown or missing:
            raise ValueError(f"kinds must give a weight to exactly {', '.join(TEST_KINDS)}"
                             + (f" (unknown: {', '.join(sorted(unknown))})" if unknown else "")
                             + (f" (missing: {', '.join(sorted(missing))})" if missing else ""))
        return value


#: Kinds of test: compared with the course's values, self-consistency, shapes and attributes.
TEST_KINDS = ("reference", "dependence", "reads", "property", "structure")


class Feedback(_Strict):
    """How much a diagnosis reveals at once (selfcheck/symptoms.reveal): `hint_level` 1 names the symptom
    and the misconception, 2 adds the concrete fix. The default of the notebook's check() (a student asks
    for more with check("masked_softmax", hint=2)) and the level of the graded feedback."""

    hint_level: Literal[1, 2] = 1


class HypothesisProfile(_Strict):
    max_examples: int = Field(20, gt=0, le=10_000)
    derandomize: bool = True


class Component(_Strict):
    name: str
    points: float = Field(gt=0)
    needs: tuple[str, ...] = ()


class Assignment(_Strict):
    id: str
    title: str
    solution: str
    due: Optional[dt.date] = None
    given: tuple[str, ...] = ()
    #: Components of earlier assignments that the notebook's experiments use (shipped in its
    #: support module, like the ones its own components build on).
    uses: tuple[str, ...] = ()
    components: tuple[Component, ...]
    #: The assignment's id in Canvas (the number in its gradebook column, "... (771234)"): how
    #: `course export --canvas` finds the column; without it, the column is found by its title.
    canvas_id: Optional[int] = None

    @field_validator("components", mode="before")
    @classmethod
    def _components_from_mapping(cls, value: Any) -> Any:
        if isinstance(value, dict):
            out = []
            for name, spec in value.items():
                if not isinstance(spec, dict):
                    raise ValueError(f"component {name!r} must be a mapping like {{points: 4}}")
                out.append({"name": name, **spec})
            return out
        return value

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not value[:2].isdigit() or value[2:3] != "_":
            raise ValueError(f"assignment id {value!r} must look like '02_attention_scoring'")
        return value

    @property
    def max_score(self) -> float:
        return sum(c.points for c in self.components)

    def component(self, name: str) -> Component:
        for c in self.components:
            if c.name == name:
                return c
        raise KeyError(name)


class Canvas(_Strict):
    """course.yml's `canvas:` block: what `course export --canvas` writes."""

    #: A roster student with no graded submission: 0 ("zero") or an empty cell ("blank"), which
    #: Canvas's import leaves as it is. Either way they are listed.
    missing: Literal["zero", "blank"] = "zero"


class Course(_Strict):
    name: str
    support_module: str = "attention_support"
    #: The language of everything a student reads (notebooks, check(), feedback, Gradescope output):
    #: "en" or "zh" (selfcheck/i18n.py). Staff-facing output stays English.
    language: Literal["en", "zh"] = "en"
    given_module: str = "solutions.given"
    hypothesis: HypothesisProfile = HypothesisProfile()
    limits: Limits = Limits()
    scoring: Scoring = Scoring()
    feedback: Feedback = Feedback()
    #: Due dates' time of day and zone, the late policy, extensions (deadlines.py).
    deadlines: Deadlines = Deadlines()
    #: TAs' manual overrides of component scores, with who and why (grading/overrides.py).
    overrides_file: Optional[str] = None
    canvas: Canvas = Canvas()
    assignments: tuple[Assignment, ...]

    @field_validator("overrides_file")
    @classmethod
    def _overrides_beside_course_file(cls, value: Optional[str], info: ValidationInfo) -> Optional[str]:
        if value and info.context and info.context.get("course_dir"):
            return str(Path(info.context["course_dir"]) / value)
        return value

    @model_validator(mode="after")
    def _extensions_name_assignments(self) -> Course:
        ids = {a.id for a in self.assignments}
        for i, ext in enumerate(self.deadlines.extensions):
            if ext.assignment not in ids:
                raise ValueError(f"deadlines.extensions[{i}]: assignment {ext.assignment!r} is not in course.yml")
        return self

    @model_validator(mode="after")
    def _consistent(self) -> Course:
        seen: dict[str, str] = {}
        ids = [a.id for a in self.assignments]
        if len(set(ids)) != len(ids):
            raise ValueError("assignment ids must be unique")
        for a in self.assignments:
            for c in a.components:
                if c.name in seen:
                    raise ValueError(f"component {c.name!r} appears in both {seen[c.name]} and {a.id}")
                seen[c.name] = a.id
        for a in self.assignments:
            for c in a.components:
                for dep in c.needs:
                    if dep not in seen and dep not in self.given_names:
                        raise ValueError(f"{a.id}: component {c.name!r} needs unknown name {dep!r}")
            for used in a.uses:
                if seen.get(used, a.id) >= a.id:
                    raise ValueError(f"{a.id}: uses {used!r}, which is not a component of an earlier assignment")
        for key in list(self.scoring.tests) + list(self.scoring.kinds_of):
            component, sep, test = key.partition("::")
            if not sep or not test or component not in seen:
                raise ValueError(f"scoring.tests: {key!r} must be '<component>::<test function>' with a "
                                 f"component of this course")
        return self

    @property
    def given_names(self) -> set[str]:
        """Given (not graded) code that some assignment hands out: the `given:` lists of course.yml."""
        return {g for a in self.assignments for g in a.given}

    def assignment(self, assignment_id: str) -> Assignment:
        for a in self.assignments:
            if a.id == assignment_id:
                return a
        known = ", ".join(a.id for a in self.assignments)
        raise ConfigError(f"unknown assignment {assignment_id!r}; known: {known}")

    def owner(self, name: str) -> Optional[Assignment]:
        """The assignment whose component `name` is (None for given code)."""
        for a in self.assignments:
            if any(c.name == name for c in a.components):
                return a
        return None

    def needs(self, name: str) -> tuple[str, ...]:
        owner = self.owner(name)
        return owner.component(name).needs if owner else ()

    def closure(self, names: list[str] | tuple[str, ...]) -> list[str]:
        """All names that `names` need, transitively, dependencies first (names themselves excluded)."""
        order: list[str] = []

        def visit(n: str, stack: tuple[str, ...]) -> None:
            if n in stack:
                raise ConfigError(f"dependency cycle: {' -> '.join(stack + (n,))}")
            for d in self.needs(n):
                visit(d, stack + (n,))
                if d not in order:
                    order.append(d)

        for n in names:
            visit(n, ())
        return [n for n in order if n not in names]

    def earlier_components(self, assignment: Assignment) -> list[str]:
        """Components of earlier assignments that `assignment` builds on or uses, dependencies first:
        what its support module hands out (so it may be released only after their deadlines)."""
        own = {c.name for c in assignment.components}
        wanted = [c.name for c in assignment.components] + list(assignment.uses)
        ordered = self.closure(wanted) + list(assignment.uses)
        return [n for n in dict.fromkeys(ordered) if n not in own and self.owner(n) is not None]

    def reference_object(self, name: str) -> Any:
        """The reference implementation (or given code) named `name`."""
        owner = self.owner(name)
        module = importlib.import_module(owner.solution if owner else self.given_module)
        try:
            return getattr(module, name)
        except AttributeError:
            raise ConfigError(f"{module.__name__} does not define {name!r}") from None


def load(path: Path | str | None = None) -> Course:
    """Read and validate a course file, raising ConfigError with a readable message."""
    path = Path(path) if path else DEFAULT_CONFIG
    try:
        raw = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such course file") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    try:
        return Course.model_validate(raw, context={"course_dir": str(path.resolve().parent)})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"{path}: {problems}") from None


@functools.cache
def default() -> Course:
    """The repository's course.yml, loaded once."""
    return load(DEFAULT_CONFIG)
