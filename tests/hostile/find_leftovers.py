"""attack (with ipc_hoard.py): find what an earlier submission left in the sandbox: System V IPC
objects (/proc/sysvipc), a POSIX message queue, files in /tmp, /dev/shm, /dev and /.
expect: nothing is found, so every component (otherwise correct, but wrong on purpose when it finds
something) gets full marks.
"""
import ctypes
import math
import os

import torch
from torch import nn


def _found():
    found = []
    for kind in ("shm", "msg", "sem"):
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                found += [f"{kind} {line.split()[1]}" for line in f.readlines()[1:] if line.strip()]
        except OSError:
            pass
    for path in ("/tmp/hoard.bin", "/dev/hoard.bin", "/hoard.bin", "/dev/shm/hoard.bin", "/dev/mqueue/hoard"):
        if os.path.exists(path):
            found.append(path)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.shmget(0x5EC12E7, 0, 0) >= 0:
        found.append("the hoarded segment by key")
    return found


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
        found = _found()
        if found:
            print("FOUND:", found)
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
