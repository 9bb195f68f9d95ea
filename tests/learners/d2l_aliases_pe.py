"""A PositionalEncoding written with d2l.torch's short names for torch's (`d2l.zeros`, `d2l.arange`,
`d2l.float32`, `d2l.sin`, `d2l.cos`), as the d2l 0.17 package's own code is (written for this test)."""
import torch
from torch import nn
from d2l import torch as d2l


class PositionalEncoding(nn.Module):
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.P = d2l.zeros((1, max_len, num_hiddens))
        angles = d2l.arange(max_len, dtype=d2l.float32).reshape(-1, 1) / torch.pow(
            10000, d2l.arange(0, num_hiddens, 2, dtype=d2l.float32) / num_hiddens)
        self.P[:, :, 0::2] = d2l.sin(angles)
        self.P[:, :, 1::2] = d2l.cos(angles)

    def forward(self, X):
        X = X + self.P[:, :X.shape[1], :].to(X.device)
        return self.dropout(X)
