"""A learner's masked_softmax(X, valid_len) for self-attention: 1-D lengths become per-query lengths, queries past the length get 0 weight.

Source: https://github.com/quan-0811/neural_machine_translation_en_fr
Files (repository: path @ commit (definitions kept)):
  quan-0811/neural_machine_translation_en_fr: utils.py @ eedf2e22a61a9f92075c35ec4946e9681e265cd5 (mask_sequence, masked_softmax)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `from pathlib import Path`; `from vocab import Vocabulary`.
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch


def mask_sequence(X: torch.Tensor, valid_len: torch.Tensor, value=-1e6):
    num_steps = X.size(1)

    valid_len = valid_len.to(X.device)
    mask = torch.arange(num_steps, device=X.device).unsqueeze(0) < valid_len.unsqueeze(-1)

    X[~mask] = value
    return X


def masked_softmax(X: torch.Tensor, valid_len: torch.Tensor):
    shape = X.shape
    batch_size, num_steps = shape[0], shape[1]

    if valid_len.dim() == 1:
        valid_lens = torch.zeros(size=(batch_size, num_steps), dtype=torch.long)
        for i in range(batch_size):
            valid_lens[i, :valid_len[i]] = torch.tensor([valid_len[i]] * valid_len[i])
        valid_len = valid_lens

    valid_len = valid_len.to(X.device)
    X = mask_sequence(X, valid_len)

    X = torch.softmax(X, dim=-1)

    row_mask = valid_len > 0
    X = X * row_mask.unsqueeze(-1)

    return X
