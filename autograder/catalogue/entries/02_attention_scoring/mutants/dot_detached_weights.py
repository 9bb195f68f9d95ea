"""
component: DotProductAttention
bug: detaches the attention weights when storing them and multiplies the detached copy with the values, so no gradient reaches the queries or keys
fix: keep the weights in the graph: store masked_softmax's output without .detach() and multiply that tensor (after dropout) with the values
family: detached-attention-weights
symptom: gradient
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
        self.attention_weights = masked_softmax(scores, valid_lens).detach()
        return torch.bmm(self.dropout(self.attention_weights), values)
