"""A learner's d2l 1.0 MultiHeadAttention(num_hiddens, num_heads, dropout, bias) on d2l.Module, transposes as methods, every call's weights appended to a list `self.attention_weights` (their answer to the section's exercise 1).

Source: https://github.com/yanruhai/diveintodl
Files (repository: path @ commit (definitions kept)):
  yanruhai/diveintodl: chap11/11.5 answer for 1.py @ 95c8acc7f150c1b622ad372c257e67ccb96604cc (MultiHeadAttention)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `from matplotlib import pyplot as plt`.
  (d2l.DotProductAttention, the book's, is the course's here; chap11/11.5 multi-head attention.py @ ac2780c58c74c9efa23900989f3f37e0166814e2 is the same class without the list.)
"""
# ruff: noqa  (a learner's code, kept verbatim)
import math
import torch
from torch import nn
from d2l import torch as d2l

class MultiHeadAttention(d2l.Module):  #@save
    """Multi-head attention."""
    def __init__(self, num_hiddens, num_heads, dropout, bias=False, **kwargs):
        super().__init__()
        self.num_heads = num_heads
        self.attention = d2l.DotProductAttention(dropout)
        self.W_q = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_k = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_v = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_o = nn.LazyLinear(num_hiddens, bias=bias)
        self.attention_weights=[]
        #三个W矩阵的维度相等

    def forward(self, queries, keys, values, valid_lens):
        # Shape of queries, keys, or values:
        # (batch_size, no. of queries or key-value pairs, num_hiddens)
        # Shape of valid_lens: (batch_size,) or (batch_size, no. of queries)
        # After transposing, shape of output queries, keys, or values:
        # (batch_size * num_heads, no. of queries or key-value pairs,num_hiddens / num_heads)
        queries = self.transpose_qkv(self.W_q(queries))#queries的原始维度2*4*100,W_q的输出维度是100,函数返回修改queries维度
        #为(10,4,20),为batch_size*heads,num_steps,num_hiddens/heads
        keys = self.transpose_qkv(self.W_k(keys))#进入该行函数之前，keys=(2,6,100),完成后(10,6,20)
        values = self.transpose_qkv(self.W_v(values))#进入之前(2,6,100),运行之后(10,6,20)

        if valid_lens is not None:
            # On axis 0, copy the first item (scalar or vector) for num_heads
            # times, then copy the next item, and so on
            valid_lens = torch.repeat_interleave(
                valid_lens, repeats=self.num_heads, dim=0)
        # Shape of output: (batch_size * num_heads, no. of queries,num_hiddens / num_heads)
        output = self.attention(queries, keys, values, valid_lens)#点积注意力,Attention(Q,K,V)=softmax(QK^T/sqrt(dk))V
        self.attention_weights.append(self.attention.attention_weights)
        # Shape of output_concat: (batch_size, no. of queries, num_hiddens)
        output_concat = self.transpose_output(output)
        return self.W_o(output_concat)

    def transpose_qkv(self, X):
        """Transposition for parallel computation of multiple attention heads."""
        # Shape of input X: (batch_size, no. of queries or key-value pairs,
        # num_hiddens). Shape of output X: (batch_size, no. of queries or
        # key-value pairs, num_heads, num_hiddens / num_heads)
        X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1)#queries变量进来的时候维度是(2,4,100),num_heads=5,-1自动计算维度为100/5=20,转成2,4,5,20
        # Shape of output X: (batch_size, num_heads, no. of queries or key-value
        # pairs, num_hiddens / num_heads)
        X = X.permute(0, 2, 1, 3)#转成(2,5,4,20)
        # Shape of output: (batch_size * num_heads, no. of queries or key-value
        # pairs, num_hiddens / num_heads)
        return X.reshape(-1, X.shape[2], X.shape[3])#返回10,4,20维度,保持最后两维


    def transpose_output(self, X):#进入时(10,4,20)
        """Reverse the operation of transpose_qkv."""
        X = X.reshape(-1, self.num_heads, X.shape[1], X.shape[2])#自动推导第一维度，(2,5, 4,20)
        X = X.permute(0, 2, 1, 3)#第二三维交换，(2,4,5,20)
        return X.reshape(X.shape[0], X.shape[1], -1)#(2,4,100)
