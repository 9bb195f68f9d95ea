"""
component: DotProductAttention
bug: gives every key the weight 1, ignoring the queries, the keys and valid_lens, so each query gets the sum of all the values (with one query, a softmax over the queries' axis gives these weights too)
"""
import torch
from torch import nn


class DotProductAttention(nn.Module):
    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        B, Q, K = queries.shape[0], queries.shape[1], keys.shape[1]
        self.attention_weights = torch.ones((B, Q, K), dtype=values.dtype, device=values.device)
        return torch.bmm(self.dropout(self.attention_weights), values)
