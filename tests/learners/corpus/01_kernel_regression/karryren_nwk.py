"""A learner's 01 written from scratch: the Gaussian-kernel pooling as nw_kernel_regression(q, k, v) returning y_hat alone, and an NWKernelRegression over (q, k, v) with torch.matmul.

Source: https://github.com/KarryRen/Karry-Studies-AI
Files (repository: path @ commit (definitions kept)):
  KarryRen/Karry-Studies-AI: LiMu/HandsAI/51_to_62_SequenceModel/AttentionMechanism/NW_kernel_regression.py @ 561c5164be482b3c803bfcebc2ae9af3fde468ec (nw_kernel_regression)
  KarryRen/Karry-Studies-AI: LiMu/HandsAI/51_to_62_SequenceModel/AttentionMechanism/paramed_NW_kernel_regression.py @ 561c5164be482b3c803bfcebc2ae9af3fde468ec (NWKernelRegression)
Licence: MIT (LICENSE in the repository, Copyright (c) 2024 Kai Ren).
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `import matplotlib.pyplot as plt` (both files).
  (Two files of the same learner, one component each, combined in the order of their timestamps.)
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch
from torch import nn


def nw_kernel_regression(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
    """ The Nadaraya-Watson kernel regression Function.

    :param q: query, shape=(n_q)
    :param k: key, shape=(n_k)
    :param v: value, shape=(n_v)

    return:
        output, shape=(n_q)

    NOTE: n_k must equal to n_v, which means (k, v) pair
    """

    # ---- Step 1. Repeat q to len(k), shape =  ---- #
    q_repeat = q.repeat_interleave(len(k)).reshape((-1, len(k)))  # shape=(n_q, n_k)

    # ---- Step 2. Compute the attention weights, use Gaussian Kernel ---- #
    attention_weights = nn.functional.softmax(-(q_repeat - k) ** 2 / 2, dim=1)  # shape=(n_q, n_k)
    print(attention_weights.shape)

    # ---- Step 3. Weighted the value and get the output ---- #
    output = torch.matmul(attention_weights, v)

    return output


class NWKernelRegression(nn.Module):
    """ The Nadaraya-Watson kernel regression with param. """

    def __init__(self, **kwargs):
        """ Init the model. """

        super().__init__(**kwargs)
        self.w = nn.Parameter(torch.rand((1,), requires_grad=True))
        self.attention_weights = None

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
        """ Forward function.

        :param q: the queries, shape=(n_q)
        :param k: the keys, shape=(n_k)
        :param v: the values, shape=(n_v)

        """

        # ---- Step 1. Repeat queries to (n_q, n_k)
        q_repeat = q.repeat_interleave(k.shape[-1]).reshape((-1, k.shape[-1]))

        # ---- Step 2. Compute the weight, shape=(n_q, n_k) ---- #
        attention_weights = nn.functional.softmax(-((q_repeat - k) * self.w) ** 2 / 2, dim=1)
        self.attention_weights = attention_weights

        # ---- Step 3. Weighted the value ---- #
        output = torch.matmul(attention_weights.unsqueeze(1), v.unsqueeze(-1)).reshape(-1)

        return output
