"""A learner's 02: sequence_mask that writes into X (`X[mask] = value`), the softmax named mask_softmax (which so overwrites the caller's scores), AdditiveAttention with W_v and `attention_weight`, DotProductAttention over (Q, K, V).

Source: https://github.com/Solus-sano/d2l_note
Files (repository: path @ commit (definitions kept)):
  Solus-sano/d2l_note: 14_NLP/attention/attention_score.py @ 239ded8e75a8c8eb227f63515a001a25f1ab6715 (sequence_mask, mask_softmax, AdditiveAttention, DotProductAttention)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `import sys`; `sys.path.append("../")`; `from attention.visualization import show_heatmaps`.
"""
# ruff: noqa  (a learner's code, kept verbatim)
import math
import torch
from torch import nn
import torch.nn.functional as F


def sequence_mask(X, valid_len, value=0):
    maxlen = X.size(1)
    mask = torch.arange(
        (maxlen), dtype=torch.float32,
        device=X.device                    
    )[None, :] >= valid_len[:, None]#; print(mask,'\n',valid_len[:, None].shape)
    X[mask] = value
    return X


def mask_softmax(X, valid_lens = None):
    """通过在最后一个轴上mask元素来执行 softmax 操作"""
    if valid_lens is None:
        return F.softmax(X, dim=-1)
    else:
        shape = X.shape

        if valid_lens.dim() == 1:
            #valid_len中每个元素应用于一个batch
            valid_lens = torch.repeat_interleave(valid_lens, shape[1])
        else:
            #valid_len中每个元素应用于一个batch中的一个序列
            valid_lens = valid_lens.reshape(-1)
        
        X = sequence_mask(
            X.reshape(-1,shape[-1]), valid_lens, -1e6
        )

        return (F.softmax(X.reshape(-1,shape[-1]),dim=-1)).reshape(shape)


class AdditiveAttention(nn.Module):
    """加性注意力"""
    def __init__(self,
            key_size:int,
            query_size:int,
            num_hiddens:int,
            dropout,
            **kwargs
        ):
        super().__init__(**kwargs)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.W_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self,
        queries,
        keys,
        values,
        valid_lens,
    ):
        queries, keys = self.W_q(queries), self.W_k(keys)
        # 在维度扩展后，
        # queries的形状：(batch_size，查询的个数，1，num_hidden)
        # key的形状：(batch_size，1，“键－值”对的个数，num_hiddens)
        # 使用广播方式进行求和
        features = queries.unsqueeze(2) + keys.unsqueeze(1) 

        #(batch_size，查询的个数，“键－值”对的个数，num_hidden)
        features = torch.tanh(features)

        #(batch_size，查询的个数，“键－值”对的个数)
        score = self.W_v(features).squeeze(-1)

        self.attention_weight = mask_softmax(score, valid_lens)
        return torch.bmm(self.dropout(self.attention_weight),values)


class DotProductAttention(nn.Module):
    def __init__(self, dropout, **kwargs):
        super(DotProductAttention, self).__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)
        self.attention_weights = None

    def forward(self, Q, K, V, valid_lens=None):
        assert Q.shape[-1] == K.shape[-1]# shape = (batch,查询或键值对个数,维数)
        d = Q.shape[-1]
        scores = torch.bmm(Q, K.transpose(1,2)) / math.sqrt(d)
        self.attention_weights = mask_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), V)
