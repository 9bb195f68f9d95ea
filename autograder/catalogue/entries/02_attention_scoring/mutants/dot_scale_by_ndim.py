"""
component: DotProductAttention
bug: divides the scores by the square root of the number of axes of queries (queries.dim(), always 3) instead of the feature size d
fix: take d from the feature axis, d = queries.shape[-1] (not queries.dim(), the number of axes), and divide Q K^T by math.sqrt(d)
symptom: sqrt(d)
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
        d = queries.dim()
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
