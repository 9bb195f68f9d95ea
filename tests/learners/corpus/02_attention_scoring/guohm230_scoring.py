"""A learner's 02 retyped from memory: AdditiveAttention and DotProductAttention with no valid_lens and softmax over dim=1 (the queries' axis), lower-case w_k/w_q, `attention_weight`; the book's masked_softmax on d2l.sequence_mask.

Source: https://github.com/GUOhm230/d2l_Guo
Files (repository: path @ commit (definitions kept)):
  GUOhm230/d2l_Guo: ch10_MyAttention.py @ c69042c4d25edef5e2d9cac2c42edada315e025c (AdditiveAttention, DotProductAttention, masked_softmax)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch
from torch import nn
from d2l import torch as d2l
import math


class AdditiveAttention(nn.Module):
    def __init__(self, key_size, query_size, num_hiddens, dropout, **kwargs):
        super(AdditiveAttention, self).__init__(**kwargs)
        self.w_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.w_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values):
        # 输入：queries:[batch_size, 查询数也就是查询词元数，词元特征长度], keys: [batch_size, 键值对数，键值对词元特征长度]
        queries = self.w_q(queries)
        keys = self.w_k(keys) # 将特征长度替换为num_hiddens
        features = queries.unsqueeze(2) + keys.unsqueeze(1) # 维度:[batch_size, 查询数，键值对数，num_hiddens]
        features = torch.tanh(features)
        scores = self.w_v(features).squeeze(-1)
        self.attention_weight = nn.functional.softmax(scores, dim=1) # 计算权重啊，。权重维度：[batch_size, 查询数，键值对数]
        print("self.attention_weight:", self.attention_weight.shape)
        return torch.bmm(self.dropout(self.attention_weight), values) #[batch_size, 查询数，键值对] @ [batch_size, 键值对, 值得特征长度] = [batch_size, 查询数, 值的特征长度]


class DotProductAttention(nn.Module):
    def __init__(self, dropout, **kwargs):
        super(DotProductAttention, self).__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values):
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = nn.functional.softmax(scores, dim=1)
        return torch.bmm(self.dropout(self.attention_weights), values)


def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    else:
        shape = X.shape # [batch_size, 查询数， 键值对]
        if valid_lens.dim() == 1: # [batch_size]
            valid_lens = torch.repeat_interleave(valid_lens, shape[1])
        else:
            valid_lens = valid_lens.reshape(-1)
        X = d2l.sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
        return nn.functional.softmax(X.reshape(shape), dim=-1)
