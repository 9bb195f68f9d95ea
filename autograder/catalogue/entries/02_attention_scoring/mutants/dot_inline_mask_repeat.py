"""
component: DotProductAttention
bug: masks inline and tiles a 1-D valid_lens with repeat (l0, l1, l0, l1, ...) instead of repeat_interleave (l0, l0, l1, l1, ...), so queries get other batch items' lengths
fix: a 1-D valid_lens holds one length per batch item: call masked_softmax(scores, valid_lens), or give each length to all Q queries of its item with torch.repeat_interleave(valid_lens, Q)
family: lens-repeat-not-interleave
symptom: one length per batch item
"""
import math
import torch
from torch import nn


class DotProductAttention(nn.Module):
    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        if valid_lens is not None:
            B, Q, K = scores.shape
            lens = valid_lens.repeat(Q) if valid_lens.dim() == 1 else valid_lens.reshape(-1)
            keep = torch.arange(K, device=scores.device)[None, :] < lens[:, None]
            scores = scores.reshape(-1, K).masked_fill(~keep, -1e6).reshape(B, Q, K)
        self.attention_weights = torch.softmax(scores, dim=-1)
        return torch.bmm(self.dropout(self.attention_weights), values)
