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
# # Assignment 05: Self-attention and positional encoding
#
# So far queries came from one place (a decoder state) and keys and values from another (the
# encoder outputs). If a sequence attends *to itself*, so that every token is at once a query, a
# key and a value, attention becomes a way to encode a whole sequence, with no recurrence and no
# convolution: *self-attention*. The price is that attention ignores order. This assignment
# looks at both sides and implements the fix that the Transformer uses: sinusoidal *positional
# encodings*.
#
# You implement one component (6 points):
#
# | component | points | what it does |
# |---|---|---|
# | `PositionalEncoding` | 6 | precompute the matrix `P` of sines and cosines; `forward` adds it to the input, then dropout |
#
# `MultiHeadAttention` (the course's reference version of assignment 04) and the plotting helpers
# are given in `attention_support`.
#
# **How this notebook is graded.** In the solution cell, replace the `raise NotImplementedError()`
# lines by your code, and keep the names, signatures, docstrings and the attribute name `P`. The self-check cell runs the public tests on your code; the grader
# runs hidden tests on your definitions only, never on the experiments.

# %%
import math
import os
from typing import Optional

import matplotlib.pyplot as plt
import torch
from torch import nn

from autograder.selfcheck import check
from attention_support import MultiHeadAttention, plot, show_heatmaps, tr

os.makedirs("figures", exist_ok=True)

# %% [markdown]
# ## 1. Self-attention
#
# Take a sequence of tokens $\mathbf x_1, \ldots, \mathbf x_n$, each $\mathbf x_i \in \mathbb R^d$.
# Self-attention lets every token query all tokens of the same sequence, using the tokens
# themselves as keys and values. With an attention pooling $f$ (below: multi-head scaled
# dot-product attention) output $i$ is
#
# $$\mathbf y_i = f\big(\mathbf x_i, (\mathbf x_1, \mathbf x_1), \ldots, (\mathbf x_n, \mathbf x_n)\big) \in \mathbb R^d ,$$
#
# and the output $\mathbf y_1, \ldots, \mathbf y_n$ is again a sequence of length $n$. In code
# this is just `MultiHeadAttention` called with `queries = keys = values = X`; valid lengths
# still mark padding tokens, which no query may attend to.

# %%
num_hiddens, num_heads = 100, 5
attention = MultiHeadAttention(num_hiddens, num_hiddens, num_hiddens, num_hiddens, num_heads, 0.5)
attention.eval()  # dropout off
batch_size, num_steps, valid_lens = 2, 4, torch.tensor([3, 2])
X = torch.ones((batch_size, num_steps, num_hiddens))
print("self-attention output:", tuple(attention(X, X, X, valid_lens).shape), "= the shape of X")

# %% [markdown]
# **Self-attention does not see order.** Every output is a weighted average whose weights depend
# only on *which* tokens are present, not on where they stand. Shuffle the tokens and the outputs
# are shuffled the same way, but otherwise unchanged (the layer is *permutation equivariant*):

# %%
torch.manual_seed(0)
d, n = 16, 6
self_attention = MultiHeadAttention(d, d, d, d, 4, 0.0)
self_attention.eval()
X = torch.randn(1, n, d)
perm = torch.randperm(n)
with torch.no_grad():
    Y = self_attention(X, X, X, None)
    Y_shuffled = self_attention(X[:, perm], X[:, perm], X[:, perm], None)
print("permutation:", perm.tolist())
print("max |f(shuffled X) - shuffled f(X)| =", float((Y_shuffled - Y[:, perm]).abs().max()))

