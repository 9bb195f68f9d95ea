"""
component: TransformerDecoder
bug: appends the attention weights on every forward call and never resets the lists, so they grow while decoding
fix: start new lists (one entry per block) at the beginning of every forward call, so that they hold the weights of the last call only
family: weights-list-not-reset
symptom: last call
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
        self._attention_weights = [[], []]

    def init_state(self, enc_outputs, enc_valid_lens, *args):
        return [enc_outputs, enc_valid_lens, [None] * self.num_layers]

    def forward(self, X, state):
        t = 0 if state[2][0] is None else state[2][0].shape[1]
        X = self.pos_encoding.dropout(self.embedding(X) * math.sqrt(self.num_hiddens)
                                      + self.pos_encoding.P[:, t:t + X.shape[1], :].to(X.device))
        for i, blk in enumerate(self.blks):
            X, state = blk(X, state)
            self._attention_weights[0].append(blk.attention1.attention.attention_weights)
            self._attention_weights[1].append(blk.attention2.attention.attention_weights)
        return self.dense(X), state

    @property
    def attention_weights(self):
        return self._attention_weights
