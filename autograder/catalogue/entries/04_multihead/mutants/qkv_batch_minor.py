"""
component: transpose_qkv
bug: puts the head axis first, (h, B, L, d/h), so rows are ordered head by head instead of batch item by batch item
fix: permute to (B, h, L, d/h) before merging the first two axes, so that rows b*h .. b*h+h-1 are the heads of batch item b
family: heads-batch-minor
symptom: batch item
"""
import torch


def transpose_qkv(X, num_heads):
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)
    X = X.permute(2, 0, 1, 3)  # (h, B, L, d/h)
    return X.reshape(-1, X.shape[2], X.shape[3])
