"""
component: nadaraya_watson
bug: leaves out the factor 1/2 of the Gaussian kernel's exponent: its scores are -(x - x_j)**2
fix: divide the squared distance by 2: the score is -(queries[i] - keys[j])**2 / 2
symptom: gaussian kernel
"""
import torch


def nadaraya_watson(queries, keys, values):
    diffs = queries.unsqueeze(1) - keys.unsqueeze(0)
    attention_weights = torch.softmax(-diffs ** 2, dim=1)
    return attention_weights @ values, attention_weights
