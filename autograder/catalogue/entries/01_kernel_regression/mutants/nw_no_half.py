"""
component: nadaraya_watson
bug: the Gaussian kernel misses the factor 1/2 in the exponent
symptom: gaussian kernel
"""
import torch


def nadaraya_watson(queries, keys, values):
    diffs = queries.unsqueeze(1) - keys.unsqueeze(0)
    attention_weights = torch.softmax(-diffs ** 2, dim=1)
    return attention_weights @ values, attention_weights
