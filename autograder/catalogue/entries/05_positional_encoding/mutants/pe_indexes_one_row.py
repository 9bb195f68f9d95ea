"""
component: PositionalEncoding
bug: adds one row of the table, P[:, T], to every position instead of the first T rows P[:, :T]
fix: slice the table, X + P[:, :X.shape[1], :]: position i gets row i (P[:, T] is the single row T, and fails when T == max_len)
symptom: forward
"""
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
        X = X + self.P[:, X.shape[1], :].to(X.device)
        return self.dropout(X)
