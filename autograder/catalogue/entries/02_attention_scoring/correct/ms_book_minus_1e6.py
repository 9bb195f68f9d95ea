"""
component: masked_softmax
note: the learner's notebook fixed: sequence_mask with -1e6, softmax over the last axis also when valid_lens is None
"""
import torch
from torch import nn


def masked_softmax(X, valid_len):
    if valid_len is None:
        return nn.functional.softmax(X, dim=-1)
    else:
        shape = X.shape
        if valid_len.dim() == 1:
            valid_len = torch.repeat_interleave(valid_len, repeats=shape[1], dim=0)
        else:
            valid_len = valid_len.reshape(-1)
        X = sequence_mask(X.reshape(-1, shape[-1]), valid_len, value=-1e6)
        return nn.functional.softmax(X.reshape(shape), dim=-1)
