"""
component: transpose_output
bug: permutes (B, h, L, d/h) to (B, L, d/h, h), interleaving the heads' features instead of concatenating them
fix: permute to (B, L, h, d/h), so that each head's d/h features stay together, head after head
family: heads-interleaved
symptom: head
"""
import torch


def transpose_output(X, num_heads):
    X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])
    X = X.permute(0, 2, 3, 1)  # (B, L, d/h, h)
    return X.reshape(X.shape[0], X.shape[1], -1)
