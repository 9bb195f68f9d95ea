"""A learner's PositionalEncoding written from scratch that keeps the table in `self.PE` instead of `P`.

Source: https://github.com/KarryRen/Karry-Studies-AI
Files (repository: path @ commit (definitions kept)):
  KarryRen/Karry-Studies-AI: LiMu/HandsAI/68_Transformer/Code_Scratch/modules.py @ 561c5164be482b3c803bfcebc2ae9af3fde468ec (PositionalEncoding)
Licence: MIT (LICENSE in the repository, Copyright (c) 2024 Kai Ren).
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch
from torch import nn
import math
from typing import Optional


class PositionalEncoding(nn.Module):
    """ Positional encoding. Sin-Cos PE way. """

    def __init__(self, num_hiddens: int, dropout: float, max_len=1000):
        """ Init the PE module and PE array based on the function in paper.

        :param num_hiddens: the feature dim.
        :param dropout: the dropout ratio
        :param max_len: the max len, must be longer than seq

        """

        super().__init__()
        self.dropout = nn.Dropout(dropout)

        # create a long enough PE, must longer than seq
        self.PE = torch.zeros((1, max_len, num_hiddens))
        # compute the PE
        # shape=(max_len, 1)
        pos = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1)
        # shape=(num_hiddens/2)
        div = torch.pow(10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        # expand dim, shape = (max_len, num_hiddens/2)
        X = pos / div
        # set value
        self.PE[:, :, 0::2] = torch.sin(X)  # the even feature of each pos
        self.PE[:, :, 1::2] = torch.cos(X)  # the odd feature of each pos

    def forward(self, X):
        """ Add PE. """

        X = X + self.PE[:, :X.shape[1], :].to(X.device)
        return self.dropout(X)
