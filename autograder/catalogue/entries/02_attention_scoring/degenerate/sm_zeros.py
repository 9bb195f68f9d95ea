"""
component: sequence_mask
bug: returns zeros of X's shape and dtype, ignoring X, valid_len and value
"""
import torch


def sequence_mask(X, valid_len, value=0):
    return torch.zeros_like(X)
