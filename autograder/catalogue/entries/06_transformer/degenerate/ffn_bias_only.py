"""
component: PositionWiseFFN
bug: skips dense1 and feeds dense2 a hidden layer of zeros, so every position gets the same output, dense2's bias
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
        hidden = torch.zeros(*X.shape[:-1], self.dense1.out_features, dtype=X.dtype, device=X.device)
        return self.dense2(hidden)
