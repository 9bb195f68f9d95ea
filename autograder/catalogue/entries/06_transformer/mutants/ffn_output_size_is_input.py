"""
component: PositionWiseFFN
bug: maps dense2 back to ffn_num_input features instead of ffn_num_outputs, so the output has the wrong shape unless they are equal
fix: make dense2 map ffn_num_hiddens to ffn_num_outputs features
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
