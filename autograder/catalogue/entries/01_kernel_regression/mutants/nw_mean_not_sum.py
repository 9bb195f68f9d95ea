"""
component: nadaraya_watson
bug: averages the weighted values over the keys (a mean) instead of summing them, so y_hat is m times too small
fix: take the weighted sum of the values over the keys (attention_weights @ values): the weights already sum to 1
symptom: weighted sum
"""
import torch


def nadaraya_watson(queries, keys, values):
    diffs = queries.unsqueeze(1) - keys.unsqueeze(0)
    attention_weights = torch.softmax(-diffs ** 2 / 2, dim=1)
    return (attention_weights * values).mean(dim=1), attention_weights
