"""A learner's NWKernelRegression whose __init__ takes a device and whose forward expects queries already tiled to (n, m).

Source: https://github.com/Chenkehan21/My-dive-into-deep-learning
Files (repository: path @ commit (definitions kept)):
  Chenkehan21/My-dive-into-deep-learning: codes/Attention/Nadaraya-Watson.py @ df3ca5749f311e59495fef93593bf4e1d12ad43e (NWKernelRegression)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `from os import pread`; `import matplotlib.pyplot as plt`; `import matplotlib`.
"""
# ruff: noqa  (a learner's code, kept verbatim)
from d2l.torch import predict_ch3
import torch
import torch.nn as nn
from torch import optim


class NWKernelRegression(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.w = nn.Parameter(torch.randn((1,), device=device, requires_grad=True))

    def forward(self, query, keys, value):
        self.attention_weight = torch.softmax(-0.5 * (self.w * (query - keys))**2, dim=1)
        y_hat = torch.bmm(self.attention_weight.unsqueeze(1), value.unsqueeze(-1))
        '''
        res = torch.bmm(a, b) if a.shape = (b, n, m) and b.shape = (b, m, p) then res.shape = (b, n, p)
        here, attention_weight.shape = (50, 49), value.shape = (50, 49)
        attention_weight.unsqueeze(1).shape = (50, 1, 49); value.unsqueeze(-1).shape = (50, 49, 1)
        then y_hat.shape = (50, 1, 1), so y_hat.squeeze().shape = (50,)
        actually it's the same as torch.sum(attention_weight * values, dim=1).squeeze()
        '''

        return y_hat.squeeze()
