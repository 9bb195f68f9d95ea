"""
component: DecoderBlock
note: builds an explicit boolean causal mask (tril over cache + new steps) and turns it into per-query valid lengths
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
        past = cache[self.i]
        key_values = X if past is None else torch.cat([past, X], dim=1)
        cache[self.i] = key_values
        total, new = key_values.shape[1], X.shape[1]
        allowed = torch.ones(total, total, dtype=torch.bool, device=X.device).tril()[total - new:]  # (T, t+T)
        dec_valid_lens = allowed.sum(dim=1).expand(X.shape[0], new)  # (B, T)
        Y = self.addnorm1(X, self.attention1(X, key_values, key_values, dec_valid_lens))
        Z = self.addnorm2(Y, self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens))
        return self.addnorm3(Z, self.ffn(Z)), state
