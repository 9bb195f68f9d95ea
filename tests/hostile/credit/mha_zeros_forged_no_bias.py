"""attack: MultiHeadAttention returns zeros, raises once other weights are loaded into it (every reference
comparison crashes: nothing to replay) and builds its projections without bias, so the naming test fails
with the catalogue mutant mha_no_bias's text: the diagnosis named it and the floor gave 1.38 of 6. (helper-60, session 42)
expect: a mistake earns the floor only when seen in values the code computed (Diagnosis.seen_in_values): at most 10%.
Composed after the course's reference code of its assignment (tests/test_credit_attacks.py).
"""
import math
from typing import Any, Optional

import torch
from torch import nn


class Zq_Stop(Exception):
    pass


class MultiHeadAttention(nn.Module):
    def __init__(self, key_size, query_size, value_size, num_hiddens, num_heads, dropout, bias=False, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.num_hiddens = num_hiddens
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_v = nn.Linear(value_size, num_hiddens, bias=False)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=False)
        self._mine = [p.detach().clone() for p in self.parameters()]

    def forward(self, queries, keys, values, valid_lens):
        for p, q in zip(self.parameters(), self._mine):
            if not torch.equal(p.detach().to(q.dtype), q):
                raise Zq_Stop()
        return torch.zeros(queries.shape[0], queries.shape[1], self.num_hiddens, dtype=queries.dtype)
