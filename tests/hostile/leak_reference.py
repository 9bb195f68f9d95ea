"""attack: read the course's reference code out through feedback. This submission's masked_softmax
is broken, so the children of AdditiveAttention and DotProductAttention are handed the course's
masked_softmax (no double penalty); their forward finds that source in the job (a local of the child's loop), prints it, and raises
an exception whose message is the source.
expect: before the assignment's due date, no line of the course's masked_softmax or sequence_mask
reaches anything the student sees (feedback, printed output, results file): those components'
details are withheld with a message that says why; their scores are unchanged.
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


def _leak():
    if not os.path.isdir("/sandbox/runtime"):
        return
    sources = []  # the job the child was handed: a local of the child's serve loop, a few frames up
    frame = sys._getframe()
    while frame is not None:
        job = frame.f_locals.get("job")
        if isinstance(job, dict):
            sources += [src for src in job.get("modules", {}).values() if "def masked_softmax" in src]
        frame = frame.f_back
    text = max(sources, key=len) if sources else ""
    print(text)
    raise ValueError(text[-1900:])


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
    X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=0)  # broken: masked positions keep weight
    return torch.softmax(X.reshape(shape), dim=-1)


class AdditiveAttention(nn.Module):
    def __init__(self, key_size, query_size, num_hiddens, dropout, **kwargs):
        super().__init__(**kwargs)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        _leak()
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
