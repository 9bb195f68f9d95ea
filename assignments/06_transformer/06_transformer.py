# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Assignment 06: The Transformer
#
# The Transformer (Vaswani et al., 2017) is an encoder-decoder built from attention alone: no
# recurrence, no convolution. You now have all of its parts (multi-head attention from
# assignment 04, positional encoding from assignment 05); this assignment assembles them, then
# trains the model on the date-translation task of assignment 03 (`thursday , march 3rd , 1994`
# → `1994-03-03`) and looks inside it.
#
# You implement six components (24 points):
#
# | component | points | what it is |
# |---|---|---|
# | `PositionWiseFFN` | 2 | the two-layer MLP applied at every position |
# | `AddNorm` | 2 | residual connection + layer normalization |
# | `EncoderBlock` | 4 | self-attention and FFN, each wrapped in `AddNorm` |
# | `TransformerEncoder` | 4 | scaled embedding + positional encoding + a stack of encoder blocks |
# | `DecoderBlock` | 6 | causal self-attention with a cache, encoder-decoder attention, FFN |
# | `TransformerDecoder` | 6 | the decoder stack, positions that follow the cache, output layer |
#
# Given in `attention_support`: the interfaces `Encoder`, `AttentionDecoder`, `EncoderDecoder`;
# the course's `MultiHeadAttention` and `PositionalEncoding`; the date data and the training
# toolkit (`load_data_dates`, `train_seq2seq`, `predict_seq2seq`, `evaluate`, plotting helpers).
#
# Our decoder deliberately differs from the book's in **two places**; section 8 explains both,
# and the tests check both.
#
# **How this notebook is graded.** In each solution cell, replace the `raise NotImplementedError()`
# lines by your code; keep names, signatures, docstrings and the attribute names listed in each section (the grader copies reference weights into your modules by
# parameter name). Self-check cells run the public tests; the grader runs hidden tests on your
# definitions only, never on the training and plots at the end.
#
# Shapes: `B` batch, `T` steps, `d` = `num_hiddens`, `h` heads, `V` vocabulary size.

# %%
import math
import os
import time
from typing import Any, Optional

import matplotlib.pyplot as plt
import torch
from torch import nn

from autograder.selfcheck import check
from attention_support import (AttentionDecoder, Encoder, EncoderDecoder, MultiHeadAttention,
                               PositionalEncoding, Timer, cross_attention_matrix, evaluate,
                               load_data_dates, make_test_pairs, plot_alignment, plot_losses,
                               predict_seq2seq, set_seed, show_heatmaps, tr, train_seq2seq)

os.makedirs("figures", exist_ok=True)


def same_colour_scale(fig: Any, vmax: float = 1.0) -> None:
    """Give every heatmap panel of `fig` (and its colour bar) the same scale 0..vmax."""
    for ax in fig.axes:
        for image in ax.images:
            image.set_clim(0, vmax)

# %% [markdown]
# ## 1. The architecture
#
# ```
#          source tokens                                   target tokens (shifted right: <bos> y1 y2 ...)
#               |                                                   |
#   embedding * sqrt(d) + P                             embedding * sqrt(d) + P
#               |                                                   |
#   +-----------v-------------+  x n                    +-----------v-------------+  x n
#   | multi-head self-attn    |                         | causal multi-head       |
#   | add & norm              |                         |   self-attention        |
#   | position-wise FFN       |    encoder outputs      | add & norm              |
#   | add & norm              | ----------------------> | encoder-decoder attn    |
#   +-------------------------+   (keys and values)     | add & norm              |
#                                                       | position-wise FFN       |
#                                                       | add & norm              |
#                                                       +-------------------------+
#                                                                   |
#                                                          linear layer -> logits over the vocabulary
# ```
#
# - The **encoder** is a stack of $n$ identical blocks. Each has two *sublayers*: multi-head
#   self-attention (queries, keys and values are all the block's input sequence) and a
#   position-wise feed-forward network. Every sublayer is wrapped in a residual connection
#   followed by layer normalization: the block computes $\operatorname{LayerNorm}(\mathbf x + \operatorname{Sublayer}(\mathbf x))$.
#   Input and output of every block are `(B, T, d)`, which is what makes the residual sum and the
#   stacking possible.
# - The **decoder** blocks have a third sublayer in the middle. The first one is self-attention
#   over the target tokens, made *causal*: position $p$ may only look at positions $0..p$, because
#   at prediction time the later tokens do not exist yet. The second is *encoder-decoder
#   attention*: the queries come from the decoder, the keys and values are the encoder outputs
#   (this is the alignment that Bahdanau attention computed in assignment 03). The third is the
#   FFN. An output layer turns the last block's output into logits over the target vocabulary.
#
# We build the model bottom-up: the two small sublayer helpers, the encoder, the decoder.

# %% [markdown]
# ## 2. Position-wise feed-forward network
#
# The FFN transforms every position separately with the *same* two-layer MLP:
#
# $$\operatorname{FFN}(\mathbf x) = \mathbf W_2 \max(0, \mathbf W_1 \mathbf x + \mathbf b_1) + \mathbf b_2 .$$
#
# `nn.Linear` acts on the last axis, so an input `(B, T, ffn_num_input)` needs no reshaping: each of
# the `B*T` positions goes through the MLP on its own. Attributes: `dense1 =
# nn.Linear(ffn_num_input, ffn_num_hiddens)`, `relu`, `dense2 = nn.Linear(ffn_num_hiddens, ffn_num_outputs)`.
# Attention mixes information *between* positions; the FFN then processes each position's mixture.

