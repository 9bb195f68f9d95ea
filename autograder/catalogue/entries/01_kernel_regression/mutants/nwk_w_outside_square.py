"""
component: NWKernelRegression
bug: multiplies the squared distance by w instead of squaring (q - k) * w (so the scores grow with w, not with w**2)
fix: multiply the difference by w before squaring: the score is -((queries[i] - keys[i, j]) * w)**2 / 2
symptom: before squaring
"""
import torch
from torch import nn


class NWKernelRegression(nn.Module):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.w = nn.Parameter(torch.rand((1,)))

    def forward(self, queries, keys, values):
        diffs = queries.unsqueeze(1) - keys
        self.attention_weights = torch.softmax(-diffs ** 2 * self.w / 2, dim=1)
        return (self.attention_weights * values).sum(dim=1)
