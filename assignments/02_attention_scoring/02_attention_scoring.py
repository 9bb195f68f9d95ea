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
# # Assignment 02: Attention scoring functions
#
# In assignment 01 the Gaussian kernel compared a query with a key through
# $-\frac{1}{2}(x - x_i)^2$, and a softmax turned these numbers into weights. That exponent is
# an example of an **attention scoring function** $a(\mathbf q, \mathbf k)$. In general, for a
# query $\mathbf q \in \mathbb R^{q}$ and $m$ key-value pairs
# $(\mathbf k_1, \mathbf v_1), \ldots, (\mathbf k_m, \mathbf v_m)$ with
# $\mathbf k_i \in \mathbb R^{k}$ and $\mathbf v_i \in \mathbb R^{v}$, attention pooling is
#
# $$f(\mathbf q, (\mathbf k_1, \mathbf v_1), \ldots, (\mathbf k_m, \mathbf v_m)) = \sum_{i=1}^m \alpha(\mathbf q, \mathbf k_i)\, \mathbf v_i \in \mathbb R^{v},
# \qquad
# \alpha(\mathbf q, \mathbf k_i) = \mathrm{softmax}_i\big(a(\mathbf q, \mathbf k_i)\big) = \frac{\exp(a(\mathbf q, \mathbf k_i))}{\sum_{j=1}^m \exp(a(\mathbf q, \mathbf k_j))}.$$
#
# Different scoring functions $a$ give different attention mechanisms. This assignment builds
# the two you will meet everywhere in the rest of the course, and the masking machinery they
# need when sequences in a batch have different lengths.
#
# | component | points | what it is |
# |---|---|---|
# | `sequence_mask(X, valid_len, value=0)` | 2 | overwrite the positions past each row's valid length |
# | `masked_softmax(X, valid_lens)` | 4 | a softmax that gives padding exactly zero weight |
# | `AdditiveAttention` | 4 | the MLP scoring function $\mathbf w_v^\top \tanh(\mathbf W_q \mathbf q + \mathbf W_k \mathbf k)$ |
# | `DotProductAttention` | 4 | scaled dot-product attention $\mathrm{softmax}(\mathbf Q \mathbf K^\top / \sqrt d)\, \mathbf V$ |
#
# In each solution cell, replace the `raise NotImplementedError()` lines by your code, keep names,
# signatures and the attribute names given below (the graders copy reference weights into your
# modules by these names), and run each `check(...)` cell. Shapes use `B` batch, `Q` queries,
# `K` key-value pairs.

# %%
import math
import os
from typing import Any, Optional

import matplotlib.pyplot as plt
import torch
from torch import nn

from autograder.selfcheck import check
from attention_support import show_heatmaps, tr

os.makedirs("figures", exist_ok=True)


# %% [markdown]
# ## Masking
#
# To process a batch of sentences at once, the shorter ones are padded with a special token up
# to a common length. The padding carries no information, so attention must ignore it: each
# sequence comes with its **valid length**, the number of real tokens, and every key at a
# position $\geq$ the valid length has to drop out of the softmax.
#
# The first building block works on a matrix `X` of shape `(N, L)`, one row per sequence:
# `sequence_mask(X, valid_len, value=0)` returns `X` with every entry at a position
# `>= valid_len[i]` of row `i` replaced by `value`. For example, with `valid_len = [1, 2]`
#
# ```
# [[1, 2, 3],      [[1, 0, 0],
#  [4, 5, 6]]  ->   [4, 5, 0]]
# ```
#
# **Your task.** Implement `sequence_mask`. Compare a row of positions `0, 1, ..., L-1` with the
# valid lengths by broadcasting, build a boolean mask, and return a **new** tensor (do not write
# into `X`; `masked_fill` or `torch.where` do this). Keep it device-agnostic: create any helper
# tensor on `X.device`.

# %% nbgrader={"grade": false, "grade_id": "sequence_mask", "locked": false, "schema_version": 3, "solution": true, "task": false}
def sequence_mask(X: torch.Tensor, valid_len: torch.Tensor, value: float = 0) -> torch.Tensor:
    """Return a copy of X (N, L) whose entries at positions >= valid_len[i] of row i are `value`."""
    ### BEGIN SOLUTION
    positions = torch.arange(X.shape[1], device=X.device)  # (L,)
    keep = positions.unsqueeze(0) < valid_len.unsqueeze(1)  # (N, L)
    return X.masked_fill(~keep, value)
    ### END SOLUTION


