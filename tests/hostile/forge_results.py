"""attack: forge results files claiming full marks: in the working directory, in /tmp, in /dev/shm,
and at the paths the grader writes (the --results file and the --out directory: the test replaces
the __RESULTS_PATH__ and __OUT_DIR__ placeholders with the real paths), both while loading and
from inside masked_softmax, which otherwise returns zeros.
expect: impossible or harmless: the writes land in the sandbox's private, throw-away /tmp (or fail);
the results file and the --out directory hold only what the grader wrote, with masked_softmax at 0
and the other components at full marks; no forged file appears on the host.
"""
import math
import os
import sys
import time

import torch
from torch import nn


RESULTS_PATH = "__RESULTS_PATH__"
OUT_DIR = "__OUT_DIR__"
_FORGED = ('{"score": 14.0, "max_score": 14.0, "output": "FORGED", "tests": [], '
           '"extra_data": {"forged": true}}\n')


def _forge():
    targets = ["results.json", "/tmp/results.json", "/tmp/hx_forged_results.json",
               "/dev/shm/hx_forged_results.json", "/autograder/results/results.json"]
    if not RESULTS_PATH.startswith("__"):
        targets.append(RESULTS_PATH)
    if not OUT_DIR.startswith("__"):
        targets += [os.path.join(OUT_DIR, "forge_results.json"), os.path.join(OUT_DIR, "grades.csv"),
                    os.path.join(OUT_DIR, "correct_a.json")]
    wrote = []
    for path in targets:
        try:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            with open(path, "w") as f:
                f.write(_FORGED if not path.endswith(".csv") else "submission,score\nforge_results,14\n")
            wrote.append(path)
        except OSError:
            pass
    return wrote


class _AtLoad:
    _forge()


def sequence_mask(X, valid_len, value=0):
    keep = torch.arange(X.shape[1]).unsqueeze(0) < valid_len.unsqueeze(1)
    return X.masked_fill(~keep, value)


def masked_softmax(X, valid_lens):
    _forge()
    return torch.zeros_like(X)


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
