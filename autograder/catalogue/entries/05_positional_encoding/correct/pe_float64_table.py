"""
component: PositionalEncoding
note: a float64 table (no cast: float32 inputs come out as float64)
"""
import math
import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        i = torch.arange(max_len, dtype=torch.float64)[:, None]
        angles = i / 10000 ** (torch.arange(0, num_hiddens, 2, dtype=torch.float64) / num_hiddens)
        self.P = torch.zeros((1, max_len, num_hiddens), dtype=torch.float64)
        self.P[0, :, 0::2] = angles.sin()
        self.P[0, :, 1::2] = angles.cos()

    def forward(self, X):
        return self.dropout(X + self.P[:, :X.shape[1]].to(X.device))
