"""Shared fixtures for the kit's own test suite."""
from __future__ import annotations

import os
import sys

# The suite runs in parallel workers on few cores: one torch thread per process (and per kernel or
# command it starts), or threads spin against each other and everything slows down tenfold.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from autograder import config
from autograder.sandbox.forkserver import Zygote


torch.set_num_threads(1)


@pytest.fixture(scope="session")
def course() -> config.Course:
    return config.default()


@pytest.fixture(scope="session")
def decoy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory of "other students' submissions" that is on the grader's sys.path when the sandbox
    starts (as the working directory is under `python -m autograder.cli` or a script's directory
    is): it must stay outside the sandbox (test_hostile.py looks for it from inside)."""
    root = tmp_path_factory.mktemp("decoy") / "hx_decoy_submissions"
    root.mkdir()
    (root / "alice_02_attention_scoring.py").write_text("# another student's work\n")
    return root


@pytest.fixture(scope="session")
def zygote(decoy: Path) -> Iterator[Zygote]:
    """One warm sandbox per worker for the whole session (as a grading worker has), shared by every
    module that grades in it (a start costs seconds): bubblewrap where it works."""
    sys.path.append(str(decoy))
    try:
        z = Zygote()
        z.start()
    finally:
        sys.path.remove(str(decoy))
    yield z
    z.stop()
