"""Shared fixtures for the kit's own test suite."""
from __future__ import annotations

import os

# The suite runs in parallel workers on few cores: one torch thread per process (and per kernel or
# command it starts), or threads spin against each other and everything slows down tenfold.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

from collections.abc import Iterator

import pytest
import torch

from autograder import config
from autograder.sandbox.forkserver import Zygote


torch.set_num_threads(1)


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
