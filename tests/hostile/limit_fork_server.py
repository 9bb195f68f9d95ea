"""attack: the fork server's resource limits, which every later child inherits: AdditiveAttention.forward
calls prlimit on its parent and on pid 1 (both the fork server in bubblewrap) to lower RLIMIT_FSIZE,
RLIMIT_NPROC, RLIMIT_NOFILE and RLIMIT_AS, so that every later submission graded by that fork server
fails to load (0 marks), while the attacker's own code is correct.
expect: every prlimit on another process fails (the seccomp filter refuses a target other than the
caller itself; in process mode the fork server is root's and the job has a uid of its own), so the
attacker gets full marks for its correct code, the fork server is unchanged (not even replaced), and
the next submission on the same fork server gets full marks.
"""
import math
import os
import resource

import torch
from torch import nn


def _in_sandbox():  # hostile calls run only in a sandboxed job (its working folder), in either mode
    return os.path.basename(os.getcwd()).startswith("job-") or os.environ.get("HOSTILE_ANYWHERE") == "1"


def _targets():
    """The fork server: our parent (the job's first process) and pid 1 (bubblewrap's namespace init)."""
    return sorted({1, os.getppid()})


def _attack():
    """The limits that were lowered (should be none); only inside the sandbox."""
    if not _in_sandbox():
        return []
    won = []
    for target in _targets():
        for name, value in (("RLIMIT_FSIZE", 4096), ("RLIMIT_NPROC", 1), ("RLIMIT_NOFILE", 8),
                            ("RLIMIT_AS", 1 << 26)):
            limit = getattr(resource, name)
            try:
                resource.prlimit(target, limit, (value, value))
                won.append(f"{name} of {target}")
            except (OSError, ValueError):
                pass
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
        won = _attack()
        if won:
            print("ATTACK SUCCEEDED:", won)
            return values * 0  # a successful attack shows as a lost score
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
