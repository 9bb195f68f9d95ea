"""
component: Seq2SeqAttentionDecoder
note: a batch_first GRU indexed step by step, init_state with transpose(0, 1) returning a list, logits built batch first, weights as a tuple
"""
import torch
from torch import nn


class Seq2SeqAttentionDecoder(AttentionDecoder):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0, **kwargs):
        super().__init__(**kwargs)
        self.attention = AdditiveAttention(num_hiddens, num_hiddens, num_hiddens, dropout)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size + num_hiddens, num_hiddens, num_layers, dropout=dropout, batch_first=True)
        self.dense = nn.Linear(num_hiddens, vocab_size)
        self._weights = []

    def init_state(self, enc_outputs, enc_valid_lens, *args):
        return [enc_outputs[0].transpose(0, 1), enc_outputs[1], enc_valid_lens]

    def forward(self, X, state):
        enc_outputs, hidden, lens = state
        emb = self.embedding(X)  # (B, T, E)
        outs, self._weights = [], []
        for t in range(emb.shape[1]):
            context = self.attention(hidden[-1][:, None, :], enc_outputs, enc_outputs, lens)  # (B, 1, H)
            out, hidden = self.rnn(torch.cat([context, emb[:, t:t + 1]], dim=2), hidden)  # out (B, 1, H)
            outs.append(out)
            self._weights.append(self.attention.attention_weights)
        return self.dense(torch.cat(outs, dim=1)), [enc_outputs, hidden, lens]

    @property
    def attention_weights(self):
        return tuple(self._weights)
