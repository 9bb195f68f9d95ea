"""
component: PositionWiseFFN
note: torch.relu called directly (no ReLU submodule), dense layers applied with F.linear
"""
import torch
from torch import nn
from torch.nn import functional as F


class PositionWiseFFN(nn.Module):
    def __init__(self, ffn_num_input, ffn_num_hiddens, ffn_num_outputs, **kwargs):
        super().__init__(**kwargs)
        self.dense1 = nn.Linear(ffn_num_input, ffn_num_hiddens)
        self.dense2 = nn.Linear(ffn_num_hiddens, ffn_num_outputs)

    def forward(self, X):
        H = torch.relu(F.linear(X, self.dense1.weight, self.dense1.bias))
        return F.linear(H, self.dense2.weight, self.dense2.bias)
