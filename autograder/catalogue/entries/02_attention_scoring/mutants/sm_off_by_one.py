"""
component: sequence_mask
bug: keeps one entry too many (index <= valid_len instead of index < valid_len)
symptom: index >= valid length
"""
import torch


def sequence_mask(X, valid_len, value=0):
    maxlen = X.size(1)
    mask = torch.arange(maxlen, device=X.device)[None, :] <= valid_len[:, None]
    return X.masked_fill(~mask, value)
