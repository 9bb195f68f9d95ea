"""attack: sys.exit(0) while the submission loads (inside a class body, which the loader runs),
hoping the grader reads a clean exit as success.
expect: the loader catches SystemExit, notes "SystemExit raised at load time" and goes on; every
component is graded normally (full marks: the rest of the file is correct).
"""
import math
import os
import sys
import time

import torch
from torch import nn


def sequence_mask(X, valid_len, value=0):
    keep = torch.arange(X.shape[1]).unsqueeze(0) < valid_len.unsqueeze(1)
    return X.masked_fill(~keep, value)


def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=torch.finfo(X.dtype).min)
    return torch.softmax(X.reshape(shape), dim=-1)


class _Leave:
    sys.exit(0)


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
