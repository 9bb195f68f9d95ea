"""A learner's 04 from their transformer file: the book's transposes and MultiHeadAttention.

Source: https://github.com/raziel1985/d2l_learning
Files (repository: path @ commit (definitions kept)):
  raziel1985/d2l_learning: attention-mechanisms/transformer.py @ efd6c55c13d5d7cca5abbbd68ba407909ab42624 (transpose_qkv, transpose_output, MultiHeadAttention)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `import common`; `import matplotlib.pyplot as plt`; `import pandas as pd`.
  `common.DotProductAttention` -> `DotProductAttention` (1x)
  (`common` is the learner's own module holding the book's DotProductAttention; the course provides it.)
"""
# ruff: noqa  (a learner's code, kept verbatim)
import math
import torch
from d2l import torch as d2l
from torch import nn


def transpose_qkv(X, num_heads):
    """为了多注意力头的并行计算而变换形状"""
    # X: (batch_size, num_pair, num_head, num_hiddens / num_head)
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)
    # X: (batch_size, num_head, num_pair, num_hiddens / num_head)
    X = X.permute(0, 2, 1, 3)
    # X: (batch_size * num_head, num_pair, num_hiddens / num_head)
    return X.reshape(-1, X.shape[2], X.shape[3])


def transpose_output(X, num_heads):
    X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])
    X = X.permute(0, 2, 1, 3)
    # X: (batch_size, num_pair, num_hiddens)
    return X.reshape(X.shape[0], X.shape[1], -1)


class MultiHeadAttention(nn.Module):
    """多头注意力"""
    def __init__(self, key_size, query_size, value_size, num_hiddens, num_heads,
                 dropout, bias=False, **kwargs):
        super(MultiHeadAttention, self).__init__(**kwargs)
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=bias)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=bias)
        self.W_v = nn.Linear(value_size, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

    # queries: (batch_size, query_seq_len, query_size)
    # keys: (batch_size, key_seq_len, key_size)
    # values: (batch_size, value_seq_len, value_size)
    # valid_lens: (batch_size) or (batch_size, num_query)
    # key_seq_len = value_seq_len
    def forward(self, queries, keys, values, valid_lens):
        # queries: (batch_size * num_head, query_seq_len, num_hiddens / num_head)
        queries = transpose_qkv(self.W_q(queries), self.num_heads)
        # keys: (batch_size * num_head, key_seq_len, num_hiddens / num_head)
        keys = transpose_qkv(self.W_k(keys), self.num_heads)
        # value: (batch_size * num_head, value_seq_len, num_hiddens / num_head)
        values = transpose_qkv(self.W_v(values), self.num_heads)

        if valid_lens is not None:
            # 在轴0，将每一项复制num_heads次
            valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)

        # output: (batch_num * num_head, query_seq_len, num_hiddens / num_head)
        output = self.attention(queries, keys, values, valid_lens)
        # output_concat: (batch_num, query_seq_len, num_hiddens)
        output_concat = transpose_output(output, self.num_heads)
        # (batch_num, query_seq_len, num_hiddens)
        return self.W_o(output_concat)
