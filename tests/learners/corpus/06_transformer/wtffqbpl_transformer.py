"""A learner's 06 (the book's) with AddNorm sublayers named add_norm1..add_norm3, the train-only causal mask and P[0..T) at every call.

Source: https://github.com/wtffqbpl/language_proc_transformer
Files (repository: path @ commit (definitions kept)):
  wtffqbpl/language_proc_transformer: attention_mechanism/transformer_scratch.py @ ba1cb345551ce775440b7668f7eb286cd579d388 (PositionWiseFFN, AddNorm, EncoderBlock, TransformerEncoder, DecoderBlock, TransformerDecoder)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Kept `from abc import ABC` (the learner's TransformerEncoder derives from it).
  Dropped imports of the learner's own modules or plotting: `import unittest`; `import matplotlib.pyplot as plt`; `import pandas as pd`; `from .attention_utils import (MultiHeadAttention, Encoder, EncoderDecoder, PositionalEncoding, AttentionDecoder)`; `import os`; `import sys`; `from pathlib import Path`; `import utils.dlf as dlf`; `from utils.plot import show_heatmaps`; `from recurrent_neural_network.rnn_utils import (load_data_nmt, train_seq2seq, predict_seq2seq, bleu)`.
  (attention_utils is the learner's own module holding their 04/05 and the book's base classes; the course provides them.)
"""
# ruff: noqa  (a learner's code, kept verbatim)
from abc import ABC
import math
import torch
import torch.nn as nn


class PositionWiseFFN(nn.Module):
    """Feed-forward network based position"""
    def __init__(self, ffn_num_input, ffn_num_hiddens, ffn_num_outputs, **kwargs):
        super(PositionWiseFFN, self).__init__(**kwargs)
        self.dense1 = nn.Linear(ffn_num_input, ffn_num_hiddens)
        self.relu = nn.ReLU()
        self.dense2 = nn.Linear(ffn_num_hiddens, ffn_num_outputs)

    def forward(self, x):
        return self.dense2(self.relu(self.dense1(x)))


class AddNorm(nn.Module):
    def __init__(self, normalized_shape, dropout, **kwargs):
        super(AddNorm, self).__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x, y):
        return self.ln(self.dropout(y) + x)


class EncoderBlock(nn.Module):
    def __init__(self, key_size, query_size, value_size, num_hiddens, norm_shape,
                 ffn_num_input, ffn_num_hiddens, num_heads, dropout, use_bias=False, **kwargs):
        super(EncoderBlock, self).__init__(**kwargs)
        self.attention = MultiHeadAttention(
            key_size, query_size, value_size, num_hiddens, num_heads, dropout, use_bias)
        self.add_norm1 = AddNorm(norm_shape, dropout)
        self.ffn = PositionWiseFFN(ffn_num_input, ffn_num_hiddens, num_hiddens)
        self.add_norm2 = AddNorm(norm_shape, dropout)

    def forward(self, x: torch.Tensor, valid_lens: torch.Tensor):
        y = self.add_norm1(x, self.attention(x, x, x, valid_lens))
        return self.add_norm2(y, self.ffn(y))


class TransformerEncoder(Encoder, ABC):
    def __init__(self, vocab_size, key_size, query_size, value_size, num_hiddens,
                 norm_shape, ffn_num_input, ffn_num_hiddens, num_heads,
                 num_layers, dropout, use_bias=False, **kwargs):
        super(TransformerEncoder, self).__init__(**kwargs)
        # For visualization only.
        self.attention_weights = None

        self.num_hiddens = num_hiddens
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
        self.blks = nn.Sequential()

        for i in range(num_layers):
            self.blks.add_module(
                'block' + str(i),
                EncoderBlock(key_size, query_size, value_size, num_hiddens,
                             norm_shape, ffn_num_input, ffn_num_hiddens,
                             num_heads, dropout, use_bias))

    def forward(self, x: torch.Tensor, valid_lens: torch.Tensor, *args):
        x = self.pos_encoding(self.embedding(x) * math.sqrt(self.num_hiddens))
        self.attention_weights = [None] * len(self.blks)
        for i, blk in enumerate(self.blks):
            x = blk(x, valid_lens)
            self.attention_weights[i] = blk.attention.attention.attention_weights
        return x


