"""
component: NWKernelRegression
bug: spells the constructor `__int__`, so Python never calls it: nn.Module's own __init__ runs instead and the module has no w
fix: name the constructor `__init__`, with two underscores on each side, so that it runs and registers w as an nn.Parameter of shape (1,)
symptom: nn.parameter
"""
import torch
from torch import nn


class NWKernelRegression(nn.Module):  # as in a learner's d2l notebook (code-index 40121230818)
    def __int__(self, **kwargs):
        super().__init__(**kwargs)
        self.w = nn.Parameter(torch.rand((1,), requires_grad=True))

    def forward(self, queries, keys, values):
        diffs = (queries.unsqueeze(1) - keys) * self.w
        self.attention_weights = torch.softmax(-diffs ** 2 / 2, dim=1)
        return (self.attention_weights * values).sum(dim=1)
