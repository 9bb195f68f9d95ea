"""Assignment 02: masking, masked softmax, additive and scaled dot-product attention."""
from __future__ import annotations

import math
from typing import Optional

import torch
from torch import nn


def sequence_mask(X: torch.Tensor, valid_len: torch.Tensor, value: float = 0) -> torch.Tensor:
    """Return a copy of X (N, L) whose entries at positions >= valid_len[i] of row i are `value`."""
    positions = torch.arange(X.shape[1], device=X.device)  # (L,)
    keep = positions.unsqueeze(0) < valid_len.unsqueeze(1)  # (N, L)
    return X.masked_fill(~keep, value)


def masked_softmax(X: torch.Tensor, valid_lens: Optional[torch.Tensor]) -> torch.Tensor:
    """Softmax over the last axis of X (B, Q, K), giving weight exactly 0 past each valid length.

    valid_lens is None, (B,) (one length per batch item) or (B, Q) (one per query).
    """
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])  # (B*Q,)
    else:
        valid_lens = valid_lens.reshape(-1)  # (B*Q,)
    # The most negative finite number, not 0: exp(fill - row max) underflows to exactly 0.
    fill = torch.finfo(X.dtype).min
    # A copy: sequence_mask may work in place (the contract allows it), and the caller's X must not change.
    X = sequence_mask(X.reshape(-1, shape[-1]).clone(), valid_lens, value=fill)  # (B*Q, K)
    return torch.softmax(X.reshape(shape), dim=-1)


class AdditiveAttention(nn.Module):
    """Additive (MLP) attention: score(q, k) = w_v^T tanh(W_q q + W_k k)."""

    def __init__(self, key_size: int, query_size: int, num_hiddens: int, dropout: float,
                 **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                valid_lens: Optional[torch.Tensor]) -> torch.Tensor:
        """queries (B, Q, q), keys (B, K, k), values (B, K, v) -> (B, Q, v)."""
        queries, keys = self.W_q(queries), self.W_k(keys)  # (B, Q, H), (B, K, H)
        features = torch.tanh(queries.unsqueeze(2) + keys.unsqueeze(1))  # (B, Q, K, H)
        scores = self.w_v(features).squeeze(-1)  # (B, Q, K)
        self.attention_weights = masked_softmax(scores, valid_lens)  # (B, Q, K), before dropout
        return torch.bmm(self.dropout(self.attention_weights), values)  # (B, Q, v)


class DotProductAttention(nn.Module):
    """Scaled dot-product attention: softmax(Q K^T / sqrt(d)) V."""

    def __init__(self, dropout: float, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                valid_lens: Optional[torch.Tensor] = None) -> torch.Tensor:
        """queries (B, Q, d), keys (B, K, d), values (B, K, v) -> (B, Q, v)."""
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)  # (B, Q, K)
        self.attention_weights = masked_softmax(scores, valid_lens)  # (B, Q, K), before dropout
        return torch.bmm(self.dropout(self.attention_weights), values)  # (B, Q, v)
