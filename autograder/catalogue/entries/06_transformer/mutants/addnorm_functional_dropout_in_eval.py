"""
component: AddNorm
bug: F.dropout without training=self.training, so dropout stays on in eval mode
symptom: eval
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
        return self.ln(F.dropout(Y, self.p) + X)
