"""A learner's PositionalEncoding typed from the book (tab-indented).

Source: https://github.com/lucelujiaming/luceluDiveIntoDeepLearning
Files (repository: path @ commit (definitions kept)):
  lucelujiaming/luceluDiveIntoDeepLearning: ch10_attention-mechanisms/test_positional_encoding.py @ 763d815cb516571f78eecbb89ea5ec340d8cd5be (PositionalEncoding)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `import test_multihead_attention`; `import test_attention_cues`; `import my_plt`.
"""
# ruff: noqa  (a learner's code, kept verbatim)
import math
import torch
from torch import nn


class PositionalEncoding(nn.Module):
	"""位置编码"""
	def __init__(self, num_hiddens, dropout, max_len=1000):
		super(PositionalEncoding, self).__init__()
		self.dropout = nn.Dropout(dropout)
		# 创建⼀个⾜够⻓的P
		self.P = torch.zeros((1, max_len, num_hiddens))
		# 根据公式(10.6.2)计算(i / 10000^(2j/d))
		X = torch.arange(max_len, dtype=torch.float32).reshape(
			-1, 1) / torch.pow(10000, torch.arange(
			0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
		# 根据公式(10.6.2)设定元素。奇数项是cos，偶数项是sin。
		self.P[:, :, 0::2] = torch.sin(X)
		self.P[:, :, 1::2] = torch.cos(X)

	def forward(self, X):
		X = X + self.P[:, :X.shape[1], :].to(X.device)
		return self.dropout(X)
