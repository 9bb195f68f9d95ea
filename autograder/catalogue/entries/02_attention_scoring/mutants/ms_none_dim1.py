"""
component: masked_softmax
bug: takes the softmax over dim=1 (the queries) instead of the last axis when valid_lens is None
fix: with valid_lens None, take the softmax over the last axis (dim=-1), as in the masked case
family: softmax-over-queries
symptom: last axis
"""
import torch
from torch import nn


def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return nn.functional.softmax(X, dim=1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, repeats=shape[1], dim=0)
    else:
        valid_lens = valid_lens.reshape(-1)
    X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
    return nn.functional.softmax(X.reshape(shape), dim=-1)
