"""
component: masked_softmax
bug: computes exp(x) / sum exp(x) by hand without subtracting the row maximum, so large scores overflow to inf
fix: use a numerically stable softmax on the masked scores: torch.softmax over the last axis (or subtract each row's maximum before exp)
symptom: numerically stable
"""
import torch


def masked_softmax(X, valid_lens):
    shape = X.shape
    if valid_lens is None:
        mask = torch.ones(shape, dtype=torch.bool, device=X.device)
    else:
        lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
        mask = torch.arange(shape[-1], device=X.device)[None, None, :] < lens[..., None]
    X_exp = torch.exp(torch.where(mask, X, torch.zeros_like(X))) * mask
    return X_exp / X_exp.sum(dim=-1, keepdim=True)
