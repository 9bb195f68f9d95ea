"""
component: PositionalEncoding
bug: leaves P as None in __init__ and builds the table on the first forward call, so the module has no table until it has been called once
fix: build the whole (1, max_len, num_hiddens) table in __init__ and let forward only read its first rows
symptom: None once the module is built
"""
import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.num_hiddens, self.max_len = num_hiddens, max_len
        self.P = None

    def forward(self, X):
        if self.P is None:
            self.P = torch.zeros((1, self.max_len, self.num_hiddens))
            angles = torch.arange(self.max_len, dtype=torch.float32).reshape(-1, 1) / torch.pow(
                10000, torch.arange(0, self.num_hiddens, 2, dtype=torch.float32) / self.num_hiddens)
            self.P[:, :, 0::2] = torch.sin(angles)
            self.P[:, :, 1::2] = torch.cos(angles)
        return self.dropout(X + self.P[:, :X.shape[1], :].to(X.device))
