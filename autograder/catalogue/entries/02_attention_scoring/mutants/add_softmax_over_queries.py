"""
component: AdditiveAttention
bug: takes the softmax of the scores over dim=1 (the queries) instead of the last axis (the keys), so each key's weights sum to 1 over the queries
fix: take the softmax over the last axis, with masked_softmax(scores, valid_lens), so that each query's weights sum to 1 over its keys
family: softmax-over-queries
symptom: sum to 1
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
        if valid_lens is not None:
            B, Q, K = scores.shape
            lens = torch.repeat_interleave(valid_lens, Q) if valid_lens.dim() == 1 else valid_lens.reshape(-1)
            scores = sequence_mask(scores.reshape(-1, K), lens, value=-1e6).reshape(B, Q, K)
        self.attention_weights = F.softmax(scores, dim=1)
        return torch.bmm(self.dropout(self.attention_weights), values)
