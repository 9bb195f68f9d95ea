"""attack: PositionalEncoding with the right table P whose forward ignores X: it returns dropout(P[:, :T])
expanded to X's shape. The table tests passed and counted as comparisons with the course (4.32 of 6). (helper-60, session 42)
expect: the gate weighs what forward returns, not the table: at most 10% of PositionalEncoding.
Composed after the course's reference code of its assignment (tests/test_credit_attacks.py).
"""
import math
from typing import Any, Optional

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
        out = self.P[:, :X.shape[1], :].to(X.dtype).expand(X.shape).clone()
        return self.dropout(out)
