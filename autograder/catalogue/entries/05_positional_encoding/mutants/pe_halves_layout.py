"""
component: PositionalEncoding
bug: puts all sines in the first half of the columns and all cosines in the second half, instead of interleaved
fix: write the sines into the even columns (0::2) and the cosines into the odd columns (1::2)
symptom: interleaved
"""
import math
import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.P = torch.zeros((1, max_len, num_hiddens))
        X = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1) / torch.pow(
            10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        half = num_hiddens // 2
        self.P[:, :, :half] = torch.sin(X)
        self.P[:, :, half:] = torch.cos(X)

    def forward(self, X):
        X = X + self.P[:, :X.shape[1], :].to(X.device)
        return self.dropout(X)
