"""
component: DotProductAttention
note: matmul with keys.mT, sqrt computed as a tensor in the scores' dtype
"""
import torch
from torch import nn


class DotProductAttention(nn.Module):
    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scale = torch.tensor(queries.shape[-1], dtype=queries.dtype).sqrt()
        scores = torch.matmul(queries, keys.mT) / scale
        weights = masked_softmax(scores, valid_lens)
        self.attention_weights = weights
        return torch.matmul(self.dropout(weights), values)
