"""
component: NWKernelRegression
bug: makes w a plain tensor with requires_grad=True instead of an nn.Parameter, so the module does not register it (parameters() and state_dict() miss it)
fix: wrap w in nn.Parameter (shape (1,)) so that the module registers it and an optimizer trains it
symptom: nn.parameter
"""
import torch
from torch import nn


class NWKernelRegression(nn.Module):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.w = torch.rand((1,), requires_grad=True)

    def forward(self, queries, keys, values):
        diffs = (queries.unsqueeze(1) - keys) * self.w
        self.attention_weights = torch.softmax(-diffs ** 2 / 2, dim=1)
        return (self.attention_weights * values).sum(dim=1)
