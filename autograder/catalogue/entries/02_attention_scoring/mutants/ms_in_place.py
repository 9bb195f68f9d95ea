"""
component: masked_softmax
bug: writes the fill value into a reshape view of the caller's X, modifying the caller's tensor
fix: mask a copy: use the out-of-place X.masked_fill(...) (or clone X first), so that the caller's X is left unchanged
family: ms-modifies-caller
symptom: caller's x
"""
import torch
from torch import nn


def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    flat = X.reshape(-1, shape[-1])  # a view: writing into it writes into the caller's X
    mask = torch.arange(shape[-1], device=X.device)[None, :] < valid_lens[:, None]
    flat[~mask] = -1e6
    return nn.functional.softmax(X, dim=-1)
