"""
component: Seq2SeqAttentionDecoder
note: additive attention computed inline from self.attention's W_q, W_k, w_v with a -inf mask (weights stored per step)
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
        self.steps = []

    def init_state(self, enc_outputs, enc_valid_lens, *args):
        outputs, hidden = enc_outputs
        return [outputs.permute(1, 0, 2).contiguous(), hidden, enc_valid_lens]

    def forward(self, X, state):
        keys, hidden, lens = state
        att = self.attention
        projected_keys = att.W_k(keys)  # (B, T_enc, H), the same at every step
        mask = None
        if lens is not None:
            mask = torch.arange(keys.shape[1], device=keys.device)[None, :] >= lens[:, None]  # (B, T_enc)
        logits, self.steps = [], []
        for x in self.embedding(X).unbind(1):  # x (B, E)
            scores = att.w_v(torch.tanh(att.W_q(hidden[-1])[:, None, :] + projected_keys)).squeeze(-1)
            if mask is not None:
                scores = scores.masked_fill(mask, float("-inf"))
            weights = torch.softmax(scores, dim=-1)  # (B, T_enc)
            self.steps.append(weights[:, None, :])
            context = torch.bmm(att.dropout(weights)[:, None, :], keys)  # (B, 1, H)
            out, hidden = self.rnn(torch.cat([context[:, 0], x], dim=-1)[None], hidden)
            logits.append(self.dense(out[0]))
        return torch.stack(logits, dim=1), [keys, hidden, lens]

    @property
    def attention_weights(self):
        return self.steps
