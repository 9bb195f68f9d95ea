"""A1: right table built in __init__; forward ignores it, adds a constant 0.37 to X and, as a side effect,
overwrites self.P with that constant so the 'reads' gate (forward adds rows of its own table) passes."""
import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.P = torch.zeros((1, max_len, num_hiddens))
        X = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1) / torch.pow(
            10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        self.P[:, :, 0::2] = torch.sin(X)
        self.P[:, :, 1::2] = torch.cos(X)

    def forward(self, X):
        self.P = torch.full_like(self.P, 0.37)
        return self.dropout(X + 0.37)
