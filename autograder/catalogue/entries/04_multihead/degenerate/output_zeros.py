"""
component: transpose_output
bug: returns zeros of the right shape (B, L, d), ignoring X's values
"""
import torch


def transpose_output(X, num_heads):
    BH, L, d_head = X.shape
    return torch.zeros(BH // num_heads, L, d_head * num_heads, dtype=X.dtype, device=X.device)
