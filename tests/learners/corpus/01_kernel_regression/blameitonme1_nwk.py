"""A learner's NWKernelRegression: the book's, with `__init__(self, *args, **kwargs)` passed on to nn.Module.

Source: https://github.com/blameitonme1/d2lPytorch
Files (repository: path @ commit (definitions kept)):
  blameitonme1/d2lPytorch: Attention-machanism/nadaraya-waston-kernel-regression.py @ 3677fd27a4aec176f446cbdaecc84dd9c7b90560 (NWKernelRegression)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch
from d2l import torch as d2l
from torch import nn


class NWKernelRegression(nn.Module):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.w = nn.Parameter(torch.rand((1,), requires_grad=True))
    def forward(self, queries, keys, values):
        '''
        size of queries, keys, values is (nof queries, nof key-value pairs)
        '''
        queries = queries.repeat_interleave(keys.shape[1]).reshape((-1, keys.shape[1]))
        self.attention_weights = nn.functional.softmax(
            -((queries - keys) * self.w)**2 / 2, dim=1
        )
        return torch.bmm(self.attention_weights.unsqueeze(1),
                         values.unsqueeze(-1)).reshape(-1)
