"""attack: leave files behind for whoever runs next in the same sandbox: sequence_mask (graded first)
writes "hx_left_behind" files into its working directory, /tmp and /dev/shm, then answers correctly;
masked_softmax (graded next, in a fresh child) looks for files it did not create in /tmp, /dev/shm
and the parent of its working directory, and fails with "LEFTOVERS: [...]" if there are any.
expect: each job starts with an empty /tmp and /dev/shm (apart from its own working directory):
every component gets full marks.
"""
import math
import os
import sys
import time

import torch
from torch import nn


def sequence_mask(X, valid_len, value=0):
    for folder in (".", "/tmp", "/dev/shm"):
        try:
            with open(os.path.join(folder, "hx_left_behind"), "w") as f:
                f.write("planted by an earlier job\n")
        except OSError:
            pass
    keep = torch.arange(X.shape[1]).unsqueeze(0) < valid_len.unsqueeze(1)
    return X.masked_fill(~keep, value)


def masked_softmax(X, valid_lens):
    mine = os.path.abspath(os.getcwd())
    foreign = []
    for folder in ("/tmp", "/dev/shm", os.path.dirname(mine)):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        foreign += [os.path.join(folder, n) for n in names if os.path.join(folder, n) != mine]
    if foreign:
        raise RuntimeError(f"LEFTOVERS: {sorted(set(foreign))}")
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    # Masked here, not by this file's sequence_mask: that one plants files, and (passing its tests)
    # it is the one this child would use (the dependency rule).
    flat = X.reshape(-1, shape[-1])
    keep = torch.arange(shape[-1]).unsqueeze(0) < valid_lens.unsqueeze(1)
    X = flat.masked_fill(~keep, torch.finfo(X.dtype).min)
    return torch.softmax(X.reshape(shape), dim=-1)


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
