"""
component: AdditiveAttention
bug: draws random attention weights (a masked softmax of random scores) that ignore the queries and keys
"""
import torch
from torch import nn


class AdditiveAttention(nn.Module):
    def __init__(self, key_size, query_size, num_hiddens, dropout, **kwargs):
        super().__init__(**kwargs)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        B, Q, K = queries.shape[0], queries.shape[1], keys.shape[1]
        scores = torch.rand(B, Q, K, dtype=values.dtype, device=values.device)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
