"""
component: DotProductAttention
bug: takes a plain softmax of the scores and never uses valid_lens, so padded keys get weight
fix: compute the weights with masked_softmax(scores, valid_lens), so that positions past each valid length get weight 0
family: valid-lens-ignored
symptom: valid length
ignores: valid_lens
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
        self.attention_weights = torch.softmax(scores, dim=-1)
        return torch.bmm(self.dropout(self.attention_weights), values)
