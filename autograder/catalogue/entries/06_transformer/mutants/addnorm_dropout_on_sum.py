"""
component: AddNorm
bug: applies dropout to the sum X + Y, which also drops entries of the residual X
fix: apply dropout to Y alone, before the residual sum and the layer norm: ln(dropout(Y) + X)
family: addnorm-dropout-placement
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
        return self.ln(self.dropout(X + Y))
