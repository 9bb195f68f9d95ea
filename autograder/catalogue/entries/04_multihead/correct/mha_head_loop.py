"""
component: MultiHeadAttention
note: a Python loop over heads with slices of the shared projection weights, one DotProductAttention call per head
"""
import math
import torch
from torch import nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, key_size, query_size, value_size, num_hiddens, num_heads, dropout, bias=False, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=bias)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=bias)
        self.W_v = nn.Linear(value_size, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

    @staticmethod
    def _slice(layer, x, rows):
        return F.linear(x, layer.weight[rows], None if layer.bias is None else layer.bias[rows])

    def forward(self, queries, keys, values, valid_lens):
        dh = self.W_q.out_features // self.num_heads
        heads = []
        for i in range(self.num_heads):
            rows = slice(i * dh, (i + 1) * dh)
            heads.append(self.attention(self._slice(self.W_q, queries, rows), self._slice(self.W_k, keys, rows),
                                        self._slice(self.W_v, values, rows), valid_lens))
        return self.W_o(torch.cat(heads, dim=-1))
