"""
component: transpose_output
note: unflatten + transpose + flatten
"""
import torch


def transpose_output(X, num_heads):
    return X.unflatten(0, (-1, num_heads)).transpose(1, 2).flatten(2)
