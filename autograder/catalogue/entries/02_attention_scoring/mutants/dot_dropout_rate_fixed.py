"""
component: DotProductAttention
bug: fixes its own dropout rate, nn.Dropout(0.1), whatever dropout the caller passes, so with dropout 0 it still drops weights in training
fix: build the dropout from the argument: self.dropout = nn.Dropout(dropout)
family: dropout-rate-ignored
symptom: train mode
"""
import math
import torch
from torch import nn


class DotProductAttention(nn.Module):
    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(0.1)

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
