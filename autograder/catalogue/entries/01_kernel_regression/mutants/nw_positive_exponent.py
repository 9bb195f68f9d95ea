"""
component: nadaraya_watson
bug: loses the minus sign of the exponent, so the farthest keys get the largest weights
fix: use a negative exponent: take the softmax of -(queries[i] - keys[j])**2 / 2, so that the nearest keys weigh most
symptom: negative exponent
"""
import torch


def nadaraya_watson(queries, keys, values):
    diffs = queries.unsqueeze(1) - keys.unsqueeze(0)
    attention_weights = torch.softmax(diffs ** 2 / 2, dim=1)
    return attention_weights @ values, attention_weights
