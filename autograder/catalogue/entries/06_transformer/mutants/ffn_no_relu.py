"""
component: PositionWiseFFN
bug: puts no activation between the two dense layers, so the FFN collapses to one linear map
fix: apply a ReLU between dense1 and dense2
symptom: relu
"""
import torch
from torch import nn


class PositionWiseFFN(nn.Module):
    def __init__(self, ffn_num_input, ffn_num_hiddens, ffn_num_outputs, **kwargs):
        super().__init__(**kwargs)
        self.dense1 = nn.Linear(ffn_num_input, ffn_num_hiddens)
        self.dense2 = nn.Linear(ffn_num_hiddens, ffn_num_outputs)

    def forward(self, X):
        return self.dense2(self.dense1(X))
