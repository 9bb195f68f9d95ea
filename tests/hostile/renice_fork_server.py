"""attack: the fork server's scheduling, which every later child inherits: AdditiveAttention.forward
sets its parent and pid 1 (the fork server in bubblewrap) to SCHED_IDLE, nice 19, one CPU and the idle
I/O class, and probes the calls that act on every process of a uid (setpriority PRIO_USER,
ioprio_set IOPRIO_WHO_USER) and of a process group with harmless values (a uid and a group nobody
has, an invalid I/O priority), so that only the filter's answer tells whether they were reachable.
expect: every call that names another target is refused with EPERM by the seccomp filter (the
harmless probes included: without the filter the kernel answers ESRCH or EINVAL), the attacker gets
full marks for its correct code, the fork server's scheduling is unchanged, and the next submission
on the same fork server gets full marks.
"""
import ctypes
import errno
import math
import os

import torch
from torch import nn


def _in_sandbox():  # hostile calls run only in a sandboxed job (its working folder), in either mode
    return os.path.basename(os.getcwd()).startswith("job-") or os.environ.get("HOSTILE_ANYWHERE") == "1"


def _targets():
    """The fork server: our parent (the job's first process) and pid 1 (bubblewrap's namespace init)."""
    return sorted({1, os.getppid()})


_IOPRIO_SET = {"x86_64": 251, "aarch64": 30}  # the grader loads definitions and literal constants only


def _reached(call):
    """True when the kernel (not the filter) answered: success, or any error but EPERM."""
    try:
        call()
    except OSError as exc:
        return exc.errno != errno.EPERM
    return True


def _ioprio_set(which, who, value):
    number = _IOPRIO_SET.get(os.uname().machine)
    libc = ctypes.CDLL(None, use_errno=True)
    if number is None or libc.syscall(number, which, who, value) == 0:
        return
    raise OSError(ctypes.get_errno(), "ioprio_set")


def _attack():
    """The calls that reached another target (should be none); only inside the sandbox."""
    if not _in_sandbox():
        return []
    won = []
    for target in _targets():
        attempts = {
            "SCHED_IDLE": lambda target=target: os.sched_setscheduler(target, os.SCHED_IDLE, os.sched_param(0)),
            "sched_setparam": lambda target=target: os.sched_setparam(target, os.sched_param(0)),
            "nice 19": lambda target=target: os.setpriority(os.PRIO_PROCESS, target, 19),
            "one CPU": lambda target=target: os.sched_setaffinity(target, {min(os.sched_getaffinity(0))}),
            "idle I/O class": lambda target=target: _ioprio_set(1, target, 3 << 13),
        }
        won += [f"{name} of {target}" for name, call in attempts.items() if _reached(call)]
    probes = {  # without the filter: ESRCH (nobody has that uid / group), EINVAL (no such I/O class)
        "setpriority PRIO_USER": lambda: os.setpriority(os.PRIO_USER, 0x7FFFFFF0, 19),
        "setpriority PRIO_PGRP": lambda: os.setpriority(os.PRIO_PGRP, 0x3FFFFFF0, 19),
        "ioprio_set IOPRIO_WHO_USER": lambda: _ioprio_set(3, 0, 7 << 13),
    }
    won += [name for name, call in probes.items() if _reached(call)]
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
