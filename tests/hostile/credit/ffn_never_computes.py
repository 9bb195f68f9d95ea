"""A5b: PositionWiseFFN with the parameter shapes of the mutant ffn_input_size_is_output (dense1 built for
ffn_num_outputs inputs) whose forward computes nothing at all: it raises on every call."""
import torch
from torch import nn


class PositionWiseFFN(nn.Module):
    def __init__(self, ffn_num_input, ffn_num_hiddens, ffn_num_outputs, **kwargs):
        super().__init__(**kwargs)
        self.dense1 = nn.Linear(ffn_num_outputs, ffn_num_hiddens)
        self.relu = nn.ReLU()
        self.dense2 = nn.Linear(ffn_num_hiddens, ffn_num_outputs)

    def forward(self, X):
        raise NotImplementedError("not done")
