"""
component: PositionalEncoding
bug: takes the constructor's arguments in another order, (max_len, num_hiddens, dropout), with no default for max_len
fix: take them in the contract's order: __init__(self, num_hiddens, dropout, max_len=1000)
family: constructor-argument-order
symptom: the contract is (num_hiddens, dropout, max_len)
"""
import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, max_len, num_hiddens, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        positions = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1)
        frequencies = torch.pow(10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        angles = positions / frequencies
        P = torch.zeros((1, max_len, num_hiddens))
        P[0, :, 0::2] = torch.sin(angles)
        P[0, :, 1::2] = torch.cos(angles[:, : num_hiddens // 2])
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        return self.dropout(X + self.P[:, : X.shape[1], :].to(X.device))