# %% nbgrader={"grade": false, "grade_id": "check_sequence_mask", "locked": true, "schema_version": 3, "solution": false, "task": false}
check("sequence_mask")

# %%
X = torch.tensor([[1, 2, 3], [4, 5, 6]])
print(sequence_mask(X, torch.tensor([1, 2])))
print(sequence_mask(X.float(), torch.tensor([3, 0]), value=-1.0))
print("X is unchanged:", X.tolist())

# %% nbgrader={"grade": true, "grade_id": "test_sequence_mask", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Graded cell for sequence_mask (2 points): the autograder scores this component in an
# isolated process with hidden tests, in addition to the public tests that check() runs here.
check("sequence_mask")


# %% [markdown]
# ## Masked softmax
#
# Attention scores come as a tensor `X` of shape `(B, Q, K)`: for each of the `B` sequences
# in the batch, one row of `K` scores per query. `masked_softmax(X, valid_lens)` takes the
# softmax over the last axis (over the keys) while ignoring the keys past the valid length.
# `valid_lens` can be
#
# * `None`: nothing is masked, it is a plain softmax;
# * shape `(B,)`: one valid length per sequence, shared by all its queries;
# * shape `(B, Q)`: one valid length per query (the decoder of a Transformer needs this).
#
# **Masked positions must get weight exactly 0.** The output of attention is
# $\sum_i \alpha_i \mathbf v_i$; any weight left on a padding position mixes the padding's value
# into the result, and the model's output then depends on how much padding the batch happened
# to need. "Small" is not good enough; it has to be zero.
#
# How do we get an exact zero out of a softmax? Not by setting the masked *scores* to 0: a
# score of 0 is an ordinary score, $\exp(0) = 1$, and the masked position competes with the
# real ones for weight. **Our course text has exactly this bug**: its `masked_softmax` calls
# `sequence_mask(..., value=0)` while the comment above the line says the masked entries are
# replaced by a very large negative value. What we want is a score so negative that its
# exponential underflows to zero: the softmax computes $\exp(x_i - \max_j x_j)$, and for a
# fill value such as `torch.finfo(X.dtype).min` (the most negative finite number of the dtype;
# `-1e6` also works in float32) that is exactly `0.0` in floating point.
#
# Two more details:
#
# * flatten `X` to `(B*Q, K)` so that `sequence_mask` sees one row per query, and expand the
#   valid lengths to one per row: a `(B,)` tensor must be repeated `Q` times *per element*
#   (`torch.repeat_interleave`), a `(B, Q)` tensor simply flattened;
# * **do not modify the caller's `X`**. The course text's `sequence_mask` writes into its
#   argument, and since a reshape is usually a view, the caller's attention scores are silently
#   overwritten. A `sequence_mask` that returns a copy avoids this.
#
# Rows with valid length 0 (a query that may attend to nothing) are not part of the contract.
#
# **Your task.** Implement `masked_softmax(X, valid_lens)` using your `sequence_mask`.

# %% nbgrader={"grade": false, "grade_id": "masked_softmax", "locked": false, "schema_version": 3, "solution": true, "task": false}
def masked_softmax(X: torch.Tensor, valid_lens: Optional[torch.Tensor]) -> torch.Tensor:
    """Softmax over the last axis of X (B, Q, K), giving weight exactly 0 past each valid length.

    valid_lens is None, (B,) (one length per batch item) or (B, Q) (one per query).
    """
    ### BEGIN SOLUTION
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])  # (B*Q,)
    else:
        valid_lens = valid_lens.reshape(-1)  # (B*Q,)
    # The most negative finite number, not 0: exp(fill - row max) underflows to exactly 0.
    fill = torch.finfo(X.dtype).min
    # A copy: sequence_mask may work in place (the contract allows it), and the caller's X must not change.
    X = sequence_mask(X.reshape(-1, shape[-1]).clone(), valid_lens, value=fill)  # (B*Q, K)
    return torch.softmax(X.reshape(shape), dim=-1)
    ### END SOLUTION


# %% nbgrader={"grade": false, "grade_id": "check_masked_softmax", "locked": true, "schema_version": 3, "solution": false, "task": false}
check("masked_softmax")

# %% [markdown]
# Two sequences of two queries over four keys, with valid lengths 2 and 3, then with one valid
# length per query:

# %%
scores = torch.tensor([[[0.0343, 0.0830, 0.2883, 0.7795],
                        [0.6423, 0.1566, 0.5636, 0.0877]],
                       [[0.2908, 0.3970, 0.9207, 0.7803],
                        [0.4699, 0.2348, 0.0882, 0.1583]]])
