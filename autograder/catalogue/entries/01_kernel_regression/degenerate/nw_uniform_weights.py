"""
component: nadaraya_watson
bug: gives every key the same weight 1/m whatever the query, so y_hat is the mean of the values for every query
"""
import torch


def nadaraya_watson(queries, keys, values):
    attention_weights = torch.full((queries.shape[0], keys.shape[0]), 1.0 / keys.shape[0], dtype=values.dtype)
    return attention_weights @ values, attention_weights
