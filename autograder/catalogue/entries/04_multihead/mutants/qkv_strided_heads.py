"""
component: transpose_qkv
bug: splits the features as (d/h, h) instead of (h, d/h), so head i gets every h-th feature
fix: split the last axis as (num_heads, d/h), so that head i gets the contiguous features i*d/h .. (i+1)*d/h - 1
family: heads-interleaved
symptom: head
"""
import torch


def transpose_qkv(X, num_heads):
    X = X.reshape(X.shape[0], X.shape[1], -1, num_heads)  # (B, L, d/h, h)
    X = X.permute(0, 3, 1, 2)  # (B, h, L, d/h)
    return X.reshape(-1, X.shape[2], X.shape[3])
