"""
component: PositionWiseFFN
bug: dense2 maps back to ffn_num_input instead of ffn_num_outputs (works only when they are equal)
symptom: shape
"""
import torch
from torch import nn


class PositionWiseFFN(nn.Module):
    def __init__(self, ffn_num_input, ffn_num_hiddens, ffn_num_outputs, **kwargs):
        super().__init__(**kwargs)
        self.dense1 = nn.Linear(ffn_num_input, ffn_num_hiddens)
        self.relu = nn.ReLU()
        self.dense2 = nn.Linear(ffn_num_hiddens, ffn_num_input)

    def forward(self, X):
        return self.dense2(self.relu(self.dense1(X)))
