"""
component: nadaraya_watson
bug: returns zeros of the right shapes for both y_hat and the attention weights
"""
import torch


def nadaraya_watson(queries, keys, values):
    return torch.zeros(queries.shape[0], dtype=values.dtype), torch.zeros(queries.shape[0], keys.shape[0], dtype=values.dtype)
