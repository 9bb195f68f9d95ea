"""attack: behave differently under bubblewrap and in process mode (Gradescope's fallback where a container
has no bubblewrap) by what the process shows of itself: bubblewrap adds PWD to the environment, torch's
import sets TORCHINDUCTOR_CACHE_DIR where the user has a name (process mode), and the fork server's
command line names its path and flags. sequence_mask is right only where none of those traces is seen,
and prints what it sees ("WORLD: ..."). (helper-60, session 42: right in process mode alone, 2 of 2
against 0 of 2.)
expect: the child's environment is exactly the kit's (runtime/environment.py) and its command line
the submission's name alone, in both modes: full marks in both.
"""
import json
import math
import os
import sys

import torch
from torch import nn


def sequence_mask(X, valid_len, value=0):
    print("WORLD: " + json.dumps({"environ": dict(os.environ), "argv": sys.argv}, sort_keys=True))
    traces = ("PWD" in os.environ or "TORCHINDUCTOR_CACHE_DIR" in os.environ
              or any("zygote" in a or a.startswith("--") for a in sys.argv))
    keep = torch.arange(X.shape[1]).unsqueeze(0) < valid_len.unsqueeze(1)
    return X.masked_fill(~keep, value) + (1.0 if traces else 0.0)


def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
    return nn.functional.softmax(X.reshape(shape), dim=-1)


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
