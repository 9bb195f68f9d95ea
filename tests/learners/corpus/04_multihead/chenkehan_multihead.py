"""A learner's 04: transpose_qkv/transpose_output that reshape without permuting, MultiHeadAttention with biased w_q..w_o and `attention_score_function`.

Source: https://github.com/Chenkehan21/My-dive-into-deep-learning
Files (repository: path @ commit (definitions kept)):
  Chenkehan21/My-dive-into-deep-learning: codes/Attention/multi_head_attention.py @ df3ca5749f311e59495fef93593bf4e1d12ad43e (transpose_qkv, transpose_output, MultiHeadAttention)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `import sys`; `import matplotlib`; `import matplotlib.pyplot as plt`; `from attention_scoring_functions import DotProductAttention`; `from Modern_RNNs.seq2seq import *`; `from bahdanau_attention import Seq2SeqAttentionDecoder`.
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch
import torch.nn as nn


def transpose_qkv(x, num_heads):
    # x.shape=(batch_size, num_queries, num_hiddens)
    # we want output.shape=(batch_size * num_heads, num_queries, num_hiddens / num_heads)
    x = x.reshape(x.shape[0] * num_heads, x.shape[1], -1)

    return x


def transpose_output(x, num_heads):
    # x.shape=(batch_size * num_heads, num_queries, num_hiddens / num_heads)
    # we want output.shape=(batch_size, num_queries, num_hiddens)
    x = x.reshape(-1, x.shape[1], x.shape[2] * num_heads)

    return x


class MultiHeadAttention(nn.Module):
    def __init__(self, key_size, query_size, value_size, num_hiddens, num_heads, dropout):
        super().__init__()
        self.num_heads = num_heads
        self.w_k = nn.Linear(key_size, num_hiddens)
        self.w_q = nn.Linear(query_size, num_hiddens)
        self.w_v = nn.Linear(value_size, num_hiddens)
        self.w_o = nn.Linear(num_hiddens, num_hiddens)
        self.attention_score_function = DotProductAttention(dropout)
    
    def forward(self, queries, keys, values, valid_lens):
        # queriese.shape=(batch_size, num_queries, q_size)
        # keys.shape=(batch_size, num_keys, k_size)
        # values.shape=(batch_size, num_values, v_size)
        # valid_lens.shape=(batch_size, ) or (batch_size, num_queries)
        queries = transpose_qkv(self.w_q(queries), self.num_heads)
        keys = transpose_qkv(self.w_k(keys), self.num_heads)
        values = transpose_qkv(self.w_v(values), self.num_heads)
        # queriese.shape=(batch_size * num_heads, num_queries, num_hiddens / num_heads)
        # keys.shape=(batch_size * num_heads, num_keys, num_hiddens / num_heads)
        # values.shape=(batch_size * num_heads, num_values, num_hiddens / num_heads)

        if valid_lens is not None:
            valid_lens = torch.repeat_interleave(valid_lens, self.num_heads, dim=0)
            # valid_lens.shape=(batch_size * num_heads, ) or valid.shape=(batch_size * num_heads, num_queries)

        output = self.attention_score_function(queries, keys, values, valid_lens)
        self.attention_weights = self.attention_score_function.attention_weights
        output = transpose_output(output, self.num_heads) # output.shape=(batch_size, num_queries, num_hiddens)
        res = self.w_o(output) # res.shape=(batch_size, num_queries, v_size)

        return res
