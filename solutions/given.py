"""Code that students are *given* (not graded): the encoder-decoder interfaces, the RNN encoder, and
`tr`, which puts a figure's title, axis labels and legends in the release's language.

Names and signatures follow the d2l 0.17 PyTorch code the course text uses.
"""
from __future__ import annotations

import warnings
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


#: The language of figure labels: a release in another language calls use_language (course release --lang).
LANGUAGE = "en"
#: Fonts with the Chinese glyphs, in order of preference (Debian/Ubuntu: fonts-noto-cjk, fonts-wqy-*).
CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Sans SC", "Source Han Sans SC", "WenQuanYi Zen Hei",
             "WenQuanYi Micro Hei", "SimHei", "Microsoft YaHei", "PingFang SC", "Heiti SC", "Arial Unicode MS")


def tr(label: str) -> str:
    """A figure's title, axis label or legend in the release's language (the English when untranslated)."""
    if LANGUAGE == "en":
        return label
    from autograder.selfcheck import i18n  # the release's bundle: its compiled catalogue
    return i18n.translations(LANGUAGE).gettext(label)


def use_language(lang: str) -> None:
    """Label figures in `lang`, show the self-check's messages in it, and, in Chinese, draw with a CJK font."""
    global LANGUAGE
    from autograder.selfcheck import i18n
    i18n.set_language(lang)
    LANGUAGE = lang
    if lang == "zh":
        cjk_font()


def cjk_font() -> str | None:
    """Make matplotlib draw Chinese with the first CJK font installed (its usual sans-serif font after it
    draws what the CJK font lacks); warn, naming the package to install, when there is none."""
    import matplotlib
    from matplotlib import font_manager

    def installed() -> str | None:
        names = {font.name for font in font_manager.fontManager.ttflist}
        return next((name for name in CJK_FONTS if name in names), None)

    found = installed()
    if found is None:  # perhaps installed after matplotlib cached its list of fonts: look at the files
        for path in font_manager.findSystemFonts():
            if any(part in path.lower() for part in ("cjk", "wqy", "simhei", "pingfang", "msyh", "sourcehan")):
                font_manager.fontManager.addfont(path)
        found = installed()
    if found is None:
        warnings.warn("no Chinese font for the figures: their Chinese labels show as empty boxes. Install one "
                      "and restart the kernel (Debian/Ubuntu: sudo apt-get install fonts-noto-cjk; "
                      "macOS and Windows have one: PingFang SC, Microsoft YaHei)", stacklevel=2)
        return None
    matplotlib.rcParams["font.family"] = [found, "sans-serif"]
    return found
