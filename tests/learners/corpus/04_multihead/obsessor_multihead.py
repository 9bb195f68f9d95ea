"""A learner's d2l 1.0 MultiHeadAttention(num_hidden, num_heads, dropout, bias) with LazyLinear layers, transposes as methods and an attention_weights property, in their own d2l-inspired package.

Source: https://github.com/obsessor-ak1/ml_utils
Files (repository: path @ commit (definitions kept)):
  obsessor-ak1/ml_utils: ml_utils/basic_utils.py @ 59ca9785467b962a77fb41fe24e36005162b5387 (masked_softmax)
  obsessor-ak1/ml_utils: ml_utils/basic_modules.py @ 59ca9785467b962a77fb41fe24e36005162b5387 (DotProductAttention, MultiHeadAttention)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `from ml_utils.basic_utils import masked_softmax`.
  masked_softmax is the same learner's, from ml_utils/basic_utils.py (basic_modules.py imports it); LanguageModel, AdditiveAttention (02) and PositionalEncoding (05) of basic_modules.py dropped.
  (The repository is the learner's own utilities written while studying the D2L book without its d2l package, its README says.)
"""
# ruff: noqa  (a learner's code, kept verbatim)
import math

import torch
from torch import nn
import torch.nn.functional as F


def masked_softmax(X, valid_lens):
    """Performs softmax operation by masking elements on the last axis."""
    # X: a 3D tensor, valid_lens: 1D or 2D tensor
    def _sequence_mask(X, valid_len, value=0):
        max_len = X.size(1)
        all_elements = torch.arange(max_len, dtype=torch.float32, device=X.device)
        mask = all_elements[torch.newaxis, :] < valid_len[:, torch.newaxis]
        X[~mask] = value
        return X
    # Performs basic softmax if no valid_lens are provided
    if valid_lens is None:
        return F.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = _sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
    return F.softmax(X.reshape(shape), dim=-1)


class DotProductAttention(nn.Module):
    """A simple dot product attention (scaled) implementation."""
    def __init__(self, dropout=0.2):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.size(-1)
        # Swapping the last two dimenstions of the keys, to support dot product
        # using matrix multiplication
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class MultiHeadAttention(nn.Module):
    """Multi-head implementation."""
    def __init__(self, num_hidden, num_heads, dropout, bias=False, **kwargs):
        super().__init__()
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.LazyLinear(num_hidden, bias=bias)
        self.W_k = nn.LazyLinear(num_hidden, bias=bias)
        self.W_v = nn.LazyLinear(num_hidden, bias=bias)
        self.W_o = nn.LazyLinear(num_hidden, bias=bias)

    def forward(self, queries, keys, values, valid_lens):
        queries = self.transpose_qkv(self.W_q(queries))
        keys = self.transpose_qkv(self.W_k(keys))
        values = self.transpose_qkv(self.W_v(values))
        if valid_lens is not None:
            valid_lens = valid_lens.repeat_interleave(
                repeats=self.num_heads, dim=0)
        output = self.attention(queries, keys, values, valid_lens)
        output_concat = self.transpose_output(output)
        return self.W_o(output_concat)

    def transpose_qkv(self, X):
        """Transposition for parallel computation of multiple attention heads."""
        X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1)
        X = X.permute(0, 2, 1, 3)
        return X.reshape(-1, X.shape[2], X.shape[3])

    def transpose_output(self, X):
        """Reverse the operation of transpose_qkv."""
        X = X.reshape(-1, self.num_heads, X.shape[1], X.shape[2])
        X = X.permute(0, 2, 1, 3)
        return X.reshape(X.shape[0], X.shape[1], -1)

    @property
    def attention_weights(self):
        return self.attention.attention_weights
