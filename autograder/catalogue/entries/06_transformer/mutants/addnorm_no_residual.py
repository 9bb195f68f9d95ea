"""
component: AddNorm
bug: leaves out the residual X: it returns ln(dropout(Y))
fix: add the residual X before normalizing: ln(dropout(Y) + X)
symptom: residual
"""
import torch
from torch import nn


class AddNorm(nn.Module):
    def __init__(self, normalized_shape, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, X, Y):
        return self.ln(self.dropout(Y))
