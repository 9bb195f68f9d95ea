"""A learner's 06 in the d2l 1.0 form over six files: LazyLinear PositionWiseFFN(ffn_num_hiddens, ffn_num_outputs), TransformerEncoderBlock/TransformerDecoderBlock (d2l 1.0's names and signatures), train-only causal mask, P[0..T) at every call.

Source: https://github.com/omroot/d2l_pytorch
Files (repository: path @ commit (definitions kept)):
  omroot/d2l_pytorch: mylearnings/myd2l/omd2l/models/Transformer/PositionWiseFFN.py @ 13b35096c9d95b2bad61c746a70ec16d14e0f2f6 (PositionWiseFFN)
  omroot/d2l_pytorch: mylearnings/myd2l/omd2l/models/Transformer/AddNorm.py @ 13b35096c9d95b2bad61c746a70ec16d14e0f2f6 (AddNorm)
  omroot/d2l_pytorch: mylearnings/myd2l/omd2l/models/Transformer/TransformerEncoderBlock.py @ 13b35096c9d95b2bad61c746a70ec16d14e0f2f6 (TransformerEncoderBlock)
  omroot/d2l_pytorch: mylearnings/myd2l/omd2l/models/Transformer/TransformerEncoder.py @ 13b35096c9d95b2bad61c746a70ec16d14e0f2f6 (TransformerEncoder)
  omroot/d2l_pytorch: mylearnings/myd2l/omd2l/models/Transformer/TransformerDecoderBlock.py @ 13b35096c9d95b2bad61c746a70ec16d14e0f2f6 (TransformerDecoderBlock)
  omroot/d2l_pytorch: mylearnings/myd2l/omd2l/models/Transformer/TransformerDecoder.py @ 13b35096c9d95b2bad61c746a70ec16d14e0f2f6 (TransformerDecoder)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `from omd2l.models.Transformer import PositionWiseFFN`; `from omd2l.models.Transformer import AddNorm`; `from omd2l.models.Transformer import MultiHeadAttention`; `from omd2l.models.base import Encoder`; `from omd2l.models.Transformer import PositionalEncoding`; `from omd2l.models.Transformer import TransformerEncoderBlock`; `from omd2l.models.base import AttentionDecoder`; `from omd2l.models.Transformer import TransformerDecoderBlock`.
  (omd2l is the learner's own copy of d2l 1.0: its Encoder and AttentionDecoder are the book's, the course provides them; its MultiHeadAttention(num_hiddens, num_heads, dropout, bias) and PositionalEncoding are d2l 1.0's, the course's stand in. The six classes are the same learner's, one file each, combined here in the order of the package's __init__.py.)
"""
# ruff: noqa  (a learner's code, kept verbatim)
import math
import torch
from torch import nn


class PositionWiseFFN(nn.Module):
    """The positionwise feed-forward network."""
    def __init__(self,
                 ffn_num_hiddens,
                 ffn_num_outputs):
        super().__init__()
        self.dense1 = nn.LazyLinear(ffn_num_hiddens)
        self.relu = nn.ReLU()
        self.dense2 = nn.LazyLinear(ffn_num_outputs)

    def forward(self, X):
        return self.dense2(self.relu(self.dense1(X)))


class AddNorm(nn.Module):
    """The residual connection followed by layer normalization."""
    def __init__(self, norm_shape, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(norm_shape)

    def forward(self, X, Y):
        return self.ln(self.dropout(Y) + X)


class TransformerEncoderBlock(nn.Module):
    """The Transformer encoder block."""
    def __init__(self,
                 num_hiddens,
                 ffn_num_hiddens,
                 num_heads,
                 dropout,
                 use_bias=False):
        super().__init__()
        self.attention = MultiHeadAttention(num_hiddens,
                                            num_heads,
                                            dropout,
                                            use_bias)
        self.addnorm1 = AddNorm(num_hiddens, dropout)
        self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
        self.addnorm2 = AddNorm(num_hiddens, dropout)

    def forward(self, X, valid_lens):
        Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))
        return self.addnorm2(Y, self.ffn(Y))


