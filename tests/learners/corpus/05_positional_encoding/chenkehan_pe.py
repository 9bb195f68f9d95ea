"""A learner's PositionalEncoding with table `p`, base 1000 instead of 10000, and an in-place `x +=`.

Source: https://github.com/Chenkehan21/My-dive-into-deep-learning
Files (repository: path @ commit (definitions kept)):
  Chenkehan21/My-dive-into-deep-learning: codes/Attention/positional_encoding.py @ df3ca5749f311e59495fef93593bf4e1d12ad43e (PositionalEncoding)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `import matplotlib`; `import matplotlib.pyplot as plt`.
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch
import torch.nn as nn
from d2l import torch as d2l


class PositionalEncoding(nn.Module):
    def __init__(self, encoding_dim, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.p = torch.zeros(1, max_len, encoding_dim)
        x = torch.arange(max_len, dtype=torch.float32).reshape(
            -1, 1) / torch.pow(1000, torch.arange(0, encoding_dim, 2, dtype=torch.float32) / encoding_dim)
        self.p[:, :, 0::2] = torch.sin(x)
        self.p[:, :, 1::2] = torch.cos(x)
        
    def forward(self, x):
        x += self.p[:, :x.shape[1], :].to(x.device)
        return self.dropout(x)
