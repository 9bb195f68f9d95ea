"""attack: look for the reference solution and the tests in sys.modules (solutions.*, the test
module, pytest, autograder) and in the garbage collector's objects (functions defined in a file of
the kit); masked_softmax raises an error listing what it found ("MODULES: [...]").
expect: no solutions*, autograder*, test-suite or pytest module is loaded in the child and no
object comes from the kit's files; masked_softmax scores 0.
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


def masked_softmax(X, valid_lens):
    import gc
    bad = sorted(m for m in list(sys.modules)
                 if m.split(".")[0] in ("solutions", "autograder", "pytest", "_pytest", "hypothesis")
                 or ("test_" in m and not m.startswith("torch.")) or "suites" in m)
    files = set()
    for obj in gc.get_objects():
        try:
            filename = obj.__code__.co_filename if type(obj).__name__ == "function" else ""
        except Exception:  # noqa: BLE001 - some objects refuse attribute reads
            continue
        if "/site-packages/torch/" in filename:
            continue  # torch's own modules (its test_operators is loaded by torch itself)
        if any(k in filename for k in ("solutions", "suites", "autograder", "/work/", "test_")):
            files.add(filename)
    raise RuntimeError(f"MODULES: {bad + sorted(files)}")


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
