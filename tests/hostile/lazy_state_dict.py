"""attack: lie about a module's state with lazy entries, which travel without a shape: AdditiveAttention's
state_dict() calls every entry an uninitialized (lazy) parameter, adds keys that are not strings and a
complex-typed lazy one, and 500 lazy buffers no contract names. A lazy entry binds by name without a
shape check (loading the course's weights gives it their shape), so it looks like a way to pass a binding
with nothing behind it, or to make the grader stumble over the keys.
expect: the keys that are not strings are left out, the contract's names bind, the junk does not (it is
left over, testing.Binding.extra). Loading the course's weights reaches the module's real layers, so
AdditiveAttention is graded on what its forward really does: it is correct, and every component gets full
marks (the course's suites charge the lazy claims to the naming test). The lie gains nothing.
"""
import math

import torch
from torch import nn


def sequence_mask(X, valid_len, value=0):
    keep = torch.arange(X.shape[1]).unsqueeze(0) < valid_len.unsqueeze(1)
    return X.masked_fill(~keep, value)


def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
    return nn.functional.softmax(X.reshape(shape), dim=-1)


class AdditiveAttention(nn.Module):
    def __init__(self, key_size, query_size, num_hiddens, dropout, **kwargs):
        super().__init__(**kwargs)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def state_dict(self, *args, **kwargs):
        state = {k: nn.UninitializedParameter() for k in super().state_dict(*args, **kwargs)}
        state[5] = nn.UninitializedBuffer()
        state[("W_k", 1)] = nn.UninitializedParameter(dtype=torch.complex128)
        state.update({f"junk{i}.weight": nn.UninitializedBuffer(dtype=torch.bool) for i in range(500)})
        return state

    def forward(self, queries, keys, values, valid_lens):
        queries, keys = self.W_q(queries), self.W_k(keys)
        scores = self.w_v(torch.tanh(queries.unsqueeze(2) + keys.unsqueeze(1))).squeeze(-1)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class DotProductAttention(nn.Module):
    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(queries.shape[-1])
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
