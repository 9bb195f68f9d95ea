"""
component: MultiHeadAttention
note: all heads at once with einsum on a (B, L, h, d/h) view; masks through masked_softmax on (B*h, Q, K)
"""
import math
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
        h = self.num_heads
        q = self.W_q(queries).unflatten(-1, (h, -1))  # (B, Q, h, dh)
        k = self.W_k(keys).unflatten(-1, (h, -1))  # (B, K, h, dh)
        v = self.W_v(values).unflatten(-1, (h, -1))
        B, Q, _, dh = q.shape
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(dh)
        if valid_lens is not None:
            valid_lens = valid_lens.repeat_interleave(h, dim=0)
        weights = masked_softmax(scores.reshape(B * h, Q, -1), valid_lens)
        self.attention.attention_weights = weights
        weights = self.attention.dropout(weights).reshape(B, h, Q, -1)
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(B, Q, -1)
        return self.W_o(out)
