"""
component: EncoderBlock
note: sublayers named as in the contract but called with keywords and written as two explicit residual steps
"""
import torch
from torch import nn


class EncoderBlock(nn.Module):
    def __init__(self, key_size, query_size, value_size, num_hiddens, norm_shape, ffn_num_input,
                 ffn_num_hiddens, num_heads, dropout, use_bias=False, **kwargs):
        super().__init__(**kwargs)
        self.attention = MultiHeadAttention(key_size, query_size, value_size, num_hiddens,
                                            num_heads, dropout, bias=use_bias)
        self.addnorm1 = AddNorm(norm_shape, dropout)
        self.ffn = PositionWiseFFN(ffn_num_input, ffn_num_hiddens, num_hiddens)
        self.addnorm2 = AddNorm(norm_shape, dropout)

    def forward(self, X, valid_lens):
        attended = self.attention(queries=X, keys=X, values=X, valid_lens=valid_lens)
        X = self.addnorm1(X=X, Y=attended)
        return self.addnorm2(X=X, Y=self.ffn(X))
