"""attack: PositionalEncoding whose forward computes nothing (returns dropout(zeros), ignoring X and P) and raises on
the only calls the grader records and replays (the realistic-size comparison, batch 8 and 40+ steps), and whose table
has the catalogue's base-1000 mistake ON PURPOSE. The crashes are not 'compared' failures (replay never runs), so the
half rule of conclude_component cannot reject pe_base_1000, the table tests show it on values (seen_in_values), the
gate is floored at 0.5 and every passed property test (prefix, input unchanged, shapes...) earns half; the zeros are
never replayed, so no degenerate entry (pe_returns_zeros) is seen. (helper-64)
observed (session 43, before the fix): 2.3868 of 6 (40%), named pe_base_1000, in-process and in the sandbox; the
same file with the right table: 0 of 6.
expect: at most 10% of PositionalEncoding: a mistake opens the gate only where it shows in the outputs compared with
the course's (reference comparisons, not a table, stored weights or a property test reading them).
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
        if X.dim() == 3 and X.shape[0] == 8 and X.shape[1] >= 40:
            raise RuntimeError("nothing here")
        return self.dropout(torch.zeros_like(X))
