"""
component: nadaraya_watson
bug: returns (attention_weights, y_hat) instead of (y_hat, attention_weights)
fix: return y_hat first and attention_weights second, in that order
symptom: in that order
"""
import torch


def nadaraya_watson(queries, keys, values):
    diffs = queries.unsqueeze(1) - keys.unsqueeze(0)
    attention_weights = torch.softmax(-diffs ** 2 / 2, dim=1)
    return attention_weights, attention_weights @ values
