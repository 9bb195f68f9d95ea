"""
component: masked_softmax
bug: repeat_interleaves valid_lens also when it is 2-D (B, Q), giving B*Q*Q lengths for B*Q rows
fix: repeat only a 1-D valid_lens; a 2-D valid_lens already holds one length per query: flatten it with reshape(-1)
symptom: one length per query
"""
import torch
from torch import nn


def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    shape = X.shape
    valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
    return nn.functional.softmax(X.reshape(shape), dim=-1)
