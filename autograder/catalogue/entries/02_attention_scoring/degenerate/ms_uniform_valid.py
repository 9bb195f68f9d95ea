"""
component: masked_softmax
bug: ignores the scores: every valid position gets the same weight 1/valid_len and the masked ones 0
"""
import torch


def masked_softmax(X, valid_lens):
    B, Q, K = X.shape
    if valid_lens is None:
        return torch.softmax(X * 0, dim=-1)
    lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
    lens = lens.expand(B, Q)
    keep = (torch.arange(K, device=X.device)[None, None, :] < lens[..., None]).to(X.dtype)
    return keep / keep.sum(dim=-1, keepdim=True) + X * 0  # X * 0: stays in the autograd graph
