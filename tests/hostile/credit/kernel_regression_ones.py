"""attack: nadaraya_watson and NWKernelRegression with the right attention weights and an all-ones y_hat (1 of 4, 1.35 of 6). (helper-60, session 42)
expect: at most 10% of each.
Composed after the course's reference code of its assignment (tests/test_credit_attacks.py).
"""
import math
from typing import Any, Optional

import torch
from torch import nn


def nadaraya_watson(queries: torch.Tensor, keys: torch.Tensor,
                    values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Non-parametric attention pooling with a Gaussian kernel.

    queries (n,), keys (m,), values (m,) -> (y_hat (n,), attention_weights (n, m)).
    """
    diffs = queries.unsqueeze(1) - keys.unsqueeze(0)  # (n, m)
    attention_weights = torch.softmax(-diffs ** 2 / 2, dim=1)  # (n, m), rows sum to 1
    y_hat = attention_weights @ values  # (n,)
    return torch.ones_like(y_hat), attention_weights


class NWKernelRegression(nn.Module):
    """Parametric attention pooling: the kernel width is a learnable scalar `w` of shape (1,)."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.w = nn.Parameter(torch.rand((1,)))

    def forward(self, queries: torch.Tensor, keys: torch.Tensor,
                values: torch.Tensor) -> torch.Tensor:
        """queries (n,), keys (n, m), values (n, m) -> (n,); weights kept in `attention_weights`."""
        diffs = (queries.unsqueeze(1) - keys) * self.w  # (n, m)
        self.attention_weights = torch.softmax(-diffs ** 2 / 2, dim=1)  # (n, m)
        return torch.ones_like((self.attention_weights * values).sum(dim=1))
