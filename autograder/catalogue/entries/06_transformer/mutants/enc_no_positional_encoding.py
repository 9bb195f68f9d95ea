"""
component: TransformerEncoder
bug: never adds the positional encoding: the blocks get the scaled embeddings alone, so the encoder cannot tell positions apart
fix: add the positional encoding to the scaled embeddings before the blocks: self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
symptom: never adds the positional encoding
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
        self.blks = nn.Sequential()
        for i in range(num_layers):
            self.blks.add_module("block" + str(i), EncoderBlock(
                key_size, query_size, value_size, num_hiddens, norm_shape, ffn_num_input,
                ffn_num_hiddens, num_heads, dropout, use_bias))

    def forward(self, X, valid_lens, *args):
        X = self.embedding(X) * math.sqrt(self.num_hiddens)  # the positional encoding is never added
        self.attention_weights = [None] * len(self.blks)
        for i, blk in enumerate(self.blks):
            X = blk(X, valid_lens)
            self.attention_weights[i] = blk.attention.attention.attention_weights
        return X
