"""A learner's NWKernelRegression retyped from the book in a one-file review of the chapter (`nn.Parameter(torch.rand((1, )), requires_grad=True)`).

Source: https://github.com/GUOhm230/d2l_Guo
Files (repository: path @ commit (definitions kept)):
  GUOhm230/d2l_Guo: ch10_MyAttention.py @ c69042c4d25edef5e2d9cac2c42edada315e025c (NWKernelRegression)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch
from torch import nn
from d2l import torch as d2l
import math


class NWKernelRegression(nn.Module):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.w = nn.Parameter(torch.rand((1, )), requires_grad=True)

    def forward(self, queries, keys, values):
        queries = queries.repeat_interleave(keys.shape[1]).reshape((-1, keys.shape[1]))
        self.attention_weights = nn.functional.softmax(-((queries-keys) * self.w)**2 / 2, dim=1)
        return torch.bmm(self.attention_weights.unsqueeze(1), values.unsqueeze(-1)).reshape(-1)
