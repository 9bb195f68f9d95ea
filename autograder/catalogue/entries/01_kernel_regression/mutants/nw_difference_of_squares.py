"""
component: nadaraya_watson
bug: uses x**2 - x_j**2 instead of (x - x_j)**2, so the kernel depends on where x is, not on its distance to x_j
fix: square the distance, not the difference of the squares: subtract first, then square, (queries[i] - keys[j])**2
symptom: gaussian kernel
"""
import torch


def nadaraya_watson(queries, keys, values):
    diffs_sq = queries.unsqueeze(1) ** 2 - keys.unsqueeze(0) ** 2
    attention_weights = torch.softmax(-diffs_sq / 2, dim=1)
    return attention_weights @ values, attention_weights
