"""
component: DotProductAttention
note: einsum scores scaled by d ** -0.5, F.dropout(..., training=self.training), matmul with keys.mT elsewhere
"""
import torch
from torch import nn
import torch.nn.functional as F


class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.p = dropout

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.einsum("bqd,bkd->bqk", queries, keys) * queries.size(-1) ** -0.5
        self.attention_weights = masked_softmax(scores, valid_lens)
        return F.dropout(self.attention_weights, self.p, self.training) @ values
