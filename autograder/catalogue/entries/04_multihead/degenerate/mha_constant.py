"""
component: MultiHeadAttention
bug: returns the same non-zero vector (W_o applied to ones) at every query whatever the queries, keys, values and valid lengths, and stores uniform weights over the valid keys
"""
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, key_size, query_size, value_size, num_hiddens, num_heads, dropout, bias=False, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=bias)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=bias)
        self.W_v = nn.Linear(value_size, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

    def forward(self, queries, keys, values, valid_lens):
        B, Q, K = queries.shape[0], queries.shape[1], keys.shape[1]
        lens = torch.full((B, Q), K) if valid_lens is None else valid_lens.reshape(B, -1).expand(B, Q)
        valid = (torch.arange(K).reshape(1, 1, -1) < lens.unsqueeze(-1)).to(queries.dtype)
        self.attention.attention_weights = (valid / valid.sum(-1, keepdim=True)).repeat_interleave(self.num_heads, 0)
        ones = torch.ones(B, Q, self.W_o.in_features, dtype=queries.dtype)
        return self.W_o(ones)
