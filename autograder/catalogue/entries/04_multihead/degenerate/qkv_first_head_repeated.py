"""
component: transpose_qkv
bug: gives every head the first d/h features (X[..., :d/h] repeated h times), so the other features never reach any head
"""
import torch


def transpose_qkv(X, num_heads):
    d_head = X.shape[-1] // num_heads
    return torch.repeat_interleave(X[..., :d_head], num_heads, dim=0)
