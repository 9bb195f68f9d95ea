"""A learner's 01 whose NWKernelRegression stores `self.attention_weight` (singular): its predictions
are correct; only the tests that read the contract's `attention_weights` may fail.
"""
"""Assignment 01: Nadaraya-Watson kernel regression as attention pooling."""

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
    return y_hat, attention_weights


class NWKernelRegression(nn.Module):
    """Parametric attention pooling: the kernel width is a learnable scalar `w` of shape (1,)."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.w = nn.Parameter(torch.rand((1,)))

    def forward(self, queries: torch.Tensor, keys: torch.Tensor,
                values: torch.Tensor) -> torch.Tensor:
        """queries (n,), keys (n, m), values (n, m) -> (n,); weights kept in `attention_weights`."""
        diffs = (queries.unsqueeze(1) - keys) * self.w  # (n, m)
        self.attention_weight = torch.softmax(-diffs ** 2 / 2, dim=1)  # (n, m)
        return (self.attention_weight * values).sum(dim=1)  # (n,)
