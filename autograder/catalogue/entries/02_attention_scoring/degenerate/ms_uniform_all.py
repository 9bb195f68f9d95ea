"""
component: masked_softmax
bug: gives every position the same weight 1/K, ignoring the scores and valid_lens
"""
import torch


def masked_softmax(X, valid_lens):
    return torch.softmax(X * 0, dim=-1)  # all scores 0: uniform weights (still in the autograd graph)
