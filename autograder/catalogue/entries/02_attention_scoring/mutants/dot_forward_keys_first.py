"""
component: DotProductAttention
bug: takes forward's arguments in another order, (keys, values, queries, valid_lens), so each gets another one's tensor
fix: take them in the contract's order: forward(self, queries, keys, values, valid_lens=None)
family: forward-argument-order
symptom: the contract is (queries, keys, values, valid_lens)
"""
import math
import torch
from torch import nn


class DotProductAttention(nn.Module):
    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)

    def forward(self, keys, values, queries, valid_lens=None):
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
