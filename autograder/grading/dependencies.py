"""What a sandboxed child is handed for one component besides the submission: given code, and the
dependencies the student's own code cannot stand in for.

The dependency rule (one home: `plan` and `settle`). When component C is graded, each component C
is built on (course.yml `needs`, transitively) is first the student's own when the submission
defines it and it passes its own tests (this assignment's tests for a component of this
assignment, the earlier assignment's suite for an earlier component the submission redefines), and
the course's reference otherwise. When that replaced a dependency the submission defines, C is
graded a second time with the student's own version of every dependency it defines (and, where the
first stood in for a method of the student's class, a third time with those methods the student's and
the course's for the rest), and the best grading stays (`settle`; the course's on a tie): so a broken
or missing dependency costs points in one place only (no double penalty), and C's code that relies on
its own dependency (an attribute the course's version does not have, a helper method of another meaning
than the contract's function of its name) is not broken by the course's. Every grading tests only C.

The child gets, as source text, the given code of the course plus the reference code of what it
must use (never C itself, never tests), and the student-facing support module with every name it
exports (names that C does not need are placeholders that raise when used). A child that holds
reference code of the current assignment (a replaced dependency) is marked: until the assignment's
due date its student-visible feedback is withheld, because the student's code could print it.
"""
from __future__ import annotations

import ast
import datetime as dt
import functools
import importlib
import inspect
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, Optional, TypedDict

from autograder.config import Assignment, Course
from autograder.grading import late
from autograder.grading.submission import Cell
from autograder.selfcheck.i18n import _

DEPS_MODULE = "__course_deps__"
HEADER = ("from __future__ import annotations\nimport math\nfrom typing import Any, Optional\n"
          "import torch\nfrom torch import nn\n")
TOOLKIT_MODULES = ("solutions.datasets", "solutions.training")
EDITIONS_MODULE = "solutions.d2l_v1"  # d2l 1.0's constructors of the course's classes, for code written for it
_FUTURE = re.compile(r"^from __future__ import [^\n]*\n", re.M)


class Job(TypedDict):
    """Everything a child needs for one component; sent to the child itself, never to the fork server."""

    cells: list[list[str]]  # [label, source] per code cell of the submission
    seed: int
    modules: dict[str, str]  # module name -> source, installed before loading
    prelude: list[str]  # names put into the student's namespace before loading (given code, deps)
    inject: list[str]  # names put there again after loading (dependencies override the student's)
    own: list[str]  # the component's dependencies the student's own code provides (solutions/d2l_v1.py)
    scaffold: list[str]  # given names a test gets as the course's, whatever the submission defines
    deps_module: str
    words: dict[str, str]  # procedures.WORDS in the student's language
    alias: dict[str, str]  # the component's name -> the student's definition graded in its place (signatures.renamed)
    as_method: dict[str, dict[str, Any]]  # the component's name -> its method graded in its place (signatures.MethodForm)
    method_stand_in: dict[str, dict[str, Any]]  # a replaced dependency -> the student's method the course's stands in for
    # the component's name (or a dependency's graded as the student's own) -> its function written inside another
    # (signatures.NestedForm), graded in its place
    as_nested: dict[str, dict[str, Any]]
    # the component's name (or a dependency's graded as the student's own) -> {contract method: the student's method
    # spelled otherwise}, called in its place (signatures.method_slips)
    method_slips: dict[str, dict[str, str]]
    called_as: dict[str, dict[str, Any]]  # injected classes the student's code calls by its own signature (signatures.called_as)
    stand_in_as: dict[str, str]  # the student's spelling -> the injected dependency it names (signatures.renamed)



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
    """Given code plus the reference source of `names` (in dependency order), as one module; then
    d2l 1.0's constructors for those of its classes that have them (EDITIONS_MODULE)."""
    parts = [HEADER, module_source(course.given_module)]
    for name in names:
        if course.owner(name) is not None:
            parts.append(object_source(course.reference_object(name)))
    parts += [module_source(EDITIONS_MODULE), "_install(globals())\n"]
    return "\n\n".join(parts)


