"""
component: masked_softmax
bug: hands sequence_mask a view of the caller's scores (X.reshape(...)) while that sequence_mask works in place (as the book's does, which the contract allows), so the caller's X is overwritten
fix: give sequence_mask a copy, X.reshape(-1, shape[-1]).clone(), because sequence_mask may work in place and masked_softmax must not change the caller's X
family: ms-modifies-caller
symptom: modify
"""
import torch
from torch import nn


def sequence_mask(X, valid_len, value=0):
    """The book's sequence_mask: in place (allowed by the contract)."""
    maxlen = X.size(1)
    mask = torch.arange((maxlen), dtype=torch.float32, device=X.device)[None, :] < valid_len[:, None]
    X[~mask] = value
    return X


def masked_softmax(X, valid_lens):
    """The book's masked_softmax: the reshape is a view of the caller's X."""
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
    return nn.functional.softmax(X.reshape(shape), dim=-1)
