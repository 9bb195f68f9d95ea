"""Pay torch's first-use costs once, in a process that forks others (the zygote, grading workers).

Building an optimizer imports torch._dynamo and the first backward through masking imports
torch.fx's symbolic shapes (with sympy): seconds each, which every forked child would otherwise
pay again.
"""
from __future__ import annotations

import importlib

import torch

#: Modules the course's notebooks import besides torch. A forked child that imports them again
#: finds them in sys.modules; each would otherwise cost every child ~0.5 s (matplotlib.pyplot).
PRELOAD = ("numpy", "matplotlib", "matplotlib.pyplot")


def preload() -> None:
    """Import PRELOAD (those that are installed) before any job runs."""
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:
            pass


def warm_up(optimizers: bool = True) -> None:
    """Run a little of what tests run. `optimizers=False` skips the ~1 s import of torch._dynamo
    that the first torch.optim optimizer triggers (only training tests build one)."""
    x = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    lens = torch.repeat_interleave(torch.tensor([1, 3]), 3)
    keep = torch.arange(4).unsqueeze(0) < lens.unsqueeze(1)
    y = torch.softmax(x.reshape(-1, 4).masked_fill(~keep, -1e6), dim=-1)
    # With explicit output gradients (as in gradient tests), autograd imports torch.fx's symbolic
    # shapes and sympy (~0.3 s) on first use.
    torch.autograd.grad(y, [x], torch.ones_like(y))
    layers = torch.nn.Sequential(torch.nn.Embedding(5, 4), torch.nn.LayerNorm(4), torch.nn.Dropout(0.1))
    gru = torch.nn.GRU(4, 4, 2)
    params = list(layers.parameters()) + list(gru.parameters())
    out, _ = gru(layers(torch.tensor([[1, 2, 3]])).permute(1, 0, 2))
    out.sum().backward()
    if not optimizers:
        return
    for opt in (torch.optim.Adam(params, lr=1e-3), torch.optim.SGD(params, lr=1e-3)):
        opt.zero_grad()
        out, _ = gru(layers(torch.tensor([[1, 2, 3]])).permute(1, 0, 2))
        out.sum().backward()
        opt.step()
