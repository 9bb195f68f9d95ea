"""attack: huge allocations: 1 PiB of bytes at load time (a "pure" statement, so the loader runs it)
and 8 GiB of float32 inside masked_softmax, far above limits.memory_mb.
expect: the load-time allocation is refused (MemoryError, noted) and loading goes on; masked_softmax
scores 0 with "ran out of memory (limit: N MB above the interpreter)" (the address-space limit
refuses the 8 GiB); the other components get full marks. Safe anywhere: 1 PiB is more than any
address space, and torch.empty never touches the 8 GiB it may get outside the sandbox.
"""
import math
import os
import sys
import time

import torch
from torch import nn


_HOARD = b"x" * 2 ** 50


def sequence_mask(X, valid_len, value=0):
    keep = torch.arange(X.shape[1]).unsqueeze(0) < valid_len.unsqueeze(1)
    return X.masked_fill(~keep, value)


def masked_softmax(X, valid_lens):
    hoard = torch.empty(2 ** 31, dtype=torch.float32)
    return hoard[: X.numel()].reshape(X.shape)


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
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(queries.shape[-1])
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
