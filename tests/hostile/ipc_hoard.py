"""attack: memory outside every limit. AdditiveAttention.forward creates a 256 MiB System V shared
memory segment and a POSIX message queue, writes 300 MiB into /tmp and 100 MiB into /dev and /,
and leaves them for later submissions (find_leftovers.py looks for them).
expect: the IPC calls are denied (seccomp), /dev and / are read-only, /tmp is capped at its size and
wiped after the job; the attacker's own components get full marks (its code is correct), and
find_leftovers.py, graded next by the same fork server, finds nothing.
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


def _hoard():
    if not os.path.isdir("/sandbox/runtime"):
        return []
    libc = ctypes.CDLL(None, use_errno=True)
    won = []
    shm = libc.shmget(0x5EC12E7, 256 << 20, 0o1000 | 0o666)  # IPC_CREAT
    if shm >= 0:
        won.append(f"shmget {shm}")
        addr = libc.shmat(shm, None, 0)
        if addr not in (-1, None):
            ctypes.memset(addr, 7, 256 << 20)
    if libc.mq_open(b"/hoard", 0o100 | 0o2, 0o666, None) >= 0:  # O_CREAT | O_RDWR
        won.append("mq_open")
    chunk = b"x" * (1 << 20)
    for folder, mib in (("/tmp", 300), ("/dev", 100), ("/", 100)):
        written = 0
        try:
            with open(os.path.join(folder, "hoard.bin"), "wb") as f:
                for _ in range(mib):
                    f.write(chunk)
                    written += 1
        except OSError:
            pass
        if folder != "/tmp" and written:
            won.append(f"wrote {written} MiB into {folder}")
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
        won = _hoard()
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
