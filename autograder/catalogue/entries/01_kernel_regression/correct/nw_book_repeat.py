"""
component: nadaraya_watson
note: the book's inline version: repeat_interleave the queries into an (n, m) matrix, softmax over dim 1, matmul
"""
import torch
from torch import nn


def nadaraya_watson(queries, keys, values):
    n_keys = keys.shape[0]
    X_repeat = queries.repeat_interleave(n_keys).reshape((-1, n_keys))
    attention_weights = nn.functional.softmax(-(X_repeat - keys) ** 2 / 2, dim=1)
    y_hat = torch.matmul(attention_weights, values)
    return y_hat, attention_weights
