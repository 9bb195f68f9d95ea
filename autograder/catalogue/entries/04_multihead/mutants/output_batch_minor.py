"""
component: transpose_output
bug: reads the rows as (h, B, ...) (head-major), the inverse of a transpose_qkv that puts the head axis first
fix: read the rows batch-major: reshape to (B, h, L, d/h), since rows b*h .. b*h+h-1 are the heads of batch item b
family: heads-batch-minor
symptom: batch item
"""
import torch


def transpose_output(X, num_heads):
    X = X.reshape(num_heads, -1, X.shape[1], X.shape[2])  # (h, B, L, d/h)
    X = X.permute(1, 2, 0, 3)  # (B, L, h, d/h)
    return X.reshape(X.shape[0], X.shape[1], -1)
