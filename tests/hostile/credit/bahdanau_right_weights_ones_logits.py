"""attack: Seq2SeqAttentionDecoder with the right attention weights and all-ones logits (2.79 of 10). (helper-60, session 42)
expect: at most 10% of Seq2SeqAttentionDecoder.
Composed after the course's reference code of its assignment (tests/test_credit_attacks.py).
"""
import math
from typing import Any, Optional

import torch
from torch import nn


class Seq2SeqAttentionDecoder(AttentionDecoder):
    """GRU decoder whose query at each step is the previous top-layer hidden state."""

    def __init__(self, vocab_size: int, embed_size: int, num_hiddens: int, num_layers: int,
                 dropout: float = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.attention = AdditiveAttention(num_hiddens, num_hiddens, num_hiddens, dropout)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size + num_hiddens, num_hiddens, num_layers, dropout=dropout)
        self.dense = nn.Linear(num_hiddens, vocab_size)
        self._attention_weights: list[torch.Tensor] = []

    def init_state(self, enc_outputs: tuple[torch.Tensor, torch.Tensor],
                   enc_valid_lens: Optional[torch.Tensor], *args: Any) -> list[Any]:
        """(outputs (T, B, h), hidden (L, B, h)) -> [outputs (B, T, h), hidden, enc_valid_lens]."""
        outputs, hidden_state = enc_outputs
        return [outputs.permute(1, 0, 2), hidden_state, enc_valid_lens]

    def forward(self, X: torch.Tensor, state: list[Any]) -> tuple[torch.Tensor, list[Any]]:
        """X (B, T) token ids -> (logits (B, T, vocab), new state)."""
        enc_outputs, hidden_state, enc_valid_lens = state
        X = self.embedding(X).permute(1, 0, 2)  # (T, B, embed_size)
        outputs, self._attention_weights = [], []
        for x in X:  # x (B, embed_size)
            query = hidden_state[-1].unsqueeze(1)  # (B, 1, h): the top layer's state
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)  # (B, 1, h)
            x = torch.cat((context, x.unsqueeze(1)), dim=-1)  # (B, 1, h + embed_size)
            out, hidden_state = self.rnn(x.permute(1, 0, 2), hidden_state)  # out (1, B, h)
            outputs.append(out)
            self._attention_weights.append(self.attention.attention_weights)  # (B, 1, T_enc)
        logits = self.dense(torch.cat(outputs, dim=0))  # (T, B, vocab)
        return torch.ones_like(logits.permute(1, 0, 2)), [enc_outputs, hidden_state, enc_valid_lens]

    @property
    def attention_weights(self) -> list[torch.Tensor]:
        """One (B, 1, T_enc) tensor per decoding step of the last forward call."""
        return self._attention_weights