class TransformerEncoder(Encoder):
    """The Transformer encoder."""
    def __init__(self,
                 vocab_size,
                 num_hiddens,
                 ffn_num_hiddens,
                 num_heads,
                 num_blks,
                 dropout,
                 use_bias=False):
        super().__init__()
        self.num_hiddens = num_hiddens
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
        self.blks = nn.Sequential()
        for i in range(num_blks):
            self.blks.add_module("block"+str(i),
                                 TransformerEncoderBlock(num_hiddens=num_hiddens,
                                                         ffn_num_hiddens=ffn_num_hiddens,
                                                         num_heads=num_heads,
                                                         dropout=dropout,
                                                         use_bias=use_bias))

    def forward(self, X, valid_lens):
        # Since positional encoding values are between -1 and 1, the embedding
        # values are multiplied by the square root of the embedding dimension
        # to rescale before they are summed up
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
        self.attention_weights = [None] * len(self.blks)
        for i, blk in enumerate(self.blks):
            X = blk(X, valid_lens)
            self.attention_weights[
                i] = blk.attention.attention.attention_weights
        return X


class TransformerDecoderBlock(nn.Module):
    # The i-th block in the Transformer decoder
    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, i):
        super().__init__()
        self.i = i
        self.attention1 = MultiHeadAttention(num_hiddens, num_heads,
                                                 dropout)
        self.addnorm1 = AddNorm(num_hiddens, dropout)
        self.attention2 = MultiHeadAttention(num_hiddens, num_heads,
                                                 dropout)
        self.addnorm2 = AddNorm(num_hiddens, dropout)
        self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
        self.addnorm3 = AddNorm(num_hiddens, dropout)

    def forward(self, X, state):
        enc_outputs, enc_valid_lens = state[0], state[1]
        # During training, all the tokens of any output sequence are processed
        # at the same time, so state[2][self.i] is None as initialized. When
        # decoding any output sequence token by token during prediction,
        # state[2][self.i] contains representations of the decoded output at
        # the i-th block up to the current time step
        if state[2][self.i] is None:
            key_values = X
        else:
            key_values = torch.cat((state[2][self.i], X), dim=1)
        state[2][self.i] = key_values
        if self.training:
            batch_size, num_steps, _ = X.shape
            # Shape of dec_valid_lens: (batch_size, num_steps), where every
            # row is [1, 2, ..., num_steps]
            dec_valid_lens = torch.arange(
                1, num_steps + 1, device=X.device).repeat(batch_size, 1)
        else:
            dec_valid_lens = None
        # Self-attention
        X2 = self.attention1(X, key_values, key_values, dec_valid_lens)
        Y = self.addnorm1(X, X2)
        # Encoder-decoder attention. Shape of enc_outputs:
        # (batch_size, num_steps, num_hiddens)
        Y2 = self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens)
        Z = self.addnorm2(Y, Y2)
        return self.addnorm3(Z, self.ffn(Z)), state


class TransformerDecoder (AttentionDecoder):
    def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks, dropout):
        super().__init__()
        self.num_hiddens = num_hiddens
        self.num_blks = num_blks
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
        self.blks = nn.Sequential()
        for i in range(num_blks):
            self.blks.add_module("block"+str(i),
                                 TransformerDecoderBlock(num_hiddens, ffn_num_hiddens, num_heads, dropout, i))
        self.dense = nn.LazyLinear(vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens):
        return [enc_outputs, enc_valid_lens, [None] * self.num_blks]

    def forward(self, X, state):
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
        self._attention_weights = [[None] * len(self.blks) for _ in range (2)]
        for i, blk in enumerate(self.blks):
            X, state = blk(X, state)
            # Decoder self-attention weights
            self._attention_weights[0][i] = blk.attention1.attention.attention_weights
            # Encoder-decoder attention weights
            self._attention_weights[1][i] = blk.attention2.attention.attention_weights
        return self.dense(X), state

    @property
    def attention_weights(self):
        return self._attention_weights
