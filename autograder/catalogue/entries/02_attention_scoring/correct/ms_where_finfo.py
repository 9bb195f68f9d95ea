"""
component: masked_softmax
note: torch.where with the dtype's most negative number, valid_lens expanded to (B, Q) first
"""
import torch


def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.nn.functional.softmax(X, -1)
    B, Q, K = X.shape
    lens = valid_lens.reshape(B, -1).expand(B, Q)
    keep = torch.arange(K, device=X.device).view(1, 1, K) < lens.unsqueeze(2)
    neg = torch.tensor(torch.finfo(X.dtype).min, dtype=X.dtype, device=X.device)
    return torch.nn.functional.softmax(torch.where(keep, X, neg), -1)
