"""
component: AddNorm
bug: creates the dropout layer but never applies it
fix: apply self.dropout to Y before adding X: ln(dropout(Y) + X)
family: dropout-never-applied
symptom: dropout
"""
import torch
from torch import nn


class AddNorm(nn.Module):
    def __init__(self, normalized_shape, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, X, Y):
        return self.ln(X + Y)