# %% [markdown]
# For a sentence, or a date such as `march 3rd , 1994` versus `3rd march , 1994`, this is a
# problem: "the token at position 2" must mean something. Section 3 fixes it by adding position
# information to the tokens before the first attention layer.
#
# ## 2. CNNs, RNNs and self-attention compared
#
# All three map a sequence of $n$ vectors of size $d$ to another such sequence. Three costs
# matter: the computation of one layer, the number of *sequential* operations (steps that must
# wait for each other and cannot run in parallel), and the *maximum path length*, the number of
# layers or steps a signal needs to travel between the two most distant positions (short paths
# make long-range dependencies easier to learn).
#
# | layer | computation | sequential operations | maximum path length |
# |---|:-:|:-:|:-:|
# | convolution, kernel size $k$ | $\mathcal O(knd^2)$ | $\mathcal O(1)$ | $\mathcal O(n/k)$ |
# | recurrent (RNN) | $\mathcal O(nd^2)$ | $\mathcal O(n)$ | $\mathcal O(n)$ |
# | self-attention | $\mathcal O(n^2d)$ | $\mathcal O(1)$ | $\mathcal O(1)$ |
#
# - A **convolution** computes each of the $n$ outputs from $k$ inputs with $d\times d$ weights:
#   $\mathcal O(knd^2)$, all positions in parallel. Each layer widens the receptive field by about
#   $k$, so distant positions need about $n/k$ stacked layers to meet.
# - An **RNN** multiplies a $d\times d$ matrix with the hidden state at every one of the $n$
#   steps: $\mathcal O(nd^2)$, but step $t$ needs step $t-1$, so $n$ sequential operations, and
#   information from token 1 reaches token $n$ only after $n$ updates.
# - **Self-attention** multiplies the $n\times d$ queries with the $d\times n$ keys and the
#   $n\times n$ weights with the $n\times d$ values: $\mathcal O(n^2d)$, fully parallel, and every
#   token is connected to every other one directly.
#
# Self-attention wins on parallelism and path length; its cost grows quadratically with the
# length, so it is cheapest when $n < d$ (in assignment 06: $n = 12$ characters,
# $d = 64$) and becomes the bottleneck for very long sequences.

# %% [markdown]
# ## 3. Positional encoding
#
# The Transformer injects order by adding a *position embedding* to each token's representation.
# It could be learned; the original model uses a fixed one built from sines and cosines
# (Vaswani et al., 2017). For an input $\mathbf X \in \mathbb R^{n\times d}$ (the $d$-dimensional
# representations of $n$ tokens) the layer outputs $\mathbf X + \mathbf P$, where row $i$ of
# $\mathbf P \in \mathbb R^{n\times d}$ encodes position $i$ and its columns alternate sines and
# cosines of decreasing frequency:
#
# $$p_{i,2j} = \sin\left(\frac{i}{10000^{2j/d}}\right), \qquad p_{i,2j+1} = \cos\left(\frac{i}{10000^{2j/d}}\right).$$
#
# Column pair $(2j, 2j+1)$ thus oscillates with the angular frequency
# $\omega_j = 1/10000^{2j/d}$, from $\omega_0 = 1$ (a period of $2\pi \approx 6.3$ positions) down to
# almost $10^{-4}$ (a period of about $60\,000$ positions).
#
# **What to implement.** `PositionalEncoding(num_hiddens, dropout, max_len=1000)`:
#
# - in `__init__`, compute once the whole table for positions $0, \ldots$ `max_len - 1` and store it
#   as `self.P` of shape `(1, max_len, num_hiddens)` (the leading 1 broadcasts over the batch). The
#   grader reads `P` by name; a plain attribute or a buffer (`self.register_buffer("P", P)`, which
#   moves with `.to(device)` and is never trained) are both fine. Keep a `nn.Dropout(dropout)`.
# - `forward(X)` with `X` of shape `(B, T, num_hiddens)` returns `dropout(X + P[:, :T])`.
#
# Common pitfalls: the exponent is $2j/d$ for the *pair index* $j$ (so use the even
# column indices $0, 2, 4, \ldots$ divided by $d$), not $j/d$; sines go to the even columns and cosines
# to the odd ones (interleaved, not first half / second half); `torch.arange` of integers must be
# made floating point before dividing; an odd `num_hiddens` has one more sine column than cosine
# columns; and the encoding must end up on the device of `X`.

