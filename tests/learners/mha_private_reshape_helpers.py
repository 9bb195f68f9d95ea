# A correct MultiHeadAttention in the style of d2l 1.0's learners: its helper *methods* `transpose_qkv(self, X)`
# and `transpose_output(self, X)` only reshape (batch, steps, heads, features per head), and forward does the
# head split itself. They share the contract functions' names but not their meaning. Its own masked_softmax
# takes 1-D valid_lens only (it fails 02's tests on 2-D lengths), and its own DotProductAttention uses it.
# (Pattern of a public learner's IMDb classifier found by a review, helper-70's l11; written anew here.)
import math

import torch
from torch import nn


def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    keep = torch.arange(X.shape[-1], device=X.device)[None, None, :] < valid_lens[:, None, None]
    return torch.softmax(X.masked_fill(~keep, -1e6), dim=-1)


class DotProductAttention(nn.Module):
    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(queries.shape[-1])
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class MultiHeadAttention(nn.Module):
    def __init__(self, key_size, query_size, value_size, num_hiddens, num_heads, dropout, bias=False, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=bias)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=bias)
        self.W_v = nn.Linear(value_size, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

    def transpose_qkv(self, X):
        batch, steps, hiddens = X.shape
        return X.reshape(batch, steps, self.num_heads, hiddens // self.num_heads)

    def transpose_output(self, X):
        batch, steps, heads, per_head = X.shape
        return X.reshape(batch, steps, heads * per_head)

    def _heads(self, X):  # (batch, steps, heads, per_head) -> (batch * heads, steps, per_head)
        X = self.transpose_qkv(X).permute(0, 2, 1, 3)
        return X.reshape(-1, X.shape[2], X.shape[3])

    def forward(self, queries, keys, values, valid_lens):
        q, k, v = self._heads(self.W_q(queries)), self._heads(self.W_k(keys)), self._heads(self.W_v(values))
        if valid_lens is not None:
            valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)
        out = self.attention(q, k, v, valid_lens)  # (batch * heads, queries, per_head)
        out = out.reshape(-1, self.num_heads, out.shape[1], out.shape[2]).permute(0, 2, 1, 3)
        return self.W_o(self.transpose_output(out))
