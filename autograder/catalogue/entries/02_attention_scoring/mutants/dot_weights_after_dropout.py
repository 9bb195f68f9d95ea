"""
component: DotProductAttention
bug: stores the attention weights after dropout instead of before
fix: store the weights from before dropout (masked_softmax's output) in self.attention_weights and apply dropout only to what is multiplied with the values
family: weights-stored-after-dropout
symptom: before dropout
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
        self.attention_weights = self.dropout(masked_softmax(scores, valid_lens))
        return torch.bmm(self.attention_weights, values)