# %% nbgrader={"grade": false, "grade_id": "PositionalEncoding", "locked": false, "schema_version": 3, "solution": true, "task": false}
class PositionalEncoding(nn.Module):
    """Add P[0, i, 2j] = sin(i / 10000^(2j/d)), P[0, i, 2j+1] = cos(...) to the input, then dropout."""

    def __init__(self, num_hiddens: int, dropout: float, max_len: int = 1000) -> None:
        ### BEGIN SOLUTION
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        positions = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1)  # (max_len, 1)
        frequencies = torch.pow(
            10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)  # (ceil(d/2),)
        angles = positions / frequencies  # (max_len, ceil(d/2))
        P = torch.zeros((1, max_len, num_hiddens))
        P[0, :, 0::2] = torch.sin(angles)
        P[0, :, 1::2] = torch.cos(angles[:, : num_hiddens // 2])  # odd d: one fewer cosine column
        # A buffer, not a parameter: it moves with .to(device) and is never trained or saved.
        self.register_buffer("P", P, persistent=False)
        ### END SOLUTION

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        """X (B, T, d) -> X + P[:, :T] with dropout, (B, T, d)."""
        ### BEGIN SOLUTION
        return self.dropout(X + self.P[:, : X.shape[1], :].to(X.device))
        ### END SOLUTION

# %% nbgrader={"grade": false, "grade_id": "check_PositionalEncoding", "locked": true, "schema_version": 3, "solution": false, "task": false}
check("PositionalEncoding")

# %% nbgrader={"grade": true, "grade_id": "test_PositionalEncoding", "locked": true, "points": 6, "schema_version": 3, "solution": false, "task": false}
# Graded cell for PositionalEncoding (6 points): the autograder scores this component in an
# isolated process with hidden tests, in addition to the public tests that check() runs here.
check("PositionalEncoding")

# %% [markdown]
# ## 4. Experiments
#
# ### 4.1 The columns of P
#
# Rows of $\mathbf P$ are positions, columns are encoding dimensions. Plotting four columns over 60
# positions for $d = 32$ shows the two effects built into the formula: columns 6 and 7 (pair
# $j = 3$) oscillate faster than columns 8 and 9 (pair $j = 4$), and within a pair the cosine is the
# sine shifted by a quarter period.

# %%
encoding_dim, num_steps = 32, 60
pos_encoding = PositionalEncoding(encoding_dim, 0)
pos_encoding.eval()
X = pos_encoding(torch.zeros((1, num_steps, encoding_dim)))  # = P[:, :60]
P = pos_encoding.P[0, :num_steps, :].clone()  # (60, 32)
print("X + P with X = 0 gives P back:", torch.allclose(X[0], P))
fig = plot(torch.arange(num_steps), [P[:, j] for j in range(6, 10)], xlabel=tr("position i"),
           ylabel="p[i, j]", legend=[tr("column {j}").format(j=j) for j in range(6, 10)], figsize=(6, 2.8),
           title=tr("columns 6-9 of P (d = 32)"))
fig.savefig("figures/pe_columns.png", bbox_inches="tight", dpi=120)

# %% [markdown]
# ### 4.2 A continuous cousin of binary numbers
#
# Why should alternating frequencies encode a position? Write the integers 0 to 7 in binary: the
# lowest bit flips at every step, the next one every two steps, the highest every four steps.
# Each column of bits is a "wave" whose frequency halves from one column to the next, and
# together the columns identify every number.
#
# The rows of $\mathbf P$ do the same with continuous values: the first columns (high frequency)
# change quickly from one position to the next, the last columns (low frequency) barely move, and
# together they give each position a distinct pattern. Floats make this cheaper than bits: a
# single low-frequency pair still separates thousands of positions. The heatmap shows the 60 × 32
# encodings (position down, encoding dimension across).

# %%
for i in range(8):
    print(f"{i} in binary is {i:>03b}")
bits = torch.tensor([[(i >> b) & 1 for b in (2, 1, 0)] for i in range(8)], dtype=torch.float32)

fig, axes = plt.subplots(1, 2, figsize=(8, 3.6), gridspec_kw={"width_ratios": [1, 3]})
axes[0].imshow(bits.numpy(), cmap="Blues", aspect="auto")
axes[0].set_xticks(range(3), labels=[tr("bit {b}").format(b=b) for b in (2, 1, 0)])
axes[0].set_yticks(range(8))
axes[0].set_ylabel(tr("number"))
axes[0].set_title(tr("binary digits of 0..7"))
image = axes[1].imshow(P.numpy(), cmap="Blues", aspect="auto")
axes[1].set_xlabel(tr("encoding dimension (column of P)"))
axes[1].set_ylabel(tr("position"))
axes[1].set_title(tr("positional encoding P, d = 32"))
fig.colorbar(image, ax=axes[1], shrink=0.8)
fig.savefig("figures/pe_binary_vs_encoding.png", bbox_inches="tight", dpi=120)

# %% [markdown]
# ### 4.3 Relative positions: a fixed rotation
#
# Besides the absolute position, the encoding makes *relative* positions easy to use. Fix an
# offset $\delta$. By the angle-addition formulas, for every column pair $j$ and **every** position $i$
#
# $$\begin{bmatrix} p_{i+\delta,\,2j} \\ p_{i+\delta,\,2j+1} \end{bmatrix}
# = \begin{bmatrix} \sin(i\omega_j + \delta\omega_j) \\ \cos(i\omega_j + \delta\omega_j) \end{bmatrix}
# = \underbrace{\begin{bmatrix} \cos\delta\omega_j & \sin\delta\omega_j \\ -\sin\delta\omega_j & \cos\delta\omega_j \end{bmatrix}}_{\mathbf R_j(\delta)}
# \begin{bmatrix} p_{i,2j} \\ p_{i,2j+1} \end{bmatrix}.$$
#
# So $\mathbf p_{i+\delta} = \mathbf M_\delta\, \mathbf p_i$ with the block-diagonal matrix
# $\mathbf M_\delta = \operatorname{diag}(\mathbf R_0(\delta), \mathbf R_1(\delta), \ldots)$: a rotation of
# every column pair by the angle $\delta\omega_j$, which depends on $\delta$ but **not on $i$**. A
# single linear map (something a query or key projection can learn) turns "position $i$" into
# "position $i + \delta$" everywhere in the sequence, for instance to attend to the token three
# places back.
#
# Let us build $\mathbf M_\delta$ and check it against your encoding for all 1000 positions.

# %%
def rotation_map(num_hiddens: int, delta: int) -> torch.Tensor:
    """The block-diagonal (num_hiddens, num_hiddens) matrix M with P[i + delta] = M @ P[i]."""
    omegas = 1 / torch.pow(10000, torch.arange(0, num_hiddens, 2, dtype=torch.float64) / num_hiddens)
    M = torch.zeros(num_hiddens, num_hiddens, dtype=torch.float64)
    for j, omega in enumerate(omegas):
        c, s = math.cos(delta * omega), math.sin(delta * omega)
        M[2 * j:2 * j + 2, 2 * j:2 * j + 2] = torch.tensor([[c, s], [-s, c]])
    return M


d, max_len = 16, 1000
P_all = PositionalEncoding(d, 0, max_len).P[0].double()  # (1000, 16)
for delta in (1, 3, 10, 100):
    M = rotation_map(d, delta)
    predicted = P_all[:max_len - delta] @ M.T  # row i: M @ p_i
    error = (predicted - P_all[delta:]).abs().max()
    print(f"delta = {delta:3d}: max over all i of |M p_i - p_(i+delta)| = {float(error):.1e}")

# %% [markdown]
# The errors are at the level of float32 rounding of the large angles in `P` (the encoding itself is
# stored in float32), so one matrix per offset works for every position. The figure shows
# $\mathbf M_3$ for $d = 16$ (left: $2\times 2$ rotation blocks on the diagonal, close to the identity
# for the slow pairs towards the lower right) and what it does in the plane of pair $j = 2$
# ($\omega_2 = 0.1$): the encodings of all positions lie on the unit circle, and every arrow from
# $\mathbf p_i$ to $\mathbf p_{i+3}$ turns by the same angle $3\omega_2 = 0.3$ rad.

# %%
delta, j = 3, 2
M = rotation_map(d, delta)
fig, (ax0, ax) = plt.subplots(1, 2, figsize=(10, 4.2), gridspec_kw={"width_ratios": [1.15, 1]},
                              layout="constrained")
image = ax0.imshow(M.numpy(), cmap="RdBu", vmin=-1, vmax=1)
ax0.set_title(tr("M for delta = {delta}, d = {d}").format(delta=delta, d=d))
ax0.set_xlabel(tr("column of p_i"))
ax0.set_ylabel(tr("column of p_(i+delta)"))
fig.colorbar(image, ax=ax0, shrink=0.8)
pair = P_all[:70, 2 * j:2 * j + 2].clone()  # (70, 2): (sin, cos) of pair j for positions 0..69
ax.plot(pair[:, 0], pair[:, 1], ".", color="lightgray", label=tr("positions 0..69"))
for i in range(0, 63, 9):
    start, end = pair[i], pair[i + delta]
    ax.annotate("", xy=tuple(end.tolist()), xytext=tuple(start.tolist()),
                arrowprops=dict(arrowstyle="->", color="tab:red"))
    ax.text(1.12 * float(start[0]), 1.12 * float(start[1]), str(i), ha="center", va="center",
            fontsize=8)
ax.set_aspect("equal")
ax.set_xlim(-1.3, 1.3)
ax.set_ylim(-1.3, 1.3)
ax.set_xlabel(tr("p[i, {column}]  (sine)").format(column=2 * j))
ax.set_ylabel(tr("p[i, {column}]  (cosine)").format(column=2 * j + 1))
ax.set_title(tr("pair j = {j}: p_i -> p_(i+{delta}) for i = 0, 9, 18, ...").format(j=j, delta=delta))
ax.legend(loc="lower left", fontsize=8)
fig.savefig("figures/pe_relative_rotation.png", bbox_inches="tight", dpi=120)

# %% [markdown]
# ### 4.4 Positional encoding breaks the symmetry
#
# Back to the experiment of section 1: once $\mathbf P$ is added to the tokens, shuffling them is
# no longer a mere relabelling, because each token now carries its position. The outputs of the
# shuffled sequence differ from the shuffled outputs.

# %%
torch.manual_seed(0)
d, n = 16, 6
X = torch.randn(1, n, d)
perm = torch.randperm(n)
pos_encoding = PositionalEncoding(d, 0)
pos_encoding.eval()
with torch.no_grad():
    Z, Z_shuffled = pos_encoding(X), pos_encoding(X[:, perm])
    Y = self_attention(Z, Z, Z, None)
    Y_shuffled = self_attention(Z_shuffled, Z_shuffled, Z_shuffled, None)
print("with positional encoding: max |f(shuffled X) - shuffled f(X)| =",
      f"{float((Y_shuffled - Y[:, perm]).abs().max()):.3f}")

# %% [markdown]
# In a Transformer (assignment 06) the token embeddings are first multiplied by $\sqrt d$ and then
# `PositionalEncoding` adds $\mathbf P$, so that the token identity is not drowned by the
# encodings; assignment 06 explains the factor.
#
# **Things to try.** Replace 10000 by 100 and look at the heatmap of 4.2 again; check with
# `rotation_map` that $\mathbf M_\delta$ is orthogonal ($\mathbf M_\delta^\top \mathbf M_\delta = \mathbf I$)
# and that $\mathbf M_{\delta_1}\mathbf M_{\delta_2} = \mathbf M_{\delta_1+\delta_2}$.
