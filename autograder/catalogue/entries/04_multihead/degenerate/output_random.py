"""
component: transpose_output
bug: returns random numbers of the right shape (B, L, d), ignoring X
"""
import torch


def transpose_output(X, num_heads):
    BH, L, d_head = X.shape
    return torch.randn(BH // num_heads, L, d_head * num_heads, dtype=X.dtype, device=X.device)
