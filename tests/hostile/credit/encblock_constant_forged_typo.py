"""attack: EncoderBlock returning a constant normalized vector, raising once other weights are loaded, with the
fnn typo's structure for the naming test (0.71 of 4). (helper-60, session 42)
expect: at most 10% of EncoderBlock.
Composed after the course's reference code of its assignment (tests/test_credit_attacks.py).
"""
import math
from typing import Any, Optional

import torch
from torch import nn


class Zq_Stop(Exception):
    pass


class EncoderBlock(nn.Module):
    def __init__(self, key_size, query_size, value_size, num_hiddens, norm_shape, ffn_num_input,
                 ffn_num_hiddens, num_heads, dropout, use_bias=False, **kwargs):
        super().__init__(**kwargs)
        self.attention = MultiHeadAttention(key_size, query_size, value_size, num_hiddens,
                                            num_heads, dropout, use_bias)
        self.addnorm1 = AddNorm(norm_shape, dropout)
        self.fnn = PositionWiseFFN(ffn_num_input, ffn_num_hiddens, num_hiddens)
        self.addnorm2 = AddNorm(norm_shape, dropout)
        self._mine = [p.detach().clone() for p in self.parameters()]

    def forward(self, X, valid_lens):
        for p, q in zip(self.parameters(), self._mine):
            if not torch.equal(p.detach().to(q.dtype), q):
                raise Zq_Stop()
        d = X.shape[-1]
        v = torch.tensor([1.0 if j % 2 == 0 else -1.0 for j in range(d)], dtype=X.dtype)
        return v.expand(X.shape).clone()