def object_source(obj: object) -> str:
    """`inspect.getsource(obj)`, read once per version of its file. Python 3.11 parses the whole module
    for every class it is asked for: asked per component, that was 8% of grading a correct 06."""
    path = inspect.getsourcefile(obj)  # type: ignore[arg-type]
    return _source_of(obj, os.stat(path).st_mtime_ns if path else None)


@functools.lru_cache(maxsize=256)
def _source_of(obj: object, _file_version: Optional[int]) -> str:
    return inspect.getsource(obj)  # type: ignore[arg-type]


def placeholder_source(names: list[str], component: str) -> str:
    lines = []
    for n in names:
        said = _("{name} is not available while grading {component}").format(name=n, component=component)
        lines.append(f"def {n}(*args, **kwargs):\n    raise NotImplementedError({said!r})\n")
    return "\n".join(lines)


@dataclass(frozen=True)
class DependencyUse:
    """Which version of a dependency a component was graded with, and why."""

    name: str
    student: bool  # the student's own (True) or the course's reference (False)
    reason: str
    same_assignment: bool  # a component of the assignment being graded (its reference is not public yet)
    defined: bool = True  # the submission defines it

    def describe(self) -> str:
        said = _("your {name} ({reason})") if self.student else _("the course's {name} ({reason})")
        return said.format(name=self.name, reason=self.reason)


def describe(uses: Iterable[DependencyUse]) -> str:
    """What a component was graded with, for students: each dependency with whose version and why,
    those the submission does not define together ("the course's sequence_mask, masked_softmax
    (from attention_support)")."""
    groups: dict[tuple[bool, str], list[DependencyUse]] = {}
    for use in uses:
        groups.setdefault((use.defined, use.name if use.defined else use.reason), []).append(use)
    return "; ".join(replace(group[0], name=", ".join(u.name for u in group)).describe() for group in groups.values())


#: How a dependency's own tests went: (passed, total), or None if they did not run.
Outcomes = Callable[[str], Optional[tuple[int, int]]]


def plan(course: Course, assignment: Assignment, component: str, defined: Iterable[str],
         outcomes: Outcomes, own: bool = False, untakeable: Optional[dict[str, str]] = None,
         methods: Optional[dict[str, str]] = None) -> list[DependencyUse]:
    """The dependency rule for one grading of `component`: for each component it is built on, the
    student's version or the course's. One the submission does not define is the course's; one it
    defines is the student's if it passes all its own tests, else the course's, or with `own` the
    student's all the same (the second grading: `settle` keeps the better), or where the submission's
    code calls it in a way the course's cannot take (`untakeable`, signatures.course_cannot_take: the
    call as written), the student's all the same; and with `methods` (the third grading: a dependency the student
    wrote as a method of their class, signatures.MethodForm, as "Class.method"), each of those the student's.
    A method the student's class calls through `self` may mean something else than the contract's function of its
    name (a private helper that only reshapes): the course's function in its place is tried, never assumed."""
    defined, untakeable, methods = set(defined), untakeable or {}, methods or {}
    uses = []
    for name in course.closure([component]):
        owner = course.owner(name)
        if owner is None:
            continue  # given code: always the course's, and public
        same = owner.id == assignment.id
        if name not in defined:
            reason = (_("not defined in your submission") if same else
                      _("from {module}").format(module=course.support_module))
            uses.append(DependencyUse(name, False, reason, same, defined=False))
            continue
        result = outcomes(name)
        if result is not None and result[0] == result[1]:
            uses.append(DependencyUse(name, True, _("passes its {total} tests").format(total=result[1]), same))
        elif result is None:
            uses.append(DependencyUse(name, own, _("its tests did not run"), same))
        elif name in methods:
            said = _("fails {failed} of its {total} tests; your code calls it as its own method {method}")
            uses.append(DependencyUse(name, True, said.format(failed=result[1] - result[0], total=result[1],
                                                              method=methods[name]), same))
        elif name in untakeable:
            said = _("fails {failed} of its {total} tests, but your code calls it as {call}, which the course's "
                     "{name} cannot take")
            uses.append(DependencyUse(name, True, said.format(failed=result[1] - result[0], total=result[1],
                                                              call=untakeable[name], name=name), same))
        else:
            said = _("fails {failed} of its {total} tests") if own else _("yours fails {failed} of its {total} tests")
            uses.append(DependencyUse(name, own, said.format(failed=result[1] - result[0], total=result[1]), same))
    return uses


