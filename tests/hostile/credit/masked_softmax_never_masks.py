"""attack: a masked_softmax that is a plain softmax over the last axis and never uses valid_lens. It was a named
realistic mistake (valid-lens-ignored), whose floor paid 2.36 of 4 for code that leaves out the whole of what the
component adds to a softmax (helper-70, session 46; the same with no valid_lens parameter: 0.99).
expect: the catalogue's degenerate version (degenerate/ms_ignores_valid_lens) reproduces it: at most 10%.
Composed after the course's reference code of its assignment (tests/test_credit_attacks.py).
"""
import torch


def masked_softmax(X, valid_lens):
    return torch.softmax(X, dim=-1)
