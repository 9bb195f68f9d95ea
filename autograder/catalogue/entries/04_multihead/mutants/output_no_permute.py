"""
component: transpose_output
bug: reshapes (B*h, L, d/h) straight to (B, L, d) without moving the head axis behind the positions
fix: split the rows into (B, h, L, d/h) and move the head axis behind the positions, (B, L, h, d/h), before merging the last two axes
family: heads-not-permuted
symptom: head
"""
import torch


def transpose_output(X, num_heads):
    return X.reshape(-1, X.shape[1], X.shape[2] * num_heads)
