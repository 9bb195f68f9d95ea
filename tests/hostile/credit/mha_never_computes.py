"""A5d: MultiHeadAttention with the parameter shapes of mha_projects_to_input_sizes and a forward that raises on every call."""
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, key_size, query_size, value_size, num_hiddens, num_heads, dropout, bias=False, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.Linear(query_size, query_size, bias=bias)
        self.W_k = nn.Linear(key_size, key_size, bias=bias)
        self.W_v = nn.Linear(value_size, value_size, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

    def forward(self, queries, keys, values, valid_lens):
        raise NotImplementedError("not done")
