"""
component: TransformerDecoder
bug: returns the same logits (dense's bias) at every position whatever the tokens and the encoder outputs, with a correct-looking state (each block's cache grows by the scaled embeddings plus positions) and uniform, causal attention weights
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

    @property
    def attention_weights(self):
        return self._attention_weights

    def forward(self, X, state):
        enc_outputs, enc_valid_lens, cache = state
        B, T, h = X.shape[0], X.shape[1], self.num_heads
        t = 0 if cache[0] is None else cache[0].shape[1]
        dtype = self.embedding.weight.dtype
        H = self.embedding(X) * math.sqrt(self.num_hiddens) + self.pos_encoding.P[:, t:t + T].to(dtype)
        causal = (torch.arange(t + T).reshape(1, 1, -1) <= torch.arange(t, t + T).reshape(1, -1, 1)).to(dtype)
        T_enc = enc_outputs.shape[1]
        valid = torch.ones(B, 1, T_enc, dtype=dtype)
        if enc_valid_lens is not None:
            valid = (torch.arange(T_enc).reshape(1, 1, -1) < enc_valid_lens.reshape(-1, 1, 1)).to(dtype)
        cross = (valid / valid.sum(-1, keepdim=True)).repeat_interleave(h, dim=0).expand(B * h, T, T_enc)
        self_w = (causal / causal.sum(-1, keepdim=True)).expand(B * h, T, t + T)
        self._attention_weights = [[self_w for _ in range(self.num_layers)],
                                   [cross for _ in range(self.num_layers)]]
        cache = [H if c is None else torch.cat((c, H), dim=1) for c in cache]
        logits = self.dense.bias.reshape(1, 1, -1).expand(B, T, -1)
        return logits, [enc_outputs, enc_valid_lens, cache]
