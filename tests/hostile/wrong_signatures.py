"""attack: (broken, not hostile) wrong signatures: masked_softmax takes only X; AdditiveAttention's
constructor takes no sizes; DotProductAttention.forward has no values argument.
expect: each of the three is said to differ from the contract ("signature: your ..."): the grader calls
them by the names they take and grades what they do (they ignore valid_lens, sizes, values): the two
attention classes 0, and masked_softmax too, its mistake named (a softmax that never masks is the catalogue's
degenerate ms_ignores_valid_lens since session 47: at most 10%, 0 on the tiny suites); sequence_mask gets full marks.
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


def masked_softmax(X):
    return torch.softmax(X, dim=-1)


class AdditiveAttention(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, queries, keys, values, valid_lens):
        return values


class DotProductAttention(nn.Module):
    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)

    def forward(self, queries, keys):
        return torch.bmm(queries, keys.transpose(1, 2))
