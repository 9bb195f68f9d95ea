"""
component: MultiHeadAttention
bug: takes the constructor's arguments in another order, (num_hiddens, num_heads, dropout, key_size, query_size, value_size), so each gets another one's value
fix: take them in the contract's order: __init__(self, key_size, query_size, value_size, num_hiddens, num_heads, dropout, bias=False)
family: constructor-argument-order
symptom: the contract is (key_size, query_size, value_size, num_hiddens, num_heads, dropout, bias)
"""
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, num_hiddens, num_heads, dropout, key_size, query_size, value_size, bias=False, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=bias)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=bias)
        self.W_v = nn.Linear(value_size, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

    def forward(self, queries, keys, values, valid_lens):
        queries = transpose_qkv(self.W_q(queries), self.num_heads)
        keys = transpose_qkv(self.W_k(keys), self.num_heads)
        values = transpose_qkv(self.W_v(values), self.num_heads)
        if valid_lens is not None:
            valid_lens = torch.repeat_interleave(valid_lens, self.num_heads, dim=0)
        output = self.attention(queries, keys, values, valid_lens)
        return self.W_o(transpose_output(output, self.num_heads))
