"""A learner's d2l 1.0 MultiHeadAttention(num_hiddens, num_heads, dropout, bias) on their own copy of d2l.Module, LazyLinear layers, transposes as methods, on their own DotProductAttention and masked_softmax.

Source: https://github.com/modifiededition/NLP_Accelerator
Files (repository: path @ commit (definitions kept)):
  modifiededition/NLP_Accelerator: nn_builder/utils.py @ 0a4d393b134dcc06e2a547043e2922eded75c654 (_sequence_mask, masked_softmax)
  modifiededition/NLP_Accelerator: nn_builder/archetectures/seqtoseq_networks/attention.py @ 0a4d393b134dcc06e2a547043e2922eded75c654 (DotProductAttention, MultiHeadAttention)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `from nn_builder.utils import  masked_softmax`; `from nn_builder.toolkit import Module`; a second `import torch`.
  Added `from d2l import torch as d2l`; `Module` -> `d2l.Module` (1x)
  (nn_builder.toolkit.Module is the learner's copy of d2l 1.0's d2l.Module: an nn.Module with save_hyperparameters and the plotting board.)
  _sequence_mask and masked_softmax are the same learner's, from nn_builder/utils.py (attention.py imports masked_softmax); AdditiveAttention and PositionalEncoding (02 and 05) of attention.py dropped.
"""
# ruff: noqa  (a learner's code, kept verbatim)
import math
import torch
from torch import nn
from d2l import torch as d2l


def _sequence_mask(X, valid_length, value = 0):
    maxlen = X.size(1)
    a =  torch.arange((maxlen), dtype=torch.float32,device=X.device)[None, :]
    mask = a < valid_length[:, None]
    X[~mask] = value
    return X

def masked_softmax(X, valid_length):

    if valid_length is None:
        return nn.functional.softmax(X, dim = -1)

    else:
        shape = X.shape
        if valid_length.dim() == 1:
            valid_length = torch.repeat_interleave(valid_length, shape[1])

        else:
            valid_length = valid_length.reshape(-1)

        X = _sequence_mask(X.reshape(-1, shape[-1]), valid_length, value=-1e6)
        return nn.functional.softmax(X.reshape(shape), dim=-1)

class DotProductAttention(nn.Module):

    def __init__(self,dropout) -> None:
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]

        scores = torch.bmm(queries, keys.transpose(1,2))/ math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)

        return torch.bmm(self.dropout(self.attention_weights), values)


class MultiHeadAttention(d2l.Module):  #@save
    """Multi-head attention."""
    def __init__(self, num_hiddens, num_heads, dropout, bias=False, **kwargs):
        super().__init__()
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_k = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_v = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_o = nn.LazyLinear(num_hiddens, bias=bias)

    def forward(self, queries, keys, values, valid_lens):
        # Shape of queries, keys, or values:
        # (batch_size, no. of queries or key-value pairs, num_hiddens)
        # Shape of valid_lens: (batch_size,) or (batch_size, no. of queries)
        # After transposing, shape of output queries, keys, or values:
        # (batch_size * num_heads, no. of queries or key-value pairs,
        # num_hiddens / num_heads)
        queries = self.transpose_qkv(self.W_q(queries))
        keys = self.transpose_qkv(self.W_k(keys))
        values = self.transpose_qkv(self.W_v(values))

        if valid_lens is not None:
            # On axis 0, copy the first item (scalar or vector) for num_heads
            # times, then copy the next item, and so on
            valid_lens = torch.repeat_interleave(
                valid_lens, repeats=self.num_heads, dim=0)

        # Shape of output: (batch_size * num_heads, no. of queries,
        # num_hiddens / num_heads)
        output = self.attention(queries, keys, values, valid_lens)
        # Shape of output_concat: (batch_size, no. of queries, num_hiddens)
        output_concat = self.transpose_output(output)
        return self.W_o(output_concat)

    def transpose_qkv(self, X):
        """Transposition for parallel computation of multiple attention heads."""
        # Shape of input X: (batch_size, no. of queries or key-value pairs,
        # num_hiddens). Shape of output X: (batch_size, no. of queries or
        # key-value pairs, num_heads, num_hiddens / num_heads)
        X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1)
        # Shape of output X: (batch_size, num_heads, no. of queries or key-value
        # pairs, num_hiddens / num_heads)
        X = X.permute(0, 2, 1, 3)
        # Shape of output: (batch_size * num_heads, no. of queries or key-value
        # pairs, num_hiddens / num_heads)
        return X.reshape(-1, X.shape[2], X.shape[3])

    def transpose_output(self, X):
        """Reverse the operation of transpose_qkv."""
        X = X.reshape(-1, self.num_heads, X.shape[1], X.shape[2])
        X = X.permute(0, 2, 1, 3)
        return X.reshape(X.shape[0], X.shape[1], -1)
