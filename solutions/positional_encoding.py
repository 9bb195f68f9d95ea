"""Assignment 05: sinusoidal positional encoding for self-attention."""
from __future__ import annotations

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    """Add P[0, i, 2j] = sin(i / 10000^(2j/d)), P[0, i, 2j+1] = cos(...) to the input, then dropout."""

    def __init__(self, num_hiddens: int, dropout: float, max_len: int = 1000) -> None:
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        positions = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1)  # (max_len, 1)
        frequencies = torch.pow(
            10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)  # (ceil(d/2),)
        angles = positions / frequencies  # (max_len, ceil(d/2))
        P = torch.zeros((1, max_len, num_hiddens))
        P[0, :, 0::2] = torch.sin(angles)
        P[0, :, 1::2] = torch.cos(angles[:, : num_hiddens // 2])  # odd d: one fewer cosine column
        # A buffer, not a parameter: it moves with .to(device) and is never trained or saved.
        self.register_buffer("P", P, persistent=False)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        """X (B, T, d) -> X + P[:, :T] with dropout, (B, T, d)."""
        return self.dropout(X + self.P[:, : X.shape[1], :].to(X.device))
