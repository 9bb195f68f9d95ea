"""
component: PositionWiseFFN
bug: applies a ReLU after dense2 as well, so its output is never negative
fix: return dense2's output as it is: the only ReLU sits between dense1 and dense2
symptom: relu
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
        return self.relu(self.dense2(self.relu(self.dense1(X))))
