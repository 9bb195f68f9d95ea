"""A learner's 04: the book's MultiHeadAttention on their own ScaledDotProductAttention, forward(q, k, v, valid_lens).

Source: https://github.com/Leyusf/NetModel
Files (repository: path @ commit (definitions kept)):
  Leyusf/NetModel: Attention/AttentionScore.py @ 9d620f892dbe78dc9ed04a78ba3069dc62636b50 (masked_softmax, ScaledDotProductAttention)
  Leyusf/NetModel: Attention/MultiHeadAttention.py @ 9d620f892dbe78dc9ed04a78ba3069dc62636b50 (transpose_qkv, transpose_output, MultiHeadAttention)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `from Seq2Seq import sequence_mask`; `from AttentionScore import AdditiveAttention, ScaledDotProductAttention`.
  masked_softmax and ScaledDotProductAttention are the same learner's, from Attention/AttentionScore.py (MultiHeadAttention.py imports them).
"""
# ruff: noqa  (a learner's code, kept verbatim)
import math
import torch
from torch import nn


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


class ScaledDotProductAttention(nn.Module):
    def __init__(self, dropout):
        super(ScaledDotProductAttention, self).__init__()
        self.dropout = nn.Dropout(dropout)

    # queries的形状：(batch_size，查询的个数，d)
    # keys的形状：(batch_size，“键－值”对的个数，d)
    # values的形状：(batch_size，“键－值”对的个数，值的维度)
    # valid_lens的形状:(batch_size，)或者(batch_size，查询的个数)
    def forward(self, q, k, v, valid_lens=None):
        d = q.shape[-1]
        # 设置transpose_b=True为了交换keys的最后两个维度
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(d)

        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), v)


def transpose_qkv(X, num_heads):
    # 将多个头的计算放到一起优化计算
    # 把head的维度和batch size维度并在一起
    # (batch, steps, key_size) => (batch, steps, heads, key_size // (batch*steps*heads))
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)
    # (batch, steps, heads, key_size // (batch*steps*heads)) => (batch, heads, steps, key_size // (batch*steps*heads))
    X = X.permute(0, 2, 1, 3)
    # 结果是3维的可以直接用于计算Attention
    # (batch, heads, steps, key_size // (batch*steps*heads)) => (batch * heads, steps, key_size // (batch*steps*heads))
    return X.reshape(-1, X.shape[2], X.shape[3])


def transpose_output(X, num_heads):
    # 逆转transpose_qkv的函数操作
    X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])
    X = X.permute(0, 2, 1, 3)
    return X.reshape(X.shape[0], X.shape[1], -1)


class MultiHeadAttention(nn.Module):
    def __init__(self, key_size, query_size, value_size, num_hiddens, num_heads, dropout, bias=False, **kwargs):
        super(MultiHeadAttention, self).__init__(**kwargs)
        self.num_heads = num_heads
        self.attention = ScaledDotProductAttention(dropout)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=bias)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=bias)
        self.W_v = nn.Linear(value_size, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

    def forward(self, q, k, v, valid_lens):
        q = transpose_qkv(self.W_q(q), self.num_heads)
        k = transpose_qkv(self.W_k(k), self.num_heads)
        v = transpose_qkv(self.W_v(v), self.num_heads)
        if valid_lens is not None:
            valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)
        output = self.attention(q, k, v, valid_lens)
        output_concat = transpose_output(output, self.num_heads)
        return self.W_o(output_concat)
