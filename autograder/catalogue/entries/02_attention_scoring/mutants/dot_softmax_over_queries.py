"""
component: DotProductAttention
bug: takes the softmax of the scores over dim=1 (the queries) instead of the last axis (the keys), so each key's weights sum to 1 over the queries
fix: take the softmax over the last axis, with masked_softmax(scores, valid_lens), so that each query's weights sum to 1 over its keys
family: softmax-over-queries
symptom: sum to 1
"""
import math
import torch
from torch import nn
import torch.nn.functional as F


class DotProductAttention(nn.Module):
    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        if valid_lens is not None:
            B, Q, K = scores.shape
            lens = torch.repeat_interleave(valid_lens, Q) if valid_lens.dim() == 1 else valid_lens.reshape(-1)
            scores = sequence_mask(scores.reshape(-1, K), lens, value=-1e6).reshape(B, Q, K)
        self.attention_weights = F.softmax(scores, dim=1)
        return torch.bmm(self.dropout(self.attention_weights), values)
