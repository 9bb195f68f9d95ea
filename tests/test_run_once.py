"""run_once.RunStore, which test_zoo relies on to grade every catalogue entry once per run: whatever
the workers ask for, each value is computed exactly once and every caller gets all it asked for."""
from __future__ import annotations

import json
import multiprocessing
import os
import time
from pathlib import Path

from run_once import RunStore

KEYS = [f"assignment/kind/entry_{i}" for i in range(12)]


def _worker(folder: str, log: str, keys: list[str], out: str) -> None:
    def compute(key: str) -> dict:
        with open(log, "a") as f:
            f.write(f"{os.getpid()} {key}\n")
        time.sleep(0.05)  # long enough for the other worker to find the key busy
        return {"key": key, "by": os.getpid()}

    store = RunStore(Path(folder))
    got = {k: store.get(k, lambda k=k: compute(k)) for k in keys[::2]}  # some one by one...
    got.update(store.get_many(keys, compute))  # ...then all at once
    Path(out).write_text(json.dumps(got))


def test_two_workers_compute_each_value_once_and_both_get_every_value(tmp_path: Path) -> None:
    log = tmp_path / "computed.log"
    ctx = multiprocessing.get_context("spawn")  # a fresh interpreter, like an xdist worker
    procs = [ctx.Process(target=_worker, args=(str(tmp_path), str(log), order, str(tmp_path / f"out{i}.json")))
             for i, order in enumerate((KEYS, KEYS[::-1]))]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    computed = [line.split()[1] for line in log.read_text().splitlines()]
    assert sorted(computed) == sorted(KEYS)  # each exactly once
    outs = [json.loads((tmp_path / f"out{i}.json").read_text()) for i in range(2)]
    assert outs[0] == outs[1] and set(outs[0]) == set(KEYS)
    assert all(v["key"] == k for k, v in outs[0].items())
