"""
component: transpose_qkv
bug: returns zeros of the right shape (B*h, L, d/h), ignoring X's values
"""
import torch


def transpose_qkv(X, num_heads):
    B, L, d = X.shape
    return torch.zeros(B * num_heads, L, d // num_heads, dtype=X.dtype, device=X.device)
