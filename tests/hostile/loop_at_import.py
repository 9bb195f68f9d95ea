"""attack: an infinite loop that runs while the submission is loaded (a class body runs at definition
time, so the loader's "definitions only" rule does not skip it); it never ends inside the sandbox.
expect: every component scores 0 with "loading your code failed: ... time limit / CPU time"; the
grader returns within the load limit per component and grades the next submission normally.
"""
import math
import os
import time

import torch
from torch import nn

def _in_sandbox():  # bounded outside the sandbox: 1 s
    return os.path.isdir("/sandbox/runtime")


class _Spin:
    _end = time.monotonic() + (10 ** 6 if _in_sandbox() else 1.0)
    while time.monotonic() < _end:
        pass


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
