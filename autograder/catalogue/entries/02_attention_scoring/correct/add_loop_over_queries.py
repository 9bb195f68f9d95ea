"""
component: AdditiveAttention
note: scores one query at a time in a Python loop, matmul instead of bmm
"""
import torch
from torch import nn


class AdditiveAttention(nn.Module):
    def __init__(self, key_size, query_size, num_hiddens, dropout, **kwargs):
        super(AdditiveAttention, self).__init__(**kwargs)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        q, k = self.W_q(queries), self.W_k(keys)
        cols = [self.w_v(torch.tanh(q[:, i:i + 1, :] + k))[..., 0] for i in range(q.shape[1])]  # each (B, K)
        scores = torch.stack(cols, dim=1)  # (B, Q, K)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.matmul(self.dropout(self.attention_weights), values)
