"""A learner's PositionalEncoding writing the cosines with `P[:, :, 0::1]` instead of `1::2`.

Source: https://github.com/mkirby42/ml_implementations
Files (repository: path @ commit (definitions kept)):
  mkirby42/ml_implementations: Attention/positional_encoding.py @ 56afc832567bcf82aa8158fd44308c09584527c5 (PositionalEncoding)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  The file has no imports (the learner's notebook made them); added the book's: import math; import torch; from torch import nn; from d2l import torch as d2l.
"""
# ruff: noqa  (a learner's code, kept verbatim)
import math
import torch
from torch import nn
from d2l import torch as d2l



class PositionalEncoding(nn.Module):
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.P = torch.zeros((1, max_len, num_hiddens))
        X = (
            torch.arange(max_len, dtype=torch.float32).reshape(-1, 1) / 
            torch.pow(10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        )
        self.P[:, :, 0::2] = torch.sin(X)
        self.P[:, :, 0::1] = torch.cos(X)
        
    def forward(self, X):
        X = X + self.P[:, :X.shape[1], :].to(X.device)
        return self.dropout(X)
