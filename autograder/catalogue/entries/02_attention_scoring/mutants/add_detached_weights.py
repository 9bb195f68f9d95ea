"""
component: AdditiveAttention
bug: detaches the attention weights when storing them and multiplies the detached copy with the values, so no gradient reaches the queries, keys or W_q, W_k, w_v
fix: keep the weights in the graph: store masked_softmax's output without .detach() and multiply that tensor (after dropout) with the values
family: detached-attention-weights
symptom: gradient
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
        self.attention_weights = masked_softmax(scores, valid_lens).detach()
        return torch.bmm(self.dropout(self.attention_weights), values)
