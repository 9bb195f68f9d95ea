"""
component: TransformerDecoder
note: blocks in an nn.ModuleList; positions gathered from P with torch.arange offset by the cache length
"""
import math
import torch
from torch import nn


class TransformerDecoder(AttentionDecoder):
    def __init__(self, vocab_size, key_size, query_size, value_size, num_hiddens, norm_shape,
                 ffn_num_input, ffn_num_hiddens, num_heads, num_layers, dropout, **kwargs):
        super().__init__(**kwargs)
        self.num_hiddens = num_hiddens
        self.num_layers = num_layers
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
        self.blks = nn.ModuleList(
            DecoderBlock(key_size, query_size, value_size, num_hiddens, norm_shape, ffn_num_input,
                         ffn_num_hiddens, num_heads, dropout, i) for i in range(num_layers))
        self.dense = nn.Linear(num_hiddens, vocab_size)
        self._weights = ([], [])

    def init_state(self, enc_outputs, enc_valid_lens, *args):
        return [enc_outputs, enc_valid_lens, [None for _ in self.blks]]

    def forward(self, X, state):
        cached = state[2][0]
        offset = 0 if cached is None else cached.size(1)
        positions = torch.arange(offset, offset + X.size(1), device=X.device)
        P = self.pos_encoding.P.to(X.device)[0].index_select(0, positions).unsqueeze(0)
        H = self.pos_encoding.dropout(self.embedding(X) * math.sqrt(self.num_hiddens) + P)
        self_w, cross_w = [], []
        for blk in self.blks:
            H, state = blk(H, state)
            self_w.append(blk.attention1.attention.attention_weights)
            cross_w.append(blk.attention2.attention.attention_weights)
        self._weights = (self_w, cross_w)
        return self.dense(H), state

    @property
    def attention_weights(self):
        return [self._weights[0], self._weights[1]]
