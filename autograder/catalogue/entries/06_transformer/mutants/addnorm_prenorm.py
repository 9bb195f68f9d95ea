"""
component: AddNorm
bug: normalizes before the residual sum (pre-norm: X + dropout(ln(Y))), so its output is not normalized
fix: normalize last (post-norm): add the residual first, then apply the layer norm to the sum, ln(dropout(Y) + X)
family: prenorm-not-postnorm
symptom: post-norm
"""
import torch
from torch import nn


class AddNorm(nn.Module):
    def __init__(self, normalized_shape, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, X, Y):
        return X + self.dropout(self.ln(Y))
