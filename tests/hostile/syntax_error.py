"""attack: (broken, not hostile) a submission with a syntax error.
expect: every component scores 0 with "`sequence_mask` is not defined ..." and the load note
"SyntaxError: ... (line N)"; the grader survives and grades the next submission normally.
"""
import torch


def sequence_mask(X, valid_len, value=0):
    keep = torch.arange(X.shape[1]).unsqueeze(0) < valid_len.unsqueeze(1)
    return X.masked_fill(~keep, value)


def masked_softmax(X, valid_lens)
    return torch.softmax(X, dim=-1)
