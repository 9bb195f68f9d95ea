"""
component: EncoderBlock
bug: does not pass valid_lens to the self-attention, so queries attend to padded positions
fix: pass the block's valid_lens to the self-attention: self.attention(X, X, X, valid_lens)
family: valid-lens-ignored
symptom: padded
ignores: valid_lens
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
        Y = self.addnorm1(X, self.attention(X, X, X, None))
        return self.addnorm2(Y, self.ffn(Y))