# %% nbgrader={"grade": false, "grade_id": "PositionWiseFFN", "locked": false, "schema_version": 3, "solution": true, "task": false}
class PositionWiseFFN(nn.Module):
    """The same two-layer MLP applied at every position: dense2(relu(dense1(X)))."""

    def __init__(self, ffn_num_input: int, ffn_num_hiddens: int, ffn_num_outputs: int,
                 **kwargs: object) -> None:
        ### BEGIN SOLUTION
        super().__init__(**kwargs)
        self.dense1 = nn.Linear(ffn_num_input, ffn_num_hiddens)
        self.relu = nn.ReLU()
        self.dense2 = nn.Linear(ffn_num_hiddens, ffn_num_outputs)
        ### END SOLUTION

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        """X (B, T, ffn_num_input) -> (B, T, ffn_num_outputs)."""
        ### BEGIN SOLUTION
        return self.dense2(self.relu(self.dense1(X)))
        ### END SOLUTION

# %% nbgrader={"grade": false, "grade_id": "check_PositionWiseFFN", "locked": true, "schema_version": 3, "solution": false, "task": false}
check("PositionWiseFFN")

# %% [markdown]
# Because the weights are shared across positions, equal inputs at different positions give equal
# outputs:

# %%
ffn = PositionWiseFFN(4, 4, 8)
ffn.eval()
with torch.no_grad():
    out = ffn(torch.ones((2, 3, 4)))
print("output shape:", tuple(out.shape), "| all 6 positions equal:", bool((out == out[0, 0]).all()))

# %% nbgrader={"grade": true, "grade_id": "test_PositionWiseFFN", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Graded cell for PositionWiseFFN (2 points): the autograder scores this component in an
# isolated process with hidden tests, in addition to the public tests that check() runs here.
check("PositionWiseFFN")

# %% [markdown]
# ## 3. Residual connection and layer normalization
#
# `AddNorm(normalized_shape, dropout)` wraps a sublayer: given the sublayer's input `X` and its
# output `Y = sublayer(X)`, it returns
#
# $$\operatorname{AddNorm}(\mathbf X, \mathbf Y) = \operatorname{LayerNorm}(\mathbf X + \operatorname{dropout}(\mathbf Y)).$$
#
# Dropout acts on the sublayer's output only, before the residual sum; the normalization comes
# last. This is the original *post-norm* arrangement (many later models normalize the sublayer's
# input instead, "pre-norm"; we follow the book and the paper). Attributes: `dropout`, and
# `ln = nn.LayerNorm(normalized_shape)`.
#
# **Layer norm, not batch norm.** Batch normalization standardizes each *feature* with the mean
# and variance over the batch (and, for sequences, over all positions). Layer normalization
# standardizes each *position's* feature vector with its own mean and variance over the $d$
# features, then applies a learned scale and shift. For sequence models layer norm is the better
# fit: it does not depend on which other sequences share the batch, nor on how much padding they
# contain, it works the same for a batch of one sequence (step-by-step decoding), and it behaves
# identically in training and evaluation (no running statistics). The demo below normalizes the
# same two-sample batch both ways: each row sums to zero under layer norm, each column under
# batch norm.

# %%
ln, bn = nn.LayerNorm(2), nn.BatchNorm1d(2)
X = torch.tensor([[1, 2], [2, 3]], dtype=torch.float32)
with torch.no_grad():
    print("layer norm (per row):\n", ln(X), "\nbatch norm (per column, training mode):\n", bn(X))

# %% nbgrader={"grade": false, "grade_id": "AddNorm", "locked": false, "schema_version": 3, "solution": true, "task": false}
class AddNorm(nn.Module):
    """Residual connection followed by layer normalization: ln(dropout(Y) + X)."""

    def __init__(self, normalized_shape: Any, dropout: float, **kwargs: object) -> None:
        ### BEGIN SOLUTION
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(normalized_shape)
        ### END SOLUTION

    def forward(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        """X, Y (B, T, d) -> (B, T, d)."""
        ### BEGIN SOLUTION
        return self.ln(self.dropout(Y) + X)
        ### END SOLUTION

# %% nbgrader={"grade": false, "grade_id": "check_AddNorm", "locked": true, "schema_version": 3, "solution": false, "task": false}
check("AddNorm")

# %% nbgrader={"grade": true, "grade_id": "test_AddNorm", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Graded cell for AddNorm (2 points): the autograder scores this component in an
# isolated process with hidden tests, in addition to the public tests that check() runs here.
check("AddNorm")

# %% [markdown]
# ## 4. The encoder block
#
# `EncoderBlock` chains the two sublayers:
#
# $$\mathbf Y = \operatorname{AddNorm}_1\big(\mathbf X, \operatorname{MultiHead}(\mathbf X, \mathbf X, \mathbf X)\big), \qquad
# \text{output} = \operatorname{AddNorm}_2\big(\mathbf Y, \operatorname{FFN}(\mathbf Y)\big).$$
#
# The self-attention gets the source's `valid_lens`, so no position attends to padding.
# Attributes: `attention = MultiHeadAttention(key_size, query_size, value_size, num_hiddens,
# num_heads, dropout, use_bias)`, `addnorm1`, `ffn = PositionWiseFFN(ffn_num_input, ffn_num_hiddens,
# num_hiddens)`, `addnorm2` (both `AddNorm(norm_shape, dropout)`). The output has the shape of the input.

# %% nbgrader={"grade": false, "grade_id": "EncoderBlock", "locked": false, "schema_version": 3, "solution": true, "task": false}
class EncoderBlock(nn.Module):
    """Multi-head self-attention and a position-wise FFN, each wrapped in AddNorm."""

    def __init__(self, key_size: int, query_size: int, value_size: int, num_hiddens: int,
                 norm_shape: Any, ffn_num_input: int, ffn_num_hiddens: int, num_heads: int,
                 dropout: float, use_bias: bool = False, **kwargs: object) -> None:
        ### BEGIN SOLUTION
        super().__init__(**kwargs)
        self.attention = MultiHeadAttention(key_size, query_size, value_size, num_hiddens,
                                            num_heads, dropout, use_bias)
        self.addnorm1 = AddNorm(norm_shape, dropout)
        self.ffn = PositionWiseFFN(ffn_num_input, ffn_num_hiddens, num_hiddens)
        self.addnorm2 = AddNorm(norm_shape, dropout)
        ### END SOLUTION

    def forward(self, X: torch.Tensor, valid_lens: Optional[torch.Tensor]) -> torch.Tensor:
        """X (B, T, num_hiddens) -> (B, T, num_hiddens)."""
        ### BEGIN SOLUTION
        Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))
        return self.addnorm2(Y, self.ffn(Y))
        ### END SOLUTION

