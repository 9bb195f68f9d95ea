"""Shared fixtures for the kit's own test suite."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from autograder import config
from autograder.sandbox import Zygote


@pytest.fixture(scope="session")
def course() -> config.Course:
    return config.default()


@pytest.fixture(scope="session")
def zygote() -> Iterator[Zygote]:
    """One warm sandbox for the whole session (as a grading worker has)."""
    z = Zygote()
    z.start()
    yield z
    z.stop()
