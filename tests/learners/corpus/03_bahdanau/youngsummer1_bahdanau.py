"""A learner's Seq2SeqAttentionDecoder (the book's, with their own comments) on their own AttentionDecoder base class.

Source: https://github.com/youngsummer1/Dive-into-Deep-Learning
Files (repository: path @ commit (definitions kept)):
  youngsummer1/Dive-into-Deep-Learning: chapter10/Bahdanau_attention.py @ 43497d6f73706ad969995c8df551630c474ec9da (AttentionDecoder, Seq2SeqAttentionDecoder)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `from attention_scoring import AdditiveAttention` (their chapter10/attention_scoring.py AdditiveAttention is the book's; the course's stands in); `from chapter8_9.encoder_decoder import EncoderDecoder`.
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch
from torch import nn
from d2l import torch as d2l


class AttentionDecoder(d2l.Decoder):
    """带有注意力机制解码器的基本接口"""
    def __init__(self, **kwargs):
        super(AttentionDecoder, self).__init__(**kwargs)

    @property
    def attention_weights(self):
        raise NotImplementedError


class Seq2SeqAttentionDecoder(AttentionDecoder):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers,
                 dropout=0, **kwargs):
        super(Seq2SeqAttentionDecoder, self).__init__(**kwargs)
        # 长度都是num_hiddens，也可以用缩放点积注意力，用加性注意力是因为有可学习参数，效果会好点
        self.attention = AdditiveAttention(
            num_hiddens, num_hiddens, num_hiddens, dropout)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(
            embed_size + num_hiddens, num_hiddens, num_layers,
            dropout=dropout)
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens, *args):
        """
        :param enc_outputs：(编码器在所有时间步的最终层隐状态，上一时间步的编码器全层隐状态)
        :param enc_valid_lens: 编码器有效长度，排除在注意力池中填充词元
        """
        # outputs的形状为(num_steps,batch_size,num_hiddens).
        # hidden_state的形状为(num_layers，batch_size，num_hiddens)
        outputs, hidden_state = enc_outputs
        return (outputs.permute(1, 0, 2), hidden_state, enc_valid_lens)

    def forward(self, X, state):
        # enc_outputs的形状为(batch_size,num_steps,num_hiddens)，编码器在所有时间步的最终层隐状态，，将作为注意力的键和值
        # hidden_state的形状为(num_layers,batch_size,num_hiddens)，上一时间步的编码器全层隐状态
        enc_outputs, hidden_state, enc_valid_lens = state
        # 输出X的形状为(num_steps,batch_size,embed_size)
        X = self.embedding(X).permute(1, 0, 2)
        outputs, self._attention_weights = [], []
        for x in X:
            # query的形状为(batch_size,1,num_hiddens)
            # hidden_state[-1] --> 上一个时间步的最终层隐状态将用作查询
            # 加一个 num_query 的维度
            query = torch.unsqueeze(hidden_state[-1], dim=1)
            # context的形状为(batch_size,1,num_hiddens)
            context = self.attention(
                query, enc_outputs, enc_outputs, enc_valid_lens)
            # 在特征维度上连结 （注意力输出和输入嵌入都连结为循环神经网络解码器的输入）
            x = torch.cat((context, torch.unsqueeze(x, dim=1)), dim=-1)
            # 将x变形为(1,batch_size,embed_size+num_hiddens)
            # （输入input和state）
            out, hidden_state = self.rnn(x.permute(1, 0, 2), hidden_state)
            outputs.append(out)
            self._attention_weights.append(self.attention.attention_weights)
        # 全连接层变换后，outputs的形状为
        # (num_steps,batch_size,vocab_size)
        outputs = self.dense(torch.cat(outputs, dim=0))
        return outputs.permute(1, 0, 2), [enc_outputs, hidden_state,
                                          enc_valid_lens]

    @property
    def attention_weights(self):
        return self._attention_weights
