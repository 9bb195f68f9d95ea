"""
component: PositionalEncoding
note: interleaves by stacking (sin, cos) on a new last axis and flattening; F.dropout with self.training
"""
import math
import torch
from torch import nn


import torch.nn.functional as F


class PositionalEncoding(nn.Module):
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.p = dropout
        angles = torch.outer(torch.arange(max_len, dtype=torch.float32),
                             torch.pow(10000.0, -torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens))
        self.register_buffer("P", torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(1).unsqueeze(0),
                             persistent=False)

    def forward(self, X):
        return F.dropout(X + self.P[:, :X.shape[1]], self.p, self.training)
