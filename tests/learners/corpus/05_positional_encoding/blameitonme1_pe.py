"""A learner's PositionalEncoding whose `.reshape` call is split across lines (`.reshape` then `(-1, 1) / ...`), max_len without default.

Source: https://github.com/blameitonme1/d2lPytorch
Files (repository: path @ commit (definitions kept)):
  blameitonme1/d2lPytorch: Attention-machanism/SelfAttention_and_positionalEncoding.py @ 3677fd27a4aec176f446cbdaecc84dd9c7b90560 (PositionalEncoding)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
"""
# ruff: noqa  (a learner's code, kept verbatim)
import math
import torch
from torch import nn
from d2l import torch as d2l


class PositionalEncoding(nn.Module):
    def __init__(self, num_hiddens, dropout, max_len):
        super().__init__()
        # 使用dropout降低模型对于位置信息的过于sensitive
        self.dropout = nn.Dropout(dropout)
        # 1是batch_size
        self.P = torch.zeros((1, max_len, num_hiddens))
        # shape一个是(max_len, 1) ，一个是(1, num_hiddens),刚好可以使用广播机制
        X = torch.arange(max_len, dtype=torch.float32).reshape
        (-1, 1) / torch.pow(10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        # 抄写公式即可，偶数col用sin，奇数用cos
        self.P[:, :, 0::2] = torch.sin(X)
        self.P[:, :, 1::2] = torch.cos(X)
    def forward(self, X):
        X = X + self.P[:, :X.shape[1], :].to(X.device)
        # 防止对于位置过于敏感
        return self.dropout(X)