original = scores.clone()
print(masked_softmax(scores, torch.tensor([2, 3])))
print(masked_softmax(scores, torch.tensor([[1, 3], [2, 4]])))
assert torch.equal(scores, original), "masked_softmax modified its input"


# %% [markdown]
# Now the bug side by side with the fix. The function below fills the masked scores with 0,
# as the course text does. With the scores above, the padding keeps almost a third of all the
# weight: the first query of the first sequence gives each of its two padding positions nearly
# as much weight as each of its two real keys.

# %%
def masked_softmax_fill_zero(X: torch.Tensor, valid_lens: torch.Tensor) -> torch.Tensor:
    """The course text's version (for comparison only): masked scores set to 0 -- a bug."""
    shape = X.shape
    lens = torch.repeat_interleave(valid_lens, shape[1]) if valid_lens.dim() == 1 else valid_lens.reshape(-1)
    return torch.softmax(sequence_mask(X.reshape(-1, shape[-1]), lens, value=0).reshape(shape), dim=-1)


valid_lens = torch.tensor([2, 3])
buggy, fixed = masked_softmax_fill_zero(scores, valid_lens), masked_softmax(scores, valid_lens)
print("fill with 0     :", buggy[0, 0].tolist())
print("fill very negative:", fixed[0, 0].tolist())
print("weight on padding (fill 0):", float(buggy[0, :, 2:].sum() + buggy[1, :, 3:].sum()))
print("weight on padding (fixed) :", float(fixed[0, :, 2:].sum() + fixed[1, :, 3:].sum()))
show_heatmaps(torch.stack([buggy.reshape(4, 4), fixed.reshape(4, 4)]), xlabel=tr("keys"),
              ylabel=tr("queries"), titles=[tr("fill 0 (bug)"), tr("fill very negative")],
              figsize=(2.8, 2.8), xticklabels=["0", "1", "2", "3"],
              yticklabels=[tr("seq {s}, q {q}").format(s=s, q=q) for s in (0, 1) for q in (0, 1)])
plt.savefig("figures/masked_softmax_bug.png", bbox_inches="tight", dpi=120)

# %% nbgrader={"grade": true, "grade_id": "test_masked_softmax", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
# Graded cell for masked_softmax (4 points): the autograder scores this component in an
# isolated process with hidden tests, in addition to the public tests that check() runs here.
check("masked_softmax")


# %% [markdown]
# ## Additive attention
#
# When queries and keys have different lengths, **additive attention** scores them with a
# small MLP. For $\mathbf q \in \mathbb R^{q}$ and $\mathbf k \in \mathbb R^{k}$,
#
# $$a(\mathbf q, \mathbf k) = \mathbf w_v^\top \tanh(\mathbf W_q \mathbf q + \mathbf W_k \mathbf k) \in \mathbb R,$$
#
# with learnable $\mathbf W_q \in \mathbb R^{h \times q}$, $\mathbf W_k \in \mathbb R^{h \times k}$
# and $\mathbf w_v \in \mathbb R^{h}$, where the number of hidden units $h$ is a hyperparameter.
# Equivalently: concatenate query and key, feed them to a one-hidden-layer perceptron with
# $\tanh$ activation and no biases, and read out one number.
#
# **Your task.** Implement `AdditiveAttention(key_size, query_size, num_hiddens, dropout)`:
#
# * attributes (contract names): `self.W_k = nn.Linear(key_size, num_hiddens, bias=False)`,
#   `self.W_q = nn.Linear(query_size, num_hiddens, bias=False)`,
#   `self.w_v = nn.Linear(num_hiddens, 1, bias=False)` and `self.dropout = nn.Dropout(dropout)`;
# * `forward(queries, keys, values, valid_lens)` with queries `(B, Q, query_size)`, keys
#   `(B, K, key_size)` and values `(B, K, v)` returns `(B, Q, v)`. Project queries and keys to
#   `(B, Q, h)` and `(B, K, h)`, add them for every query-key pair by broadcasting
#   `(B, Q, 1, h) + (B, 1, K, h)`, apply $\tanh$ and `w_v` to get `(B, Q, K)` scores, then
#   `masked_softmax`;
# * store the weights **before dropout** in `self.attention_weights` `(B, Q, K)`, apply dropout
#   to the weights, and pool the values with a batched matrix product (`torch.bmm`).

