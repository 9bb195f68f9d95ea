"""
component: masked_softmax
bug: keeps one position too many: it keeps index <= valid length instead of index < valid length
fix: keep the positions with index strictly less than the valid length and mask those with index >= valid length
family: mask-off-by-one
symptom: index >= valid length
"""
import torch


def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
    mask = torch.arange(X.shape[-1], device=X.device)[None, None, :] <= lens[..., None]
    return torch.softmax(X.masked_fill(~mask, -1e9), dim=-1)
