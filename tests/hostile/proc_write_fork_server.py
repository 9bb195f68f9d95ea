"""attack: the fork server's /proc files, which answer to the job's uid where the kernel's checks are
by uid alone (bubblewrap as root maps the job to root outside): AdditiveAttention.forward writes the
fork server's (its parent and pid 1) oom_score_adj (1000: the kernel's first choice to kill, and every
later child inherits it), coredump_filter, autogroup nice and sched, so that the fork server changes
under every later submission, while the attacker's own code is correct. It also writes a host-wide
sysctl (kernel.pid_max, the value it holds: a write that goes through changes nothing).
expect: every write is refused (Landlock: a job writes only its scratch space, /tmp and /dev/shm in
bubblewrap, its own folder in process mode), so the attacker gets full marks for its correct code,
the fork server is unchanged (not even replaced), and the next submission on the same fork server
gets full marks.
"""
import math
import os

import torch
from torch import nn


def _in_sandbox():  # hostile calls run only in a sandboxed job (its working folder), in either mode
    return os.path.basename(os.getcwd()).startswith("job-") or os.environ.get("HOSTILE_ANYWHERE") == "1"


def _targets():
    """The fork server: our parent (the job's first process) and pid 1 (bubblewrap's namespace init)."""
    return sorted({1, os.getppid()})


_WRITES = (("oom_score_adj", "1000"), ("coredump_filter", "0x0"), ("autogroup", "19"), ("sched", "0"))


def _attack():
    """The fork server's files that took a write (should be none); only inside the sandbox."""
    if not _in_sandbox():
        return []
    won = []
    for target in _targets():
        for name, value in _WRITES:
            try:
                with open(f"/proc/{target}/{name}", "w") as f:
                    f.write(value)
                won.append(f"/proc/{target}/{name}")
            except OSError:
                pass
    try:
        with open("/proc/sys/kernel/pid_max") as f:
            value = f.read()
        with open("/proc/sys/kernel/pid_max", "w") as f:
            f.write(value)
        won.append("/proc/sys/kernel/pid_max")
    except OSError:
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
