"""
component: TransformerDecoder
note: takes the last T rows of P[:, :t+T], reading t from the last block's cache, and applies pos_encoding's dropout separately
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
            self.blks.add_module(f"block{i}", DecoderBlock(
                key_size, query_size, value_size, num_hiddens, norm_shape, ffn_num_input,
                ffn_num_hiddens, num_heads, dropout, i))
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens, *args):
        return [enc_outputs, enc_valid_lens, [None] * self.num_layers]

    def forward(self, X, state):
        last = state[2][-1]
        t, T = (0 if last is None else last.shape[1]), X.shape[1]
        X = self.embedding(X) * math.sqrt(self.num_hiddens)
        X = self.pos_encoding.dropout(X + self.pos_encoding.P[:, : t + T][:, -T:].to(X.device))
        self._attention_weights = [[], []]
        for blk in self.blks:
            X, state = blk(X, state)
            self._attention_weights[0].append(blk.attention1.attention.attention_weights)
            self._attention_weights[1].append(blk.attention2.attention.attention_weights)
        return self.dense(X), state

    @property
    def attention_weights(self):
        return self._attention_weights
