"""
component: NWKernelRegression
bug: returns zeros of shape (n,) and stores all-zero attention weights, ignoring every input
"""
import torch
from torch import nn


class NWKernelRegression(nn.Module):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.w = nn.Parameter(torch.rand((1,)))

    def forward(self, queries, keys, values):
        self.attention_weights = torch.zeros_like(values)
        return torch.zeros_like(queries)
