"""A learner's 06 whose blocks are registered as "block 0", "block 1" (with a space), which the
contract tolerates (blks may be an nn.Sequential with any block names or an nn.ModuleList). Correct.
"""
"""Assignment 06: the Transformer encoder and decoder.

Two deliberate departures from the book, both required by the course contract:
- the decoder's self-attention is causal in every mode (the book masks only in training mode,
  which silently lets eval-mode scoring of a whole target sequence look ahead);
- each target token gets the positional encoding of its true position: after t cached tokens
  the next one gets P[t] (the book adds P[0] at every decoding step).
"""

import math
from typing import Any, Optional

import torch
from torch import nn

from attention_support import AttentionDecoder, Encoder
from attention_support import MultiHeadAttention
from attention_support import PositionalEncoding


class PositionWiseFFN(nn.Module):
    """The same two-layer MLP applied at every position: dense2(relu(dense1(X)))."""

    def __init__(self, ffn_num_input: int, ffn_num_hiddens: int, ffn_num_outputs: int,
                 **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.dense1 = nn.Linear(ffn_num_input, ffn_num_hiddens)
        self.relu = nn.ReLU()
        self.dense2 = nn.Linear(ffn_num_hiddens, ffn_num_outputs)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        """X (B, T, ffn_num_input) -> (B, T, ffn_num_outputs)."""
        return self.dense2(self.relu(self.dense1(X)))


class AddNorm(nn.Module):
    """Residual connection followed by layer normalization: ln(dropout(Y) + X)."""

    def __init__(self, normalized_shape: Any, dropout: float, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        """X, Y (B, T, d) -> (B, T, d)."""
        return self.ln(self.dropout(Y) + X)


class EncoderBlock(nn.Module):
    """Multi-head self-attention and a position-wise FFN, each wrapped in AddNorm."""

    def __init__(self, key_size: int, query_size: int, value_size: int, num_hiddens: int,
                 norm_shape: Any, ffn_num_input: int, ffn_num_hiddens: int, num_heads: int,
                 dropout: float, use_bias: bool = False, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.attention = MultiHeadAttention(key_size, query_size, value_size, num_hiddens,
                                            num_heads, dropout, use_bias)
        self.addnorm1 = AddNorm(norm_shape, dropout)
        self.ffn = PositionWiseFFN(ffn_num_input, ffn_num_hiddens, num_hiddens)
        self.addnorm2 = AddNorm(norm_shape, dropout)

    def forward(self, X: torch.Tensor, valid_lens: Optional[torch.Tensor]) -> torch.Tensor:
        """X (B, T, num_hiddens) -> (B, T, num_hiddens)."""
        Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))
        return self.addnorm2(Y, self.ffn(Y))


class TransformerEncoder(Encoder):
    """Embedding scaled by sqrt(num_hiddens), positional encoding, then num_layers EncoderBlocks."""

    def __init__(self, vocab_size: int, key_size: int, query_size: int, value_size: int,
                 num_hiddens: int, norm_shape: Any, ffn_num_input: int, ffn_num_hiddens: int,
                 num_heads: int, num_layers: int, dropout: float, use_bias: bool = False,
                 **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.num_hiddens = num_hiddens
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
        self.blks = nn.Sequential()
        for i in range(num_layers):
            self.blks.add_module(
                "block " + str(i),
                EncoderBlock(key_size, query_size, value_size, num_hiddens, norm_shape,
                             ffn_num_input, ffn_num_hiddens, num_heads, dropout, use_bias))
        self.attention_weights: list[Optional[torch.Tensor]] = [None] * num_layers

    def forward(self, X: torch.Tensor, valid_lens: Optional[torch.Tensor],
                *args: Any) -> torch.Tensor:
        """X (B, T) token ids -> (B, T, num_hiddens)."""
        # Scale the embeddings up so that they are not drowned by the encodings in [-1, 1].
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
        self.attention_weights = [None] * len(self.blks)
        for i, blk in enumerate(self.blks):
            X = blk(X, valid_lens)
            self.attention_weights[i] = blk.attention.attention.attention_weights  # (B*h, T, T)
        return X


class DecoderBlock(nn.Module):
    """Causal self-attention over cache + X, cross-attention to the encoder, then an FFN."""

    def __init__(self, key_size: int, query_size: int, value_size: int, num_hiddens: int,
                 norm_shape: Any, ffn_num_input: int, ffn_num_hiddens: int, num_heads: int,
                 dropout: float, i: int, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.i = i
        self.attention1 = MultiHeadAttention(key_size, query_size, value_size, num_hiddens,
                                             num_heads, dropout)
        self.addnorm1 = AddNorm(norm_shape, dropout)
        self.attention2 = MultiHeadAttention(key_size, query_size, value_size, num_hiddens,
                                             num_heads, dropout)
        self.addnorm2 = AddNorm(norm_shape, dropout)
        self.ffn = PositionWiseFFN(ffn_num_input, ffn_num_hiddens, num_hiddens)
        self.addnorm3 = AddNorm(norm_shape, dropout)

    def forward(self, X: torch.Tensor, state: list[Any]) -> tuple[torch.Tensor, list[Any]]:
        """X (B, T, num_hiddens) new positions; state = [enc_outputs, enc_valid_lens, cache]."""
        enc_outputs, enc_valid_lens = state[0], state[1]
        cache = state[2][self.i]
        key_values = X if cache is None else torch.cat((cache, X), dim=1)  # (B, t+T, d)
        state[2][self.i] = key_values
        batch_size, num_new = X.shape[0], X.shape[1]
        num_cached = key_values.shape[1] - num_new
        # Causal in every mode: the query at position p = t+j sees exactly positions 0..p.
        dec_valid_lens = torch.arange(
            num_cached + 1, num_cached + num_new + 1, device=X.device).repeat(batch_size, 1)  # (B, T)
        X2 = self.attention1(X, key_values, key_values, dec_valid_lens)
        Y = self.addnorm1(X, X2)
        Y2 = self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens)
        Z = self.addnorm2(Y, Y2)
        return self.addnorm3(Z, self.ffn(Z)), state


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
                "block " + str(i),
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
        # True positions: the new tokens sit at num_cached .. num_cached + T - 1.
        positions = self.pos_encoding.P[:, num_cached:num_cached + num_new, :].to(X.device)
        X = self.pos_encoding.dropout(self.embedding(X) * math.sqrt(self.num_hiddens) + positions)
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
