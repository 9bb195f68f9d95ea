"""
component: nadaraya_watson
bug: takes the softmax over the queries (dim=0) instead of over the keys, so the columns, not the rows, sum to 1
fix: take the softmax over dim=1 of the (n, m) scores (the keys), so that each query's row of weights sums to 1
family: softmax-over-queries
symptom: sums to 1
"""
import torch


def nadaraya_watson(queries, keys, values):
    diffs = queries.unsqueeze(1) - keys.unsqueeze(0)
    attention_weights = torch.softmax(-diffs ** 2 / 2, dim=0)
    return attention_weights @ values, attention_weights
