"""
component: masked_softmax
bug: gives every position the same weight 1/K, ignoring the scores and valid_lens
"""
import torch


def masked_softmax(X, valid_lens):
    return torch.full_like(X, 1.0 / X.shape[-1])