# %% nbgrader={"grade": false, "grade_id": "check_EncoderBlock", "locked": true, "schema_version": 3, "solution": false, "task": false}
check("EncoderBlock")

# %% nbgrader={"grade": true, "grade_id": "test_EncoderBlock", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
# Graded cell for EncoderBlock (4 points): the autograder scores this component in an
# isolated process with hidden tests, in addition to the public tests that check() runs here.
check("EncoderBlock")

# %% [markdown]
# ## 5. The encoder
#
# `TransformerEncoder` embeds the source tokens, adds the positional encoding and runs
# `num_layers` encoder blocks. Attributes: `embedding = nn.Embedding(vocab_size, num_hiddens)`,
# `pos_encoding = PositionalEncoding(num_hiddens, dropout)`, `blks` (an `nn.Sequential` of
# `EncoderBlock`s named `block0`, `block1`, ...; an `nn.ModuleList` is fine too) and
# `attention_weights`, a list whose entry `i` is block `i`'s `(B*h, T, T)` self-attention weights
# from the last forward call (read them from `blk.attention.attention.attention_weights`).
#
# **Why multiply the embeddings by $\sqrt d$?** The positional encodings have entries in $[-1, 1]$,
# so each row of $\mathbf P$ has norm $\sqrt{d/2}$, regardless of $d$. Embedding tables are commonly
# initialized (or, in the paper, tied to the output layer) with entries of size about
# $1/\sqrt d$, i.e. rows of norm about 1. Adding $\mathbf P$ to such embeddings would drown the
# token identity in position information. Scaling the embeddings by $\sqrt d$ first puts both on a
# comparable footing: `X = pos_encoding(embedding(X) * math.sqrt(num_hiddens))`.

# %% nbgrader={"grade": false, "grade_id": "TransformerEncoder", "locked": false, "schema_version": 3, "solution": true, "task": false}
class TransformerEncoder(Encoder):
    """Embedding scaled by sqrt(num_hiddens), positional encoding, then num_layers EncoderBlocks."""

    def __init__(self, vocab_size: int, key_size: int, query_size: int, value_size: int,
                 num_hiddens: int, norm_shape: Any, ffn_num_input: int, ffn_num_hiddens: int,
                 num_heads: int, num_layers: int, dropout: float, use_bias: bool = False,
                 **kwargs: object) -> None:
        ### BEGIN SOLUTION
        super().__init__(**kwargs)
        self.num_hiddens = num_hiddens
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
        self.blks = nn.Sequential()
        for i in range(num_layers):
            self.blks.add_module(
                "block" + str(i),
                EncoderBlock(key_size, query_size, value_size, num_hiddens, norm_shape,
                             ffn_num_input, ffn_num_hiddens, num_heads, dropout, use_bias))
        self.attention_weights: list[Optional[torch.Tensor]] = [None] * num_layers
        ### END SOLUTION

    def forward(self, X: torch.Tensor, valid_lens: Optional[torch.Tensor],
                *args: Any) -> torch.Tensor:
        """X (B, T) token ids -> (B, T, num_hiddens)."""
        ### BEGIN SOLUTION
        # Scale the embeddings up so that they are not drowned by the encodings in [-1, 1].
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
        self.attention_weights = [None] * len(self.blks)
        for i, blk in enumerate(self.blks):
            X = blk(X, valid_lens)
            self.attention_weights[i] = blk.attention.attention.attention_weights  # (B*h, T, T)
        return X
        ### END SOLUTION

# %% nbgrader={"grade": false, "grade_id": "check_TransformerEncoder", "locked": true, "schema_version": 3, "solution": false, "task": false}
check("TransformerEncoder")

# %%
encoder = TransformerEncoder(200, 24, 24, 24, 24, [24], 24, 48, 8, 2, 0.5)
encoder.eval()
valid_lens = torch.tensor([3, 2])
print("encoder output:", tuple(encoder(torch.ones((2, 100), dtype=torch.long), valid_lens).shape))
print("self-attention weights per block:", [tuple(w.shape) for w in encoder.attention_weights])

# %% nbgrader={"grade": true, "grade_id": "test_TransformerEncoder", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
# Graded cell for TransformerEncoder (4 points): the autograder scores this component in an
# isolated process with hidden tests, in addition to the public tests that check() runs here.
check("TransformerEncoder")

