"""
component: nadaraya_watson
bug: divides the kernel values by their sum over the whole (n, m) matrix instead of by each query's own sum
fix: normalize each query's row on its own (a softmax over dim=1, the keys), so that every row of the weights sums to 1
symptom: sums to 1
"""
import torch


def nadaraya_watson(queries, keys, values):
    diffs = queries.unsqueeze(1) - keys.unsqueeze(0)
    kernel = torch.exp(-diffs ** 2 / 2)
    attention_weights = kernel / kernel.sum()
    return attention_weights @ values, attention_weights
