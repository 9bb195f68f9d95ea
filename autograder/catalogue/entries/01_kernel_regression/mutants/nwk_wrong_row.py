"""
component: NWKernelRegression
bug: broadcasts the queries along the key axis (queries.unsqueeze(0)), so entry [i, j] compares keys[i, j] with query j instead of query i
fix: compare each query with the keys of its own row: queries.unsqueeze(1) has shape (n, 1) and broadcasts over the m keys
symptom: own row
"""
import torch
from torch import nn


class NWKernelRegression(nn.Module):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.w = nn.Parameter(torch.rand((1,)))

    def forward(self, queries, keys, values):
        diffs = (queries.unsqueeze(0) - keys) * self.w
        self.attention_weights = torch.softmax(-diffs ** 2 / 2, dim=1)
        return (self.attention_weights * values).sum(dim=1)
