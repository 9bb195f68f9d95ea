"""
component: TransformerEncoder
note: blocks in an nn.ModuleList, attention weights collected with a list comprehension after the loop
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
        self.blks = nn.ModuleList([
            EncoderBlock(key_size, query_size, value_size, num_hiddens, norm_shape, ffn_num_input,
                         ffn_num_hiddens, num_heads, dropout, use_bias)
            for _ in range(num_layers)])

    def forward(self, X, valid_lens, *args):
        H = self.pos_encoding(math.sqrt(self.num_hiddens) * self.embedding(X))
        for blk in self.blks:
            H = blk(H, valid_lens)
        self.attention_weights = [blk.attention.attention.attention_weights for blk in self.blks]
        return H
