"""
component: EncoderBlock
bug: builds a pre-norm block, X + attention(ln(X)) then Y + ffn(ln(Y)), so its output is not normalized
fix: use the post-norm AddNorm sublayers, which normalize after the residual sum: addnorm1(X, attention(X, X, X, valid_lens)), then addnorm2 around the FFN
family: prenorm-not-postnorm
symptom: post-norm
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
        H = self.addnorm1.ln(X)
        Y = X + self.addnorm1.dropout(self.attention(H, H, H, valid_lens))
        return Y + self.addnorm2.dropout(self.ffn(self.addnorm2.ln(Y)))
