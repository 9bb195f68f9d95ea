"""
component: DecoderBlock
bug: builds its AddNorms with a fixed dropout rate, AddNorm(norm_shape, 0.1), whatever dropout the caller passes, so with dropout 0 it still drops in training
fix: pass the argument on: AddNorm(norm_shape, dropout)
family: dropout-rate-ignored
symptom: train mode
"""
import math
import torch
from torch import nn


class DecoderBlock(nn.Module):
    def __init__(self, key_size, query_size, value_size, num_hiddens, norm_shape, ffn_num_input,
                 ffn_num_hiddens, num_heads, dropout, i, **kwargs):
        super().__init__(**kwargs)
        self.i = i
        self.attention1 = MultiHeadAttention(key_size, query_size, value_size, num_hiddens, num_heads, dropout)
        self.addnorm1 = AddNorm(norm_shape, 0.1)
        self.attention2 = MultiHeadAttention(key_size, query_size, value_size, num_hiddens, num_heads, dropout)
        self.addnorm2 = AddNorm(norm_shape, 0.1)
        self.ffn = PositionWiseFFN(ffn_num_input, ffn_num_hiddens, num_hiddens)
        self.addnorm3 = AddNorm(norm_shape, 0.1)

    def forward(self, X, state):
        enc_outputs, enc_valid_lens = state[0], state[1]
        cache = state[2][self.i]
        key_values = X if cache is None else torch.cat((cache, X), dim=1)
        state[2][self.i] = key_values
        batch_size, num_new = X.shape[0], X.shape[1]
        num_cached = key_values.shape[1] - num_new
        dec_valid_lens = torch.arange(num_cached + 1, num_cached + num_new + 1, device=X.device).repeat(batch_size, 1)
        X2 = self.attention1(X, key_values, key_values, dec_valid_lens)
        Y = self.addnorm1(X, X2)
        Y2 = self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens)
        Z = self.addnorm2(Y, Y2)
        return self.addnorm3(Z, self.ffn(Z)), state
