"""A learner's PositionalEncoding: the book's.

Source: https://github.com/omroot/d2l_pytorch
Files (repository: path @ commit (definitions kept)):
  omroot/d2l_pytorch: mylearnings/myd2l/omd2l/models/AttentionSeq2Seq/PositionalEncoding.py @ ac465d19248b18fc1aa45bb19445734e9de422c8 (PositionalEncoding)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
"""
# ruff: noqa  (a learner's code, kept verbatim)
import math
import torch
from torch import nn


class PositionalEncoding(nn.Module):  #@save
    """Positional encoding."""
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        # Create a long enough P
        self.P = torch.zeros((1, max_len, num_hiddens))
        X = torch.arange(max_len, dtype=torch.float32).reshape(
            -1, 1) / torch.pow(10000, torch.arange(
            0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        self.P[:, :, 0::2] = torch.sin(X)
        self.P[:, :, 1::2] = torch.cos(X)

    def forward(self, X):
        X = X + self.P[:, :X.shape[1], :].to(X.device)
        return self.dropout(X)
