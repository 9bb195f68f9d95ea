"""
component: AddNorm
bug: normalizes by the unbiased standard deviation plus eps, (Z - mean) / (Z.std(-1) + eps), as the Annotated Transformer's hand-written LayerNorm does, instead of nn.LayerNorm's (Z - mean) / sqrt(biased variance + eps)
fix: use nn.LayerNorm(normalized_shape): it divides by the square root of the biased variance (over the features, dividing by d, not d - 1) plus eps
symptom: variance
"""
import torch
from torch import nn


class _LayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))
        self.eps = eps

    def forward(self, Z):
        mean = Z.mean(-1, keepdim=True)
        std = Z.std(-1, keepdim=True)
        return self.weight * (Z - mean) / (std + self.eps) + self.bias


class AddNorm(nn.Module):
    def __init__(self, normalized_shape, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)
        self.ln = _LayerNorm(normalized_shape)

    def forward(self, X, Y):
        return self.ln(self.dropout(Y) + X)
