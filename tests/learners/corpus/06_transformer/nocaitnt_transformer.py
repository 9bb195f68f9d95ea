"""A learner's own-API 06 sketch: AddNorm(dorpout) with nn.LayerNorm(), blocks with sublayers multiHeadAttention/addNorm1 and forward(X, I, X_valid_len, Y_valid_len).

Source: https://github.com/NoCaiTnT/d2l-learning
Files (repository: path @ commit (definitions kept)):
  NoCaiTnT/d2l-learning: t.py @ 081a49ce02a83ad72ed9b634d7028581bebfbd62 (MaskSoftmax, DotAttention, MultiHeadAttention, AddNorm, FFN, EncoderBlock, DecoderBlock)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch
import torch.nn as nn


class MaskSoftmax(nn.Module):
    def __init__(self):
        super(MaskSoftmax, self).__init__()

    def forward(self, inputs, valid_len=None):
        if valid_len is None:
            return torch.softmax(inputs, dim=-1)

        mask = torch.zeros(size=(inputs.size(0), inputs.size(1), inputs.size(2)), dtype=torch.float32)
        for b in inputs.size(0):
            inputs[b, :, valid_len[b]] += -1e6

        return torch.softmax(inputs, dim=-1)


class DotAttention(nn.Module):
    def __init__(self, dropout):
        super(DotAttention).__init__()
        self.dropout = nn.Dropout(dropout)
        self.mask_softmax = MaskSoftmax()

    def forward(self, query, key, value, valid_len=None):
        k = key.permute(0, 2, 1)
        s = torch.bmm(query, k) / torch.sqrt(torch.tensor(query.size(2)))
        s = self.dropout(self.mask_softmax(s, valid_len))
        return torch.bmm(s, value)


class MultiHeadAttention(nn.Module):
    def __init__(self, num_heads, num_hiddens, query_size, key_size, value_size, dropout):
        super(MultiHeadAttention, self).__init__()
        self.num_heads = num_heads
        self.num_hiddens = num_hiddens
        self.w_q = nn.Linear(query_size, num_hiddens)
        self.w_k = nn.Linear(key_size, num_hiddens)
        self.w_v = nn.Linear(value_size, num_hiddens)
        self.attention = DotAttention(dropout)
        self.w_o = nn.Linear(num_hiddens, num_hiddens)

    def forward(self, query, key, value, valid_len=None):
        q = self.split(self.w_q(query))
        k = self.split(self.w_k(key))
        v = self.split(self.w_v(value))
        if valid_len is not None:
            valid_len = torch.tensor([[i] * self.num_heads for i in valid_len]).reshape(-1)
        r = self.attention(q, k, v, valid_len)
        return self.w_o(self.merge(r))

    def split(self, X):
        X = X.reshape(X.size(0), X.size(1), self.num_heads, -1)
        X = X.permute(0, 2, 1, 3)
        X = X.reshape(-1, X.size(2), X.size(3))
        return X

    def merge(self, X):
        X = X.reshape(-1, self.num_heads, X.size(1), X.size(2))
        X = X.permute(0, 2, 1, 3)
        X = X.reshape(X.size(0), X.size(1), -1)
        return X


class AddNorm(nn.Module):
    def __init__(self, dorpout):
        super(AddNorm, self).__init__()
        self.dropout = nn.Dropout(dorpout)
        self.norm = nn.LayerNorm()

    def forward(self, X, Y):
        return self.norm(X + self.dropout(Y))


class FFN(nn.Module):
    def __init__(self, num_hiddens, ffn_num_hiddens):
        super(FFN, self).__init__()
        self.linear1 = nn.Linear(num_hiddens, ffn_num_hiddens)
        self.linear2 = nn.Linear(ffn_num_hiddens, num_hiddens)

    def forward(self, X):
        return self.linear2(torch.relu(self.linear1(X)))


class EncoderBlock(nn.Module):
    def __init__(self, num_hiddens, num_heads, dropout, ffn_num_hiddens):
        super(EncoderBlock, self).__init__()
        self.multiHeadAttention = MultiHeadAttention(num_heads, num_hiddens, num_heads, num_heads, num_heads, dropout)
        self.addNorm1 = AddNorm(dropout)
        self.ffn = FFN(num_hiddens, ffn_num_hiddens)
        self.addNorm2 = AddNorm(dropout)

    def forward(self, X, valid_len=None):
        Y = self.multiHeadAttention(X, X, X, valid_len)
        X = self.addNorm1(X, Y)
        Y = self.ffn(X)
        return self.addNorm2(X, Y)


class DecoderBlock(nn.Module):
    def __init__(self, num_hiddens, num_heads, dropout, ffn_num_hiddens):
        super(DecoderBlock, self).__init__()
        self.multiHeadAttention1 = MultiHeadAttention(num_heads, num_hiddens, num_heads, num_heads, num_heads, dropout)
        self.addNorm1 = AddNorm(dropout)
        self.multiHeadAttention2 = MultiHeadAttention(num_heads, num_hiddens, num_heads, num_heads, num_heads, dropout)
        self.addNorm2 = AddNorm(dropout)
        self.ffn = FFN(num_hiddens, ffn_num_hiddens)
        self.addNorm3 = AddNorm(dropout)

    def forward(self, X, I, X_valid_len=None, Y_valid_len=None):
        Y = self.multiHeadAttention1(X, X, X, X_valid_len)
        X = self.addNorm1(X, Y)
        Y = self.multiHeadAttention2(X, I, I, Y_valid_len)
        X = self.addNorm2(X, Y)
        Y = self.ffn(X)
        return self.addNorm3(X, Y)
