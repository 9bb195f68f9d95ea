"""
component: PositionalEncoding
bug: keeps the table sequence-first, as PyTorch's Transformer tutorial does (P of shape (max_len, 1, num_hiddens), indexed by X.shape[0]), so a batch-first X of shape (batch, steps, num_hiddens) gets position b's encoding at every step of batch item b
fix: keep P of shape (1, max_len, num_hiddens) and add P[:, :X.shape[1], :], the positions along the steps axis
symptom: shape
"""
import math
import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        position = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, num_hiddens, 2, dtype=torch.float32) * (-math.log(10000.0) / num_hiddens))
        P = torch.zeros(max_len, num_hiddens)
        P[:, 0::2] = torch.sin(position * div_term)
        P[:, 1::2] = torch.cos(position * div_term)
        self.P = P.unsqueeze(1)  # (max_len, 1, num_hiddens)

    def forward(self, X):
        X = X + self.P[:X.shape[0], :].to(X.device)
        return self.dropout(X)
