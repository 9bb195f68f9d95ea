"""A learner's AdditiveAttention (the book's) whose forward(queries, keys, values) takes no valid_lens: nothing is masked.

Source: https://github.com/Mr-Talon/Trustworthy-AD
Files (repository: path @ commit (definitions kept)):
  Mr-Talon/Trustworthy-AD: Trustworthy_AD/attention.py @ dd32f7110c13f1a97be16c9d2f969b999e972a1d (AdditiveAttention)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch
import torch.nn as nn
import torch.nn.functional as F


class AdditiveAttention(nn.Module):
    def __init__(self, key_size, query_size, num_hiddens, dropout, **kwargs):
        super(AdditiveAttention, self).__init__(**kwargs)
        self.num_hiddens=num_hiddens
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    # def forward(self, queries, keys, values, valid_lens):
    def forward(self, queries, keys, values) :
        queries, keys = self.W_q(queries), self.W_k(keys)
        features = queries.unsqueeze(2) + keys.unsqueeze(1)
        features = torch.tanh(features)
        scores = self.w_v(features).squeeze(-1)
        self.attention_weights = F.softmax(scores,dim=-1)
        ret=torch.bmm(self.dropout(self.attention_weights), values)
        return ret
