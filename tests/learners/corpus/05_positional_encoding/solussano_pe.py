"""A learner's PositionalEncoding whose third argument is named max_token_len (the contract's max_len).

Source: https://github.com/Solus-sano/d2l_note
Files (repository: path @ commit (definitions kept)):
  Solus-sano/d2l_note: 14_NLP/transformer/Transformer.py @ 239ded8e75a8c8eb227f63515a001a25f1ab6715 (PositionalEncoding)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `from MultiHead_attention import MultiHead_Attention, PositionWiseFFN, AddNorm`.
"""
# ruff: noqa  (a learner's code, kept verbatim)
import math
import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self,
            num_hiddens: int,
            dropout: float,
            max_token_len = 1000    
        ) :
        super().__init__()

        self.dropout = nn.Dropout(dropout)
        self.P = torch.zeros((1, max_token_len, num_hiddens))

        tmp_col = torch.arange(max_token_len,dtype=torch.float32).reshape(-1,1)
        tmp_row = torch.pow(10000, torch.arange(0,num_hiddens,2, dtype=torch.float32) / num_hiddens)
        tmp_map = tmp_col / tmp_row

        self.P[:,:,::2] = torch.sin(tmp_map)
        self.P[:,:,1::2] = torch.cos(tmp_map)

    def forward(self, X: torch.Tensor):
        return self.dropout(X + self.P[:,:X.shape[1],:].to(X.device))
