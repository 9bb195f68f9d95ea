"""
component: masked_softmax
bug: masks along the queries instead of the keys: a query at or past the valid length gets uniform weights, the others attend to every key
fix: compare the valid lengths with the key positions, torch.arange(X.shape[-1]), and fill the masked keys of every query
symptom: along the queries
"""
import torch


def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens  # (B, 1) or (B, Q)
    mask = torch.arange(X.shape[1], device=X.device)[None, :] < lens  # (B, Q): over the queries, not the keys
    return torch.softmax(X.masked_fill(~mask[..., None], -1e6), dim=-1)
