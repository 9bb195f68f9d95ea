"""
component: nadaraya_watson
bug: normalizes the kernel values by their sum over the whole matrix, not per query
symptom: sums to 1
"""
import torch


def nadaraya_watson(queries, keys, values):
    diffs = queries.unsqueeze(1) - keys.unsqueeze(0)
    kernel = torch.exp(-diffs ** 2 / 2)
    attention_weights = kernel / kernel.sum()
    return attention_weights @ values, attention_weights