def settle(first: list[DependencyUse], first_score: float, tried: list[tuple[list[DependencyUse], Optional[float]]],
           component: str, points: float) -> tuple[list[DependencyUse], bool]:
    """The best of `component`'s gradings and whether it is not the first: the first (`plan`), then each of `tried`
    with its score (`plan(own=True)`, then `plan(methods=...)`; None: that grading stopped once it could not score
    more than the best before it, or did not run, having nothing to gain). A later grading stays only where it scores
    strictly more than every one before it (the course's on a tie). Each dependency the kept grading and the
    first differ in says so, with both scores; where the first stays, those it and the second differ in."""
    better, score = None, first_score
    for uses, got in tried:
        if got is not None and got > score:
            better, score = uses, got
    if better is not None:
        chosen, other = better, first
        clause = _("but {component} scores {own} of {points} with yours, {first} with the course's").format(
            component=component, own=f"{score:g}", points=f"{points:g}", first=f"{first_score:g}")
    else:
        (other, own_score), chosen = tried[0], first
        said = (_("and {component} scores {first} of {points} with the course's, no more with yours")
                if own_score is None else
                _("and {component} scores {first} of {points} with the course's, {own} with yours"))
        clause = said.format(component=component, first=f"{first_score:g}", points=f"{points:g}",
                             own=f"{own_score or 0:g}")
    flags = {u.name: u.student for u in other}
    return [replace(u, reason=_("{reason}, {clause}").format(reason=u.reason, clause=clause)) if flags.get(u.name) != u.student else u
            for u in chosen], better is not None


def unreleased_reference(course: Course, uses: list[DependencyUse], release: late.Release,
                         now: Optional[dt.datetime] = None) -> Optional[late.Release]:
    """When the course's code a child with these dependencies held may reach the student, if that is
    not yet (`now`): `release` for the assignment being graded (the student's own), an earlier
    assignment's asked of late.reference_release for the same student (an extension on 02 also holds
    back 02's reference in 03's feedback); the latest of them. None: everything it held may be shown."""
    pending = []
    for use in uses:
        if use.student:
            continue
        owner = None if use.same_assignment else course.owner(use.name)
        if not use.same_assignment and owner is None:
            continue  # given code, public from the start
        held = release if owner is None else late.reference_release(course, owner, release.student)
        if not held.passed(now):
            pending.append(held)
    never = dt.datetime.max.replace(tzinfo=dt.timezone.utc)
    return max(pending, key=lambda r: r.when or never) if pending else None


def defined_names(cells: list[Cell]) -> set[str]:
    """The names a submission's definitions bind (def, class, assignment), found without running it,
    with the loader's own rules (what the sandbox would load). A definition decorated with d2l 1.0's
    `add_to_class(C)` binds its name to None (it becomes a method of C): that defines nothing."""
    from autograder.grading.submission import cell_trees
    from autograder.sandbox.runtime import loader
    names: set[str] = set()
    for tree in cell_trees(tuple(cells)):
        if tree is None:
            continue
        for stmt in tree.body:
            if loader.keeps(stmt) and not isinstance(stmt, (ast.Import, ast.ImportFrom)):
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    if loader.adds_to_a_class(stmt):  # binds the name to None
                        names.discard(stmt.name)
                    else:
                        names.add(stmt.name)
                else:
                    names |= loader.assigned_names(stmt)
    return names


