"""
component: nadaraya_watson
bug: averages the weighted values (mean) instead of summing them
symptom: weighted sum
"""
import torch


def nadaraya_watson(queries, keys, values):
    diffs = queries.unsqueeze(1) - keys.unsqueeze(0)
    attention_weights = torch.softmax(-diffs ** 2 / 2, dim=1)
    return (attention_weights * values).mean(dim=1), attention_weights
