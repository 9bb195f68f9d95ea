"""
component: PositionalEncoding
bug: returns zeros of X's shape from forward (and keeps an all-zero P), ignoring X and the positions
"""
import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.P = torch.zeros((1, max_len, num_hiddens))

    def forward(self, X):
        return torch.zeros_like(X)
