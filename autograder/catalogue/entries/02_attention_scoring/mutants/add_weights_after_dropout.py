"""
component: AdditiveAttention
bug: stores the attention weights after dropout instead of before
fix: store the weights from before dropout (masked_softmax's output) in self.attention_weights and apply dropout only to what is multiplied with the values
family: weights-stored-after-dropout
symptom: before dropout
"""
import math
import torch
from torch import nn
import torch.nn.functional as F


class AdditiveAttention(nn.Module):
    def __init__(self, key_size, query_size, num_hiddens, dropout, **kwargs):
        super().__init__(**kwargs)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        queries, keys = self.W_q(queries), self.W_k(keys)
        features = torch.tanh(queries.unsqueeze(2) + keys.unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)
        self.attention_weights = self.dropout(masked_softmax(scores, valid_lens))
        return torch.bmm(self.attention_weights, values)
