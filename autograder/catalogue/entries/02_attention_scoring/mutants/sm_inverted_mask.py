"""
component: sequence_mask
bug: the mask is inverted: the valid entries are overwritten and the padding is kept
symptom: index >= valid length
"""
import torch


def sequence_mask(X, valid_len, value=0):
    maxlen = X.size(1)
    mask = torch.arange(maxlen, dtype=torch.float32, device=X.device)[None, :] < valid_len[:, None]
    X = X.clone()
    X[mask] = value
    return X
