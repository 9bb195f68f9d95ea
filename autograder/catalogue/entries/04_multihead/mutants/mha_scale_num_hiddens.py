"""
component: MultiHeadAttention
bug: scales the scores by 1/sqrt(num_hiddens) instead of 1/sqrt(num_hiddens/num_heads)
fix: scale each head's scores by the square root of its own feature size, num_hiddens / num_heads (DotProductAttention on the split heads does this)
symptom: scale
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
        queries = transpose_qkv(self.W_q(queries), self.num_heads)
        keys = transpose_qkv(self.W_k(keys), self.num_heads)
        values = transpose_qkv(self.W_v(values), self.num_heads)
        if valid_lens is not None:
            valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)
        # scaled by the full width instead of the head width
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(queries.shape[-1] * self.num_heads)
        self.attention.attention_weights = masked_softmax(scores, valid_lens)
        output = torch.bmm(self.attention.dropout(self.attention.attention_weights), values)
        return self.W_o(transpose_output(output, self.num_heads))
