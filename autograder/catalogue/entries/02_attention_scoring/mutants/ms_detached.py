"""
component: masked_softmax
bug: copies X with X.detach().clone() before masking it, which cuts the gradient back to X
fix: copy without detaching (X.clone(), or an out-of-place masked_fill or torch.where), so that gradients flow back to X
symptom: gradient
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
    X = X.detach().clone().reshape(-1, shape[-1])
    mask = torch.arange(shape[-1], device=X.device)[None, :] < valid_lens[:, None]
    X[~mask] = -1e6
    return nn.functional.softmax(X.reshape(shape), dim=-1)
