"""attack: (broken, not hostile) only sequence_mask is defined.
expect: sequence_mask gets full marks; masked_softmax, AdditiveAttention and DotProductAttention
score 0 with "`<name>` is not defined in your submission".
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
