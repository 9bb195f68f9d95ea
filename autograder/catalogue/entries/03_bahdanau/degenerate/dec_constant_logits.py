"""
component: Seq2SeqAttentionDecoder
bug: returns the same logits (dense's bias) at every step whatever the tokens and the encoder outputs, with a correct-looking state (a GRU run over the embeddings) and uniform attention weights over the valid source positions
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
        B, T = X.shape
        T_enc = enc_outputs.shape[1]
        valid = torch.ones(B, 1, T_enc, dtype=enc_outputs.dtype)
        if enc_valid_lens is not None:
            valid = (torch.arange(T_enc).reshape(1, 1, -1) < enc_valid_lens.reshape(-1, 1, 1)).to(enc_outputs.dtype)
        self._attention_weights = [valid / valid.sum(-1, keepdim=True) for _ in range(T)]
        embs = self.embedding(X).permute(1, 0, 2)
        zeros = torch.zeros(T, B, enc_outputs.shape[-1], dtype=embs.dtype)
        _, hidden_state = self.rnn(torch.cat((zeros, embs), dim=-1), hidden_state)
        logits = self.dense.bias.reshape(1, 1, -1).expand(B, T, -1)
        return logits, [enc_outputs, hidden_state, enc_valid_lens]
