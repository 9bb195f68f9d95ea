"""
component: masked_softmax
note: broadcasts a 3-D mask directly (no reshape) and fills masked scores with -inf
"""
import torch


def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    if valid_lens.dim() == 1:
        valid_lens = valid_lens[:, None]  # (B, 1): shared by every query
    keep = torch.arange(X.shape[-1], device=X.device) < valid_lens.unsqueeze(-1)  # (B, Q or 1, K)
    return torch.softmax(X.masked_fill(~keep, float("-inf")), dim=-1)
