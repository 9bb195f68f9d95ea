"""A learner's NWKernelRegression (the book's maths, queries repeated then bmm) that keeps its weights in a local variable, never in self.attention_weights.

Source: https://github.com/wtffqbpl/language_proc_transformer
Files (repository: path @ commit (definitions kept)):
  wtffqbpl/language_proc_transformer: attention_mechanism/nadaraya_watson_regression.py @ 1feb79694c22c679424aac71e2ae31deea16665a (NWKernelRegression)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `import unittest`; `import matplotlib.pyplot as plt`; `import sys`; `from pathlib import Path`; `from utils.plot import show_heatmaps, plot`.
  The unnamed Nadaraya-Watson pooling inside the learner's unittest method (no nadaraya_watson function) is dropped with the tests.
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch
import torch.nn as nn


class NWKernelRegression(nn.Module):
    def __init__(self, **kwargs):
        super(NWKernelRegression, self).__init__(**kwargs)
        self.w = nn.Parameter(torch.rand(size=(1,), requires_grad=True))

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor):
        # The shape of the queries and attention_weights is (num_queries, num_key_values_pairs)
        queries = queries.repeat_interleave(keys.shape[1]).reshape((-1, keys.shape[1]))
        attention_weights = nn.functional.softmax(-((queries - keys) * self.w)**2 / 2, dim=1)

        # The shape of the value is (num_queries, num_key_values_pairs)
        return torch.bmm(attention_weights.unsqueeze(1), values.unsqueeze(-1)).reshape(-1)
