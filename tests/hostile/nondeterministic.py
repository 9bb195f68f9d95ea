"""attack: nondeterministic answers: every call adds fresh noise (torch and random generators) to
the right answer of masked_softmax and sequence_mask, so a lucky run might pass.
expect: the noise is far above the tolerance, so both score 0; the child's generators are seeded
by the grader before every test, so two gradings give identical results (apart from timing);
AdditiveAttention and DotProductAttention (graded with the reference masked_softmax) get full marks.
"""
import math
import os
import sys
import time

import torch
from torch import nn

import random


def sequence_mask(X, valid_len, value=0):
    keep = torch.arange(X.shape[1]).unsqueeze(0) < valid_len.unsqueeze(1)
    return X.masked_fill(~keep, value) + random.random() * torch.rand(X.shape, dtype=X.dtype)


def masked_softmax(X, valid_lens):
    if valid_lens is None:
        out = torch.softmax(X, dim=-1)
    else:
        shape = X.shape
        lens = torch.repeat_interleave(valid_lens, shape[1]) if valid_lens.dim() == 1 else valid_lens.reshape(-1)
        keep = torch.arange(shape[-1]).unsqueeze(0) < lens.unsqueeze(1)
        out = torch.softmax(X.reshape(-1, shape[-1]).masked_fill(~keep, -1e9).reshape(shape), dim=-1)
    return out + 0.01 + torch.rand(out.shape, dtype=out.dtype) * random.random()


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
