"""
component: AddNorm
bug: pre-norm instead of post-norm: X + dropout(ln(Y)), the output is not normalized
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
