"""
component: transpose_qkv
note: view + transpose instead of reshape + permute
"""
import torch


def transpose_qkv(X, num_heads):
    B, L, d = X.shape
    return X.view(B, L, num_heads, d // num_heads).transpose(1, 2).reshape(B * num_heads, L, d // num_heads)
