"""Hypothesis strategies and tensor builders shared by the course's suites (public and hidden).

    from autograder.selfcheck import strategies as S

* `SEEDS`, `FLOAT_DTYPES`: the strategies for value seeds and for the float dtypes a test runs in;
* `valid_lens(draw, kind, batch, max_len, ...)`: valid lengths None, (batch,) or (batch, queries);
* `randn(shape, seed, dtype, scale)`: seeded standard-normal tensors, the same numbers in every dtype;
* `changed_at(args, which, index, seed)`: arguments with new values at one index of some of them (what a
  dependence test changes: testing.assert_depends_like).

Hypothesis runs derandomized in the course profile: the examples a test sees follow from the exact
sequence of draws it makes (and from the test function's own source). `valid_lens` therefore makes
its draws directly with the caller's `draw` (no strategy wrapped around them), so a suite that moves
to it keeps its examples; changing a draw here changes the examples of every test that uses it, so
run the catalogue (`python -m autograder.catalogue.zoo <assignment>`) after any change.

This module ships to students with the public tests (the self-check bundle): it must stay free of
reference solutions.
"""
from __future__ import annotations

from typing import Any, Optional, Union
from collections.abc import Callable, Sequence

import torch
from hypothesis import strategies as st

#: Seeds for the values of a drawn problem (tensors are built from a seed, not drawn element-wise).
SEEDS = st.integers(0, 2 ** 16)
#: The float dtypes a component must handle.
FLOAT_DTYPES = st.sampled_from([torch.float32, torch.float64])
#: The forms of `valid_lens`: None (no masking), one length per batch item, one length per query.
LENS_KINDS = ("none", "1d", "2d")

#: `draw` of a `@st.composite` strategy, or `data.draw` of `st.data()`.
Draw = Callable[..., Any]


def valid_lens(draw: Draw, kind: str, batch: int, max_len: int, *, queries: int = 1, low: int = 1,
               label: Optional[str] = None) -> Optional[torch.Tensor]:
    """Draw valid lengths of one of the `LENS_KINDS`, each in low..max_len (int64).

    "none" gives None (draws nothing); "1d" a (batch,) tensor, one length per batch item; "2d" a
    (batch, queries) tensor, one length per query (drawn as one flat list in (batch, query) order).
    `label` names the draw in hypothesis' reports of a failing example.
    """
    if kind == "none":
        return None
    if kind not in ("1d", "2d"):
        raise ValueError(f"valid_lens kind must be one of {LENS_KINDS}, got {kind!r}")
    n = batch if kind == "1d" else batch * queries
    lengths = draw(st.lists(st.integers(low, max_len), min_size=n, max_size=n), label=label)
    lens = torch.tensor(lengths, dtype=torch.long)
    return lens if kind == "1d" else lens.reshape(batch, queries)


def generator(seed: int) -> torch.Generator:
    """A CPU generator seeded with `seed` (the grader's own random stream, apart from torch's global one)."""
    return torch.Generator().manual_seed(int(seed))


def randn(shape: Sequence[int], seed: Union[int, torch.Generator], dtype: torch.dtype = torch.float32,
          scale: float = 1.0) -> torch.Tensor:
    """Standard-normal values of this shape times `scale`, drawn in float64 and then cast to `dtype`.

    `seed` is an int (a fresh generator) or a generator to continue. Drawing in float64 gives the
    same numbers in every dtype, so a float32 and a float64 run of a test see the same problem.
    """
    g = seed if isinstance(seed, torch.Generator) else generator(seed)
    return (torch.randn(tuple(shape), generator=g, dtype=torch.float64) * scale).to(dtype)


def changed_at(args: Sequence[Any], which: Union[int, Sequence[int]], index: Any,
               seed: Union[int, torch.Generator], scale: float = 2.0) -> list[Any]:
    """`args` with new standard-normal values times `scale` (`randn`, in each argument's dtype) at `index` of the
    arguments numbered `which` (one or several, drawn in that order from `seed`); every tensor copied, the other
    arguments as they are. `which=()` gives a plain copy."""
    out = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    for n in ([which] if isinstance(which, int) else which):
        out[n][index] = randn(tuple(out[n][index].shape), seed, out[n].dtype, scale)
    return out
