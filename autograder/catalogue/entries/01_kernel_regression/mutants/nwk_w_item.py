"""
component: NWKernelRegression
bug: reads w as a Python number (self.w.item()), so no gradient reaches w and training never changes it
fix: use the tensor self.w itself in the computation (no .item(), float() or .data), so that autograd reaches it
symptom: gradient
"""
import torch
from torch import nn


class NWKernelRegression(nn.Module):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.w = nn.Parameter(torch.rand((1,)))

    def forward(self, queries, keys, values):
        diffs = (queries.unsqueeze(1) - keys) * self.w.item()
        self.attention_weights = torch.softmax(-diffs ** 2 / 2, dim=1)
        return (self.attention_weights * values).sum(dim=1)
