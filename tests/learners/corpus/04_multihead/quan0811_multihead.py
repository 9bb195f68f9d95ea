"""A learner's MultiHeadAttention(num_hiddens, num_heads, dropout_rate) with LazyLinear layers and reshape helpers as methods.

Source: https://github.com/quan-0811/neural_machine_translation_en_fr
Files (repository: path @ commit (definitions kept)):
  quan-0811/neural_machine_translation_en_fr: module/mh_attention.py @ eedf2e22a61a9f92075c35ec4946e9681e265cd5 (MultiHeadAttention)
  quan-0811/neural_machine_translation_en_fr: module/sdp_attention.py @ eedf2e22a61a9f92075c35ec4946e9681e265cd5 (ScaledDotProductAttention)
  quan-0811/neural_machine_translation_en_fr: utils.py @ eedf2e22a61a9f92075c35ec4946e9681e265cd5 (mask_sequence, masked_softmax)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `from module.sdp_attention import ScaledDotProductAttention`; `from utils import masked_softmax`; `from pathlib import Path`; `from vocab import Vocabulary`.
  ScaledDotProductAttention (module/sdp_attention.py) and mask_sequence, masked_softmax (utils.py) are the same learner's, imported by mh_attention.py.
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch
import torch.nn as nn
import math


class MultiHeadAttention(nn.Module):
    def __init__(self, num_hiddens: int, num_heads: int, dropout_rate: float):
        super().__init__()
        self.W_q = nn.LazyLinear(num_hiddens)
        self.W_k = nn.LazyLinear(num_hiddens)
        self.W_v = nn.LazyLinear(num_hiddens)
        self.W_o = nn.LazyLinear(num_hiddens)
        self.attention = ScaledDotProductAttention(dropout_rate=dropout_rate)
        self.num_heads = num_heads

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, valid_lens):

        # Pass q, k, v to FC layer in parallel and reshape for attention
        queries = self.reshape_for_attention(self.W_q(queries))
        keys = self.reshape_for_attention(self.W_k(keys))
        values = self.reshape_for_attention(self.W_v(values))

        # Repeat valid_lens since one single (q, k, v) are pass through multiple heads
        valid_lens = torch.repeat_interleave(valid_lens, self.num_heads, dim=0)

        # Attention pooling, output.shape = (batch_size * num_heads, num_queries, num_hidden // num_heads)
        output = self.attention(queries, keys, values, valid_lens)

        # Concatenate heads
        heads_concatenated = self.revert_reshape(output)

        return self.W_o(heads_concatenated)

    def reshape_for_attention(self, X: torch.Tensor):
        """
        Reshape queries, keys, values
        from (batch_size, num_queries or num_keys_values, num_hiddens)
        to (batch_size * num_heads, num_queries or num_keys_values, num_hiddens // num_heads)
        """
        # Change to (batch_size, num_heads, num_queries or num_keys_values, num_hiddens // num_heads)
        X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1)
        X = X.permute(0, 2, 1, 3)

        # Change to (batch_size * num_heads, num_queries or num_keys_values, num_hiddens // num_heads)
        X = X.reshape(-1, X.shape[2], X.shape[3])

        return X

    def revert_reshape(self, X: torch.Tensor):
        """
        Revert the changes made by reshape_for_attention()
        """
        # Change to (batch_size, num_heads, num_queries or num_keys_values, num_hiddens // num_heads)
        X = X.reshape(-1, self.num_heads, X.shape[1], X.shape[2])
        X = X.permute(0, 2, 1, 3)

        # Change to (batch_size, num_queries or num_keys_values, num_hiddens)
        X = X.reshape(X.shape[0], X.shape[1], -1)

        return X


class ScaledDotProductAttention(nn.Module):
    def __init__(self, dropout_rate: float):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout_rate)

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, valid_lens):
        """
        Attention pooling for q, k, v with:
            Shape of queries: (batch_size, no. of queries, d)
            Shape of keys: (batch_size, no. of key-value pairs, d)
            Shape of values: (batch_size, no. of key-value pairs, value dimension)
            Shape of valid_lens: (batch_size,) or (batch_size, no. of queries)
        """

        d = queries.shape[-1]

        attention_scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        attention_weights = masked_softmax(attention_scores, valid_lens)

        return torch.bmm(self.dropout(attention_weights), values)


def mask_sequence(X: torch.Tensor, valid_len: torch.Tensor, value=-1e6):
    num_steps = X.size(1)

    valid_len = valid_len.to(X.device)
    mask = torch.arange(num_steps, device=X.device).unsqueeze(0) < valid_len.unsqueeze(-1)

    X[~mask] = value
    return X


def masked_softmax(X: torch.Tensor, valid_len: torch.Tensor):
    shape = X.shape
    batch_size, num_steps = shape[0], shape[1]

    if valid_len.dim() == 1:
        valid_lens = torch.zeros(size=(batch_size, num_steps), dtype=torch.long)
        for i in range(batch_size):
            valid_lens[i, :valid_len[i]] = torch.tensor([valid_len[i]] * valid_len[i])
        valid_len = valid_lens

    valid_len = valid_len.to(X.device)
    X = mask_sequence(X, valid_len)

    X = torch.softmax(X, dim=-1)

    row_mask = valid_len > 0
    X = X * row_mask.unsqueeze(-1)

    return X
