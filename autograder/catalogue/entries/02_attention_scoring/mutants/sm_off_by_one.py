"""
component: sequence_mask
bug: keeps one entry too many: it keeps index <= valid_len instead of index < valid_len
fix: keep the entries of row i with index strictly less than valid_len[i], and overwrite those at index >= valid length
family: mask-off-by-one
symptom: index >= valid length
"""
import torch


def sequence_mask(X, valid_len, value=0):
    maxlen = X.size(1)
    mask = torch.arange(maxlen, device=X.device)[None, :] <= valid_len[:, None]
    return X.masked_fill(~mask, value)
