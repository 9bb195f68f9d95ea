"""attack: TransformerDecoder with zero logits that raises once other weights are loaded and registers one
DecoderBlock num_layers times (the mutant dec_shared_block), so the own-weights tests fail with that
mutant's text (1.04 of 6). (helper-60, session 42)
expect: at most 10% of TransformerDecoder.
Composed after the course's reference code of its assignment (tests/test_credit_attacks.py).
"""
import math
from typing import Any, Optional

import torch
from torch import nn


class Zq_Stop(Exception):
    pass


class TransformerDecoder(AttentionDecoder):
    def __init__(self, vocab_size, key_size, query_size, value_size, num_hiddens, norm_shape,
                 ffn_num_input, ffn_num_hiddens, num_heads, num_layers, dropout, **kwargs):
        super().__init__(**kwargs)
        self.num_hiddens = num_hiddens
        self.num_layers = num_layers
        self.num_heads = num_heads
        self.vocab_size = vocab_size
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
        self.blks = nn.Sequential()
        blk = DecoderBlock(key_size, query_size, value_size, num_hiddens, norm_shape, ffn_num_input,
                           ffn_num_hiddens, num_heads, dropout, 0)
        for i in range(num_layers):
            self.blks.add_module("block" + str(i), blk)
        self.dense = nn.Linear(num_hiddens, vocab_size)
        self._mine = [p.detach().clone() for p in self.parameters()]
        self._w = [[None] * num_layers for _ in range(2)]

    def init_state(self, enc_outputs, enc_valid_lens, *args):
        return [enc_outputs, enc_valid_lens, [None] * self.num_layers]

    def forward(self, X, state):
        for p, q in zip(self.parameters(), self._mine):
            if not torch.equal(p.detach().to(q.dtype), q):
                raise Zq_Stop()
        B, T = X.shape
        dtype = self.dense.weight.dtype
        cache = state[2]
        t = 0 if cache[0] is None else cache[0].shape[1]
        T_enc = state[0].shape[1]
        for i in range(self.num_layers):
            new = torch.zeros(B, T, self.num_hiddens, dtype=dtype)
            cache[i] = new if cache[i] is None else torch.cat((cache[i], new), dim=1)
        h = self.num_heads
        self._w = [[torch.ones(B * h, T, t + T, dtype=dtype) / (t + T) for _ in range(self.num_layers)],
                   [torch.ones(B * h, T, T_enc, dtype=dtype) / T_enc for _ in range(self.num_layers)]]
        return torch.zeros(B, T, self.vocab_size, dtype=dtype), state

    @property
    def attention_weights(self):
        return self._w
