"""
component: sequence_mask
bug: inverts the mask: it overwrites the valid entries and keeps the padding
fix: overwrite only the entries of row i at index >= valid length valid_len[i], and keep those below it
symptom: index >= valid length
"""
import torch


def sequence_mask(X, valid_len, value=0):
    maxlen = X.size(1)
    mask = torch.arange(maxlen, dtype=torch.float32, device=X.device)[None, :] < valid_len[:, None]
    X = X.clone()
    X[mask] = value
    return X
