"""
component: masked_softmax
bug: only handles 1-D valid_lens: a 2-D valid_lens is also repeat_interleave'd, giving B*Q*Q lengths
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
