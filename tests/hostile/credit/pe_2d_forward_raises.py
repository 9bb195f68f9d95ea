"""A8: PositionalEncoding with the right table stored 2-D (max_len, d), as the catalogue mistake pe_2d_table stores it,
and a forward that raises on every call. The shape test's text names pe_2d_table (a shape text: explained, not seen
in values); `explained` then makes every PASSED reference test of the table count on its own (scoring.shares `own`),
so the table earns full credit beside a forward that computes nothing."""
import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.P = torch.zeros((max_len, num_hiddens))
        X = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1) / torch.pow(
            10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        self.P[:, 0::2] = torch.sin(X)
        self.P[:, 1::2] = torch.cos(X)

    def forward(self, X):
        raise RuntimeError("not implemented")