class DecoderBlock(nn.Module):
    def __init__(self, key_size, query_size, value_size, num_hiddens, norm_shape,
                 ffn_num_input, ffn_num_hiddens, num_heads, dropout, i, **kwargs):
        super(DecoderBlock, self).__init__(**kwargs)
        self.i = i
        self.attention1 = MultiHeadAttention(
            key_size, query_size, value_size, num_hiddens, num_heads, dropout)
        self.add_norm1 = AddNorm(norm_shape, dropout)
        self.attention2 = MultiHeadAttention(
            key_size, query_size, value_size, num_hiddens, num_heads, dropout)
        self.add_norm2 = AddNorm(norm_shape, dropout)
        self.ffn = PositionWiseFFN(ffn_num_input, ffn_num_hiddens, num_hiddens)
        self.add_norm3 = AddNorm(norm_shape, dropout)

    def forward(self, x: torch.Tensor, state: torch.Tensor):
        enc_outputs, enc_valid_lens = state[0], state[1]
        # All the output tokens would be processed at the same time during training.
        # So we initialize state[2][self.i] is None
        # The output tokens would be decoded sequentially during inference process.
        # So the state[2][self.i] contains (0~i) time step decoded output info.
        if state[2][self.i] is None:
            key_values = x
        else:
            key_values = torch.cat((state[2][self.i], x), dim=1)

        state[2][self.i] = key_values
        if self.training:
            batch_size, num_steps, _ = x.shape
            # dec_valid_lens.shape: (batch_size, num_steps)
            # Each line contains [1, 2, ..., num_steps]
            dec_valid_lens = torch.arange(1, num_steps + 1, device=x.device).repeat(batch_size, 1)
        else:
            dec_valid_lens = None

        # Self-attention
        x2 = self.attention1(x, key_values, key_values, dec_valid_lens)
        y = self.add_norm1(x, x2)

        # Encoder-Decoder + attention
        # The enc_outputs.shape: (batch_size, num_steps, num_hiddens)
        y2 = self.attention2(y, enc_outputs, enc_outputs, enc_valid_lens)
        z = self.add_norm2(y, y2)
        return self.add_norm3(z, self.ffn(z)), state


class TransformerDecoder(AttentionDecoder):
    def __init__(self, vocab_size, key_size, query_size, value_size, num_hiddens,
                 norm_shape, ffn_num_input, ffn_num_hiddens, num_heads, num_layers, dropout, **kwargs):
        super(TransformerDecoder, self).__init__(**kwargs)
        # For visualization only.
        self._attention_weights = None

        self.num_hiddens = num_hiddens
        self.num_layers = num_layers
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
        self.blks = nn.Sequential()

        for i in range(num_layers):
            self.blks.add_module(
                "block" + str(i),
                DecoderBlock(key_size, query_size, value_size, num_hiddens, norm_shape,
                             ffn_num_input, ffn_num_hiddens, num_heads, dropout, i))
            self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs: torch.Tensor, enc_valid_lens: torch.Tensor, *args):
        return [enc_outputs, enc_valid_lens, [None] * self.num_layers]

    def forward(self, x: torch.Tensor, state):
        x = self.pos_encoding(self.embedding(x) * math.sqrt(self.num_hiddens))
        self._attention_weights = [[None] * len(self.blks) for _ in range(2)]
        for i, blk in enumerate(self.blks):
            x, state = blk(x, state)

            # Decoder self-attention weights
            self._attention_weights[0][i] = blk.attention1.attention.attention_weights
            # Encoder-Decoder self-attention weights
            self._attention_weights[1][i] = blk.attention2.attention.attention_weights

        return self.dense(x), state

    @property
    def attention_weights(self):
        return self._attention_weights
