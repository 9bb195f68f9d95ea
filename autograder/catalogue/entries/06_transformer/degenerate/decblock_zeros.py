"""
component: DecoderBlock
bug: returns zeros of X's shape and the state it was given (the cache is never updated), ignoring every input
"""
import torch
from torch import nn


class DecoderBlock(nn.Module):
    def __init__(self, key_size, query_size, value_size, num_hiddens, norm_shape, ffn_num_input,
                 ffn_num_hiddens, num_heads, dropout, i, **kwargs):
        super().__init__(**kwargs)
        self.i = i
        self.attention1 = MultiHeadAttention(key_size, query_size, value_size, num_hiddens, num_heads, dropout)
        self.addnorm1 = AddNorm(norm_shape, dropout)
        self.attention2 = MultiHeadAttention(key_size, query_size, value_size, num_hiddens, num_heads, dropout)
        self.addnorm2 = AddNorm(norm_shape, dropout)
        self.ffn = PositionWiseFFN(ffn_num_input, ffn_num_hiddens, num_hiddens)
        self.addnorm3 = AddNorm(norm_shape, dropout)

    def _uniform_weights(self, X, t, enc_outputs):
        B, T, h = X.shape[0], X.shape[1], self.attention1.num_heads
        self.attention1.attention.attention_weights = torch.full((B * h, T, t + T), 1.0 / (t + T), dtype=X.dtype)
        T_enc = enc_outputs.shape[1]
        self.attention2.attention.attention_weights = torch.full((B * h, T, T_enc), 1.0 / T_enc, dtype=X.dtype)

    def forward(self, X, state):
        cache = state[2][self.i]
        self._uniform_weights(X, 0 if cache is None else cache.shape[1], state[0])
        return torch.zeros_like(X), state
