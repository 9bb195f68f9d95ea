"""
component: masked_softmax
bug: runs the softmax over all positions, then zeroes the masked ones and renormalizes (masked scores still matter numerically)
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
