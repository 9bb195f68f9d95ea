"""
component: PositionalEncoding
bug: doubles the exponent, 4j/d instead of 2j/d (2 * i / d with i already running over the even columns 0, 2, 4, ...), so every frequency but the first is wrong
fix: use the even column index itself as the exponent's numerator: 10000 ** (i / num_hiddens) for i = 0, 2, 4, ...
symptom: 2j/d
"""
import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.P = torch.zeros((1, max_len, num_hiddens))
        even = torch.arange(0, num_hiddens, 2, dtype=torch.float32)
        X = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1) / torch.pow(10000, 2 * even / num_hiddens)
        self.P[:, :, 0::2] = torch.sin(X)
        self.P[:, :, 1::2] = torch.cos(X)

    def forward(self, X):
        X = X + self.P[:, :X.shape[1], :].to(X.device)
        return self.dropout(X)
