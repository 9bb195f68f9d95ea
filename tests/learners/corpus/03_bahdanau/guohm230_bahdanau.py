"""A learner's Seq2SeqAttentionDecoder retyped from the book on their own base class AttentionEncoder (sic), whose forward never appends to self._attention_weights.

Source: https://github.com/GUOhm230/d2l_Guo
Files (repository: path @ commit (definitions kept)):
  GUOhm230/d2l_Guo: ch10_MyAttention.py @ c69042c4d25edef5e2d9cac2c42edada315e025c (AttentionEncoder, Seq2SeqAttentionDecoder)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch
from torch import nn
from d2l import torch as d2l
import math


class AttentionEncoder(d2l.Decoder):
    def __init__(self, **kwargs):
        super(AttentionEncoder, self).__init__(**kwargs)

    @property
    def attention_weights(self):
        raise NotImplementedError


class Seq2SeqAttentionDecoder(AttentionEncoder):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0., **kwargs):
        super(Seq2SeqAttentionDecoder, self).__init__(**kwargs)
        self.attention = d2l.AdditiveAttention(num_hiddens, num_hiddens, num_hiddens, dropout)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size + num_hiddens, num_hiddens, num_layers, dropout=dropout)
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens, *args):
        outputs, hidden_state = enc_outputs
        return (outputs.permute(1, 0, 2), hidden_state, enc_valid_lens)

    def forward(self, X, state):
        enc_outputs, hidden_state, enc_valid_lens = state
        X = self.embedding(X).permute(1, 0, 2)
        # print("输入X：", X.shape)
        # print("hidden_state：", hidden_state[-1].shape)
        outputs, self._attention_weights = [], []
        # 确实是按照时间步进行的循环.但是时间循环
        for x in X:
            # print(x.shape)
            query = torch.unsqueeze(hidden_state[-1], dim=1)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            x = torch.cat((context, torch.unsqueeze(x, dim=1)), dim=-1)
            out, hidden_state = self.rnn(x.permute(1, 0, 2), hidden_state)
            # print("out:", out)
            # print("out:", hidden_state)
            outputs.append(out)
        outputs = self.dense(torch.cat(outputs, dim=0))
        return outputs.permute(1, 0, 2), [enc_outputs, hidden_state, enc_valid_lens]

    @property # 以属性的形式输出
    def attention_weights(self):
        return self._attention_weights