def job(course: Course, assignment: Assignment, component: str, cells: list[Cell],
        uses: Optional[list[DependencyUse]] = None, renames: Optional[dict[str, str]] = None,
        called_as: Optional[dict[str, dict[str, Any]]] = None, methods: Optional[dict[str, dict[str, Any]]] = None,
        nested: Optional[dict[str, dict[str, Any]]] = None, slips: Optional[dict[str, dict[str, str]]] = None) -> Job:
    """The child's job for `component`: the submission's cells, the modules to install, and the
    names to put in the student's namespace before loading (given code and dependencies, as `from
    attention_support import *` would) and again after it (the dependencies the student's own
    cannot stand in for, overriding them); `scaffold`: the given names a test asks for, which are
    the course's even when the submission redefines them (a learner's own `Seq2SeqEncoder` is not
    graded and must not break the training test of their decoder; their own code keeps its names). `uses` (from `plan`) defaults to the reference for all.
    `renames` (signatures.renamed): the component's name, and the name of each dependency graded as the student's
    own (helper-75's D5: a decoder's training test builds the student's renamed TransformerEncoder), is bound to
    the student's definition spelled otherwise, if it has one (or to a function calling its method written for it: `as_method`; a replaced
    dependency the student wrote as a method is the course's in that method's place too: `method_stand_in`, as the
    student's class calls it through `self`), and a replaced class the student spelled otherwise is the course's
    under that spelling too (not a function: a call of the student's may rely on their own defaults, such
    as a `mask_sequence` whose `value` is -1e6 where the contract's is 0) (the student's later code calls it so: their own `MultiHead_Attention`, which
    fails the 04 suite, would otherwise cost their 06 blocks again). `called_as` (signatures.called_as):
    a course class standing in for the student's takes the student's calls by the student's own signature.
    `methods` (signatures.MethodForm.spec, per contract function the student wrote as a method): the child's spec
    of the component's method graded in its place, and of a replaced dependency's method the course's stands in for.
    `nested` (signatures.NestedForm.spec): the function written inside another graded in the place of the component,
    or of a dependency graded as the student's own; `slips` (signatures.method_slips) their methods spelled otherwise."""
    from autograder.sandbox.runtime import procedures  # torch: results files and scores need this module without it
    if uses is None:
        uses = [DependencyUse(n, False, "", course.owner(n) == assignment)
                for n in course.closure([component]) if course.owner(n) is not None]
    replaced = [u.name for u in uses if not u.student]
    earlier = [u.name for u in uses if not u.same_assignment]
    # The reference code the child needs: every replaced dependency with what it is built on, and
    # every earlier component (the support module exports them, as a student's import expects).
    needed = set(course.closure(replaced)) | set(replaced) | set(earlier) | set(course.closure(earlier))
    deps = [n for n in course.closure([component]) if n in needed and course.owner(n) is not None]
    provided = set(deps) | set(assignment.given)
    missing = [n for n in support_exports(course, assignment) if n not in provided]
    support = f"from {DEPS_MODULE} import *\n" + placeholder_source(missing, component)
    modules = {DEPS_MODULE: reference_source(course, deps), course.support_module: support}
    return Job(cells=[list(c) for c in cells], seed=procedures.TEST_SEED, modules=modules,
               prelude=sorted(set(assignment.given) | set(deps)), inject=sorted(replaced),
               own=sorted(u.name for u in uses if u.student),
               scaffold=sorted(assignment.given), deps_module=DEPS_MODULE,
               words={key: _(text) for key, text in procedures.WORDS.items()},
               alias={name: theirs for name in [component, *(u.name for u in uses if u.student)]
                      if "." not in (theirs := (renames or {}).get(name, "."))},
               as_method={n: spec for n, spec in (methods or {}).items() if n == component},
               method_stand_in={n: spec for n, spec in (methods or {}).items() if n in replaced},
               as_nested={n: spec for n, spec in (nested or {}).items()
                          if n == component or n in [u.name for u in uses if u.student]},
               method_slips={n: spec for n, spec in (slips or {}).items()
                             if n == component or n in [u.name for u in uses if u.student]},
               called_as={name: spec for name, spec in (called_as or {}).items() if name in replaced},
               stand_in_as={theirs: name for name, theirs in (renames or {}).items()
                            if name in replaced and inspect.isclass(course.reference_object(name))})
