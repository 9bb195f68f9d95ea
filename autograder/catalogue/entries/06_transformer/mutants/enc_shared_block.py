"""
component: TransformerEncoder
bug: appends the same block object num_layers times, so all layers share one set of weights
fix: create a new EncoderBlock inside the loop, so that every layer has its own weights
family: shared-block
symptom: own weights
"""
import math
import torch
from torch import nn


class TransformerEncoder(Encoder):
    def __init__(self, vocab_size, key_size, query_size, value_size, num_hiddens, norm_shape,
                 ffn_num_input, ffn_num_hiddens, num_heads, num_layers, dropout, use_bias=False, **kwargs):
        super().__init__(**kwargs)
        self.num_hiddens = num_hiddens
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
        blk = EncoderBlock(key_size, query_size, value_size, num_hiddens, norm_shape, ffn_num_input,
                           ffn_num_hiddens, num_heads, dropout, use_bias)
        self.blks = nn.Sequential()
        for i in range(num_layers):
            self.blks.add_module("block" + str(i), blk)

    def forward(self, X, valid_lens, *args):
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
        self.attention_weights = [None] * len(self.blks)
        for i, blk in enumerate(self.blks):
            X = blk(X, valid_lens)
            self.attention_weights[i] = blk.attention.attention.attention_weights
        return X
