"""docs/course-api.md, the student-facing API contract, against the reference solutions.

The repository carries its own copy of the contract (the course's shared copy is the master when it
sits beside the repository): every component and given name it lists exists, in the assignment
course.yml says, with the documented parameters in that order.
"""
from __future__ import annotations

import inspect
import re

import pytest

from autograder import config

DOC = config.REPO_ROOT / "docs" / "course-api.md"
SHARED = config.REPO_ROOT.parent / "shared" / "course-api.md"
# `class Name(Base)`: `__init__(a, b, c=1)`   or   `name(a, b, value=0)`
_CLASS = re.compile(r"`class (\w+)\([\w.]*\)`: `__init__\(([^)]*)\)`")
_FUNCTION = re.compile(r"^- `(\w+)\(([^)]*)\)", re.M)
_ANY_CLASS = re.compile(r"`class (\w+)\(")  # a class documented without its __init__: no parameters


def documented() -> dict[str, list[str]]:
    text = DOC.read_text()
    out: dict[str, list[str]] = {name: [] for name in _ANY_CLASS.findall(text)}
    out.update({name: _params(params) for name, params in _CLASS.findall(text)})
    out.update({name: _params(params) for name, params in _FUNCTION.findall(text)})
    return out


def _params(text: str) -> list[str]:
    return [p.split("=")[0].strip() for p in text.split(",") if p.strip()]


def test_the_repository_copy_is_the_course_contract() -> None:
    if not SHARED.exists():
        pytest.skip("the course's shared copy is not beside this checkout")
    assert DOC.read_text() == SHARED.read_text(), "docs/course-api.md differs from ../shared/course-api.md"


def test_every_component_is_documented_with_its_reference_signature() -> None:
    course = config.default()
    docs = documented()
    components = [c.name for a in course.assignments for c in a.components]
    assert set(components) <= set(docs), sorted(set(components) - set(docs))
    for name in components:
        obj = course.reference_object(name)
        target = obj.__init__ if inspect.isclass(obj) else obj
        params = [p for p in inspect.signature(target).parameters if p not in ("self", "kwargs", "args")]
        assert params == docs[name], f"{name}: reference {params}, contract {docs[name]}"
