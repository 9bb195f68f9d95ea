"""attack: (lazy) outputs of the right shape and dtype, filled with zeros; the attention modules have
the right parameters.
expect: every component scores 0, each failure naming the wrong values (not a crash).
"""
import math
import os
import sys
import time

import torch
from torch import nn


def sequence_mask(X, valid_len, value=0):
    return torch.zeros_like(X)


def masked_softmax(X, valid_lens):
    return torch.zeros_like(X)


class AdditiveAttention(nn.Module):
    def __init__(self, key_size, query_size, num_hiddens, dropout, **kwargs):
        super().__init__(**kwargs)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)

    def forward(self, queries, keys, values, valid_lens):
        self.attention_weights = torch.zeros(queries.shape[0], queries.shape[1], keys.shape[1])
        return torch.zeros(queries.shape[0], queries.shape[1], values.shape[-1], dtype=values.dtype)


class DotProductAttention(nn.Module):
    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)

    def forward(self, queries, keys, values, valid_lens=None):
        self.attention_weights = torch.zeros(queries.shape[0], queries.shape[1], keys.shape[1])
        return torch.zeros(queries.shape[0], queries.shape[1], values.shape[-1], dtype=values.dtype)
