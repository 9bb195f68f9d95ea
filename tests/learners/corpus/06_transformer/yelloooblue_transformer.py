"""A learner's 06 typed out in one file from the book (own MultiHeadAttention etc. not kept: the course provides them).

Source: https://github.com/YelloooBlue/d2l_pytorch_scratch
Files (repository: path @ commit (definitions kept)):
  YelloooBlue/d2l_pytorch_scratch: DiveInDL/10-chapter_attention-mechanisms/10.7-transformer.py @ 06ef8690aa41518c410a340eecc2712cdbfc4e99 (PositionWiseFFN, AddNorm, EncoderBlock, TransformerEncoder, DecoderBlock, TransformerDecoder)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `import pandas as pd`; `import matplotlib.pyplot as plt`.
"""
# ruff: noqa  (a learner's code, kept verbatim)
import math
import torch
from torch import nn
import collections
from torch.utils import data


class PositionWiseFFN(nn.Module):
    """基于位置的前馈网络"""
    def __init__(self, ffn_num_input, ffn_num_hiddens, ffn_num_outputs,
                 **kwargs):
        super(PositionWiseFFN, self).__init__(**kwargs)
        self.dense1 = nn.Linear(ffn_num_input, ffn_num_hiddens)
        self.relu = nn.ReLU()
        self.dense2 = nn.Linear(ffn_num_hiddens, ffn_num_outputs)

    def forward(self, X):
        return self.dense2(self.relu(self.dense1(X)))


class AddNorm(nn.Module):
    """残差连接后进行层规范化"""
    def __init__(self, normalized_shape, dropout, **kwargs):
        super(AddNorm, self).__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, X, Y):
        return self.ln(self.dropout(Y) + X)


class EncoderBlock(nn.Module):
    """Transformer编码器块"""
    def __init__(self, key_size, query_size, value_size, num_hiddens,
                 norm_shape, ffn_num_input, ffn_num_hiddens, num_heads,
                 dropout, use_bias=False, **kwargs):
        super(EncoderBlock, self).__init__(**kwargs)
        self.attention = MultiHeadAttention(
            key_size, query_size, value_size, num_hiddens, num_heads, dropout,
            use_bias)
        self.addnorm1 = AddNorm(norm_shape, dropout)
        self.ffn = PositionWiseFFN(
            ffn_num_input, ffn_num_hiddens, num_hiddens)
        self.addnorm2 = AddNorm(norm_shape, dropout)

    def forward(self, X, valid_lens):
        Y = self.addnorm1(X, self.attention(X, X, X, valid_lens)) # Y的形状:(batch_size,num_steps,num_hiddens)
        return self.addnorm2(Y, self.ffn(Y))


class TransformerEncoder(Encoder):
    """Transformer编码器"""
    def __init__(self, vocab_size, key_size, query_size, value_size,
                 num_hiddens, norm_shape, ffn_num_input, ffn_num_hiddens,
                 num_heads, num_layers, dropout, use_bias=False, **kwargs):
        super(TransformerEncoder, self).__init__(**kwargs)
        self.num_hiddens = num_hiddens
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
        self.blks = nn.Sequential()
        for i in range(num_layers):
            self.blks.add_module("block"+str(i),
                EncoderBlock(key_size, query_size, value_size, num_hiddens,
                             norm_shape, ffn_num_input, ffn_num_hiddens,
                             num_heads, dropout, use_bias))

    def forward(self, X, valid_lens, *args):
        # 因为位置编码值在-1和1之间，
        # 因此嵌入值乘以嵌入维度的平方根进行缩放，
        # 然后再与位置编码相加。
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
        # X = self.pos_encoding(self.embedding(X)) # 我感觉用这个更合理，因为这里embedding是用N(0,1)初始化的, 而不是Xavier
        self.attention_weights = [None] * len(self.blks)
        for i, blk in enumerate(self.blks):
            X = blk(X, valid_lens)
            self.attention_weights[
                i] = blk.attention.attention.attention_weights
        return X


