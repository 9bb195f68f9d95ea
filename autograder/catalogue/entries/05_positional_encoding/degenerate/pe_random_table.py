"""
component: PositionalEncoding
bug: fills P with random numbers (1, max_len, num_hiddens) instead of sines and cosines of the positions
"""
import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.P = torch.randn((1, max_len, num_hiddens))

    def forward(self, X):
        X = X + self.P[:, :X.shape[1], :].to(X.device)
        return self.dropout(X)
