"""attack: AdditiveAttention and DotProductAttention store the right attention_weights and return all ones. The
catalogue knows the all-zeros version only, so the weights' reference parts kept their share (0.82 and 0.78 of 4). (helper-60, session 42)
expect: side outputs earn in proportion to the outputs' agreement: at most 10% of each.
Composed after the course's reference code of its assignment (tests/test_credit_attacks.py).
"""
import math
from typing import Any, Optional

import torch
from torch import nn


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
        return torch.ones(queries.shape[0], queries.shape[1], values.shape[-1], dtype=values.dtype)


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
        return torch.ones(queries.shape[0], queries.shape[1], values.shape[-1], dtype=values.dtype)
