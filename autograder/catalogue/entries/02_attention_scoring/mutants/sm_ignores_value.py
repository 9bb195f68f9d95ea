"""
component: sequence_mask
bug: always writes 0 into the masked entries (X * mask), ignoring the value argument
fix: write the value argument into the masked entries, e.g. with X.masked_fill(~mask, value)
symptom: value
ignores: value
"""
import torch


def sequence_mask(X, valid_len, value=0):
    maxlen = X.size(1)
    mask = torch.arange(maxlen, device=X.device)[None, :] < valid_len[:, None]
    return X * mask
