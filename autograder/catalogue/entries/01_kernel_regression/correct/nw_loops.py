"""
component: nadaraya_watson
note: explicit Python loops over queries and keys with a hand-written stable softmax
"""
import torch


def nadaraya_watson(queries, keys, values):
    rows = []
    for q in queries:
        scores = torch.stack([-(q - k) ** 2 / 2 for k in keys])
        e = torch.exp(scores - scores.max())
        rows.append(e / e.sum())
    attention_weights = torch.stack(rows)
    y_hat = torch.stack([(row * values).sum() for row in rows])
    return y_hat, attention_weights
