"""
component: NWKernelRegression
bug: returns the mean of each row of values with uniform weights 1/m, ignoring the queries, the keys and w
"""
import torch
from torch import nn


class NWKernelRegression(nn.Module):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.w = nn.Parameter(torch.rand((1,)))

    def forward(self, queries, keys, values):
        self.attention_weights = torch.ones_like(values) / values.shape[1]
        return (self.attention_weights * values).sum(dim=1)
