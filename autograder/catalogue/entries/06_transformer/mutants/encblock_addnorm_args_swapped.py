"""
component: EncoderBlock
bug: calls each AddNorm with the sublayer's output first and the residual second (addnorm1(attention(X, ...), X)), so in training dropout drops and rescales the residual stream instead of what the sublayer adds (the same in eval mode)
fix: AddNorm(X, Y) computes ln(dropout(Y) + X) with X the residual: call self.addnorm1(X, self.attention(X, X, X, valid_lens)) and self.addnorm2(Y, self.ffn(Y))
symptom: train mode
"""
import math
import torch
from torch import nn


class EncoderBlock(nn.Module):
    def __init__(self, key_size, query_size, value_size, num_hiddens, norm_shape, ffn_num_input,
                 ffn_num_hiddens, num_heads, dropout, use_bias=False, **kwargs):
        super().__init__(**kwargs)
        self.attention = MultiHeadAttention(key_size, query_size, value_size, num_hiddens,
                                            num_heads, dropout, use_bias)
        self.addnorm1 = AddNorm(norm_shape, dropout)
        self.ffn = PositionWiseFFN(ffn_num_input, ffn_num_hiddens, num_hiddens)
        self.addnorm2 = AddNorm(norm_shape, dropout)

    def forward(self, X, valid_lens):
        Y = self.addnorm1(self.attention(X, X, X, valid_lens), X)
        return self.addnorm2(self.ffn(Y), Y)