# %% nbgrader={"grade": false, "grade_id": "AdditiveAttention", "locked": false, "schema_version": 3, "solution": true, "task": false}
class AdditiveAttention(nn.Module):
    """Additive (MLP) attention: score(q, k) = w_v^T tanh(W_q q + W_k k)."""

    def __init__(self, key_size: int, query_size: int, num_hiddens: int, dropout: float,
                 **kwargs: object) -> None:
        ### BEGIN SOLUTION
        super().__init__(**kwargs)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)
        ### END SOLUTION

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                valid_lens: Optional[torch.Tensor]) -> torch.Tensor:
        """queries (B, Q, q), keys (B, K, k), values (B, K, v) -> (B, Q, v)."""
        ### BEGIN SOLUTION
        queries, keys = self.W_q(queries), self.W_k(keys)  # (B, Q, H), (B, K, H)
        features = torch.tanh(queries.unsqueeze(2) + keys.unsqueeze(1))  # (B, Q, K, H)
        scores = self.w_v(features).squeeze(-1)  # (B, Q, K)
        self.attention_weights = masked_softmax(scores, valid_lens)  # (B, Q, K), before dropout
        return torch.bmm(self.dropout(self.attention_weights), values)  # (B, Q, v)
        ### END SOLUTION


# %% nbgrader={"grade": false, "grade_id": "check_AdditiveAttention", "locked": true, "schema_version": 3, "solution": false, "task": false}
check("AdditiveAttention")

# %% [markdown]
# A small example: two sequences with one 20-dimensional query each, ten 2-dimensional keys and
# 4-dimensional values, valid lengths 2 and 6. All keys are identical, so no query can tell them
# apart: the weights are uniform over the valid keys (1/2 and 1/6) and exactly 0 elsewhere, and
# each output is the mean of the first 2 (resp. 6) value rows.

# %%
torch.manual_seed(0)
queries = torch.normal(0, 1, (2, 1, 20))
keys = torch.ones((2, 10, 2))
values = torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)  # (2, 10, 4)
valid_lens = torch.tensor([2, 6])
attention = AdditiveAttention(key_size=2, query_size=20, num_hiddens=8, dropout=0.1)
attention.eval()  # dropout off
print(attention(queries, keys, values, valid_lens))
show_heatmaps(attention.attention_weights.reshape(1, 1, 2, 10), xlabel=tr("keys"), ylabel=tr("queries"),
              titles=[tr("additive attention")], figsize=(4, 1.8),
              xticklabels=[str(j) for j in range(10)], yticklabels=[tr("seq {s}").format(s=s) for s in (0, 1)])
plt.savefig("figures/additive_attention_weights.png", bbox_inches="tight", dpi=120)

# %% nbgrader={"grade": true, "grade_id": "test_AdditiveAttention", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
# Graded cell for AdditiveAttention (4 points): the autograder scores this component in an
# isolated process with hidden tests, in addition to the public tests that check() runs here.
check("AdditiveAttention")


# %% [markdown]
# ## Scaled dot-product attention
#
# When queries and keys have the same length $d$, their dot product is a cheaper score with no
# parameters at all. If the entries of $\mathbf q$ and $\mathbf k$ are independent with mean 0
# and variance 1, then $\mathbf q^\top \mathbf k$ has mean 0 and variance $d$: the longer the
# vectors, the larger the scores, and a softmax of large scores saturates (nearly all weight on
# one key, vanishing gradients for the others). Dividing by $\sqrt d$ brings the variance back
# to 1 whatever $d$:
#
# $$a(\mathbf q, \mathbf k) = \frac{\mathbf q^\top \mathbf k}{\sqrt d}.$$
#
# For $n$ queries $\mathbf Q \in \mathbb R^{n \times d}$, $m$ keys
# $\mathbf K \in \mathbb R^{m \times d}$ and values $\mathbf V \in \mathbb R^{m \times v}$, all
# the pooled outputs are one expression,
#
# $$\mathrm{softmax}\left(\frac{\mathbf Q \mathbf K^\top}{\sqrt d}\right) \mathbf V \in \mathbb R^{n \times v}.$$
#
# **Your task.** Implement `DotProductAttention(dropout)`: attribute `self.dropout`;
# `forward(queries, keys, values, valid_lens=None)` with queries `(B, Q, d)`, keys `(B, K, d)`,
# values `(B, K, v)` returns `(B, Q, v)`; take $d$ from the queries, compute the scores with
# `torch.bmm`, apply `masked_softmax`, store the weights before dropout in
# `self.attention_weights` `(B, Q, K)`, then apply dropout to them and pool the values.

