"""A learner's 02: masked_softmax calling `nn.Functional.softmax`, the book's DotProductAttention, a d2l 1.0 AdditiveAttention(num_hiddens, dropout).

Source: https://github.com/mkirby42/ml_implementations
Files (repository: path @ commit (definitions kept)):
  mkirby42/ml_implementations: Attention/masked_softmax_.py @ 56afc832567bcf82aa8158fd44308c09584527c5 (masked_softmax, DotProductAttention, AdditiveAttention)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch
import torch.nn as nn
import math


def masked_softmax(X, valid_lens):
    def _sequence_mask(X, valid_len, value=0):
        maxlen = X.size(1)
        mask = torch.arange((maxlen), dtype=torch.float32, device=X.device)[None, :] < valid_len[:, None]
        X[~mask] = value
        return X
    
    if valid_lens is None:
        return nn.Functional.softmax(X, dim=1)
    else:
        shape = X.shape
        if valid_lens.dim() == 1:
            valid_lens = torch.repeat_interleave(valid_lens, shape[1])
        else:
            valid_lens = valid_lens.reshape(-1)
        # On last axis replace replace masked elements with very large negative whos exponentiation outputs 0
        X = _sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
        return nn.Functional.softmax(X.reshape(shape), dim=-1)


class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        
    # Shape of queries: (batch_size, n_queries, d)
    # Shape of keys: (batch_size, n_k_v_pairs, d)
    # Shape of values: (batch_size, n_k_V_pairs, value_dimensions)
    # Shape of valid_lens: (batch_size,) or (batch_size, n_queries)
    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        # Swap the last two dimensions of keys 
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens, dropout, **kwargs):
        super(AdditiveAttention, self).__init__(**kwargs)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)
        
    def forward(self, queries, keys, values, valid_lens):
        queries, keys = self.W_q(queries), self.W_k(keys)
        # After dimension expansion 
        # Shape of queries: (batch_size, n_queries, 1, num_hiddens)
        # Shape of keys: (batch_size, 1, n_k_v_pairs, num_hiddens)
        # Sum up w broadcasting
        features = queries.unsqueeze(2) + keys.unsqueeze(1)
        features = torch.tanh(features)
        # There is only one output so we remove the last one-d entry from the shape
        # Shape of scores: (batch_size, n_queries, n_k_v_pairs)
        scores = self.w_v(features).squeeze(-1)
        self.attention_weights = masked_softmax(scores, valid_lens)
        # Shape of values; (batch_size, n_k_v_pairs, value_d)
        return torch.bmm(self.dropout(self.attention_weights), values)
