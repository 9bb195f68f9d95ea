"""
component: nadaraya_watson
bug: the minus sign of the exponent is lost, so far keys get the largest weights
symptom: negative exponent
"""
import torch


def nadaraya_watson(queries, keys, values):
    diffs = queries.unsqueeze(1) - keys.unsqueeze(0)
    attention_weights = torch.softmax(diffs ** 2 / 2, dim=1)
    return attention_weights @ values, attention_weights
