"""
component: sequence_mask
bug: the default fill value is -1e6 (the masked softmax's value) instead of 0
symptom: default value 0
"""
import torch


def sequence_mask(X, valid_len, value=-1e6):
    maxlen = X.size(1)
    mask = torch.arange(maxlen, device=X.device)[None, :] < valid_len[:, None]
    return X.masked_fill(~mask, value)
