"""
component: DecoderBlock
note: functional style: never mutates the state it is given, returns a new state with a new cache list
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

    def forward(self, X, state):
        enc_outputs, enc_valid_lens, cache = state
        t = 0 if cache[self.i] is None else cache[self.i].shape[1]
        key_values = X if t == 0 else torch.cat((cache[self.i], X), 1)
        new_cache = list(cache)
        new_cache[self.i] = key_values
        B, T = X.shape[0], X.shape[1]
        lens = (t + 1 + torch.arange(T, device=X.device)).unsqueeze(0).expand(B, T)
        Y = self.addnorm1(X, self.attention1(X, key_values, key_values, lens))
        Z = self.addnorm2(Y, self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens))
        return self.addnorm3(Z, self.ffn(Z)), [enc_outputs, enc_valid_lens, new_cache]
