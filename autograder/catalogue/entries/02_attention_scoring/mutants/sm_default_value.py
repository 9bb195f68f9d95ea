"""
component: sequence_mask
bug: makes -1e6 (the masked softmax's fill value) the default of value instead of 0
fix: make the default value 0 (value=0), and pass the large negative value explicitly where masked_softmax calls sequence_mask
symptom: default value 0
"""
import torch


def sequence_mask(X, valid_len, value=-1e6):
    maxlen = X.size(1)
    mask = torch.arange(maxlen, device=X.device)[None, :] < valid_len[:, None]
    return X.masked_fill(~mask, value)
