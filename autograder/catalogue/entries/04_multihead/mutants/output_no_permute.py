"""
component: transpose_output
bug: reshapes (B*h, L, d/h) straight back to (B, L, d) without moving the head axis behind the positions
symptom: head
"""
import torch


def transpose_output(X, num_heads):
    return X.reshape(-1, X.shape[1], X.shape[2] * num_heads)
