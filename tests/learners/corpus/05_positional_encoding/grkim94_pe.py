"""A learner's 05: the sine/cosine table filled at every forward call, and X scaled by sqrt(d_model) inside the encoding.

Source: https://github.com/gr-kim-94/translator
Files (repository: path @ commit (definitions kept)):
  gr-kim-94/translator: position_encoding.py @ 1a6c2ef5429e48af03267b05bffced369b609887 (PositionalEncoding)
Licence: no licence file in the repository.
Edits: Korean comments trimmed (helper-69, session 45); the code verbatim.
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch
from torch import nn
import math


class PositionalEncoding(nn.Module):
    """Sinusoidal positional encoding with embedding scaling, as in Vaswani et al."""

    def __init__(self, d_model: int, drop_out_nd, max_len: int = 5000) -> None:
        super().__init__()
        self.d_model = d_model
        self.position = torch.arange(0, max_len, dtype=torch.float32).unsqueeze(1)
        self.dropout = nn.Dropout(drop_out_nd)

        self.div_term = torch.exp(
            torch.arange(0, d_model, 2, dtype=torch.float32)
            * (-math.log(10000.0) / d_model)
        )
        pe = torch.zeros(max_len, d_model, dtype=torch.float32)
        self.register_buffer("pe", pe, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.pe[:, 0::2] = torch.sin(self.position * self.div_term)
        self.pe[:, 1::2] = torch.cos(self.position * self.div_term)

        print("x shape : ", x.shape, ", pe shape : ", self.pe.shape)

        x = x * math.sqrt(self.d_model)
        seq_len = x.size(1) 
        pe = self.pe[: seq_len].unsqueeze(0)
        print("x shape : ", x.shape, ", new pe shape : ", pe.shape)

        return self.dropout(x + pe)
