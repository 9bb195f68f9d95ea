"""The fingerprinting child of the class report's similarity (run by similarity.Fingerprinting):

    PYTHONHASHSEED=0 python -m autograder.report.fingerprint IN OUT

IN holds (boilerplate, [code]) pickled; OUT gets copydetect's CodeFingerprint of each code, the
boilerplate's fingerprints left out, or for a code copydetect fails on, why (a str). copydetect hashes k-grams with Python's str hash, which is
salted per process: the same code gets other fingerprints in another process, so the report makes
them in children with a fixed seed and its scores repeat from run to run. This module imports
nothing of the kit (a child starts in about the time it takes to import copydetect).
"""
from __future__ import annotations

import io
import pickle
import sys

#: copydetect's defaults: a match must span this many filtered characters to count ...
NOISE_THRESHOLD = 25
#: ... and is certain to be found from this many (the winnowing window is the difference + 1).
GUARANTEE_THRESHOLD = 30
#: The string-hash seed of the children.
HASH_SEED = "0"


def _without_pyplot() -> None:
    """copydetect (0.5.0) imports matplotlib.pyplot when it is imported, for its own HTML report,
    which this child never makes: empty modules in their place save the child most of its start
    (about 1 s of a 1.4 s start on this machine). Only here, never in the report's own process."""
    import types
    for name in ("matplotlib", "matplotlib.pyplot"):
        sys.modules.setdefault(name, types.ModuleType(name))


def main(source: str, target: str) -> None:
    _without_pyplot()
    import numpy as np
    from copydetect import CodeFingerprint

    with open(source, "rb") as f:
        boilerplate, codes = pickle.load(f)
    hashes = CodeFingerprint("boilerplate.py", NOISE_THRESHOLD, 1, fp=io.StringIO(boilerplate)).hashes
    excluded = np.unique(np.array(sorted(hashes), dtype=np.int64)) if hashes else None
    window = GUARANTEE_THRESHOLD - NOISE_THRESHOLD + 1
    done = []
    for i, code in enumerate(codes):
        try:
            fp = CodeFingerprint(f"code{i}.py", NOISE_THRESHOLD, window, excluded, fp=io.StringIO(code))
            # the same numbers as Python ints (numpy scalars pickle ten times slower); equal values hash alike
            fp.hashes = {int(h) for h in fp.hashes}
            fp.hash_idx = {int(h): [int(j) for j in idx] for h, idx in fp.hash_idx.items()}
        except Exception as exc:  # one student's code: its own failure, said in words
            fp = f"{exc.__class__.__name__}: {' '.join(str(exc).split())[:200]}"
        done.append(fp)
    with open(target, "wb") as f:
        pickle.dump(done, f, protocol=pickle.HIGHEST_PROTOCOL)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
