"""
component: transpose_qkv
bug: reshapes (B, L, d) straight to (B*h, L, d/h) without moving the head axis in front of the positions
fix: split the features as (B, L, h, d/h) and move the head axis in front of the positions, (B, h, L, d/h), before merging B and h
family: heads-not-permuted
symptom: head
"""
import torch


def transpose_qkv(X, num_heads):
    return X.reshape(X.shape[0] * num_heads, X.shape[1], -1)
