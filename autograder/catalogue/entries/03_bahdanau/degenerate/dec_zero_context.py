"""
component: Seq2SeqAttentionDecoder
bug: feeds the GRU a context of zeros at every step (the attention is never called), so the decoder never looks at the encoder outputs
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
        enc_outputs, hidden_state, enc_valid_lens = state
        X = self.embedding(X).permute(1, 0, 2)
        B, T_enc, h = enc_outputs.shape
        context = torch.zeros(B, 1, h, dtype=enc_outputs.dtype)
        outputs, self._attention_weights = [], []
        for x in X:
            x = torch.cat((context, x.unsqueeze(1)), dim=-1)
            out, hidden_state = self.rnn(x.permute(1, 0, 2), hidden_state)
            outputs.append(out)
            self._attention_weights.append(torch.zeros(B, 1, T_enc, dtype=enc_outputs.dtype))
        logits = self.dense(torch.cat(outputs, dim=0))
        return logits.permute(1, 0, 2), [enc_outputs, hidden_state, enc_valid_lens]
