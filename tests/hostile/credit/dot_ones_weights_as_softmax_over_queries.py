"""attack: a DotProductAttention that gives every key the weight 1 (the queries and keys only touched as 0 * x.sum()),
so each query gets the sum of the values. With one query, a softmax over the queries' axis gives these weights too:
the replays of dot_softmax_over_queries reproduced most failures, the mistake was named and its floor paid 1.70 of 4.
(helper-70, session 46)
expect: the degenerate version (weights all 1) reproduces every failure a replay reproduced and the named mistake does
not: no mistake is named, the code is degenerate, at most 10%.
Composed after the course's reference code of its assignment (tests/test_credit_attacks.py).
"""
import torch
from torch import nn


class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        w = torch.ones(queries.shape[0], queries.shape[1], keys.shape[1], dtype=queries.dtype, device=queries.device)
        w = w + 0 * queries.sum() + 0 * keys.sum()  # (B, Q, K), whatever the queries and keys
        self.attention_weights = w
        return torch.bmm(self.dropout(w), values)
