"""
component: sequence_mask
bug: always writes 0 into masked entries, ignoring the value argument
symptom: value
"""
import torch


def sequence_mask(X, valid_len, value=0):
    maxlen = X.size(1)
    mask = torch.arange(maxlen, device=X.device)[None, :] < valid_len[:, None]
    return X * mask
