"""
component: TransformerEncoder
bug: never runs the blocks: it returns the scaled embeddings plus the positional encoding, ignoring valid_lens
"""
import math
import torch
from torch import nn


class TransformerEncoder(Encoder):
    def __init__(self, vocab_size, key_size, query_size, value_size, num_hiddens, norm_shape,
                 ffn_num_input, ffn_num_hiddens, num_heads, num_layers, dropout, use_bias=False, **kwargs):
        super().__init__(**kwargs)
        self.num_hiddens = num_hiddens
        self.num_heads = num_heads
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
        self.blks = nn.Sequential()
        for i in range(num_layers):
            self.blks.add_module("block" + str(i), EncoderBlock(
                key_size, query_size, value_size, num_hiddens, norm_shape, ffn_num_input,
                ffn_num_hiddens, num_heads, dropout, use_bias))
        self.attention_weights = [None] * num_layers

    def _uniform_weights(self, X):
        B, T = X.shape
        self.attention_weights = [torch.full((B * self.num_heads, T, T), 1.0 / T) for _ in self.blks]

    def forward(self, X, valid_lens, *args):
        self._uniform_weights(X)
        return self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
