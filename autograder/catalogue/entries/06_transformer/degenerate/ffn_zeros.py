"""
component: PositionWiseFFN
bug: returns zeros of shape (B, T, ffn_num_outputs), ignoring X (the dense layers exist but are never used)
"""
import torch
from torch import nn


class PositionWiseFFN(nn.Module):
    def __init__(self, ffn_num_input, ffn_num_hiddens, ffn_num_outputs, **kwargs):
        super().__init__(**kwargs)
        self.dense1 = nn.Linear(ffn_num_input, ffn_num_hiddens)
        self.relu = nn.ReLU()
        self.dense2 = nn.Linear(ffn_num_hiddens, ffn_num_outputs)

    def forward(self, X):
        return torch.zeros(*X.shape[:-1], self.dense2.out_features, dtype=X.dtype, device=X.device)
