"""attack: take the grader's fork server down: AdditiveAttention.forward sends SIGKILL to its parent
process (the sandbox's fork server), then sleeps.
expect: AdditiveAttention scores 0 with a message saying the sandbox was stopped; the grader starts a
new sandbox, so DotProductAttention (graded after it) and the next submission are graded normally.
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

    def forward(self, queries, keys, values, valid_lens):
        if _in_sandbox():
            os.kill(os.getppid(), signal.SIGKILL)
            time.sleep(30)
        return values


class DotProductAttention(nn.Module):
    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(queries.shape[-1])
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
