"""Values computed once per test run and shared by every pytest-xdist worker of that run.

The pattern pytest-xdist documents for session data: a folder common to the run's workers
(`tmp_path_factory.getbasetemp().parent` under xdist, the run's own base folder without it) and one
`filelock.FileLock` per value, so that whichever worker needs a value first computes it while the
others wait for it or read it. Values are JSON; nothing outlives the run (pytest's base folder is
fresh for every run).
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock, Timeout

#: How long a worker waits for a value another worker is computing before it reports the wait.
WAIT_SECONDS = 1800.0


def run_folder(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A folder shared by every worker of this run (and by nothing else)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the controller's base folder: one per run, shared by its workers
    folder = base / f"shared-{name}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class RunStore:
    """JSON values by key, each computed by one worker of the run (under its own lock)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, key: str, suffix: str) -> Path:
        return self.folder / (re.sub(r"[^\w.-]", "_", key) + suffix)

    def get(self, key: str, compute: Callable[[], Any], wait: float = WAIT_SECONDS) -> Any:
        """The value of `key`: read if stored, else computed here (once: under the key's lock)."""
        try:
            with FileLock(self._path(key, ".lock"), timeout=wait):
                return self._read_or_compute(key, compute)
        except Timeout:
            raise TimeoutError(f"another worker held {key!r} for more than {wait:g} s") from None

    def get_many(self, keys: Iterable[str], compute: Callable[[str], Any]) -> dict[str, Any]:
        """Every key's value: what is stored is read, what nobody computes yet is computed here, and
        what another worker is computing right now is waited for last (so that the workers do not
        queue behind each other's locks)."""
        out: dict[str, Any] = {}
        pending = list(keys)
        while pending:
            busy = []
            for key in pending:
                try:
                    with FileLock(self._path(key, ".lock"), timeout=0):
                        out[key] = self._read_or_compute(key, lambda key=key: compute(key))
                except Timeout:
                    busy.append(key)
            if busy:  # all the rest is in progress elsewhere: wait for the first, then look again
                first, busy = busy[0], busy[1:]
                out[first] = self.get(first, lambda first=first: compute(first))
            pending = busy
        return out

    def _read_or_compute(self, key: str, compute: Callable[[], Any]) -> Any:
        path = self._path(key, ".json")
        if path.exists():
            return json.loads(path.read_text())
        value = compute()
        partial = path.with_suffix(f".{os.getpid()}.partial")
        partial.write_text(json.dumps(value))
        os.replace(partial, path)  # readers never see half a file
        return value
