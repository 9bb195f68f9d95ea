"""
component: PositionWiseFFN
bug: builds dense1 for ffn_num_outputs input features instead of ffn_num_input, which is right only where the two sizes are equal (as in the Transformer's own blocks)
fix: make dense1 map ffn_num_input features to ffn_num_hiddens; the FFN's input and output sizes are separate arguments
symptom: shape
"""
import torch
from torch import nn


class PositionWiseFFN(nn.Module):
    def __init__(self, ffn_num_input, ffn_num_hiddens, ffn_num_outputs, **kwargs):
        super().__init__(**kwargs)
        self.dense1 = nn.Linear(ffn_num_outputs, ffn_num_hiddens)
        self.relu = nn.ReLU()
        self.dense2 = nn.Linear(ffn_num_hiddens, ffn_num_outputs)

    def forward(self, X):
        return self.dense2(self.relu(self.dense1(X)))
