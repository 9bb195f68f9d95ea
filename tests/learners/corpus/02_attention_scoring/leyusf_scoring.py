"""A learner's 02: book sequence_mask and masked_softmax, AdditiveAttention with `w_k`, `w_q` (lower case); no DotProductAttention (theirs is ScaledDotProductAttention).

Source: https://github.com/Leyusf/NetModel
Files (repository: path @ commit (definitions kept)):
  Leyusf/NetModel: Seq2Seq/Seq2Seq.py @ 9d620f892dbe78dc9ed04a78ba3069dc62636b50 (sequence_mask)
  Leyusf/NetModel: Attention/AttentionScore.py @ 9d620f892dbe78dc9ed04a78ba3069dc62636b50 (masked_softmax, AdditiveAttention)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `from NModule.NModule import Encoder, Decoder`; `from Seq2Seq import sequence_mask`.
  sequence_mask is the same learner's, from Seq2Seq/Seq2Seq.py (masked_softmax imports it from there).
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch
from torch import nn
import math


def sequence_mask(X, valid_len, value=0):
    """屏蔽无关项"""
    max_len = X.size(1)
    mask = torch.arange(max_len, dtype=torch.float32, device=X.device)[None, :] < valid_len[:, None]
    X[~mask] = value
    return X


def masked_softmax(X, valid_lens):
    """通过在最后一个轴上掩蔽元素来执行softmax操作"""
    # X:3D张量，valid_lens:1D或2D张量
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    else:
        shape = X.shape
        if valid_lens.dim() == 1:
            valid_lens = torch.repeat_interleave(valid_lens, shape[1])
        else:
            valid_lens = valid_lens.reshape(-1)
        # 最后一轴上被掩蔽的元素使用一个非常大的负值替换，从而其softmax输出为0
        X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
        return nn.functional.softmax(X.reshape(shape), dim=-1)


class AdditiveAttention(nn.Module):
    def __init__(self, key_size, query_size, num_hiddens, dropout):
        super(AdditiveAttention, self).__init__()
        # 最后的输出是一维的
        self.w_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.w_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, q, k, v, valid_lens):
        q = self.w_q(q)
        k = self.w_k(k)
        # 在维度扩展后，
        # q的形状：(batch_size，查询的个数，1，num_hidden)
        # k的形状：(batch_size，1，“键－值”对的个数，num_hiddens)
        # 使用广播方式进行求和
        features = q.unsqueeze(2) + k.unsqueeze(1)
        # self.w_v仅有一个输出，因此从形状中移除最后那个维度。
        # scores的形状：(batch_size，查询的个数，“键-值”对的个数)
        scores = self.w_v(nn.functional.tanh(features)).squeeze(-1)
        self.attention_weights = masked_softmax(scores, valid_lens)
        # 再计算使用加性注意力评分函数的注意力
        return torch.bmm(self.dropout(self.attention_weights), v)
