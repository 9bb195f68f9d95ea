"""A learner's PositionalEncoding: the book's, with a leftover `tt3 = ...` line.

Source: https://github.com/yanruhai/diveintodl
Files (repository: path @ commit (definitions kept)):
  yanruhai/diveintodl: chap11/11.6 self-attentionand positionalencoding.py @ 241684bd2e8858f1230d7ce93a95c47bd95cbc5f (PositionalEncoding)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `from matplotlib import pyplot as plt`.
"""
# ruff: noqa  (a learner's code, kept verbatim)
import math
import torch
from torch import nn
from d2l import torch as d2l


class PositionalEncoding(nn.Module):  #@save
    """Positional encoding."""
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        # Create a long enough P
        self.P = torch.zeros((1, max_len, num_hiddens))
        tt3=torch.arange(max_len, dtype=torch.float32).reshape(-1, 1)
        #长度max_len,现在是1000的列,reshape形成一列目的是为了和后面的一行相除产生广播
        X = (
                torch.arange(max_len, dtype=torch.float32).reshape(-1, 1) /
                torch.pow(10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
             )
        #torch.arange(0, num_hiddens, 2, dtype=torch.float32)表示0到num_hiddens，间隔2，其实就是(11.6.2)公式中2j
        self.P[:, :, 0::2] = torch.sin(X)
        self.P[:, :, 1::2] = torch.cos(X)

    def forward(self, X):
        X = X + self.P[:, :X.shape[1], :].to(X.device)
        return self.dropout(X)
