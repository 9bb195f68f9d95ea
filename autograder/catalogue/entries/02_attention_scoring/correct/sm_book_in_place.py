"""
component: sequence_mask
note: the book's version: a float32 position index, and the masked entries written into X in place (X is returned)
"""
import torch


def sequence_mask(X, valid_len, value=0):
    maxlen = X.size(1)
    mask = torch.arange((maxlen), dtype=torch.float32, device=X.device)[None, :] < valid_len[:, None]
    X[~mask] = value
    return X
