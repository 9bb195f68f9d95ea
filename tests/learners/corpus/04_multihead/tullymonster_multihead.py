"""A learner's 04: MultiHeadAttention(embed_dim, num_heads, dropout, bias, kdim, vdim) with q_proj..o_proj, name-mangled private transposes `__transpose_qkv`/`__transpose_o` as methods, on their own ScaledDotProductAttention(keys, values, queries, valid_len).

Source: https://github.com/TullyMonster/d2l-learning
Files (repository: path @ commit (definitions kept)):
  TullyMonster/d2l-learning: Attention/atten_scoring_func.py @ 74a1d1b436388b5c0aea9c333da46a256f2816f6 (masked_softmax, ScaledDotProductAttention)
  TullyMonster/d2l-learning: Attention/multihead_atten.py @ 74a1d1b436388b5c0aea9c333da46a256f2816f6 (MultiHeadAttention)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `from Attention.atten_scoring_func import ScaledDotProductAttention`.
  Kept `from typing import Optional` (the annotations use it) and atten_scoring_func.py's `from torch.nn import functional as F`.
  masked_softmax and ScaledDotProductAttention are the same learner's, from Attention/atten_scoring_func.py (multihead_atten.py imports the class); AdditiveAttention (02) dropped.
"""
# ruff: noqa  (a learner's code, kept verbatim)
from typing import Optional

import torch
from torch import Tensor, nn
from torch.nn import functional as F


def masked_softmax(atten_logits: Tensor, valid_len: Tensor) -> Tensor:
    """
    根据 valid_len 有效长度，在原始注意力分数 atten_logits 的 KEYS_NUM 维度上执行 Softmax 归一化

    :param atten_logits: 原始注意力分数，形状为：(BATCH_SIZE, QUERIES_NUM, KEYS_NUM)
    :param valid_len: 有效长度，形状为：(BATCH_SIZE,) 或 (BATCH_SIZE, QUERIES_NUM)

    :return: 注意力权重分布，形状与原始注意力分数相同
    """
    batch_size, queries_num, keys_num = atten_logits.shape
    # 转换形状为 (BATCH_SIZE * QUERIES_NUM,)
    valid_len = torch.repeat_interleave(valid_len, queries_num) if valid_len.dim() == 1 else valid_len.flatten()
    valid_len = valid_len.to(atten_logits.device)
    # 转换形状为 (BATCH_SIZE * QUERIES_NUM, KEYS_NUM)
    atten_logits = atten_logits.reshape(-1, keys_num)

    # 创建掩码，形状为 (BATCH_SIZE * QUERIES_NUM, KEYS_NUM)
    mask = torch.arange(0, keys_num, device=atten_logits.device).unsqueeze(dim=0) < valid_len.unsqueeze(dim=1)
    # 使用大负数（-1e6）为非目标位置掩码，使对应位置经 Softmax 后的权重趋近 0
    masked_atten_logits = torch.where(mask, atten_logits, torch.tensor(-1e6, device=atten_logits.device))

    return F.softmax(masked_atten_logits.reshape(batch_size, queries_num, keys_num), dim=-1)


