"""
component: masked_softmax
bug: tiles a 1-D valid_lens with repeat (l0, l1, l0, l1) instead of repeat_interleave (l0, l0, l1, l1), so queries get other batch items' lengths
fix: a 1-D valid_lens holds one length per batch item: give each length to all Q queries of its item with torch.repeat_interleave(valid_lens, Q)
family: lens-repeat-not-interleave
symptom: one length per batch item
"""
import torch
from torch import nn


def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = valid_lens.repeat(shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
    return nn.functional.softmax(X.reshape(shape), dim=-1)
