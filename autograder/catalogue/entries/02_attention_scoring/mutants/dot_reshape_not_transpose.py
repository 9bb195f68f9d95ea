"""
component: DotProductAttention
bug: builds K^T with keys.reshape(B, d, K), which regroups the numbers instead of swapping the last two axes
fix: transpose the keys with keys.transpose(1, 2), not reshape (a reshape keeps the memory order and is not a transpose)
symptom: not reshape
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
        scores = torch.bmm(queries, keys.reshape(keys.shape[0], keys.shape[2], keys.shape[1])) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