# %% [markdown]
# ## 6. The decoder block, with a cache
#
# A decoder block sees target positions in two situations:
#
# - **training** (and scoring a given target): the whole shifted target `<bos> y1 ... y_{T-1}`
#   arrives at once, `X` is `(B, T, d)`;
# - **prediction**: tokens are generated one at a time; at step $t$ only the new token arrives,
#   `X` is `(B, 1, d)`, and the block must remember what it saw at steps $0..t-1$.
#
# The memory lives in the decoder state `state = [enc_outputs, enc_valid_lens, cache]`, where
# `cache = state[2]` holds one entry per block: `cache[i]` is `None` (nothing seen yet) or the
# `(B, t, d)` **inputs** that block `i` received so far. The block concatenates the new inputs to
# its cache, stores the result back in `state[2][self.i]`, and uses it as the keys and values of
# its self-attention:
#
# ```
# key_values = X if cache[i] is None else cat(cache[i], X)     # (B, t + T, d)
# ```
#
# Caching the inputs is exact because of causality: the input of block $i$ at position $p$ depends
# only on positions $0..p$, so it never changes when later tokens arrive.
#
# **The causal mask, in every mode.** The new token at position $p = t + j$ (the $j$-th of the `T`
# new ones) may attend to exactly the positions $0..p$ of `key_values`: the $t$ cached ones and the
# new ones up to itself. `masked_softmax` already supports one valid length *per query* (a
# `(B, Q)` tensor), so the mask is
#
# ```
# dec_valid_lens[b] = [t + 1, t + 2, ..., t + T]               # (B, T), the same for every b
# ```
#
# With an empty cache ($t = 0$) this is the familiar lower-triangular mask; for one new token it is
# `[t + 1]` (everything cached plus itself); for a chunk of tokens it is in between. Apply it
# always, whether the block is in training or evaluation mode.
#
# Then the block attends to the encoder (`attention2(Y, enc_outputs, enc_outputs, enc_valid_lens)`,
# so padding in the source is ignored) and applies the FFN, each sublayer followed by its `AddNorm`.
# Attributes: `i` (the block's index), `attention1`, `addnorm1`, `attention2`, `addnorm2`, `ffn`,
# `addnorm3`; both attentions are `MultiHeadAttention(key_size, query_size, value_size,
# num_hiddens, num_heads, dropout)`.

# %% nbgrader={"grade": false, "grade_id": "DecoderBlock", "locked": false, "schema_version": 3, "solution": true, "task": false}
class DecoderBlock(nn.Module):
    """Causal self-attention over cache + X, cross-attention to the encoder, then an FFN."""

    def __init__(self, key_size: int, query_size: int, value_size: int, num_hiddens: int,
                 norm_shape: Any, ffn_num_input: int, ffn_num_hiddens: int, num_heads: int,
                 dropout: float, i: int, **kwargs: object) -> None:
        ### BEGIN SOLUTION
        super().__init__(**kwargs)
        self.i = i
        self.attention1 = MultiHeadAttention(key_size, query_size, value_size, num_hiddens,
                                             num_heads, dropout)
        self.addnorm1 = AddNorm(norm_shape, dropout)
        self.attention2 = MultiHeadAttention(key_size, query_size, value_size, num_hiddens,
                                             num_heads, dropout)
        self.addnorm2 = AddNorm(norm_shape, dropout)
        self.ffn = PositionWiseFFN(ffn_num_input, ffn_num_hiddens, num_hiddens)
        self.addnorm3 = AddNorm(norm_shape, dropout)
        ### END SOLUTION

    def forward(self, X: torch.Tensor, state: list[Any]) -> tuple[torch.Tensor, list[Any]]:
        """X (B, T, num_hiddens) new positions; state = [enc_outputs, enc_valid_lens, cache]."""
        ### BEGIN SOLUTION
        enc_outputs, enc_valid_lens = state[0], state[1]
        cache = state[2][self.i]
        key_values = X if cache is None else torch.cat((cache, X), dim=1)  # (B, t+T, d)
        state[2][self.i] = key_values
        batch_size, num_new = X.shape[0], X.shape[1]
        num_cached = key_values.shape[1] - num_new
        # Causal in every mode: the query at position p = t+j sees exactly positions 0..p.
        dec_valid_lens = torch.arange(
            num_cached + 1, num_cached + num_new + 1, device=X.device).repeat(batch_size, 1)  # (B, T)
        X2 = self.attention1(X, key_values, key_values, dec_valid_lens)
        Y = self.addnorm1(X, X2)
        Y2 = self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens)
        Z = self.addnorm2(Y, Y2)
        return self.addnorm3(Z, self.ffn(Z)), state
        ### END SOLUTION

# %% nbgrader={"grade": false, "grade_id": "check_DecoderBlock", "locked": true, "schema_version": 3, "solution": false, "task": false}
check("DecoderBlock")

# %% nbgrader={"grade": true, "grade_id": "test_DecoderBlock", "locked": true, "points": 6, "schema_version": 3, "solution": false, "task": false}
# Graded cell for DecoderBlock (6 points): the autograder scores this component in an
# isolated process with hidden tests, in addition to the public tests that check() runs here.
check("DecoderBlock")

