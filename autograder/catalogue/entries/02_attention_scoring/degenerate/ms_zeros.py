"""
component: masked_softmax
bug: returns zeros of X's shape and dtype, ignoring the scores and valid_lens
"""
import torch


def masked_softmax(X, valid_lens):
    return X * 0  # zeros that stay in the autograd graph
