"""
component: MultiHeadAttention
bug: projects queries, keys and values to their own sizes (query_size, key_size, value_size) instead of num_hiddens: right only when every size equals num_hiddens, as in self-attention
fix: W_q, W_k and W_v map query_size, key_size and value_size to num_hiddens: nn.Linear(query_size, num_hiddens, bias=bias), and so on
family: projections-to-input-sizes
symptom: expected (6, 4)
"""
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
        queries = transpose_qkv(self.W_q(queries), self.num_heads)
        keys = transpose_qkv(self.W_k(keys), self.num_heads)
        values = transpose_qkv(self.W_v(values), self.num_heads)
        if valid_lens is not None:
            valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)
        output = self.attention(queries, keys, values, valid_lens)
        return self.W_o(transpose_output(output, self.num_heads))
