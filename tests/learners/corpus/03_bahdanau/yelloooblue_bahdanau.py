"""A learner's 03 written from scratch in one file: own sequence_mask, masked_softmax, AdditiveAttention, AttentionDecoder and decoder.

Source: https://github.com/YelloooBlue/d2l_pytorch_scratch
Files (repository: path @ commit (definitions kept)):
  YelloooBlue/d2l_pytorch_scratch: DiveInDL/10-chapter_attention-mechanisms/10.4-bahdanau-attention.py @ 06ef8690aa41518c410a340eecc2712cdbfc4e99 (sequence_mask, masked_softmax, AdditiveAttention, AttentionDecoder, Seq2SeqAttentionDecoder)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `import matplotlib.pyplot as plt`.
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch
from torch import nn
import collections
from torch.utils import data
import math


def sequence_mask(X, valid_len, value=0):
    """在序列中屏蔽不相关的项"""
    # 此时X的形状为(batch_size,num_steps)
    # valid_len的形状为(batch_size,)，表示每个序列的有效长度
    maxlen = X.size(1)
    mask = torch.arange((maxlen), dtype=torch.float32, device=X.device)[None, :] < valid_len[:, None]
    # torch.arange(maxlen)生成一个从0到maxlen-1的张量
    # [None, :]将其转换为行向量(1, maxlen)
    # valid_len[:, None]将valid_len转换为列向量(batch_size, 1)

    # 当(1, maxlen)的行向量与(batch_size, 1)的列向量进行比较时，
    # 会广播成(batch_size, maxlen)的布尔矩阵

    # mask的形状为(batch_size, maxlen)，表示每个位置是否有效
    X[~mask] = value
    return X


def masked_softmax(X, valid_lens):
    """通过在最后一个轴上掩蔽元素来执行softmax操作"""
    # X:3D张量，valid_lens:1D或2D张量
    # X:形状为(batch_size, num_queries, num_kvs)，
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    else:
        shape = X.shape
        if valid_lens.dim() == 1:
            valid_lens = torch.repeat_interleave(valid_lens, shape[1])
        else:
            valid_lens = valid_lens.reshape(-1)
        # 最后一轴上被掩蔽的元素使用一个非常大的负值替换，从而其softmax输出为0
        X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens,
                              value=-1e6)
        return nn.functional.softmax(X.reshape(shape), dim=-1)


class AdditiveAttention(nn.Module):
    """
    加性注意力
        简单来说，当Query和Key的维度不同时，我们通过一个线性变换将它们映射到相同的维度，
        然后将它们相加，经过tanh激活函数后，再通过一个线性变换得到注意力分数。
    
    """
    def __init__(self, key_size, query_size, num_hiddens, dropout, **kwargs):
        super(AdditiveAttention, self).__init__(**kwargs)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        # queries的形状：(batch_size，查询的个数，dim_query)
        # keys的形状：(batch_size，“键－值”对的个数，dim_key)

        queries, keys = self.W_q(queries), self.W_k(keys)
        # queries的形状：(batch_size，查询的个数，num_hidden)
        # keys的形状：(batch_size，“键－值”对的个数，num_hidden)
        
        
        # 使用广播方式进行求和
        features = queries.unsqueeze(2) + keys.unsqueeze(1)
        # queries的形状：(batch_size，查询的个数，1，num_hidden)
        # key的形状：(batch_size，1，“键－值”对的个数，num_hiddens)
        # features的形状：(batch_size，查询的个数，“键－值”对的个数，num_hidden)
        features = torch.tanh(features)
        
        
        # w_v(features)的形状：(batch_size，查询的个数，“键－值”对的个数，1)
        scores = self.w_v(features).squeeze(-1)

        # self.w_v仅有一个输出，因此从形状中移除最后那个维度。
        # scores的形状：(batch_size，查询的个数，“键-值”对的个数)
        self.attention_weights = masked_softmax(scores, valid_lens)

        # attention_weights的形状：(batch_size，查询的个数，“键－值”对的个数)
        # values的形状：(batch_size，“键－值”对的个数，dim_value)
        return torch.bmm(self.dropout(self.attention_weights), values)


class AttentionDecoder(nn.Module):
    """带有注意力机制解码器的基本接口"""
    def __init__(self, **kwargs):
        super(AttentionDecoder, self).__init__(**kwargs)

    def init_state(self, enc_outputs, *args):
        raise NotImplementedError

    def forward(self, X, state):
        raise NotImplementedError

    @property
    def attention_weights(self):
        raise NotImplementedError


class Seq2SeqAttentionDecoder(AttentionDecoder):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers,
                 dropout=0, **kwargs):
        super(Seq2SeqAttentionDecoder, self).__init__(**kwargs)
        self.attention = AdditiveAttention(
            num_hiddens, num_hiddens, num_hiddens, dropout) # key_size和query_size都为num_hiddens
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(
            embed_size + num_hiddens, num_hiddens, num_layers,
            dropout=dropout)
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens, *args):
        outputs, hidden_state = enc_outputs
        # 此时outputs的形状为(num_steps, batch_size, num_hiddens)
        # 此时hidden_state的形状为(num_layers, batch_size, num_hiddens)
        return (outputs.permute(1, 0, 2), hidden_state, enc_valid_lens)
        # outputs的形状转换为(batch_size, num_steps, num_hiddens)

    def forward(self, X, state):
        # X: (batch_size,num_steps)
        enc_outputs, hidden_state, enc_valid_lens = state
        # enc_outputs的形状为(batch_size,num_steps,num_hiddens).
        # hidden_state的形状为(num_layers,batch_size,num_hiddens)
        
        X = self.embedding(X).permute(1, 0, 2)
        # X_embedding的形状为(batch_size,num_steps,embed_size)
        # X的形状转换为(num_steps,batch_size,embed_size)

        # 遍历每个时间步
        outputs, self._attention_weights = [], []
        for x in X:
            # x的形状为(batch_size,embed_size)
            
            query = torch.unsqueeze(hidden_state[-1], dim=1)
            # query的形状为(batch_size,1,num_hiddens) 查询个数为1

            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens) # keys和values都为enc_outputs
            # context的形状为(batch_size,1,num_hiddens) = (batch_size, 查询的个数, dim_value)

            
            # 在特征维度上连结
            x = torch.cat((context, torch.unsqueeze(x, dim=1)), dim=-1)
            # x先变形为(batch_size,1,embed_size)
            # 然后在特征维度上连结，得到(batch_size,1,embed_size+num_hiddens)
            
            
            x = x.permute(1, 0, 2)
            # 将x变形为(1,batch_size,embed_size+num_hiddens)
            out, hidden_state = self.rnn(x, hidden_state)
            # out的形状为(1,batch_size,num_hiddens)

            outputs.append(out)
            self._attention_weights.append(self.attention.attention_weights)
        
        
        # 此时outputs是一个列表，包含了每个时间步的输出
        # outputs的形状为(num_steps,batch_size,num_hiddens)
        # self._attention_weights是一个列表，包含了每个时间步的注意力权重

        outputs = self.dense(torch.cat(outputs, dim=0))
        # 全连接层变换后，outputs的形状为
        # (num_steps,batch_size,vocab_size)

        return outputs.permute(1, 0, 2), [enc_outputs, hidden_state,
                                          enc_valid_lens]
        # 返回的outputs的形状为(batch_size,num_steps,vocab_size)
                                        

    @property
    def attention_weights(self):
        return self._attention_weights
