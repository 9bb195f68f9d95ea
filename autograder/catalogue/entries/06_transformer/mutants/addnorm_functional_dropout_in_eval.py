"""
component: AddNorm
bug: calls F.dropout without training=self.training, so dropout stays on in eval mode
fix: use an nn.Dropout module (it follows train() and eval()), or pass training=self.training to F.dropout
family: functional-dropout-in-eval
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
