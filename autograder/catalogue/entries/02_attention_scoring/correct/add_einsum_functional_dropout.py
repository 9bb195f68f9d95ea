"""
component: AdditiveAttention
note: einsum for the scores and the pooling, F.dropout(..., training=self.training), expand instead of broadcasting
"""
import torch
from torch import nn
import torch.nn.functional as F


class AdditiveAttention(nn.Module):
    def __init__(self, key_size, query_size, num_hiddens, dropout):
        super().__init__()
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.p = dropout

    def forward(self, queries, keys, values, valid_lens):
        q, k = self.W_q(queries), self.W_k(keys)  # (B, Q, H), (B, K, H)
        B, Q, H = q.shape
        K = k.shape[1]
        features = torch.tanh(q[:, :, None, :].expand(B, Q, K, H) + k[:, None, :, :].expand(B, Q, K, H))
        scores = torch.einsum("bqkh,h->bqk", features, self.w_v.weight[0])
        self.attention_weights = masked_softmax(scores, valid_lens)
        dropped = F.dropout(self.attention_weights, self.p, training=self.training)
        return torch.einsum("bqk,bkv->bqv", dropped, values)
