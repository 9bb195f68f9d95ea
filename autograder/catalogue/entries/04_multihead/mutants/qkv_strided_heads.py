"""
component: transpose_qkv
bug: splits the features as (d/h, h) instead of (h, d/h), so head i gets every h-th feature
symptom: head
"""
import torch


def transpose_qkv(X, num_heads):
    X = X.reshape(X.shape[0], X.shape[1], -1, num_heads)  # (B, L, d/h, h)
    X = X.permute(0, 3, 1, 2)  # (B, h, L, d/h)
    return X.reshape(-1, X.shape[2], X.shape[3])
