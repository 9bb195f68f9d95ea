"""
component: DotProductAttention
bug: never scores the queries against the keys: every valid key gets the same weight, so each query gets the mean of the valid values
"""
import torch
from torch import nn


class DotProductAttention(nn.Module):
    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        B, Q, K = queries.shape[0], queries.shape[1], keys.shape[1]
        scores = torch.zeros(B, Q, K, dtype=values.dtype, device=values.device)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
