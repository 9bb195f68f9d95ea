"""attack: peek at the caller's stack: masked_softmax walks sys._getframe(1), (2), ... and every
frame's locals, looking for the test's `expected`/`ref`/`student` values or any frame of the test
suites, pytest or the grader, and raises an error reporting what it saw ("FRAMES: [...]").
expect: only frames of the sandbox's own runtime (child.py, zygote.py) are there, none holds
`expected`/`ref`, none belongs to pytest, the suites or autograder; masked_softmax scores 0.
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
    seen = []
    depth = 1
    while True:
        try:
            frame = sys._getframe(depth)
        except ValueError:
            break
        names = sorted(frame.f_locals)
        leaks = [n for n in names if n in ("expected", "ref", "student", "reference", "y_ref", "w_ref")]
        seen.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name} leaks={leaks}")
        depth += 1
    raise RuntimeError(f"FRAMES: {seen}")


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
