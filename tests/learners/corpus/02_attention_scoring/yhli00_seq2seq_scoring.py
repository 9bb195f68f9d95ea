"""A learner's 02: the book's sequence_mask as seq_mask, a masked_softmax for 1-D lengths only, an AdditiveAttention without tanh.

Source: https://github.com/yhli00/my-d2l-code
Files (repository: path @ commit (definitions kept)):
  yhli00/my-d2l-code: 10-注意力机制/seq2seq_attn_translation.py @ 28ecc373a072eb76e269aabd323d91fa89e98da3 (seq_mask, masked_softmax, AdditiveAttention)
Licence: no licence file in the repository.
Edits: kept only the imports and the definitions listed above, verbatim (data, seq2seq model and training code dropped). Found by helper-69 (session 45).
"""
# ruff: noqa  (a learner's code, kept verbatim)
import math
import torch
from torch import nn
import torch.nn.functional as F


def seq_mask(x, valid_len, value=0):  # [B, L], [B]
    pos = torch.arange(x.shape[1], device=x.device).repeat(x.shape[0], 1)
    valid_len = valid_len.reshape(-1, 1).repeat(1, x.shape[1])
    mask = pos < valid_len
    x[~mask] = value
    return x


def masked_softmax(q_k_attn, valid_len, value=-1e9):  # [B, q, k], [B]
    shape = q_k_attn.shape
    valid_len = valid_len.repeat_interleave(q_k_attn.shape[1])
    masked_attn = seq_mask(q_k_attn.reshape(-1, shape[-1]), valid_len, value)
    return F.softmax(masked_attn.reshape(shape), dim=-1)


class AdditiveAttention(nn.Module):
    def __init__(self, q_size, k_size, hidden_size, dropout):
        super().__init__()
        self.W_q = nn.Linear(q_size, hidden_size, bias=False)
        self.W_k = nn.Linear(k_size, hidden_size, bias=False)
        self.W_v = nn.Linear(hidden_size, 1, bias=False)
        self.dropout = nn.Dropout(p=dropout)
    
    def forward(self, q, k, v, valid_len):
        q = self.W_q(q)  # [B, num_q, H]
        k = self.W_k(k)  # [B, num_k, H]
        q_k = q.unsqueeze(2) + k.unsqueeze(1)  # [B, num_q, num_k, H]
        q_k = self.W_v(q_k).squeeze(-1)  # [B, num_q, num_k]
        q_k_attn = self.dropout(masked_softmax(q_k, valid_len))
        return torch.bmm(q_k_attn, v)  # [B, num_q, V]
