"""attack: survive the limits by ignoring signals: masked_softmax ignores SIGTERM, SIGINT, SIGALRM,
SIGHUP, SIGXCPU, SIGUSR1/2 and SIGVTALRM, blocks what it can, then busy-loops (inside the sandbox;
1 s elsewhere).
expect: the CPU limit (SIGKILL at the hard limit) or the wall-clock limit (SIGKILL from the fork
server) still ends it: masked_softmax scores 0 with a message naming the CPU or the time limit; the
other components get full marks.
"""
import math
import os
import sys
import time

import torch
from torch import nn

def _in_sandbox():  # hostile loops run only there (1 s bound elsewhere)
    return os.path.isdir("/sandbox/runtime")
import signal


def sequence_mask(X, valid_len, value=0):
    keep = torch.arange(X.shape[1]).unsqueeze(0) < valid_len.unsqueeze(1)
    return X.masked_fill(~keep, value)


def masked_softmax(X, valid_lens):
    names = ["SIGTERM", "SIGINT", "SIGALRM", "SIGHUP", "SIGXCPU", "SIGUSR1", "SIGUSR2", "SIGVTALRM",
             "SIGPROF", "SIGPIPE"]
    for name in names:
        try:
            signal.signal(getattr(signal, name), signal.SIG_IGN)
        except (OSError, ValueError):
            pass
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, {getattr(signal, n) for n in names})
    except (OSError, ValueError):
        pass
    end = time.monotonic() + (10 ** 6 if _in_sandbox() else 1.0)
    x = 0
    while time.monotonic() < end:
        x += 1
    return torch.softmax(X, dim=-1)


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
