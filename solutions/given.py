"""Code that students are *given* (not graded): the encoder-decoder interfaces and the RNN encoder.

Names and signatures follow the d2l 0.17 PyTorch code the course text uses.
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn


class Encoder(nn.Module):
    """The base encoder interface of the encoder-decoder architecture."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)

    def forward(self, X: torch.Tensor, *args: Any) -> Any:
        raise NotImplementedError


class Decoder(nn.Module):
    """The base decoder interface of the encoder-decoder architecture."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)

    def init_state(self, enc_outputs: Any, *args: Any) -> Any:
        raise NotImplementedError

    def forward(self, X: torch.Tensor, state: Any) -> Any:
        raise NotImplementedError


class AttentionDecoder(Decoder):
    """A decoder that exposes the attention weights of its last forward call."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)

    @property
    def attention_weights(self) -> Any:
        raise NotImplementedError


class Seq2SeqEncoder(Encoder):
    """A GRU encoder: token ids (B, T) -> (outputs (T, B, h), state (num_layers, B, h))."""

    def __init__(self, vocab_size: int, embed_size: int, num_hiddens: int, num_layers: int,
                 dropout: float = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size, num_hiddens, num_layers, dropout=dropout)

    def forward(self, X: torch.Tensor, *args: Any) -> tuple[torch.Tensor, torch.Tensor]:
        X = self.embedding(X).permute(1, 0, 2)  # (T, B, embed_size): time first for the GRU
        output, state = self.rnn(X)  # output (T, B, h), state (num_layers, B, h)
        return output, state


class EncoderDecoder(nn.Module):
    """Glue an encoder and a decoder: forward(enc_X, dec_X, *args) -> decoder output."""

    def __init__(self, encoder: nn.Module, decoder: nn.Module, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.encoder = encoder
        self.decoder = decoder

    def forward(self, enc_X: torch.Tensor, dec_X: torch.Tensor, *args: Any) -> Any:
        enc_outputs = self.encoder(enc_X, *args)
        dec_state = self.decoder.init_state(enc_outputs, *args)
        return self.decoder(dec_X, dec_state)
