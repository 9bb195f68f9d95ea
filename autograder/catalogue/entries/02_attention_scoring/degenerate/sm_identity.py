"""
component: sequence_mask
bug: returns an unchanged copy of X: nothing is masked, valid_len and value are ignored
"""
import torch


def sequence_mask(X, valid_len, value=0):
    return X.clone()
