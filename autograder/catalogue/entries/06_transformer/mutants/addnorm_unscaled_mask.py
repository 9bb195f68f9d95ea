"""
component: AddNorm
bug: drops entries with a hand-made mask without scaling the kept entries by 1/(1-p)
fix: use nn.Dropout(dropout), which scales the kept entries by 1/(1-p) in training (or scale them yourself)
symptom: 1/(1-p)
"""
import torch
from torch import nn


class AddNorm(nn.Module):
    def __init__(self, normalized_shape, dropout, **kwargs):
        super().__init__(**kwargs)
        self.p = dropout
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, X, Y):
        if self.training and self.p > 0:
            Y = Y * (torch.rand_like(Y) > self.p).to(Y.dtype)
        return self.ln(Y + X)
