"""
component: NWKernelRegression
bug: takes the softmax over the queries (dim=0) instead of over each query's keys (dim=1)
fix: take the softmax over dim=1 of the (n, m) scores, so that each query's row of m weights sums to 1
family: softmax-over-queries
symptom: sums to 1
"""
import torch
from torch import nn


class NWKernelRegression(nn.Module):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.w = nn.Parameter(torch.rand((1,)))

    def forward(self, queries, keys, values):
        diffs = (queries.unsqueeze(1) - keys) * self.w
        self.attention_weights = torch.softmax(-diffs ** 2 / 2, dim=0)
        return (self.attention_weights * values).sum(dim=1)
