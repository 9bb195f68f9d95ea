"""
component: masked_softmax
bug: takes the softmax over all positions, then zeroes the masked ones and renormalizes, so masked scores (even huge ones) still change the valid weights
fix: mask before the softmax: replace the masked scores by a very large negative number, then take the softmax over the last axis
symptom: even huge ones
"""
import torch


def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
    mask = torch.arange(X.shape[-1], device=X.device)[None, None, :] < lens[..., None]
    P = torch.softmax(X, dim=-1) * mask
    return P / P.sum(dim=-1, keepdim=True)
