"""
component: DotProductAttention
bug: applies dropout to the output (weights times values) instead of to the attention weights
fix: apply self.dropout on the attention weights and multiply the result with the values: bmm(dropout(weights), values)
family: dropout-not-on-attention-weights
symptom: on the attention weights
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
        self.attention_weights = masked_softmax(scores, valid_lens)
        return self.dropout(torch.bmm(self.attention_weights, values))
