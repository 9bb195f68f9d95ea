"""A learner's PositionalEncoding with an extra forward(X, is_decoder=False, i=-1) that adds the one row P[i] in eval mode for their decoder.

Source: https://github.com/SaintAugustus/Dive-into-DL
Files (repository: path @ commit (definitions kept)):
  SaintAugustus/Dive-into-DL: attention/self_attention_positional_encoding.py @ c6a010d0be81f50195fb0cb4c100db12e07b3817 (PositionalEncoding)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `import matplotlib.pyplot as plt`; `from attention.multihead_attention import MultiHeadAttention`.
"""
# ruff: noqa  (a learner's code, kept verbatim)
import math
import torch
from torch import nn
from d2l import torch as d2l


class PositionalEncoding(nn.Module):
    """位置编码"""
    """
    X, P shape (n, d);
    theta = i / 10000^(2j/d)
    P[i, 2j] = sin(theta), P[i, 2j + 1] = cos(theta)
    """
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        # 创建一个足够长的P
        self.P = torch.zeros((1, max_len, num_hiddens))
        X = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1)
        Y = torch.pow(10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        theta = X / Y
        self.P[:, :, 0::2] = torch.sin(theta)
        self.P[:, :, 1::2] = torch.cos(theta)

    def forward(self, X, is_decoder=False, i=-1):
        # when testing, add p(i), i is the index of X in decoder seq
        if not self.training and is_decoder:
            X = X + self.P[:, i, :].to(X.device)
        else:
            X = X + self.P[:, :X.shape[1], :].to(X.device)
        return self.dropout(X)
