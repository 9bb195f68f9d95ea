"""
component: masked_softmax
bug: takes a plain softmax over the last axis and never uses valid_lens, so the positions past each valid length get weight
fix: mask first: give the positions at index >= valid length a large negative value (sequence_mask(..., value=-1e6)), then take the softmax over the last axis
family: valid-lens-ignored
symptom: valid length
ignores: valid_lens
"""
import torch
from torch import nn


def masked_softmax(X, valid_lens):
    return nn.functional.softmax(X, dim=-1)