# %% [markdown]
# ## 7. The decoder
#
# `TransformerDecoder` mirrors the encoder, plus the state handling and an output layer.
# Attributes: `num_hiddens`, `num_layers`, `embedding`, `pos_encoding`, `blks` (`DecoderBlock`s with
# `i = 0, 1, ...`), `dense = nn.Linear(num_hiddens, vocab_size)`.
#
# - `init_state(enc_outputs, enc_valid_lens)` returns `[enc_outputs, enc_valid_lens, [None] * num_layers]`.
# - `forward(X, state)` takes the token ids `(B, T)` that *follow* the cached ones. If the cache
#   already holds $t$ positions, the new tokens sit at positions $t, \ldots, t + T - 1$, and **that**
#   is the slice of the positional encoding to add: `P[:, t:t + T]` (not `P[:, :T]`). Read $t$ from
#   the cache of block 0, scale the embeddings by $\sqrt d$ as in the encoder, add the positions,
#   apply the positional encoding's dropout, run the blocks, and return `(dense(X), state)`.
#   Target positions beyond `max_len - 1` of the encoding are outside the contract (the reference
#   raises a `ValueError` with a clear message).
# - The property `attention_weights` is `[self_weights, cross_weights]`: entry `i` of each list is
#   block `i`'s `attention1.attention.attention_weights` `(B*h, T, t + T)` and
#   `attention2.attention.attention_weights` `(B*h, T, T_enc)` from the last forward call.

# %% nbgrader={"grade": false, "grade_id": "TransformerDecoder", "locked": false, "schema_version": 3, "solution": true, "task": false}
class TransformerDecoder(AttentionDecoder):
    """Embedding, positional encoding at true positions, num_layers DecoderBlocks, output layer."""

    def __init__(self, vocab_size: int, key_size: int, query_size: int, value_size: int,
                 num_hiddens: int, norm_shape: Any, ffn_num_input: int, ffn_num_hiddens: int,
                 num_heads: int, num_layers: int, dropout: float, **kwargs: object) -> None:
        ### BEGIN SOLUTION
        super().__init__(**kwargs)
        self.num_hiddens = num_hiddens
        self.num_layers = num_layers
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
        self.blks = nn.Sequential()
        for i in range(num_layers):
            self.blks.add_module(
                "block" + str(i),
                DecoderBlock(key_size, query_size, value_size, num_hiddens, norm_shape,
                             ffn_num_input, ffn_num_hiddens, num_heads, dropout, i))
        self.dense = nn.Linear(num_hiddens, vocab_size)
        self._attention_weights: list[list[Optional[torch.Tensor]]] = [
            [None] * num_layers for _ in range(2)]
        ### END SOLUTION

    def init_state(self, enc_outputs: torch.Tensor, enc_valid_lens: Optional[torch.Tensor],
                   *args: Any) -> list[Any]:
        """-> [enc_outputs (B, T_enc, d), enc_valid_lens, cache: one None per block]."""
        ### BEGIN SOLUTION
        return [enc_outputs, enc_valid_lens, [None] * self.num_layers]
        ### END SOLUTION

    def forward(self, X: torch.Tensor, state: list[Any]) -> tuple[torch.Tensor, list[Any]]:
        """X (B, T) token ids following the cached ones -> (logits (B, T, vocab), state)."""
        ### BEGIN SOLUTION
        cache = state[2][0]
        num_cached = 0 if cache is None else cache.shape[1]
        num_new = X.shape[1]
        max_len = self.pos_encoding.P.shape[1]
        if num_cached + num_new > max_len:
            raise ValueError(f"target positions up to {num_cached + num_new - 1} exceed the "
                             f"positional encoding's max_len - 1 = {max_len - 1}")
        # True positions: the new tokens sit at num_cached .. num_cached + T - 1.
        positions = self.pos_encoding.P[:, num_cached:num_cached + num_new, :].to(X.device)
        X = self.pos_encoding.dropout(self.embedding(X) * math.sqrt(self.num_hiddens) + positions)
        self._attention_weights = [[None] * len(self.blks) for _ in range(2)]
        for i, blk in enumerate(self.blks):
            X, state = blk(X, state)
            self._attention_weights[0][i] = blk.attention1.attention.attention_weights  # (B*h, T, t+T)
            self._attention_weights[1][i] = blk.attention2.attention.attention_weights  # (B*h, T, T_enc)
        return self.dense(X), state
        ### END SOLUTION

    @property
    def attention_weights(self) -> list[list[Optional[torch.Tensor]]]:
        """[self-attention weights per block, cross-attention weights per block]."""
        ### BEGIN SOLUTION
        return self._attention_weights
        ### END SOLUTION

# %% nbgrader={"grade": false, "grade_id": "check_TransformerDecoder", "locked": true, "schema_version": 3, "solution": false, "task": false}
check("TransformerDecoder")

# %% nbgrader={"grade": true, "grade_id": "test_TransformerDecoder", "locked": true, "points": 6, "schema_version": 3, "solution": false, "task": false}
# Graded cell for TransformerDecoder (6 points): the autograder scores this component in an
# isolated process with hidden tests, in addition to the public tests that check() runs here.
check("TransformerDecoder")

# %% [markdown]
# ## 8. Two fixes relative to the book
#
# If you have read the book's Transformer code, you will have noticed two differences in the
# decoder. Both fix real bugs that stay hidden in the book because it only ever uses its model in
# the two ways that happen to work (training on whole sequences, decoding one token at a time).
#
# ### Fix 1: causal in every mode
#
# The book's `DecoderBlock` builds the causal mask only `if self.training`; in evaluation mode it
# passes `dec_valid_lens = None`, i.e. *no mask*. That is harmless for its step-by-step prediction
# (a single new query may see the whole cache anyway) but wrong for anything that feeds several
# target tokens in evaluation mode, such as **scoring a given translation** (computing its
# likelihood, as in validation losses, reranking or teacher-forced evaluation): every position then
# silently looks at the tokens to its right, including the very token it is supposed to predict.
# The number you get is not the score of the model that generates translations. Nothing crashes;
# the results are just wrong. (Its training-mode mask `1..T` is also wrong as soon as the cache is
# not empty, i.e. when feeding a sequence in chunks.)
#
# Ours is causal in every mode: the query at position $p$ sees exactly $0..p$ of
# `cat(cache, X)`, whether the whole sequence comes at once, one token at a time, or in chunks of
# any sizes, so all these ways of feeding give the same outputs and caches.
#
# Below, `book_block_forward` reproduces the book's block on top of *your* block's sublayers, so the
# only difference is the mask. We change the last of five target tokens and measure how much the
# outputs at the four earlier positions move.

