"""A learner's NWKernelRegression (book maths, queries repeated then bmm) that stores `self.attention_weight` (singular).

Source: https://github.com/Leyusf/NetModel
Files (repository: path @ commit (definitions kept)):
  Leyusf/NetModel: Attention/NWKernelRegression.py @ 9d620f892dbe78dc9ed04a78ba3069dc62636b50 (NWKernelRegression)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch.nn
from torch import nn


class NWKernelRegression(nn.Module):
    def __init__(self, **kwards):
        super(NWKernelRegression, self).__init__(**kwards)
        self.w = nn.Parameter(torch.rand(1), requires_grad=True)

    def forward(self, q, k, v):
        # queries和attention_weights的形状为(查询个数，“键－值”对个数)
        q = q.repeat_interleave(k.shape[1]).reshape((-1, k.shape[1]))
        self.attention_weight = nn.functional.softmax(-0.5 * ((q-k) * self.w)**2, dim=1)
        return torch.bmm(self.attention_weight.unsqueeze(1), v.unsqueeze(-1)).reshape(-1)
