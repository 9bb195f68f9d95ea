"""attack: read the grading machine's secrets. The sandbox's uid is mapped to the uid that runs the
grader, so when grading as root every root-owned file the sandbox can see is readable by the child:
/etc/shadow, /etc/gshadow, /etc/ssl/private, ssh host keys, sudoers. masked_softmax reads what it
can and raises "SECRETS: [...]" with the paths it could read; it also reports how big its writable
/tmp and /dev/shm are ("TMPFS: ..."), since an unbounded tmpfs lets a job fill the host's memory.
expect: none of those files is readable (they are not in the sandbox); /tmp and /dev/shm are small
size-limited tmpfs; masked_softmax scores 0, the others get full marks.
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

_SECRETS = ["/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/sudoers", "/etc/ssl/private",
            "/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ed25519_key", "/root/.ssh/id_rsa",
            "/root/.bash_history"]


def masked_softmax(X, valid_lens):
    readable = []
    for path in _SECRETS:
        try:
            if os.path.isdir(path):
                os.listdir(path)
            else:
                with open(path, "rb") as f:
                    f.read(16)
            readable.append(path)
        except OSError:
            pass
    sizes = {}
    for folder in ("/tmp", "/dev/shm"):
        try:
            st = os.statvfs(folder)
            sizes[folder] = st.f_blocks * st.f_frsize // 2 ** 20
        except OSError:
            sizes[folder] = None
    raise RuntimeError(f"SECRETS: {readable} TMPFS: {sizes}")


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
