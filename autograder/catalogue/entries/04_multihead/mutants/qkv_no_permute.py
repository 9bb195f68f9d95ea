"""
component: transpose_qkv
bug: reshapes (B, L, d) straight to (B*h, L, d/h) without moving the head axis in front of the positions
symptom: head
"""
import torch


def transpose_qkv(X, num_heads):
    return X.reshape(X.shape[0] * num_heads, X.shape[1], -1)
