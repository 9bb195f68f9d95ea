"""
component: masked_softmax
bug: replaces the masked scores by 0 (sequence_mask's default) before the softmax, so masked positions keep some weight (the course text's own bug)
fix: fill masked positions with a very large negative number such as -1e6 (not 0) before the softmax, so that they get weight exactly 0
symptom: very large negative
"""
import torch
from torch import nn


def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=0)
    return nn.functional.softmax(X.reshape(shape), dim=-1)