# %% nbgrader={"grade": false, "grade_id": "DotProductAttention", "locked": false, "schema_version": 3, "solution": true, "task": false}
class DotProductAttention(nn.Module):
    """Scaled dot-product attention: softmax(Q K^T / sqrt(d)) V."""

    def __init__(self, dropout: float, **kwargs: object) -> None:
        ### BEGIN SOLUTION
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)
        ### END SOLUTION

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                valid_lens: Optional[torch.Tensor] = None) -> torch.Tensor:
        """queries (B, Q, d), keys (B, K, d), values (B, K, v) -> (B, Q, v)."""
        ### BEGIN SOLUTION
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)  # (B, Q, K)
        self.attention_weights = masked_softmax(scores, valid_lens)  # (B, Q, K), before dropout
        return torch.bmm(self.dropout(self.attention_weights), values)  # (B, Q, v)
        ### END SOLUTION


# %% nbgrader={"grade": false, "grade_id": "check_DotProductAttention", "locked": true, "schema_version": 3, "solution": false, "task": false}
check("DotProductAttention")

# %% [markdown]
# Why the $\sqrt d$? Draw random unit-variance queries and keys of growing length and look at
# the spread of the raw dot products and at the largest softmax weight over 10 keys, averaged
# over many queries. Unscaled, the softmax approaches a hard arg-max as $d$ grows; scaled, it
# behaves the same for every $d$.

# %%
torch.manual_seed(0)
print("   d   std(q.k)   max weight unscaled   max weight scaled")
for d in (4, 64, 1024):
    q, k = torch.randn(500, 1, d), torch.randn(500, 10, d)
    raw = torch.bmm(q, k.transpose(1, 2))  # (500, 1, 10)
    unscaled = torch.softmax(raw, dim=-1).amax(dim=-1).mean()
    scaled = torch.softmax(raw / math.sqrt(d), dim=-1).amax(dim=-1).mean()
    print(f"{d:4d}   {raw.std():8.2f}   {unscaled:19.3f}   {scaled:17.3f}")

# %% [markdown]
# A heatmap example. Ten random 8-dimensional keys, and three queries that are (scaled) copies
# of keys 1, 4 and 7: each query's weight peaks on the key it copies. With a valid length of 6,
# keys 6 to 9 get exactly zero weight, so the third query (whose matching key 7 is now masked)
# has to spread its attention over the remaining keys.

# %%
torch.manual_seed(1)
keys = torch.randn(1, 10, 8)  # (B=1, K=10, d=8)
queries = 2 * keys[:, [1, 4, 7]]  # (1, Q=3, 8)
values = torch.randn(1, 10, 5)  # (1, 10, 5)
attention = DotProductAttention(dropout=0.5)
attention.eval()
panels = []
for lens in (None, torch.tensor([6])):
    out = attention(queries, keys, values, lens)  # (1, 3, 5)
    panels.append(attention.attention_weights[0])  # (3, 10)
print("output shape:", tuple(out.shape))
show_heatmaps(torch.stack(panels), xlabel=tr("keys"), ylabel=tr("queries"),
              titles=[tr("all 10 keys valid"), tr("valid length 6")], figsize=(3.2, 1.6),
              xticklabels=[str(j) for j in range(10)], yticklabels=["q = 2 k1", "q = 2 k4", "q = 2 k7"])
plt.savefig("figures/dot_product_attention_weights.png", bbox_inches="tight", dpi=120)

# %% nbgrader={"grade": true, "grade_id": "test_DotProductAttention", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
# Graded cell for DotProductAttention (4 points): the autograder scores this component in an
# isolated process with hidden tests, in addition to the public tests that check() runs here.
check("DotProductAttention")

# %% [markdown]
# ## Summary and things to try
#
# * Attention pooling is a weighted average of values; the weights are the softmax of a scoring
#   function of the query and each key.
# * Padding must receive weight exactly 0: mask the *scores* with a very negative number, never
#   with 0, and leave the caller's tensor alone.
# * Additive attention works for queries and keys of different sizes and has parameters;
#   scaled dot-product attention needs equal sizes, has none, and is a pair of matrix products.
#
# Things to try (not graded): give the keys of the additive example different values and watch
# the weights become non-uniform; remove the $1/\sqrt d$ from `DotProductAttention` and compare
# the heatmaps for $d = 8$ and $d = 512$; time both scoring functions for large `Q` and `K`.
