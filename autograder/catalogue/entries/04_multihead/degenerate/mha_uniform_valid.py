"""
component: MultiHeadAttention
bug: never scores queries against keys: every head gives the same weight to each valid key, so each query gets W_o of the mean of the valid projected values
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
        values = transpose_qkv(self.W_v(values), self.num_heads)  # (B*h, K, H/h)
        BH, K = values.shape[0], values.shape[1]
        scores = torch.zeros(BH, queries.shape[1], K, dtype=values.dtype, device=values.device)
        if valid_lens is not None:
            valid_lens = torch.repeat_interleave(valid_lens, self.num_heads, dim=0)
        self.attention.attention_weights = masked_softmax(scores, valid_lens)
        output = torch.bmm(self.attention.dropout(self.attention.attention_weights), values)
        return self.W_o(transpose_output(output, self.num_heads))
