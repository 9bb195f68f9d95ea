"""
component: NWKernelRegression
bug: creates w as a 0-d parameter (torch.rand(())) instead of one of shape (1,)
fix: give w the contract's shape (1,): nn.Parameter(torch.rand((1,)))
symptom: shape (1,)
"""
import torch
from torch import nn


class NWKernelRegression(nn.Module):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.w = nn.Parameter(torch.rand(()))

    def forward(self, queries, keys, values):
        diffs = (queries.unsqueeze(1) - keys) * self.w
        self.attention_weights = torch.softmax(-diffs ** 2 / 2, dim=1)
        return (self.attention_weights * values).sum(dim=1)
