"""
component: nadaraya_watson
bug: uses the raw kernel values exp(-(x - x_j)**2 / 2) as weights, without normalizing them
fix: normalize the kernel values over the keys (a softmax over dim=1 of the scores), so that each query's row of weights sums to 1
symptom: sums to 1
"""
import torch


def nadaraya_watson(queries, keys, values):
    diffs = queries.unsqueeze(1) - keys.unsqueeze(0)
    attention_weights = torch.exp(-diffs ** 2 / 2)
    return attention_weights @ values, attention_weights
