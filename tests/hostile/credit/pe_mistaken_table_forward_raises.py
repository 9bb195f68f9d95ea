"""attack: PositionalEncoding whose forward always raises (computes nothing) and whose table has the catalogue's
base-1000 mistake ON PURPOSE. Crashed comparisons are not 'compared', so the table's failures alone name pe_base_1000,
seen in values: the gate's floor pays half of every passed structure/property test about the table. (helper-64)
observed (session 43, before the fix): 1.9776 of 6 (33%), in-process and in the sandbox; with the right table: 0 of 6.
expect: at most 10% of PositionalEncoding: a named mistake earns a floor only where the outputs were computed (a
comparison of them passed, or the mistake showed in them: scoring.shares, Diagnosis.seen_in_values).
Composed after the course's reference code of its assignment (tests/test_credit_attacks.py).
"""
import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.P = torch.zeros((1, max_len, num_hiddens))
        X = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1) / torch.pow(
            1000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        self.P[:, :, 0::2] = torch.sin(X)
        self.P[:, :, 1::2] = torch.cos(X)

    def forward(self, X):
        raise RuntimeError("not implemented")
