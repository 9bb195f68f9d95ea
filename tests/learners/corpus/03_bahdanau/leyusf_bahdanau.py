"""A learner's Seq2SeqAttentionDecoder with an `rnn=nn.GRU` option (LSTM branch for the query) and a print in __init__.

Source: https://github.com/Leyusf/NetModel
Files (repository: path @ commit (definitions kept)):
  Leyusf/NetModel: Attention/AttentionModel.py @ 9d620f892dbe78dc9ed04a78ba3069dc62636b50 (Seq2SeqAttentionDecoder)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `from Attention.AttentionScore import AdditiveAttention, ScaledDotProductAttention`; `from NModule.NModule import Decoder`.
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch
from torch import nn


class Seq2SeqAttentionDecoder(AttentionDecoder):

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0, rnn=nn.GRU, **kwargs):
        super(Seq2SeqAttentionDecoder, self).__init__(**kwargs)
        # 使用加性注意力，key，value的大小与RNN输出的应状态一致, 输出也是num_hiddens
        self.attention = AdditiveAttention(num_hiddens, num_hiddens, num_hiddens, dropout)
        # self.attention = ScaledDotProductAttention(dropout)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = rnn(embed_size + num_hiddens, num_hiddens, num_layers, dropout=dropout)
        self.dense = nn.Linear(num_hiddens, vocab_size)
        print("RNN Layer:", self.rnn)

    def init_state(self, enc_output, enc_valid_lens, *args):
        # outputs的形状为(batch_size，num_steps，num_hiddens).
        # hidden_state的形状为(num_layers，batch_size，num_hiddens)
        outputs, hidden_state = enc_output
        return outputs.permute(1, 0, 2), hidden_state, enc_valid_lens

    def forward(self, X, state):
        # state值得是输出，上一个隐状态和有效长度
        # enc_outputs的形状为(batch_size,num_steps,num_hiddens).
        # hidden_state的形状为(num_layers,batch_size,num_hiddens)
        enc_outputs, hidden_state, enc_valid_lens = state
        X = self.embedding(X).permute(1, 0, 2)
        outputs, self._attention_weights = [], []
        for x in X:
            # query的形状为(batch_size,1,num_hiddens)
            if isinstance(self.rnn, nn.LSTM):
                q = torch.unsqueeze(hidden_state[0][-1], dim=1)
            else:
                q = torch.unsqueeze(hidden_state[-1], dim=1)
            context = self.attention(q, enc_outputs, enc_outputs, enc_valid_lens)
            x_and_context = torch.cat((context, torch.unsqueeze(x, dim=1)), dim=-1)
            out, hidden_state = self.rnn(x_and_context.permute(1, 0, 2), hidden_state)
            outputs.append(out)
            self._attention_weights.append(self.attention.attention_weights)
        # 全连接层变换后，outputs的形状为 (num_steps,batch_size,vocab_size)
        outputs = self.dense(torch.cat(outputs, dim=0)).permute(1, 0, 2)
        return outputs, [enc_outputs, hidden_state, enc_valid_lens]

    @property
    def attention_weights(self):
        return self._attention_weights
