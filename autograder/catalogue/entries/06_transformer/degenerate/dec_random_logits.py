"""
component: TransformerDecoder
bug: returns random logits (B, T, vocab_size) and the state it was given, ignoring the tokens and the encoder outputs
"""
import math
import torch
from torch import nn


class TransformerDecoder(AttentionDecoder):
    def __init__(self, vocab_size, key_size, query_size, value_size, num_hiddens, norm_shape,
                 ffn_num_input, ffn_num_hiddens, num_heads, num_layers, dropout, **kwargs):
        super().__init__(**kwargs)
        self.num_hiddens = num_hiddens
        self.num_heads = num_heads
        self.num_layers = num_layers
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
        self.blks = nn.Sequential()
        for i in range(num_layers):
            self.blks.add_module("block" + str(i), DecoderBlock(
                key_size, query_size, value_size, num_hiddens, norm_shape, ffn_num_input,
                ffn_num_hiddens, num_heads, dropout, i))
        self.dense = nn.Linear(num_hiddens, vocab_size)
        self._attention_weights = [[None] * num_layers for _ in range(2)]

    def init_state(self, enc_outputs, enc_valid_lens, *args):
        return [enc_outputs, enc_valid_lens, [None] * self.num_layers]

    def _uniform_weights(self, X, state):
        B, T, h = X.shape[0], X.shape[1], self.num_heads
        T_enc = state[0].shape[1]
        self._attention_weights = [[torch.full((B * h, T, T), 1.0 / T) for _ in self.blks],
                                   [torch.full((B * h, T, T_enc), 1.0 / T_enc) for _ in self.blks]]

    @property
    def attention_weights(self):
        return self._attention_weights

    def forward(self, X, state):
        self._uniform_weights(X, state)
        return torch.randn(X.shape[0], X.shape[1], self.dense.out_features) + 0 * self.dense.bias.sum(), state  # 0 * bias: in the autograd graph, so training runs
