"""
component: Seq2SeqAttentionDecoder
bug: returns random logits (B, T, vocab_size) and the state it was given, ignoring the tokens and the encoder outputs
"""
import torch
from torch import nn


class Seq2SeqAttentionDecoder(AttentionDecoder):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0, **kwargs):
        super().__init__(**kwargs)
        self.attention = AdditiveAttention(num_hiddens, num_hiddens, num_hiddens, dropout)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size + num_hiddens, num_hiddens, num_layers, dropout=dropout)
        self.dense = nn.Linear(num_hiddens, vocab_size)
        self._attention_weights = []

    def init_state(self, enc_outputs, enc_valid_lens, *args):
        outputs, hidden_state = enc_outputs
        return [outputs.permute(1, 0, 2), hidden_state, enc_valid_lens]

    @property
    def attention_weights(self):
        return self._attention_weights

    def forward(self, X, state):
        enc_outputs = state[0]
        B, T = X.shape
        T_enc = enc_outputs.shape[1]
        self._attention_weights = [torch.softmax(torch.rand(B, 1, T_enc, dtype=enc_outputs.dtype), dim=-1)
                                   for _ in range(T)]
        return torch.randn(B, T, self.dense.out_features, dtype=enc_outputs.dtype) + 0 * self.dense.bias.sum(), state  # 0 * bias: in the autograd graph, so training runs
