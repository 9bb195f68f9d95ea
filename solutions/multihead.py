"""Assignment 04: multi-head attention with the reshapes that run all heads in one batch."""
from __future__ import annotations

from typing import Optional

import torch
from torch import nn

from solutions.attention_scoring import DotProductAttention


def transpose_qkv(X: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(B, L, d) -> (B*h, L, d/h); rows b*h .. b*h+h-1 are the heads of batch item b."""
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)  # (B, L, h, d/h)
    X = X.permute(0, 2, 1, 3)  # (B, h, L, d/h)
    return X.reshape(-1, X.shape[2], X.shape[3])  # (B*h, L, d/h)


def transpose_output(X: torch.Tensor, num_heads: int) -> torch.Tensor:
    """The inverse of transpose_qkv: (B*h, L, d/h) -> (B, L, d)."""
    X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])  # (B, h, L, d/h)
    X = X.permute(0, 2, 1, 3)  # (B, L, h, d/h)
    return X.reshape(X.shape[0], X.shape[1], -1)  # (B, L, d)


class MultiHeadAttention(nn.Module):
    """h scaled dot-product attention heads over learned projections, concatenated and mixed."""

    def __init__(self, key_size: int, query_size: int, value_size: int, num_hiddens: int,
                 num_heads: int, dropout: float, bias: bool = False, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=bias)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=bias)
        self.W_v = nn.Linear(value_size, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                valid_lens: Optional[torch.Tensor]) -> torch.Tensor:
        """queries (B, Q, q), keys (B, K, k), values (B, K, v) -> (B, Q, num_hiddens)."""
        queries = transpose_qkv(self.W_q(queries), self.num_heads)  # (B*h, Q, H/h)
        keys = transpose_qkv(self.W_k(keys), self.num_heads)  # (B*h, K, H/h)
        values = transpose_qkv(self.W_v(values), self.num_heads)  # (B*h, K, H/h)
        if valid_lens is not None:
            # Every head of batch item b uses b's lengths: (B,) -> (B*h,) or (B, Q) -> (B*h, Q).
            valid_lens = torch.repeat_interleave(valid_lens, self.num_heads, dim=0)
        output = self.attention(queries, keys, values, valid_lens)  # (B*h, Q, H/h)
        return self.W_o(transpose_output(output, self.num_heads))  # (B, Q, H)
