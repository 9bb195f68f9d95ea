"""
component: nadaraya_watson
bug: uses the raw kernel values exp(-d**2/2) as weights, without normalizing them
symptom: sums to 1
"""
import torch


def nadaraya_watson(queries, keys, values):
    diffs = queries.unsqueeze(1) - keys.unsqueeze(0)
    attention_weights = torch.exp(-diffs ** 2 / 2)
    return attention_weights @ values, attention_weights