class ScaledDotProductAttention(nn.Module):
    def __init__(self, dropout: float):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

        self.atten_weights: Optional[Tensor] = None  # (BATCH_SIZE, QUERIES_NUM, KEYS_NUM)

    def forward(self, keys: Tensor, values: Tensor, queries: Tensor, valid_len: Tensor) -> Tensor:
        """
        :param keys: 键，形状为 (BATCH_SIZE, KEYS_NUM, KEYS_DIM)
        :param values: 值，形状为 (BATCH_SIZE, KEYS_NUM, VALUES_DIM)
        :param queries: 查询，形状为 (BATCH_SIZE, QUERIES_NUM, QUERIES_DIM)，其中 QUERIES_DIM = KEYS_DIM
        :param valid_len: 有效长度，形状为 (BATCH_SIZE,) 或 (BATCH_SIZE, QUERIES_NUM)

        :return: 缩放点积注意力输出，形状为 (BATCH_SIZE, QUERIES_NUM, VALUES_DIM)
        """
        self.atten_weights = None
        _, _, q_k_dim = keys.shape

        logits = torch.bmm(  # (BATCH_SIZE, QUERIES_NUM, KEYS_NUM)
            queries,  # (BATCH_SIZE, QUERIES_NUM, q_k_dim)
            keys.transpose(1, 2)  # (BATCH_SIZE, KEYS_NUM, q_k_dim) -> (BATCH_SIZE, q_k_dim, KEYS_NUM)
        ) / (q_k_dim ** 0.5)

        attention_weights = masked_softmax(logits, valid_len)
        if not self.training: self.atten_weights = attention_weights

        return torch.bmm(self.dropout(attention_weights), values)


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = False,
                 kdim: Optional[int] = None, vdim: Optional[int] = None):
        """
        :param embed_dim: 模型的特征维度
        :param num_heads: 注意力头的数量（必须能整除 embed_dim）
        :param dropout: Dropout 概率
        :param bias: 是否在线性层中使用偏置项
        :param kdim: 键的维度
        :param vdim: 值的维度
        """
        super().__init__()

        if embed_dim <= 0 or num_heads <= 0: raise ValueError(f'{embed_dim=} 和 {num_heads=} 必须均大于 0')
        if embed_dim % num_heads != 0: raise ValueError(f'{embed_dim=} 必须能被 {num_heads=} 整除')

        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim

        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)  # 查询的线性投影层
        self.k_proj = nn.Linear(self.kdim, embed_dim, bias=bias)  # 键的线性投影层
        self.v_proj = nn.Linear(self.vdim, embed_dim, bias=bias)  # 值的线性投影层
        self.o_proj = nn.Linear(embed_dim, embed_dim, bias=bias)  # 输出的线性投影层

        self.atten_score = ScaledDotProductAttention(dropout)  # 使用缩放点积注意力
        self.atten_weights: Optional[Tensor] = None  # 用于可视化的注意力权重

    def forward(self, query: Tensor, key: Tensor, value: Tensor, valid_len: Tensor) -> Tensor:
        """
        :param query: 查询张量，形状为 (BATCH_SIZE, QUERIES_NUM, embed_dim)
        :param key: 键张量，形状为 (BATCH_SIZE, KEYS_NUM, kdim or embed_dim)
        :param value: 值张量，形状为 (BATCH_SIZE, KEYS_NUM, vdim or embed_dim)
        :param valid_len: 有效长度，形状为 (BATCH_SIZE,) 或 (BATCH_SIZE, QUERIES_NUM)
        :return: 输出张量，形状为 (BATCH_SIZE, QUERIES_NUM, embed_dim)
        """
        self.atten_weights = None

        q_proj = self.q_proj(query)  # (BATCH_SIZE, QUERIES_NUM, embed_dim)
        k_proj = self.k_proj(key)  # (BATCH_SIZE, KEYS_NUM, embed_dim)
        v_proj = self.v_proj(value)  # (BATCH_SIZE, KEYS_NUM, embed_dim)

        k_heads = self.__transpose_qkv(k_proj)  # (BATCH_SIZE * num_heads, KEYS_NUM, head_dim)
        v_heads = self.__transpose_qkv(v_proj)  # (BATCH_SIZE * num_heads, KEYS_NUM, head_dim)
        q_heads = self.__transpose_qkv(q_proj)  # (BATCH_SIZE * num_heads, QUERIES_NUM, head_dim)

        # (BATCH_SIZE,) -> (BATCH_SIZE * num_heads,) 或 (BATCH_SIZE, QUERIES_NUM) -> (BATCH_SIZE * num_heads, QUERIES_NUM)
        valid_len = torch.repeat_interleave(valid_len, repeats=self.num_heads, dim=0)

        attn_output = self.atten_score(k_heads, v_heads, q_heads, valid_len)

        # (BATCH_SIZE * num_heads, QUERIES_NUM, head_dim) -> (BATCH_SIZE, QUERIES_NUM, embed_dim)
        output_concat = self.__transpose_o(attn_output)

        if not self.training:
            # (BATCH_SIZE, num_heads, QUERIES_NUM, KEYS_NUM)
            self.atten_weights = (self.atten_score.atten_weights  # (BATCH_SIZE * num_heads, QUERIES_NUM, KEYS_NUM)
                                  .reshape(query.shape[0], self.num_heads, query.shape[1], key.shape[1]))

        return self.o_proj(output_concat)  # (BATCH_SIZE, QUERIES_NUM, embed_dim)

    def __transpose_qkv(self, x: Tensor) -> Tensor:
        """
        :param x: (BATCH_SIZE, QKV_NUM, embed_dim)
        :return: (BATCH_SIZE * num_heads, QKV_NUM, head_dim)
        """
        batch_size, qkv_num, _ = x.shape
        x = (x.reshape(batch_size, qkv_num, self.num_heads, self.head_dim)  # (BATCH_SIZE, QKV_NUM, num_heads, head_dim)
             .permute(0, 2, 1, 3)  # (BATCH_SIZE, num_heads, QKV_NUM, head_dim)
             .reshape(-1, qkv_num, self.head_dim))  # (batch_size * num_heads, qkv_num, head_dim)
        return x

    def __transpose_o(self, x: Tensor) -> Tensor:
        """
        :param x: (BATCH_SIZE * num_heads, QKV_NUM, head_dim)
        :return: (BATCH_SIZE, QKV_NUM, embed_dim)
        """
        batch_times_heads, qkv_num, _ = x.shape
        batch_size = batch_times_heads // self.num_heads
        x = (x.reshape(batch_size, self.num_heads, qkv_num, self.head_dim)  # (BATCH_SIZE, num_heads, QKV_NUM, head_dim)
             .permute(0, 2, 1, 3)  # (BATCH_SIZE, QKV_NUM, num_heads, head_dim)
             .reshape(batch_size, qkv_num, self.embed_dim))  # (BATCH_SIZE, QKV_NUM, embed_dim)
        return x
