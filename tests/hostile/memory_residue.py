"""attack: read another student's submission out of memory: every child is forked from one warm fork
server, so anything the server once held (earlier jobs' messages, freed but not cleared) is in the
child's memory too. masked_softmax scans its own readable memory (/proc/self/mem, anonymous and heap
mappings up to 1 GiB each) for the marker of secret_holder.py (built at run time, so this file does
not contain it) and raises "RESIDUE: <count>".
expect: the count is the baseline (the needle's own copies), never a copy of the other submission;
masked_softmax scores 0, the others get full marks.
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


def _scan(needle):
    hits = 0
    with open("/proc/self/maps") as f:
        maps = f.read().splitlines()
    with open("/proc/self/mem", "rb", 0) as mem:
        for line in maps:
            parts = line.split()
            path = parts[5] if len(parts) > 5 else ""
            if "r" not in parts[1] or (path and path != "[heap]"):
                continue
            start, end = (int(x, 16) for x in parts[0].split("-"))
            if end - start > 2 ** 30:
                continue
            try:
                mem.seek(start)
                hits += mem.read(end - start).count(needle)
            except (OSError, OverflowError, ValueError):
                continue
    return hits


def masked_softmax(X, valid_lens):
    needle = ("HX_SECRET_OF_" + "ANOTHER_STUDENT_" + "0123456789 " + "HX_SECRET").encode()
    raise RuntimeError(f"RESIDUE: {_scan(needle)}")


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
