"""
component: nadaraya_watson
bug: draws random weights (a softmax of random scores, rows sum to 1) that ignore the queries and keys
"""
import torch


def nadaraya_watson(queries, keys, values):
    attention_weights = torch.softmax(torch.rand(queries.shape[0], keys.shape[0], dtype=values.dtype), dim=1)
    return attention_weights @ values, attention_weights
