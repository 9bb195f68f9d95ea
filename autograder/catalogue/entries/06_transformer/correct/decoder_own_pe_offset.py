"""
component: TransformerDecoder
bug: none: the decoder relies on the student's own PositionalEncoding, which takes an extra `offset` argument for true positions in step-by-step decoding (a natural design the reference PositionalEncoding does not have); correct under the dependency rule, which grades it with the student's own PositionalEncoding (it passes 05's tests)
"""
import math
from typing import Any, Optional

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    """The 05 contract, plus an `offset` for decoding step by step at true positions (default 0)."""

    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        X = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1) / torch.pow(
            10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        self.P = torch.zeros((1, max_len, num_hiddens))
        self.P[:, :, 0::2] = torch.sin(X)
        self.P[:, :, 1::2] = torch.cos(X[:, : num_hiddens // 2])

    def forward(self, X, offset=0):
        return self.dropout(X + self.P[:, offset:offset + X.shape[1], :].to(X.device))


class TransformerDecoder(AttentionDecoder):
    """Embedding, positional encoding at true positions, num_layers DecoderBlocks, output layer."""

    def __init__(self, vocab_size: int, key_size: int, query_size: int, value_size: int,
                 num_hiddens: int, norm_shape: Any, ffn_num_input: int, ffn_num_hiddens: int,
                 num_heads: int, num_layers: int, dropout: float, **kwargs: object) -> None:
        super().__init__(**kwargs)
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
        self._attention_weights: list[list[Optional[torch.Tensor]]] = [
            [None] * num_layers for _ in range(2)]

    def init_state(self, enc_outputs: torch.Tensor, enc_valid_lens: Optional[torch.Tensor],
                   *args: Any) -> list[Any]:
        """-> [enc_outputs (B, T_enc, d), enc_valid_lens, cache: one None per block]."""
        return [enc_outputs, enc_valid_lens, [None] * self.num_layers]

    def forward(self, X: torch.Tensor, state: list[Any]) -> tuple[torch.Tensor, list[Any]]:
        """X (B, T) token ids following the cached ones -> (logits (B, T, vocab), state)."""
        cache = state[2][0]
        num_cached = 0 if cache is None else cache.shape[1]
        num_new = X.shape[1]
        max_len = self.pos_encoding.P.shape[1]
        if num_cached + num_new > max_len:
            raise ValueError(f"target positions up to {num_cached + num_new - 1} exceed the "
                             f"positional encoding's max_len - 1 = {max_len - 1}")
        # The student's own positional encoding takes the offset of the first new token.
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens), offset=num_cached)
        self._attention_weights = [[None] * len(self.blks) for _ in range(2)]
        for i, blk in enumerate(self.blks):
            X, state = blk(X, state)
            self._attention_weights[0][i] = blk.attention1.attention.attention_weights  # (B*h, T, t+T)
            self._attention_weights[1][i] = blk.attention2.attention.attention_weights  # (B*h, T, T_enc)
        return self.dense(X), state

    @property
    def attention_weights(self) -> list[list[Optional[torch.Tensor]]]:
        """[self-attention weights per block, cross-attention weights per block]."""
        return self._attention_weights
