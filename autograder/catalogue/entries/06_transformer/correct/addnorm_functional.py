"""
component: AddNorm
note: F.dropout(Y, p, self.training) and F.layer_norm with the ln module's own parameters
"""
import torch
from torch import nn
from torch.nn import functional as F


class AddNorm(nn.Module):
    def __init__(self, normalized_shape, dropout, **kwargs):
        super().__init__(**kwargs)
        self.p = dropout
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, X, Y):
        Z = X + F.dropout(Y, self.p, self.training)
        return F.layer_norm(Z, self.ln.normalized_shape, self.ln.weight, self.ln.bias, self.ln.eps)
