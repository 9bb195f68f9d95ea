"""attack: BaseExceptions and exits inside methods: sequence_mask raises KeyboardInterrupt,
masked_softmax raises SystemExit(0), DotProductAttention.forward calls os._exit(0).
expect: sequence_mask, masked_softmax and DotProductAttention score 0 with "your code raised
KeyboardInterrupt" / "SystemExit" / "the process exited"; AdditiveAttention gets full marks.
"""
import math
import os
import sys
import time

import torch
from torch import nn


def sequence_mask(X, valid_len, value=0):
    raise KeyboardInterrupt


def masked_softmax(X, valid_lens):
    raise SystemExit(0)


class AdditiveAttention(nn.Module):
    def __init__(self, key_size, query_size, num_hiddens, dropout, **kwargs):
        super().__init__(**kwargs)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        queries, keys = self.W_q(queries), self.W_k(keys)
        scores = self.w_v(torch.tanh(queries.unsqueeze(2) + keys.unsqueeze(1))).squeeze(-1)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class DotProductAttention(nn.Module):
    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)

    def forward(self, queries, keys, values, valid_lens=None):
        os._exit(0)
