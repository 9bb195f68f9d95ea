"""
component: DotProductAttention
bug: calls F.dropout(weights, p) without training=self.training, so dropout stays on in eval mode
fix: use an nn.Dropout module (it follows train() and eval()), or pass training=self.training to F.dropout
family: functional-dropout-in-eval
symptom: eval
"""
import math
import torch
from torch import nn
import torch.nn.functional as F


class DotProductAttention(nn.Module):
    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)
        self.p = dropout

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(F.dropout(self.attention_weights, self.p), values)
