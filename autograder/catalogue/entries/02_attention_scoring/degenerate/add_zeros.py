"""
component: AdditiveAttention
bug: returns zeros of shape (B, Q, v) and stores all-zero attention weights (B, Q, K), ignoring every input
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
        self.attention_weights = torch.zeros(B, Q, K, dtype=values.dtype, device=values.device)
        # 0 * (...) keeps the zeros in the autograd graph, so backward runs (and gives zero gradients)
        return torch.zeros(B, Q, values.shape[-1], dtype=values.dtype, device=values.device) + 0 * (
            queries.sum() + keys.sum() + values.sum())
