"""
component: masked_softmax
ignores: valid_lens
bug: takes a plain softmax over the last axis and never uses valid_lens: the masking, the whole of what masked_softmax adds to a softmax, is left out, so the positions past each valid length get weight
"""
import torch
from torch import nn


def masked_softmax(X, valid_lens):
    return nn.functional.softmax(X, dim=-1)
