"""A learner's Seq2SeqAttentionDecoder on nn.Module over their own AdditiveAttention (which stores `attention_weight`), with `attention_weights` a plain method, not a property, and a print in the decoding loop.

Source: https://github.com/Solus-sano/d2l_note
Files (repository: path @ commit (definitions kept)):
  Solus-sano/d2l_note: 14_NLP/attention/attention_score.py @ 239ded8e75a8c8eb227f63515a001a25f1ab6715 (sequence_mask, mask_softmax, AdditiveAttention)
  Solus-sano/d2l_note: 14_NLP/attention/Bahdanau_attention.py @ 239ded8e75a8c8eb227f63515a001a25f1ab6715 (Seq2SeqAttentionDecoder)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `import sys`; `import os`; `sys.path.append(...)`; `from attention.visualization import show_heatmaps`; `from attention_score import AdditiveAttention` (its definitions are kept above instead: the decoder reads their `attention_weight`); `from seq2seq.seq2seq import Seq2SeqEncoder`.
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


class Seq2SeqAttentionDecoder(nn.Module):
    def __init__(self,
            vocab_size,
            embed_size,
            num_hiddens,
            num_layers,
            dropout=0,
            **kwargs         
        ):
        super().__init__(**kwargs)

        self.attention = AdditiveAttention(
            num_hiddens,
            num_hiddens,
            num_hiddens,
            dropout
        )

        self.embedding = nn.Embedding(vocab_size,embed_size)
        
        self.rnn = nn.GRU(
            embed_size + num_hiddens,
            num_hiddens,
            num_layers,
            dropout = dropout
        )

        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens, *args):
        # outputs的形状为(batch_size，num_steps，num_hiddens).
        # hidden_state的形状为(num_layers，batch_size，num_hiddens)
        outputs, hidden_state = enc_outputs
        return (outputs.permute(1,0,2), hidden_state, enc_valid_lens)
    
    def forward(self, X, state):
        # enc_outputs的形状为(batch_size,num_steps,num_hiddens).
        # hidden_state的形状为(num_layers,batch_size,num_hiddens)
        enc_outputs, hidden_state, enc_valid_lens = state
        X = self.embedding(X).permute(1,0,2)

        outputs, self._attention_weights = [], []
        for x in X:
            Q = torch.unsqueeze(hidden_state[-1], dim=1)
            # query的形状为(batch_size,1,num_hiddens)

            context = self.attention(
                Q, enc_outputs, enc_outputs, enc_valid_lens
            )# context的形状为(batch_size,1,num_hiddens)
            x = torch.cat(
                (context, torch.unsqueeze(x,dim=1)),
                dim=-1
            )# 在特征维度上连结
            print(x.shape)

            out, hidden_state = self.rnn(x.permute(1,0,2), hidden_state)
            outputs.append(out)
            self._attention_weights.append(self.attention.attention_weight)
        
        # 全连接层变换后，outputs的形状为(num_steps,batch_size,vocab_size)
        outputs = self.dense(torch.cat(outputs,dim=0))
        return outputs.permute(1,0,2), [enc_outputs, 
                                        hidden_state, enc_valid_lens]
    
    def attention_weights(self):
        return self._attention_weights
