"""attack: a bounded fork storm: sequence_mask forks 24 children (process name "hx_storm") that keep
the stdout/stderr pipe open and sleep, then sleeps itself (a hang, inside the sandbox only);
masked_softmax forks 24 more, then answers correctly. At most 48 extra processes, each sleeping
60 s at most.
expect: the grader does not hang on the open pipe: sequence_mask scores 0 with the time limit,
masked_softmax gets full marks, the others are graded normally, and no "hx_storm" process is left
once each component is done.
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


def _storm(n):
    for _ in range(n):
        try:
            pid = os.fork()
        except OSError:
            return
        if pid == 0:
            try:
                ctypes.CDLL(None).prctl(15, b"hx_storm", 0, 0, 0)  # PR_SET_NAME
                os.setsid()
                print("storm child holding the pipe", flush=True)
                time.sleep(60 if _in_sandbox() else 1)
            finally:
                os._exit(0)


def sequence_mask(X, valid_len, value=0):
    _storm(24)
    time.sleep(600 if _in_sandbox() else 0.1)
    keep = torch.arange(X.shape[1]).unsqueeze(0) < valid_len.unsqueeze(1)
    return X.masked_fill(~keep, value)


def masked_softmax(X, valid_lens):
    if not getattr(masked_softmax, "stormed", False):
        masked_softmax.stormed = True
        _storm(24)
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    keep = torch.arange(shape[-1]).unsqueeze(0) < valid_lens.unsqueeze(1)
    X = X.reshape(-1, shape[-1]).masked_fill(~keep, torch.finfo(X.dtype).min)
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
