"""
component: MultiHeadAttention
bug: returns zeros of shape (B, Q, num_hiddens), ignoring every input (the layers exist but are never used)
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
        self.attention.attention_weights = torch.full((B * self.num_heads, Q, K), 1.0 / K, dtype=queries.dtype)
        return torch.zeros(B, Q, self.W_o.out_features, dtype=queries.dtype, device=queries.device)