class DecoderBlock(nn.Module):
    """解码器中第i个块"""
    def __init__(self, key_size, query_size, value_size, num_hiddens,
                 norm_shape, ffn_num_input, ffn_num_hiddens, num_heads,
                 dropout, i, **kwargs):
        super(DecoderBlock, self).__init__(**kwargs)
        self.i = i
        self.attention1 = MultiHeadAttention(
            key_size, query_size, value_size, num_hiddens, num_heads, dropout)
        self.addnorm1 = AddNorm(norm_shape, dropout)
        self.attention2 = MultiHeadAttention(
            key_size, query_size, value_size, num_hiddens, num_heads, dropout)
        self.addnorm2 = AddNorm(norm_shape, dropout)
        self.ffn = PositionWiseFFN(ffn_num_input, ffn_num_hiddens,
                                   num_hiddens)
        self.addnorm3 = AddNorm(norm_shape, dropout)

    def forward(self, X, state):
        # state的形状为[enc_outputs, enc_valid_lens, [None]*num_layers]

        """
            X的形状为(batch_size,num_steps,num_hiddens)   
            - 训练阶段：（batch_size, target_num_steps,num_hiddens）
            - 预测阶段：（batch_size, 1, num_hiddens）
        """
        enc_outputs, enc_valid_lens = state[0], state[1]
        # enc_outputs的形状:(batch_size,num_steps,num_hiddens)

        # 训练阶段，输出序列的所有词元都在同一时间处理，
        # 因此state[2][self.i]初始化为None。
        # 预测阶段，输出序列是通过词元一个接着一个解码的，
        # 因此state[2][self.i]包含着直到当前时间步第i个块解码的输出表示

        # 已生成的词元的历史键值对（仅在「预测」阶段使用）
        """
            state[2][self.i] 存储第 i 个解码器层的历史键值对
            - 训练阶段：因为能看见所有的词元，所以forward只会被调用一次，缓存没有意义
            - 预测阶段：因为每次只会解码一个词元，所以forward会被调用多次，
              每次调用时，X的形状为(batch_size,1,num_hiddens)，
              随后以X作为Q，state[2][self.i]作为K和V，即查询当前词元和过去的所有词元，
        """
        
        if state[2][self.i] is None:
            key_values = X  # 初始时，key_values等于X
        else:
            key_values = torch.cat((state[2][self.i], X), axis=1)
        state[2][self.i] = key_values
        
        # 生成mask (仅在「训练」阶段使用)
        """
            在训练阶段，dec_valid_lens的形状为(batch_size,num_steps)，
            形如
            [[1, 2, ..., num_steps],
             [1, 2, ..., num_steps],
             ...]
            其中每一行是[1,2,...,num_steps]，表示解码器的每个时间步都可以看到之前的所有词元。
            在预测阶段，dec_valid_lens为None，因为后面没有词元需要掩蔽。
        """
        if self.training:
            batch_size, num_steps, _ = X.shape
            # dec_valid_lens的开头:(batch_size,num_steps),
            # 其中每一行是[1,2,...,num_steps]
            dec_valid_lens = torch.arange(
                1, num_steps + 1, device=X.device).repeat(batch_size, 1)
        else:
            dec_valid_lens = None

        # 自注意力
        X2 = self.attention1(X, key_values, key_values, dec_valid_lens)     # 掩蔽多头注意力
        Y = self.addnorm1(X, X2)
        # 编码器－解码器注意力。
        """
            对于一个样本来说，enc_outputs的内容始终是一样的，有点像之前RNN的context，
            它的形状是(batch_size,num_steps,num_hiddens)，
            它的含义是原始输入序列，在num_hiddens维度上经过嵌入和位置编码后的表示。
            
        """
        Y2 = self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens)   # “编码器－解码器”多头注意力
        Z = self.addnorm2(Y, Y2)
        return self.addnorm3(Z, self.ffn(Z)), state


class TransformerDecoder(AttentionDecoder):
    def __init__(self, vocab_size, key_size, query_size, value_size,
                 num_hiddens, norm_shape, ffn_num_input, ffn_num_hiddens,
                 num_heads, num_layers, dropout, **kwargs):
        super(TransformerDecoder, self).__init__(**kwargs)
        self.num_hiddens = num_hiddens
        self.num_layers = num_layers
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
        self.blks = nn.Sequential()
        for i in range(num_layers):
            self.blks.add_module("block"+str(i),
                DecoderBlock(key_size, query_size, value_size, num_hiddens,
                             norm_shape, ffn_num_input, ffn_num_hiddens,
                             num_heads, dropout, i))
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens, *args):
        return [enc_outputs, enc_valid_lens, [None] * self.num_layers]

    def forward(self, X, state):
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
        # X = self.pos_encoding(self.embedding(X)) # 我感觉用这个更合理，因为这里embedding是用N(0,1)初始化的, 而不是Xavier
        self._attention_weights = [[None] * len(self.blks) for _ in range (2)]
        for i, blk in enumerate(self.blks):
            X, state = blk(X, state)
            # 解码器自注意力权重
            self._attention_weights[0][
                i] = blk.attention1.attention.attention_weights
            # “编码器－解码器”自注意力权重
            self._attention_weights[1][
                i] = blk.attention2.attention.attention_weights
        return self.dense(X), state

    @property
    def attention_weights(self):
        return self._attention_weights