# %%
def book_block_forward(blk: nn.Module, i: int, X: torch.Tensor, state: list) -> tuple:
    """The book's DecoderBlock.forward, using blk's sublayers: causal mask only in training mode."""
    enc_outputs, enc_valid_lens = state[0], state[1]
    key_values = X if state[2][i] is None else torch.cat((state[2][i], X), dim=1)
    state[2][i] = key_values
    if blk.training:
        batch_size, num_steps, _ = X.shape
        dec_valid_lens = torch.arange(1, num_steps + 1, device=X.device).repeat(batch_size, 1)
    else:
        dec_valid_lens = None  # the bug: no mask at all in evaluation mode
    Y = blk.addnorm1(X, blk.attention1(X, key_values, key_values, dec_valid_lens))
    Z = blk.addnorm2(Y, blk.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens))
    return blk.addnorm3(Z, blk.ffn(Z)), state


torch.manual_seed(0)
d, heads = 16, 4
blk = DecoderBlock(d, d, d, d, [d], d, 2 * d, heads, 0.0, 0)  # dropout 0: training mode is deterministic
enc_outputs, enc_valid_lens = torch.randn(1, 6, d), torch.tensor([6])
X = torch.randn(1, 5, d)
X_changed = X.clone()
X_changed[:, 4] += 3 * torch.randn(d)  # change the last target position only


def fresh_state() -> list:
    return [enc_outputs, enc_valid_lens, [None]]


with torch.no_grad():
    for name, forward in (("book", lambda x, s: book_block_forward(blk, 0, x, s)),
                          ("ours", lambda x, s: blk(x, s))):
        for mode in ("train", "eval"):
            blk.train(mode == "train")
            moved = (forward(X_changed, fresh_state())[0] - forward(X, fresh_state())[0])[:, :4]
            print(f"{name} block, {mode:5s} mode: max change at positions 0-3 = {float(moved.abs().max()):.3f}")
    blk.eval()
    book_block_forward(blk, 0, X, fresh_state())
    book_weights = blk.attention1.attention.attention_weights  # (h, 5, 5) for B = 1
    blk(X, fresh_state())
    our_weights = blk.attention1.attention.attention_weights
fig = show_heatmaps(torch.stack([book_weights[:heads], our_weights[:heads]]), tr("key position"),
                    tr("query position"), titles=[tr("head {k}").format(k=k) for k in range(heads)], figsize=(2.2, 2.2),
                    xticklabels=[str(p) for p in range(5)], yticklabels=[str(p) for p in range(5)])
fig.suptitle(tr("decoder self-attention in eval mode: book (top) vs ours (bottom)"), y=1.03)
same_colour_scale(fig)
fig.savefig("figures/decoder_mask_book_vs_ours.png", bbox_inches="tight", dpi=120)

# %% [markdown]
# In evaluation mode the book's block lets positions 0–3 see position 4 (top row of the figure:
# full attention matrices); ours keeps the lower-triangular pattern in both modes.
#
# Feeding the same five positions in chunks (here 2 + 1 + 2) through our block gives exactly the
# same outputs and cache as feeding them at once:

# %%
with torch.no_grad():
    whole, state = blk(X, fresh_state())
    chunk_state, pieces = fresh_state(), []
    for start, stop in ((0, 2), (2, 3), (3, 5)):
        Y, chunk_state = blk(X[:, start:stop], chunk_state)
        pieces.append(Y)
print("max |chunked - whole| outputs:", float((torch.cat(pieces, dim=1) - whole).abs().max()))
print("caches equal:", torch.equal(chunk_state[2][0], state[2][0]))

# %% [markdown]
# ### Fix 2: every token gets the encoding of its true position
#
# The book's decoder adds `pos_encoding(...)` to whatever tokens it receives, i.e. `P[:, :T]`. In
# training the whole target comes at once and token $p$ gets $\mathbf P_p$, as it should. When
# predicting one token at a time, however, `T = 1` at every step, so **every generated token gets
# $\mathbf P_0$**: the model decodes with position information it never saw in training, and its
# step-by-step outputs differ from what the same model computes on the whole sequence.
#
# Ours reads the number $t$ of cached positions and gives the token after $t$ cached ones
# $\mathbf P_t$, so decoding step by step reproduces the whole-sequence computation exactly.
# `decoder_variant` below runs a decoder with either of the book's two behaviours switched on (it
# uses the attribute names of section 7).

# %%
def decoder_variant(dec: nn.Module, X: torch.Tensor, state: list, book_mask: bool = False,
                    book_positions: bool = False) -> tuple:
    """dec's forward pass, optionally with the book's eval-mode mask and/or the book's positions."""
    num_cached = 0 if state[2][0] is None else state[2][0].shape[1]
    first = 0 if book_positions else num_cached  # the book always starts at P[0]
    positions = dec.pos_encoding.P[:, first:first + X.shape[1]]
    X = dec.pos_encoding.dropout(dec.embedding(X) * math.sqrt(dec.num_hiddens) + positions)
    for i, blk in enumerate(dec.blks):
        X, state = book_block_forward(blk, i, X, state) if book_mask else blk(X, state)
    return dec.dense(X), state


