"""
component: PositionalEncoding
note: frequencies through exp/log (the "div_term" form) into a persistent buffer
"""
import math
import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, num_hiddens, 2) * (-math.log(10000.0) / num_hiddens))
        P = torch.zeros(1, max_len, num_hiddens)
        P[0, :, 0::2] = torch.sin(position * div_term)
        P[0, :, 1::2] = torch.cos(position * div_term)
        self.register_buffer("P", P)

    def forward(self, X):
        return self.dropout(X + self.P[:, :X.size(1)])
