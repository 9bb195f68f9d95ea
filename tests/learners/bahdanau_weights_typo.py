"""A learner's 03 whose `attention_weights` property reads `self._attention_weights` while forward
stores `self._attentions_weight`: the property raises AttributeError, but the logits and state are
correct; only the tests (and parts) that read the contract's `attention_weights` may fail.
"""
# ruff: noqa  (a learner's code, kept as written)
from typing import Any, Optional

import torch
from torch import nn

from attention_support import AdditiveAttention, AttentionDecoder


class Seq2SeqAttentionDecoder(AttentionDecoder):
    """GRU decoder whose query at each step is the previous top-layer hidden state."""

    def __init__(self, vocab_size: int, embed_size: int, num_hiddens: int, num_layers: int,
                 dropout: float = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.attention = AdditiveAttention(num_hiddens, num_hiddens, num_hiddens, dropout)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size + num_hiddens, num_hiddens, num_layers, dropout=dropout)
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens: Optional[torch.Tensor], *args: Any):
        outputs, hidden_state = enc_outputs
        return [outputs.permute(1, 0, 2), hidden_state, enc_valid_lens]

    def forward(self, X: torch.Tensor, state):
        enc_outputs, hidden_state, enc_valid_lens = state
        X = self.embedding(X).permute(1, 0, 2)
        outputs, self._attentions_weight = [], []
        for x in X:
            query = hidden_state[-1].unsqueeze(1)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            x = torch.cat((context, x.unsqueeze(1)), dim=-1)
            out, hidden_state = self.rnn(x.permute(1, 0, 2), hidden_state)
            outputs.append(out)
            self._attentions_weight.append(self.attention.attention_weights)
        logits = self.dense(torch.cat(outputs, dim=0))
        return logits.permute(1, 0, 2), [enc_outputs, hidden_state, enc_valid_lens]

    @property
    def attention_weights(self):
        return self._attention_weights
