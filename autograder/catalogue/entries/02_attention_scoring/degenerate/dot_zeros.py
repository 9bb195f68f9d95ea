"""
component: DotProductAttention
bug: returns zeros of shape (B, Q, v) and stores all-zero attention weights (B, Q, K), ignoring every input
"""
import torch
from torch import nn


class DotProductAttention(nn.Module):
    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        B, Q, K = queries.shape[0], queries.shape[1], keys.shape[1]
        self.attention_weights = torch.zeros(B, Q, K, dtype=values.dtype, device=values.device)
        # 0 * (...) keeps the zeros in the autograd graph, so backward runs (and gives zero gradients)
        return torch.zeros(B, Q, values.shape[-1], dtype=values.dtype, device=values.device) + 0 * (
            queries.sum() + keys.sum() + values.sum())
