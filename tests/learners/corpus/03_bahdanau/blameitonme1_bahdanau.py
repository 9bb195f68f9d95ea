"""A learner's Seq2SeqAttentionDecoder building d2l.AdditiveAttention(num_hiddens, dropout) (d2l 1.0) and without @property on attention_weights.

Source: https://github.com/blameitonme1/d2lPytorch
Files (repository: path @ commit (definitions kept)):
  blameitonme1/d2lPytorch: Attention-machanism/Seq2Seq-with-attention.py @ 3677fd27a4aec176f446cbdaecc84dd9c7b90560 (Seq2SeqAttentionDecoder)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch
from d2l import torch as d2l
from torch import nn


class Seq2SeqAttentionDecoder(AttentionDecoder):
    """有注意力机制实现的Seq2Seq的decoder"""
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0, **kwargs):
        super().__init__()
        # 注意这里的API, 和之前的不一样，只是用了一个参数num_hiddens，留意
        self.attention = d2l.AdditiveAttention(
            num_hiddens, dropout
        ) # 使用加性注意力，因为可以学习参数效果会更好
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(
            embed_size + num_hiddens, num_hiddens, num_layers, dropout=dropout
        )
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_output, enc_valid_lens, *args):
        # 要使用valid_len防止考虑pad的token，pad的都不用考虑
        outputs, hidden_state = enc_output
        # permute是因为考虑的是相对位置，也就是在时间轴上应用注意力
        return (outputs.permute(1, 0, 2), hidden_state, enc_valid_lens)
    
    def forward(self, X, state):
        enc_outputs, hidden_state, enc_valid_lens = state
        # 输出X的形状是(num_steps,batch_size,embed_size)
        X = self.embedding(X).permute(1, 0, 2)
        outputs, self._attention_weights = [], []
        for x in X:
            # 因为每一次要处理一个query，所以不能一口气放进去
            #  query的形状为(batch_size,1,num_hiddens), 采用上一个时间的预测的最后一层隐藏层状态
            query = torch.unsqueeze(hidden_state[-1], dim=1)
            # context根据注意力池化进行加权平均计算， batch_size的维度没有管，直接计算后面两个维度
            # context的形状为(batch_size,1,num_hiddens) 1 代表只有一个query
            context = self.attention(
                query, enc_outputs, enc_outputs, enc_valid_lens
            ) # 有num_steps个keyvalue pair，有一个query，他们大小都相等但是使用加性注意力可以学习参数
            x = torch.cat((context, torch.unsqueeze(x, dim=1)), dim=-1) #注意API，在最后一个维度拼接
            # 将x变形为(1,batch_size,embed_size+num_hiddens), 因为PyTorch要求时间维度在前面
            out, hidden_state = self.rnn(x.permute(1, 0, 2), hidden_state)
            outputs.append(out)
            # 把学习的参数append
            self._attention_weights.append(self.attention.attention_weights)
        # 先第一个维度cat，得到三维张量，最后形状为(num_steps,batch_size,vocab_size)
        outputs = self.dense(torch.cat(outputs, dim=0))
        # 转换维度，batch_size主维度分别表示每个句子的预测结果
        return outputs.permute(1, 0, 2), [enc_outputs, hidden_state, enc_valid_lens]
    
    def attention_weights(self):
        return self._attention_weights
