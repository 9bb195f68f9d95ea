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
# # Assignment 04: Multi-head attention
#
# In assignment 02 you built scaled dot-product attention: one query compares itself with every
# key, a softmax turns the scores into weights, and the output is the weighted average of the
# values. This assignment runs **several such attention poolings side by side**, each on its own
# learned projection of the queries, keys and values, and mixes their results. That is
# *multi-head attention* (Vaswani et al., 2017), the attention layer of the Transformer.
#
# You implement three components (10 points):
#
# | component | points | what it does |
# |---|---|---|
# | `transpose_qkv` | 2 | `(B, L, d)` → `(B*h, L, d/h)`: give every head its own batch row |
# | `transpose_output` | 2 | the inverse reshape, `(B*h, L, d/h)` → `(B, L, d)` |
# | `MultiHeadAttention` | 6 | projections `W_q`, `W_k`, `W_v`, all heads in one batched attention, output projection `W_o` |
#
# `DotProductAttention` (with `masked_softmax`) is given in `attention_support`: it is the
# course's reference version of what you wrote in assignment 02.
#
# Shapes in this notebook: `B` batch size, `Q` number of queries, `K` number of key-value pairs,
# `L` a sequence length, `d` features, `h` heads.
#
# **How this notebook is graded.** In each solution cell, replace the `raise NotImplementedError()`
# lines by your code, and keep the names, signatures, docstrings and attribute names as given. After each component, a self-check cell
# runs the public tests on your code. The grader runs hidden tests on your definitions only: the
# experiments at the end of the notebook are for you, not for grading.

# %%
import math
import os
from typing import Optional

import matplotlib.pyplot as plt
import torch
from torch import nn

from autograder.selfcheck import check
from attention_support import DotProductAttention, masked_softmax, show_heatmaps, tr

os.makedirs("figures", exist_ok=True)

# %% [markdown]
# ## 1. Why more than one head?
#
# A single attention pooling computes one notion of relevance: for a query $\mathbf q$ and keys
# $\mathbf k_1, \ldots, \mathbf k_m$ it produces *one* set of weights. But a token usually needs
# information of several kinds at once. In the date `thursday , march 3rd , 1994` that you will
# translate in assignment 06, the output character for the month must find `march`, while the
# characters of the year must find `1994`; in a sentence, a word may need both its neighbours
# (short range) and the subject far to the left (long range). One set of weights averages over
# all of that.
#
# Multi-head attention therefore learns $h$ independent views. Head $i$ first projects the query,
# key and value with its own matrices and then runs an attention pooling $f$ (here: scaled
# dot-product attention) in that projected space:
#
# $$\mathbf h_i = f\left(\mathbf W_i^{(q)}\mathbf q,\; \mathbf W_i^{(k)}\mathbf k,\; \mathbf W_i^{(v)}\mathbf v\right) \in \mathbb R^{p_v},
# \qquad \mathbf W_i^{(q)} \in \mathbb R^{p_q\times d_q},\ \mathbf W_i^{(k)} \in \mathbb R^{p_k\times d_k},\ \mathbf W_i^{(v)} \in \mathbb R^{p_v\times d_v}.$$
#
# The $h$ head outputs are concatenated and mixed by one more learned matrix
# $\mathbf W_o \in \mathbb R^{p_o \times h p_v}$:
#
# $$\text{MultiHead}(\mathbf q, \mathbf k, \mathbf v) = \mathbf W_o \begin{bmatrix}\mathbf h_1\\ \vdots \\ \mathbf h_h\end{bmatrix} \in \mathbb R^{p_o}.$$
#
# Because each head compares queries and keys in a different subspace, different heads can attend
# to different positions for the same query (you will see four hand-made heads do exactly that
# in the experiments).