def whole_vs_steps(dec: nn.Module, tokens: torch.Tensor, enc_outputs: torch.Tensor,
                   enc_valid_lens: torch.Tensor, **variant: bool) -> float:
    """max |logits of the whole sequence at once - logits of one token at a time| (eval mode)."""
    with torch.no_grad():
        whole, _ = decoder_variant(dec, tokens, dec.init_state(enc_outputs, enc_valid_lens), **variant)
        state, steps = dec.init_state(enc_outputs, enc_valid_lens), []
        for t in range(tokens.shape[1]):
            logits, state = decoder_variant(dec, tokens[:, t:t + 1], state, **variant)
            steps.append(logits)
    return float((torch.cat(steps, dim=1) - whole).abs().max())


torch.manual_seed(0)
dec = TransformerDecoder(20, d, d, d, d, [d], d, 2 * d, heads, 2, 0.1)
dec.eval()
tokens = torch.randint(0, 20, (2, 7))
enc_outputs, enc_valid_lens = torch.randn(2, 6, d), torch.tensor([6, 4])
print("max |whole - step by step| of the logits:")
print(f"  ours                 {whole_vs_steps(dec, tokens, enc_outputs, enc_valid_lens):.2e}")
print(f"  book's positions     {whole_vs_steps(dec, tokens, enc_outputs, enc_valid_lens, book_positions=True):.2e}")
print(f"  book's eval mask     {whole_vs_steps(dec, tokens, enc_outputs, enc_valid_lens, book_mask=True):.2e}")
print(f"  both (the book)      {whole_vs_steps(dec, tokens, enc_outputs, enc_valid_lens, book_mask=True, book_positions=True):.2e}")

# %% [markdown]
# Only our decoder computes the same function however its input is fed. Section 9.3 measures
# what each fix is worth on a trained model.
#
# ## 9. Training on the date task
#
# We train the whole model on the course's date task: free-form English dates (tokenized into
# words) translated into ISO dates (characters). The setup is the one of the course's reference
# run: 10 000 training pairs padded to 12 steps, a 2-block encoder and decoder with $d = 64$,
# 4 heads, an FFN with 128 hidden units, Adam with learning rate 0.002, batches of 128, 10 epochs,
# and no dropout (with 10 000 freshly generated pairs there is little to regularize, and dropout
# slows training down). Set the environment variable `COURSE_EPOCHS` to train for fewer epochs
# (the course's tests do).
#
# We train on **one thread**: the matrices of a model this small are too small to share out, and
# on a busy machine several threads spend most of their time waiting for each other (on the
# course's shared 2-core server, one epoch on 2 threads took ten times longer than on one). With
# one free core, the 10 epochs take about a minute and a half.

# %%
torch.set_num_threads(1)
NUM_EPOCHS = int(os.environ.get("COURSE_EPOCHS", "10"))
NUM_STEPS, NUM_EXAMPLES, NUM_TEST = 12, 10000, 200
num_hiddens, num_layers, num_heads, ffn_num_hiddens, dropout = 64, 2, 4, 128, 0.0
batch_size, lr, seed = 128, 0.002, 0

train_iter, src_vocab, tgt_vocab = load_data_dates(batch_size, NUM_STEPS, num_examples=NUM_EXAMPLES,
                                                   seed=0)
test_pairs = make_test_pairs(NUM_TEST, seed=1, num_train=NUM_EXAMPLES, train_seed=0)
print(f"source vocabulary {len(src_vocab)} tokens, target vocabulary {len(tgt_vocab)} tokens")
for source, target in test_pairs[:3]:
    print(" ", " ".join(source), "->", "".join(target))

set_seed(seed)
h = num_hiddens
net = EncoderDecoder(
    TransformerEncoder(len(src_vocab), h, h, h, h, [h], h, ffn_num_hiddens, num_heads, num_layers,
                       dropout),
    TransformerDecoder(len(tgt_vocab), h, h, h, h, [h], h, ffn_num_hiddens, num_heads, num_layers,
                       dropout))


def log(epoch: int, loss: float) -> None:
    print(f"epoch {epoch:2d}  loss {loss:.4f}", flush=True)


cpu_start = time.process_time()
with Timer() as timer:
    losses = train_seq2seq(net, train_iter, lr, NUM_EPOCHS, tgt_vocab, log=log)
print(f"trained {NUM_EPOCHS} epochs in {timer.elapsed:.0f} s "
      f"(CPU time {time.process_time() - cpu_start:.0f} s)")
fig = plot_losses(losses, title=tr("Transformer on the date task"))
fig.savefig("figures/transformer_loss.png", bbox_inches="tight", dpi=120)

# %% [markdown]
# ### 9.1 Greedy decoding, BLEU and exact match
#
# `predict_seq2seq` encodes the source once and then decodes greedily, feeding each predicted token
# back with the decoder state (our cache). `evaluate` does this for the 200 held-out pairs, whose
# sources never occur in training, and reports the mean BLEU and the fraction of exact matches.

# %%
for source, target in test_pairs[:8]:
    pred, _ = predict_seq2seq(net, source, src_vocab, tgt_vocab, NUM_STEPS)
    verdict = "ok" if pred == target else f"expected {''.join(target)}"
    print(f"{' '.join(source):38s} -> {''.join(pred):12s} {verdict}")
