"""
component: nadaraya_watson
bug: uses the absolute distance |x - x_j| (a Laplace kernel) instead of the squared distance in the exponent
fix: use the Gaussian kernel: square the difference of each query and key, so the score is -(queries[i] - keys[j])**2 / 2
symptom: gaussian kernel
"""
import torch


def nadaraya_watson(queries, keys, values):
    diffs = queries.unsqueeze(1) - keys.unsqueeze(0)
    attention_weights = torch.softmax(-diffs.abs() / 2, dim=1)
    return attention_weights @ values, attention_weights
