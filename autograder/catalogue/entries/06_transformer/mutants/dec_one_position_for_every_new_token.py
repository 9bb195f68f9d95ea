"""
component: TransformerDecoder
bug: in eval mode adds one position P[t] (t = the tokens in the cache) to every new token, so a whole sequence decoded at once gets P[0] at each position (right only one token at a time)
fix: add P[:, t:t+T] for the T new tokens after t cached ones, in every mode
family: positions-ignore-cache
symptom: whole sequence
"""
import math
import torch
from torch import nn


class TransformerDecoder(AttentionDecoder):
    def __init__(self, vocab_size, key_size, query_size, value_size, num_hiddens, norm_shape,
                 ffn_num_input, ffn_num_hiddens, num_heads, num_layers, dropout, **kwargs):
        super().__init__(**kwargs)
        self.num_hiddens = num_hiddens
        self.num_layers = num_layers
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
        self.blks = nn.Sequential()
        for i in range(num_layers):
            self.blks.add_module("block" + str(i), DecoderBlock(
                key_size, query_size, value_size, num_hiddens, norm_shape, ffn_num_input,
                ffn_num_hiddens, num_heads, dropout, i))
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens, *args):
        return [enc_outputs, enc_valid_lens, [None] * self.num_layers]

    def forward(self, X, state):
        embedded = self.embedding(X) * math.sqrt(self.num_hiddens)
        if self.training:
            X = self.pos_encoding(embedded)
        else:  # one offset for the whole chunk: P[t] broadcast over its T tokens
            t = 0 if state[2][0] is None else state[2][0].shape[1]
            X = self.pos_encoding.dropout(embedded + self.pos_encoding.P[:, t:t + 1, :])
        self._attention_weights = [[None] * len(self.blks) for _ in range(2)]
        for i, blk in enumerate(self.blks):
            X, state = blk(X, state)
            self._attention_weights[0][i] = blk.attention1.attention.attention_weights
            self._attention_weights[1][i] = blk.attention2.attention.attention_weights
        return self.dense(X), state

    @property
    def attention_weights(self):
        return self._attention_weights