metrics = evaluate(net, test_pairs, src_vocab, tgt_vocab, NUM_STEPS)
print(f"held-out ({metrics['n']} pairs): BLEU {metrics['bleu']:.3f}, exact match {metrics['exact_match']:.3f}")

# %% [markdown]
# ### 9.2 Looking inside: attention per head
#
# We translate one date and plot, for every block and head, the encoder self-attention (which
# source tokens each source token gathers information from) and the decoder's encoder-decoder
# attention (which source tokens each generated character reads). Padding columns are cut off.

# %%
source = ["thursday", ",", "march", "3rd", ",", "1994"]
pred, steps = predict_seq2seq(net, source, src_vocab, tgt_vocab, NUM_STEPS, save_attention_weights=True)
print(" ".join(source), "->", "".join(pred))
src_labels = source + ["<eos>"]
out_labels = pred + ["<eos>"] if len(steps) > len(pred) else pred
n_src = len(src_labels)

# Encoder self-attention, from the encoder's last forward call (made by predict_seq2seq).
enc_weights = torch.stack([w.reshape(num_heads, -1, NUM_STEPS)[:, :n_src, :n_src]
                           for w in net.encoder.attention_weights])  # (num_layers, h, n_src, n_src)
fig = show_heatmaps(enc_weights, tr("key (source)"), tr("query (source)"),
                    titles=[tr("head {k}").format(k=k) for k in range(num_heads)], figsize=(2.6, 2.6),
                    xticklabels=src_labels, yticklabels=src_labels)
fig.suptitle(tr("encoder self-attention (rows: block 0, block 1)"), y=1.02)
same_colour_scale(fig)
fig.savefig("figures/transformer_encoder_self_attention.png", bbox_inches="tight", dpi=120)

# Decoder cross-attention: one row per decoding step, per block and head.
cross = torch.stack([torch.stack([cross_attention_matrix(steps, layer=layer, head=k)[:, :n_src]
                                  for k in range(num_heads)])
                     for layer in range(num_layers)])  # (num_layers, h, T_out, n_src)
fig = show_heatmaps(cross, tr("source"), tr("output"), titles=[tr("head {k}").format(k=k) for k in range(num_heads)],
                    figsize=(2.6, 2.6), xticklabels=src_labels, yticklabels=out_labels)
fig.suptitle(tr("decoder cross-attention (rows: block 0, block 1)"), y=1.02)
same_colour_scale(fig)
fig.savefig("figures/transformer_cross_attention_heads.png", bbox_inches="tight", dpi=120)

# %% [markdown]
# In the cross-attention, look for heads whose rows line up with the source like an alignment: the
# year digits reading `1994`, the month digits reading `march`, the day digits reading `3rd` (after
# the full training, several heads of both blocks do exactly this). In the encoder, heads of the
# first block often park most of their weight on `<eos>`, a common "nothing to do" pattern, while
# heads of the second block pick out the informative tokens. Different heads of the same block
# clearly do different things, which is the point of having several. With a short training budget
# (`COURSE_EPOCHS`) the patterns are blurrier.
#
# ### 9.3 What the two fixes are worth on the trained model
#
# First, scoring the true targets of held-out pairs (teacher forcing, evaluation mode) with the
# whole target at once must give the same logits as feeding it one token at a time. Then we decode
# the held-out set greedily with the book's positions (`P[0]` at every step) instead of ours.

# %%
def decoded_with(variant: dict) -> float:
    """Exact-match rate on the held-out pairs when the decoder runs `decoder_variant(**variant)`."""

    class Variant(nn.Module):  # predict_seq2seq only needs init_state, forward and the encoder
        def __init__(self) -> None:
            super().__init__()
            self.inner = net.decoder

        def init_state(self, *args: Any) -> list:
            return self.inner.init_state(*args)

        def forward(self, X: torch.Tensor, state: list) -> tuple:
            return decoder_variant(self.inner, X, state, **variant)

    return evaluate(EncoderDecoder(net.encoder, Variant()), test_pairs, src_vocab, tgt_vocab,
                    NUM_STEPS)["exact_match"]


net.eval()
sample = list(test_pairs[:32])
src = torch.tensor([(src_vocab[s] + [src_vocab.eos] + [src_vocab.pad] * NUM_STEPS)[:NUM_STEPS]
                    for s, _ in sample])
src_lens = (src != src_vocab.pad).sum(dim=1)
tgt_in = torch.tensor([[tgt_vocab.bos] + tgt_vocab[t] for _, t in sample])  # <bos> y1 .. y10
with torch.no_grad():
    enc_outputs = net.encoder(src, src_lens)
for name, variant in (("ours", {}), ("book's eval mask", {"book_mask": True})):
    gap = whole_vs_steps(net.decoder, tgt_in, enc_outputs, src_lens, **variant)
    print(f"{name:17s}: max |teacher-forced scoring - step by step| = {gap:.2e}")
print(f"held-out exact match, our positions:  {decoded_with({}):.3f}")
print(f"held-out exact match, book positions: {decoded_with({'book_positions': True}):.3f}")

# %% [markdown]
# With our decoder, scoring a target in evaluation mode and generating it are the same computation.
# With the book's mask, the eval-mode score of a target uses information from the future and is not
# the score of the model that actually generates translations. With the book's positions, the model
# decodes with position information it was never trained on, and the exact-match rate shows what
# that costs here.
#
# **Things to try.** Train with `num_heads = 1` or `num_layers = 1` and compare BLEU; plot the
# decoder self-attention `net.decoder.attention_weights[0]` after scoring a whole target (it is
# lower-triangular); remove the $\sqrt d$ scaling in the encoder and decoder and watch the loss curve.
