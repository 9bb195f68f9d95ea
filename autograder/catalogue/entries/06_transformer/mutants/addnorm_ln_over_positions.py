"""
component: AddNorm
bug: normalizes with a hand-written layer norm whose statistics are taken over positions and features together
fix: normalize each position over its features only (the last axis), e.g. with self.ln, the nn.LayerNorm(normalized_shape)
symptom: position
"""
import torch
from torch import nn


class AddNorm(nn.Module):
    def __init__(self, normalized_shape, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, X, Y):
        Z = self.dropout(Y) + X
        mean = Z.mean(dim=(-2, -1), keepdim=True)
        var = Z.var(dim=(-2, -1), unbiased=False, keepdim=True)
        return (Z - mean) / torch.sqrt(var + self.ln.eps) * self.ln.weight + self.ln.bias
