"""
component: PositionWiseFFN
bug: puts a dropout between the layers (nn.Dropout(), p=0.5, whatever the model's dropout), which the contract's FFN does not have: in training it zeroes half of the hidden units
fix: dense2(relu(dense1(X))) with no dropout; the blocks' AddNorms drop the FFN's output
symptom: train mode
"""
import torch
from torch import nn


class PositionWiseFFN(nn.Module):
    def __init__(self, ffn_num_input, ffn_num_hiddens, ffn_num_outputs, **kwargs):
        super().__init__(**kwargs)
        self.dense1 = nn.Linear(ffn_num_input, ffn_num_hiddens)
        self.relu = nn.ReLU()
        self.dropout = nn.Dropout()
        self.dense2 = nn.Linear(ffn_num_hiddens, ffn_num_outputs)

    def forward(self, X):
        return self.dense2(self.dropout(self.relu(self.dense1(X))))
