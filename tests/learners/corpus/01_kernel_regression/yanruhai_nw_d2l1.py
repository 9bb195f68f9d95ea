"""A learner's nadaraya_watson in the d2l 1.0 form: nadaraya_watson(x_train, y_train, x_val, kernel), weights (keys, queries).

Source: https://github.com/yanruhai/diveintodl
Files (repository: path @ commit (definitions kept)):
  yanruhai/diveintodl: chap11/11.2 Attention Pooling by Similarity.py @ 241684bd2e8858f1230d7ce93a95c47bd95cbc5f (gaussian, nadaraya_watson)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `from matplotlib import pyplot as plt`.
"""
# ruff: noqa  (a learner's code, kept verbatim)
import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from d2l import torch as d2l


def gaussian(x):
    return torch.exp(-x**2 / 2)


def nadaraya_watson(x_train, y_train, x_val, kernel):
    dists = x_train.reshape((-1, 1)) - x_val.reshape((1, -1))#计算出x_train中每个点到x_val的每个点的距离
    #[[1, 1, 1],
    #[2, 2, 2],
    #[3, 3, 3]]  x_train会这样广播，x_val会沿x轴广播
    # Each column/row corresponds to each query/key
    k = kernel(dists).type(torch.float32)
    # Normalization over keys for each query
    attention_w = k / k.sum(0)#sum(0)沿着第0维计算，保持第0维维度，其他维度展平。这行在归一化
    y_hat = y_train@attention_w#矩阵乘法
    return y_hat, attention_w
