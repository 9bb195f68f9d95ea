"""attack: EncoderBlock whose forward is `return self.ffn(X)` beside an `fnn` attribute, so every call raises the
catalogue mutant encblock_fnn_typo's AttributeError: every failure had that mutant's text (2.0 of 4). (helper-60, session 42)
expect: a crash is no evidence for the floor: at most 10% of EncoderBlock.
Composed after the course's reference code of its assignment (tests/test_credit_attacks.py).
"""
import math
from typing import Any, Optional

import torch
from torch import nn


class EncoderBlock(nn.Module):
    def __init__(self, key_size, query_size, value_size, num_hiddens, norm_shape, ffn_num_input,
                 ffn_num_hiddens, num_heads, dropout, use_bias=False, **kwargs):
        super().__init__(**kwargs)
        self.attention = MultiHeadAttention(key_size, query_size, value_size, num_hiddens,
                                            num_heads, dropout, use_bias)
        self.addnorm1 = AddNorm(norm_shape, dropout)
        self.fnn = PositionWiseFFN(ffn_num_input, ffn_num_hiddens, num_hiddens)
        self.addnorm2 = AddNorm(norm_shape, dropout)

    def forward(self, X, valid_lens):
        return self.ffn(X)  # nothing else: forward computes nothing at all
