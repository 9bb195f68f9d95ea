"""Helpers shared by the kit's tests (importable: tests/ is on pytest's pythonpath)."""
from __future__ import annotations

import importlib
import inspect
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import nbformat

from autograder import config

T = TypeVar("T")


def reference_source(assignment_id: str) -> str:
    module = importlib.import_module(config.default().assignment(assignment_id).solution)
    return inspect.getsource(module)


def write_notebook(path: Path, cells: list[tuple[str, str]]) -> Path:
    """A notebook of (kind, source) cells, kind "code" or "markdown"."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) if kind == "code" else nbformat.v4.new_markdown_cell(src)
                for kind, src in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))
    return path


def processes_named(marker: str) -> list[int]:
    """Pids of live (not zombie) processes whose name (comm) is `marker`, seen from the host's /proc."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name, state = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2]
        if name == marker and state != "Z":
            pids.append(int(entry))
    return pids


def poll(probe: Callable[[], T], done: Callable[[T], bool], deadline: float, interval: float = 0.05) -> T:
    """Call `probe` until `done(value)` holds or time.monotonic() passes `deadline`; the last value
    either way (the caller asserts on it). An idle machine returns at once, a loaded one waits."""
    while True:
        value = probe()
        if done(value) or time.monotonic() >= deadline:
            return value
        time.sleep(interval)
