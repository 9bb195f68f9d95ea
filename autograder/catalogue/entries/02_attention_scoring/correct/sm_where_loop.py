"""
component: sequence_mask
note: a row loop with slicing on a clone
"""
import torch


def sequence_mask(X, valid_len, value=0):
    out = X.clone()
    for i in range(X.shape[0]):
        out[i, int(valid_len[i]):] = value
    return out
