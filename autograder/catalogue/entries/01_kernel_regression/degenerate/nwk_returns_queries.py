"""
component: NWKernelRegression
bug: returns the queries themselves as the predictions (the identity), with uniform weights, never pooling the values
"""
import torch
from torch import nn


class NWKernelRegression(nn.Module):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.w = nn.Parameter(torch.rand((1,)))

    def forward(self, queries, keys, values):
        self.attention_weights = torch.ones_like(keys) / keys.shape[1]
        return queries * torch.ones_like(self.w)