# %% [markdown]
# ## 2. All heads in one batched call
#
# A loop over the heads would work but is slow. Two observations make it unnecessary.
#
# **One projection for all heads.** Choose $p_q = p_k = p_v = p_o / h$ and call $p_o$
# `num_hiddens`. Stacking the $h$ matrices $\mathbf W_1^{(q)}, \ldots, \mathbf W_h^{(q)}$ on top of
# each other gives one `num_hiddens` $\times\, d_q$ matrix, i.e. a single
# `nn.Linear(query_size, num_hiddens)`. Its output features $i\,p_q, \ldots, (i+1)\,p_q - 1$ are
# exactly head $i$'s projected query. The same holds for keys and values. This choice also keeps
# the cost of $h$ heads about that of one head of width `num_hiddens`.
#
# **Heads as extra batch rows.** Scaled dot-product attention works on batches `(B, Q, d)`, and
# the heads are independent of each other just like batch items are. So we cut the feature axis
# into $h$ chunks and move the chunk index into the batch axis: `(B, L, num_hiddens)` becomes
# `(B*h, L, num_hiddens/h)`, one batched attention call computes every head of every batch item,
# and the inverse reshape glues the head outputs back together, which *is* the concatenation
# $[\mathbf h_1; \ldots; \mathbf h_h]$. Finally `W_o` mixes the heads.
#
# Note that the scaling inside each head is $1/\sqrt{\text{num\_hiddens}/h}$: `DotProductAttention`
# divides by the square root of the feature size *it sees*, which is the per-head size.

# %% [markdown]
# ## 3. `transpose_qkv`: from `(B, L, d)` to `(B*h, L, d/h)`
#
# The layout is fixed by the contract: **head-major within each batch item**. Row `b*h + i` of the
# result is head `i` of batch item `b`, and head `i` holds features `i*d/h .. (i+1)*d/h - 1` of
# every position. Three steps get there:
#
# 1. `reshape` to `(B, L, h, d/h)`: split each position's features into $h$ consecutive chunks;
# 2. `permute(0, 2, 1, 3)` to `(B, h, L, d/h)`: put the head axis in front of the positions;
# 3. `reshape` to `(B*h, L, d/h)`: merge batch and head axes (batch item outermost).
#
# **Worked example.** One batch item, two positions, four features, two heads:
#
# ```
# X = [[[0, 1, 2, 3],        position 0
#       [4, 5, 6, 7]]]       position 1           shape (1, 2, 4)
#
# step 1  (1, 2, 2, 2): [[[[0, 1], [2, 3]],  [[4, 5], [6, 7]]]]    position -> head -> features
# step 2  (1, 2, 2, 2): [[[[0, 1], [4, 5]],  [[2, 3], [6, 7]]]]    head -> position -> features
# step 3  (2, 2, 2):    [[[0, 1], [4, 5]],                          row 0 = head 0 (features 0-1)
#                        [[2, 3], [6, 7]]]                          row 1 = head 1 (features 2-3)
# ```
#
# A common mistake is to skip step 2 and reshape `(B, L, d)` straight to `(B*h, L, d/h)`. The
# shapes come out right, but the rows then hold `[[0, 1], [2, 3]]` and `[[4, 5], [6, 7]]`: each
# "head" sees the two halves of *one* position instead of one half of *every* position, so
# positions get mixed up. The self-check catches this with the example above.

