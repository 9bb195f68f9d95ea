"""attack: walk the whole file system (os.walk('/'), skipping /proc, /sys and /dev) looking for the
hidden tests, the reference solutions, course.yml, other students' submissions and result files;
also follow the path recorded by the kit's (editable) installation and try to open what it names.
masked_softmax raises an error listing every path it found or opened ("FOUND: [...]").
expect: masked_softmax scores 0 and its message lists none of the kit's paths (the repository,
solutions/, autograder/suites, tests/hostile, other submissions, the results or --out paths).
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

_NAMES = {"solutions", "hidden", "suites", "hostile", "course.yml", "hx_decoy_submissions"}
_PARTS = ("attention_scoring", "test_02_", "hx_decoy")


def _hunt():
    found = []
    for root, dirs, files in os.walk("/"):
        if root == "/":
            dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev")]
        for name in dirs + files:
            if name in _NAMES or any(p in name for p in _PARTS):
                found.append(os.path.join(root, name))
    # The installed kit records where its sources live: try to reach them.
    for root, dirs, files in os.walk(sys.prefix):
        for name in files:
            if name.startswith("__editable__") or name in ("direct_url.json", "top_level.txt"):
                try:
                    with open(os.path.join(root, name), errors="replace") as f:
                        text = f.read()
                except OSError:
                    continue
                for token in text.replace('"', " ").replace("'", " ").replace("file://", " ").split():
                    if token.startswith("/"):
                        for sub in ("", "/solutions/attention_scoring.py", "/course.yml",
                                    "/autograder/suites/hidden/test_02_attention_scoring.py"):
                            path = token.rstrip(",:}") + sub
                            if (os.path.exists(path) and not path.startswith(sys.prefix)
                                    and not sys.prefix.startswith(path)):
                                found.append(path)
    return sorted(set(found))


def masked_softmax(X, valid_lens):
    if not hasattr(masked_softmax, "found"):  # one walk per child: it takes seconds
        masked_softmax.found = _hunt()
    raise RuntimeError(f"FOUND: {masked_softmax.found}")


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
