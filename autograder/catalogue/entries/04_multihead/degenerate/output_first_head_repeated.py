"""
component: transpose_output
bug: keeps only the first head of each batch item and repeats its features h times, dropping the other heads
"""
import torch


def transpose_output(X, num_heads):
    return X[::num_heads].repeat(1, 1, num_heads)