# %% nbgrader={"grade": false, "grade_id": "transpose_qkv", "locked": false, "schema_version": 3, "solution": true, "task": false}
def transpose_qkv(X: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(B, L, d) -> (B*h, L, d/h); rows b*h .. b*h+h-1 are the heads of batch item b."""
    ### BEGIN SOLUTION
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)  # (B, L, h, d/h)
    X = X.permute(0, 2, 1, 3)  # (B, h, L, d/h)
    return X.reshape(-1, X.shape[2], X.shape[3])  # (B*h, L, d/h)
    ### END SOLUTION

# %% nbgrader={"grade": false, "grade_id": "check_transpose_qkv", "locked": true, "schema_version": 3, "solution": false, "task": false}
check("transpose_qkv")

# %% nbgrader={"grade": true, "grade_id": "test_transpose_qkv", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Graded cell for transpose_qkv (2 points): the autograder scores this component in an
# isolated process with hidden tests, in addition to the public tests that check() runs here.
check("transpose_qkv")

# %% [markdown]
# ## 4. `transpose_output`: back to `(B, L, d)`
#
# After attention, each of the `B*h` rows holds one head's output `(L, d/h)`. `transpose_output`
# undoes `transpose_qkv` step by step in reverse order: reshape to `(B, h, L, d/h)`, permute the
# head axis back behind the positions `(B, L, h, d/h)`, and merge the last two axes into
# `(B, L, d)`. For every position this lays head 0's features first, then head 1's, and so on:
# the concatenation $[\mathbf h_1; \ldots; \mathbf h_h]$ of the formula above.

# %% nbgrader={"grade": false, "grade_id": "transpose_output", "locked": false, "schema_version": 3, "solution": true, "task": false}
def transpose_output(X: torch.Tensor, num_heads: int) -> torch.Tensor:
    """The inverse of transpose_qkv: (B*h, L, d/h) -> (B, L, d)."""
    ### BEGIN SOLUTION
    X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])  # (B, h, L, d/h)
    X = X.permute(0, 2, 1, 3)  # (B, L, h, d/h)
    return X.reshape(X.shape[0], X.shape[1], -1)  # (B, L, d)
    ### END SOLUTION

# %% nbgrader={"grade": false, "grade_id": "check_transpose_output", "locked": true, "schema_version": 3, "solution": false, "task": false}
check("transpose_output")

# %% nbgrader={"grade": true, "grade_id": "test_transpose_output", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Graded cell for transpose_output (2 points): the autograder scores this component in an
# isolated process with hidden tests, in addition to the public tests that check() runs here.
check("transpose_output")

# %% [markdown]
# Let us replay the worked example with your functions, and compare with the tempting one-line
# reshape that skips the permutation.

# %%
X = torch.arange(8, dtype=torch.float32).reshape(1, 2, 4)
heads = transpose_qkv(X, 2)
print("transpose_qkv(X, 2):\n", heads)
print("one-line reshape (wrong):\n", X.reshape(2, 2, 2))
print("round trip gives X back:", torch.equal(transpose_output(heads, 2), X))

X = torch.randn(3, 5, 12)  # B=3, L=5, d=12
for h in (1, 2, 3, 4, 6):
    assert torch.equal(transpose_output(transpose_qkv(X, h), h), X)
print("round trip exact for B=3, L=5, d=12 and h = 1, 2, 3, 4, 6")

# %% [markdown]
# ## 5. `MultiHeadAttention`
#
# The module has the attributes below (the grader copies reference weights into them by name, so
# the names are part of the contract):
#
# - `W_q = nn.Linear(query_size, num_hiddens, bias=bias)`, `W_k = nn.Linear(key_size, num_hiddens, bias=bias)`,
#   `W_v = nn.Linear(value_size, num_hiddens, bias=bias)`: the stacked per-head projections;
# - `W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)`: the output projection;
# - `attention = DotProductAttention(dropout)`: the pooling shared by all heads (its dropout acts on
#   the attention weights, and it stores `attention.attention_weights` of shape `(B*h, Q, K)`);
# - `num_heads`.
#
# `forward(queries, keys, values, valid_lens)` projects, splits into heads with `transpose_qkv`,
# attends, merges with `transpose_output` and applies `W_o`. The output is `(B, Q, num_hiddens)`.
#
# **The valid lengths.** `valid_lens` is `None`, `(B,)` or `(B, Q)`, one entry (row) per *batch
# item*, but the attention now sees `B*h` rows. Every head of batch item `b` must use `b`'s
# lengths, and the heads of `b` sit in rows `b*h .. b*h + h - 1`. So each entry must be repeated
# $h$ times *in place*: `torch.repeat_interleave(valid_lens, num_heads, dim=0)` turns `[3, 2]` into
# `[3, 3, 2, 2]` for two heads. `valid_lens.repeat(num_heads)` would give `[3, 2, 3, 2]`, which
# silently masks the wrong keys for every batch size above 1.

# %% nbgrader={"grade": false, "grade_id": "MultiHeadAttention", "locked": false, "schema_version": 3, "solution": true, "task": false}
class MultiHeadAttention(nn.Module):
    """h scaled dot-product attention heads over learned projections, concatenated and mixed."""

    def __init__(self, key_size: int, query_size: int, value_size: int, num_hiddens: int,
                 num_heads: int, dropout: float, bias: bool = False, **kwargs: object) -> None:
        ### BEGIN SOLUTION
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=bias)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=bias)
        self.W_v = nn.Linear(value_size, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        ### END SOLUTION

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                valid_lens: Optional[torch.Tensor]) -> torch.Tensor:
        """queries (B, Q, q), keys (B, K, k), values (B, K, v) -> (B, Q, num_hiddens)."""
        ### BEGIN SOLUTION
        queries = transpose_qkv(self.W_q(queries), self.num_heads)  # (B*h, Q, H/h)
        keys = transpose_qkv(self.W_k(keys), self.num_heads)  # (B*h, K, H/h)
        values = transpose_qkv(self.W_v(values), self.num_heads)  # (B*h, K, H/h)
        if valid_lens is not None:
            # Every head of batch item b uses b's lengths: (B,) -> (B*h,) or (B, Q) -> (B*h, Q).
            valid_lens = torch.repeat_interleave(valid_lens, self.num_heads, dim=0)
        output = self.attention(queries, keys, values, valid_lens)  # (B*h, Q, H/h)
        return self.W_o(transpose_output(output, self.num_heads))  # (B, Q, H)
        ### END SOLUTION

# %% nbgrader={"grade": false, "grade_id": "check_MultiHeadAttention", "locked": true, "schema_version": 3, "solution": false, "task": false}
check("MultiHeadAttention")

# %% nbgrader={"grade": true, "grade_id": "test_MultiHeadAttention", "locked": true, "points": 6, "schema_version": 3, "solution": false, "task": false}
# Graded cell for MultiHeadAttention (6 points): the autograder scores this component in an
# isolated process with hidden tests, in addition to the public tests that check() runs here.
check("MultiHeadAttention")

# %% [markdown]
# ## 6. Experiments
#
# ### 6.1 Shapes
#
# Queries and key-value pairs may differ in number and in feature size; the output always has
# `num_hiddens` features per query.

# %%
num_hiddens, num_heads = 100, 5
attention = MultiHeadAttention(key_size=12, query_size=20, value_size=7, num_hiddens=num_hiddens,
                               num_heads=num_heads, dropout=0.5)
attention.eval()  # dropout off
batch_size, num_queries, num_kvpairs = 2, 4, 6
valid_lens = torch.tensor([3, 2])
queries = torch.ones((batch_size, num_queries, 20))
keys = torch.ones((batch_size, num_kvpairs, 12))
values = torch.ones((batch_size, num_kvpairs, 7))
print("output:", tuple(attention(queries, keys, values, valid_lens).shape))
print("attention weights:", tuple(attention.attention.attention_weights.shape), "= (B*h, Q, K)")

# %% [markdown]
# ### 6.2 The batched heads are the same as a loop over heads
#
# Section 2 claimed that the rows `i*p .. (i+1)*p - 1` of `W_q.weight` (with `p = num_hiddens/h`)
# are head $i$'s own matrix $\mathbf W_i^{(q)}$. Let us check it: compute every head separately
# with those slices and a fresh `DotProductAttention`, concatenate the heads, apply `W_o`, and
# compare with your module.

# %%
torch.manual_seed(0)
B, Q, K, d_q, d_k, d_v, H, h = 2, 3, 5, 4, 6, 7, 8, 2
mha = MultiHeadAttention(d_k, d_q, d_v, H, h, dropout=0.0)
mha.eval()
q, k, v = torch.randn(B, Q, d_q), torch.randn(B, K, d_k), torch.randn(B, K, d_v)
valid_lens = torch.tensor([2, 4])
p = H // h
head_outputs = []
with torch.no_grad():
    for i in range(h):
        rows = slice(i * p, (i + 1) * p)
        q_i = q @ mha.W_q.weight[rows].T  # (B, Q, p): W_i^(q) q for every query
        k_i = k @ mha.W_k.weight[rows].T  # (B, K, p)
        v_i = v @ mha.W_v.weight[rows].T  # (B, K, p)
        head_outputs.append(DotProductAttention(0.0)(q_i, k_i, v_i, valid_lens))  # (B, Q, p)
    looped = mha.W_o(torch.cat(head_outputs, dim=-1))  # (B, Q, H)
    batched = mha(q, k, v, valid_lens)
print("max |loop over heads - batched heads| =", float((looped - batched).abs().max()))

# %% [markdown]
# ### 6.3 What different heads do: four hand-made heads
#
# To see that heads can attend to different places *for the same query*, we set the weights of a
# 4-head layer by hand instead of training it. The toy input is a sequence of $L = 8$ tokens where
# token $j$ is simply the one-hot vector $\mathbf e_j$ of its position, so `key_size = query_size =
# value_size = 8`, and each head has $p = 8$ features (`num_hiddens = 32`).
#
# With $\mathbf W_i^{(k)} = \mathbf I$, the score of query position $t$ against key position $j$ in
# head $i$ is $(\mathbf W_i^{(q)}\mathbf e_t)^\top \mathbf e_j / \sqrt 8 = [\mathbf W_i^{(q)}]_{j t}/\sqrt 8$,
# so the query matrix of a head directly says which key each position looks for:
#
# | head | $\mathbf W_i^{(q)}$ | query at position $t$ attends to |
# |---|---|---|
# | 0 | $a\,\mathbf I$ | itself, $t$ |
# | 1 | $a\,\times$ ones above the diagonal | the previous token, $t-1$ |
# | 2 | $a\,\times$ ones below the diagonal | the next token, $t+1$ |
# | 3 | $\mathbf 0$ | every token equally (an average) |
#
# with a large $a$ so that the softmax is sharp. The second row of the figure feeds the same input
# with `valid_lens = 6`: keys 6 and 7 are padding and receive no weight in any head (the two
# rightmost columns of the bottom row are empty). All panels share one colour scale, 0 to 1.

# %%
L, h, a = 8, 4, 20.0
I = torch.eye(L)
previous = torch.diag(torch.ones(L - 1), 1)  # [W]_{j,t} = 1 for j = t - 1
following = torch.diag(torch.ones(L - 1), -1)  # [W]_{j,t} = 1 for j = t + 1
toy = MultiHeadAttention(L, L, L, h * L, h, dropout=0.0)
toy.eval()
with torch.no_grad():
    toy.W_q.weight.copy_(torch.cat([a * I, a * previous, a * following, 0 * I]))  # (32, 8)
    toy.W_k.weight.copy_(torch.cat([I] * h))
    toy.W_v.weight.copy_(torch.cat([I] * h))  # every head returns a mixture of one-hot positions
    toy.W_o.weight.copy_(torch.eye(h * L))  # keep the heads apart in the output
X = I.unsqueeze(0)  # (1, 8, 8): token j is e_j
grids = []
for lens in (None, torch.tensor([6])):
    with torch.no_grad():
        out = toy(X, X, X, lens)  # (1, 8, 32)
    grids.append(toy.attention.attention_weights.reshape(h, L, L))  # (h, Q, K) for B = 1
titles = [tr("head 0: self"), tr("head 1: previous"), tr("head 2: next"), tr("head 3: average")]
fig = show_heatmaps(torch.stack(grids), xlabel=tr("key position"), ylabel=tr("query position"),
                    titles=titles, figsize=(2.6, 2.6))
for image in (im for ax in fig.axes for im in ax.images):
    image.set_clim(0, 1)  # one colour scale (weights 0..1) for every panel and the colour bar
fig.suptitle(tr("top: all 8 keys valid; bottom: valid_lens = 6"), y=1.02)
fig.savefig("figures/multihead_toy_heads.png", bbox_inches="tight", dpi=120)

# Head i's output at query t is a weighted average of one-hot positions, so its dot product
# with (0, 1, ..., 7) is the (average) position that the head retrieved.
per_head = out.reshape(L, h, L)  # (position, head, one-hot features), from the masked call
print("position retrieved by each head for queries 0..7 (valid_lens = 6):")
positions = torch.arange(L, dtype=torch.float32)
for i, title in enumerate(titles):
    print(f"  {title:17s}", [round(x, 1) for x in (per_head[:, i] @ positions).tolist()])

# %% [markdown]
# Head 1 looks one step back and head 2 one step forward for *every* query: the same input,
# projected differently, gives completely different attention patterns. At the borders there is
# no previous (or, with `valid_lens = 6`, no valid next) token, every score is equal and the head
# falls back to a uniform average over the valid keys. A trained Transformer learns such
# patterns, and many others, by itself: in assignment 06 you will plot the heads of a trained model.
#
# **Things to try.** Give the heads random weights (`torch.nn.init.normal_`) and plot them again;
# feed a batch of two sequences with `valid_lens = torch.tensor([6, 8])` and replace
# `repeat_interleave` by `repeat` in your `forward` for a moment to see which heads get the wrong mask.
