"""What a sandboxed child is handed for one component besides the submission: given code and the
reference versions of the component's dependencies.

No double jeopardy: when component C is graded, every component C is built on is the reference
one. The child gets, as source text, the given code of the course plus the reference code of C's
dependencies (never C itself, never tests), and the student-facing support module with every
name it exports (names that C does not need are placeholders that raise when used).
"""
from __future__ import annotations

import functools
import importlib
import inspect
import re
from typing import TypedDict

from autograder.config import Assignment, Course
from autograder.grading.submission import Cell
from autograder.sandbox.runtime import procedures

DEPS_MODULE = "__course_deps__"
HEADER = ("from __future__ import annotations\nimport math\nfrom typing import Any, Optional\n"
          "import torch\nfrom torch import nn\n")
TOOLKIT_MODULES = ("solutions.datasets", "solutions.training")
_FUTURE = re.compile(r"^from __future__ import [^\n]*\n", re.M)


class Job(TypedDict):
    """Everything a child needs for one component; sent to the child itself, never to the fork server."""

    cells: list[list[str]]  # [label, source] per code cell of the submission
    seed: int
    modules: dict[str, str]  # module name -> source, installed before loading
    prelude: list[str]  # names put into the student's namespace before loading (given code, deps)
    inject: list[str]  # names put there again after loading (dependencies override the student's)
    deps_module: str


@functools.cache
def module_source(module_name: str) -> str:
    """A module's source without its `from __future__` line (the header has it)."""
    return _FUTURE.sub("", inspect.getsource(importlib.import_module(module_name)))


@functools.cache
def toolkit_names() -> tuple[str, ...]:
    """Public names of the given data and training toolkit (placeholders while grading)."""
    names: list[str] = []
    for module_name in TOOLKIT_MODULES:
        module = importlib.import_module(module_name)
        names += [n for n, v in vars(module).items() if not n.startswith("_")
                  and getattr(v, "__module__", None) == module_name]
    return tuple(names)


def contract_names(course: Course) -> frozenset[str]:
    """Every name a test may ask a submission for: components, given code, the toolkit."""
    return frozenset([c.name for a in course.assignments for c in a.components]
                     + sorted(course.given_names) + list(toolkit_names()))


def support_exports(course: Course, assignment: Assignment) -> list[str]:
    """Names the assignment's support module exports: given code, earlier components, toolkit."""
    return list(assignment.given) + course.earlier_components(assignment) + list(toolkit_names())


def reference_source(course: Course, names: list[str]) -> str:
    """Given code plus the reference source of `names` (in dependency order), as one module."""
    parts = [HEADER, module_source(course.given_module)]
    for name in names:
        if course.owner(name) is not None:
            parts.append(inspect.getsource(course.reference_object(name)))
    return "\n\n".join(parts)


def placeholder_source(names: list[str], component: str) -> str:
    lines = []
    for n in names:
        lines.append(
            f"def {n}(*args, **kwargs):\n"
            f"    raise NotImplementedError('{n} is not available while grading {component}')\n")
    return "\n".join(lines)


def job(course: Course, assignment: Assignment, component: str, cells: list[Cell]) -> Job:
    """The child's job for `component`: the submission's cells, the modules to install, and the
    names to put in the student's namespace before loading (given code and dependencies, as `from
    attention_support import *` would) and again after it (dependencies, overriding the student's)."""
    modules, inject = child_modules(course, assignment, component)
    prelude = sorted(set(assignment.given) | set(inject))
    return Job(cells=[list(c) for c in cells], seed=procedures.TEST_SEED, modules=modules,
               prelude=prelude, inject=inject, deps_module=DEPS_MODULE)


def child_modules(course: Course, assignment: Assignment, component: str) -> tuple[dict[str, str], list[str]]:
    """({module name: source} to install in the child, names to inject into the student namespace)."""
    deps = [n for n in course.closure([component]) if course.owner(n) is not None]
    deps_source = reference_source(course, deps)
    provided = set(deps) | set(assignment.given)
    missing = [n for n in support_exports(course, assignment) if n not in provided]
    support = f"from {DEPS_MODULE} import *\n" + placeholder_source(missing, component)
    modules = {DEPS_MODULE: deps_source, course.support_module: support}
    inject = [n for n in course.needs(component) if course.owner(n) is not None] + deps
    return modules, sorted(set(inject))
