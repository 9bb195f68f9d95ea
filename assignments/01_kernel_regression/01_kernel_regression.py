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
# # Assignment 01: Nadaraya-Watson kernel regression as attention pooling
#
# This first assignment builds the vocabulary of the whole course (queries, keys, values,
# attention weights, attention pooling) on the smallest model that has all of them: a kernel
# regression estimator from 1964.
#
# **What you implement** (graded; the points come from the course description):
#
# | component | points | what it is |
# |---|---|---|
# | `nadaraya_watson(queries, keys, values)` | 4 | non-parametric attention pooling with a Gaussian kernel |
# | `NWKernelRegression` | 6 | the same pooling with one learnable kernel width `w` |
#
# In each solution cell, replace the `raise NotImplementedError()` lines by your code and keep
# the names, signatures and docstrings as they are. Then run the `check(...)` cell after it:
# it runs the public tests on your code. The autograder runs more (hidden) tests on the same
# contract.
#
# ## Attention cues: queries, keys and values
#
# Our senses receive far more input than we can process, so attention is selective. Psychology
# distinguishes two kinds of cues that steer it. A *nonvolitional* cue comes from the input
# itself: the one red cup on a desk of black-and-white papers catches the eye whether we want it
# or not. A *volitional* cue comes from what we intend to do: when we decide to read, we look
# for the book, even though it is not the most salient object.
#
# Neural attention mechanisms turn this picture into three roles:
#
# * the **query** is the volitional cue: what the model is looking for right now;
# * each **key** is a nonvolitional cue attached to one piece of the input;
# * each key is paired with a **value**, the sensory input that is actually read out.
#
# *Attention pooling* compares the query with every key, turns the comparison into a set of
# nonnegative **attention weights** that sum to one, and returns the weighted average of the
# values. A plain average pooling layer is the special case where every weight is the same
# (no query at all); what makes attention different is that the weights depend on the query.

# %%
import math
import os
from typing import Any, Optional

import matplotlib.pyplot as plt
import torch
from torch import nn

from autograder.selfcheck import check
from attention_support import make_regression_data, regression_function, show_heatmaps, plot, tr

os.makedirs("figures", exist_ok=True)

# %% [markdown]
# ## The data: a noisy one-dimensional regression problem
#
# Given pairs $\{(x_1, y_1), \ldots, (x_n, y_n)\}$ we want to predict $\hat y = f(x)$ for a new
# input $x$. The toolkit generates the toy problem of the course text,
#
# $$y_i = 2\sin(x_i) + x_i^{0.8} + \epsilon, \qquad \epsilon \sim \mathcal{N}(0, 0.5^2),$$
#
# with 50 training inputs drawn uniformly from $[0, 5)$ and **sorted** (so that the heatmaps
# below have a readable diagonal), and 50 evenly spaced test inputs $0, 0.1, \ldots, 4.9$ with
# their noise-free targets. It is deterministic: everyone sees the same data.

# %%
x_train, y_train, x_test, y_truth = make_regression_data(n_train=50, seed=0)
n_train, n_test = len(x_train), len(x_test)
print(f"{n_train} training pairs, {n_test} test inputs")
print("first training inputs:", x_train[:5])


def plot_kernel_reg(y_hat: torch.Tensor, title: str, name: str) -> None:
    """Training points, the noise-free truth and a prediction on the test inputs; saved as figures/<name>.png."""
    fig, ax = plt.subplots(figsize=(4.5, 3))
    ax.plot(x_test, y_truth, label=tr("truth"))
    ax.plot(x_test, y_hat.detach(), "--", label=tr("prediction"))
    ax.plot(x_train, y_train, "o", alpha=0.5, label=tr("training data"))
    ax.set(xlim=(0, 5), ylim=(-1, 5), xlabel="x", ylabel="y", title=title)
    ax.legend(loc="upper right")
    ax.grid(True, alpha=0.3)
    plt.savefig(f"figures/{name}.png", bbox_inches="tight", dpi=120)


def test_mse(y_hat: torch.Tensor) -> float:
    """Mean squared error of a prediction against the noise-free targets."""
    return float(((y_hat.detach() - y_truth) ** 2).mean())


# %% [markdown]
# ## A baseline: average pooling
#
# The simplest estimator ignores the input altogether and predicts the mean of the training
# outputs,
#
# $$f(x) = \frac{1}{n}\sum_{i=1}^n y_i .$$
#
# In attention terms every value gets the same weight $1/n$, whatever the query. The flat line
# in the figure shows how little that buys us.

# %%
y_hat_avg = torch.repeat_interleave(y_train.mean(), n_test)
print(f"average pooling: test MSE {test_mse(y_hat_avg):.3f}")
plot_kernel_reg(y_hat_avg, tr("average pooling"), "average_pooling")


# %% [markdown]
# ## Non-parametric attention pooling
#
# Nadaraya and Watson proposed to weight each output $y_i$ by how close its input $x_i$ is to
# the query $x$:
#
# $$f(x) = \sum_{i=1}^n \frac{K(x - x_i)}{\sum_{j=1}^n K(x - x_j)}\, y_i,$$
#
# where $K$ is a *kernel*. Read with attention eyes, this is attention pooling
#
# $$f(x) = \sum_{i=1}^n \alpha(x, x_i)\, y_i$$
#
# with the test input $x$ as the query, the training inputs $x_i$ as keys and the training
# outputs $y_i$ as values. For every query the weights $\alpha(x, x_i)$ are a probability
# distribution over the keys. With the Gaussian kernel
# $K(u) = \frac{1}{\sqrt{2\pi}} \exp\left(-\frac{u^2}{2}\right)$ the constant cancels and the
# normalization is exactly a softmax:
#
# $$\alpha(x, x_i) = \frac{\exp\left(-\frac{1}{2}(x - x_i)^2\right)}{\sum_{j=1}^n \exp\left(-\frac{1}{2}(x - x_j)^2\right)}
#   = \mathrm{softmax}_i\left(-\frac{1}{2}(x - x_i)^2\right).$$
#
# The closer a key is to the query, the more weight its value receives. Nothing here is
# learned: the estimator is *non-parametric* (and consistent: with enough data it converges to
# the best predictor).
#
# **Your task.** Implement `nadaraya_watson(queries, keys, values)` for a batch of $n$ queries
# and $m$ key-value pairs:
#
# * `queries` has shape `(n,)`, `keys` and `values` have shape `(m,)`;
# * return the pair `(y_hat, attention_weights)` with `attention_weights[i, j]` $=
#   \mathrm{softmax}_j\left(-(q_i - k_j)^2 / 2\right)$ of shape `(n, m)` and `y_hat` `(n,)`, the
#   weighted sum of the values for each query.
#
# Hint: broadcasting a `(n, 1)` tensor against a `(1, m)` tensor gives all $n \times m$
# differences at once; `torch.softmax(..., dim=1)` normalizes over the keys.

# %% nbgrader={"grade": false, "grade_id": "nadaraya_watson", "locked": false, "schema_version": 3, "solution": true, "task": false}
def nadaraya_watson(queries: torch.Tensor, keys: torch.Tensor,
                    values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Non-parametric attention pooling with a Gaussian kernel.

    queries (n,), keys (m,), values (m,) -> (y_hat (n,), attention_weights (n, m)).
    """
    ### BEGIN SOLUTION
    diffs = queries.unsqueeze(1) - keys.unsqueeze(0)  # (n, m)
    attention_weights = torch.softmax(-diffs ** 2 / 2, dim=1)  # (n, m), rows sum to 1
    y_hat = attention_weights @ values  # (n,)
    return y_hat, attention_weights
    ### END SOLUTION


# %% nbgrader={"grade": false, "grade_id": "check_nadaraya_watson", "locked": true, "schema_version": 3, "solution": false, "task": false}
check("nadaraya_watson")

# %% [markdown]
# Now pool the training data with the test inputs as queries. The prediction follows the
# truth far better than the average, and it is smooth: every prediction averages many
# neighbours, because a kernel of width 1 is wide compared with the spacing of the data.

# %%
y_hat_nw, attention_weights_nw = nadaraya_watson(x_test, x_train, y_train)
print(f"Nadaraya-Watson: test MSE {test_mse(y_hat_nw):.3f}")
plot_kernel_reg(y_hat_nw, tr("non-parametric attention pooling"), "nadaraya_watson_fit")

# %% [markdown]
# The attention weights themselves form an `(n_test, n_train)` matrix. Both inputs are sorted,
# so a query attends most to the keys next to it: the mass sits on a broad band along the
# diagonal.

# %%
show_heatmaps(attention_weights_nw, xlabel=tr("sorted training inputs (keys)"),
              ylabel=tr("sorted test inputs (queries)"), titles=[tr("Nadaraya-Watson weights")],
              figsize=(3.5, 3.5))
plt.savefig("figures/nadaraya_watson_weights.png", bbox_inches="tight", dpi=120)

# %% nbgrader={"grade": true, "grade_id": "test_nadaraya_watson", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
# Graded cell for nadaraya_watson (4 points): the autograder scores this component in an
# isolated process with hidden tests, in addition to the public tests that check() runs here.
check("nadaraya_watson")


# %% [markdown]
# ## Parametric attention pooling
#
# We can put a learnable parameter into the pooling. Multiply the distance between query and
# key by a scalar $w$ before it enters the kernel:
#
# $$f(x) = \sum_{i=1}^n \frac{\exp\left(-\frac{1}{2}((x - x_i)w)^2\right)}{\sum_{j=1}^n \exp\left(-\frac{1}{2}((x - x_j)w)^2\right)}\, y_i
#   = \sum_{i=1}^n \mathrm{softmax}_i\left(-\frac{1}{2}((x - x_i)w)^2\right) y_i .$$
#
# $w$ sets the width of the kernel: a large $|w|$ makes it narrow (each query listens only to
# its closest keys), a small one makes it wide (towards average pooling).
#
# To train $w$ we will give every query **its own row of keys and values** (below, each
# training point is predicted from all the *other* training points), so the module works on a
# batch of $n$ queries, each with $m$ key-value pairs. Computing the weighted averages of a
# batch is a batched matrix product: `torch.bmm` of `(n, 1, m)` weights with `(n, m, 1)` values
# gives `(n, 1, 1)`; an elementwise product summed over the last axis does the same.
#
# **Your task.** Implement `NWKernelRegression(nn.Module)`:
#
# * `__init__`: exactly one learnable parameter, `self.w = nn.Parameter(torch.rand((1,)))`
#   (shape `(1,)`, the name `w` is part of the contract);
# * `forward(queries, keys, values)` with `queries` `(n,)`, `keys` and `values` `(n, m)`:
#   compute the weights $\mathrm{softmax}\left(-((q_i - k_{ij})\,w)^2 / 2\right)$ over the last
#   axis, **store them in `self.attention_weights`** `(n, m)` (the plots and the tests read
#   them), and return the `(n,)` predictions.

# %% nbgrader={"grade": false, "grade_id": "NWKernelRegression", "locked": false, "schema_version": 3, "solution": true, "task": false}
class NWKernelRegression(nn.Module):
    """Parametric attention pooling: the kernel width is a learnable scalar `w` of shape (1,)."""

    def __init__(self, **kwargs: object) -> None:
        ### BEGIN SOLUTION
        super().__init__(**kwargs)
        self.w = nn.Parameter(torch.rand((1,)))
        ### END SOLUTION

    def forward(self, queries: torch.Tensor, keys: torch.Tensor,
                values: torch.Tensor) -> torch.Tensor:
        """queries (n,), keys (n, m), values (n, m) -> (n,); weights kept in `attention_weights`."""
        ### BEGIN SOLUTION
        diffs = (queries.unsqueeze(1) - keys) * self.w  # (n, m)
        self.attention_weights = torch.softmax(-diffs ** 2 / 2, dim=1)  # (n, m)
        return (self.attention_weights * values).sum(dim=1)  # (n,)
        ### END SOLUTION


# %% nbgrader={"grade": false, "grade_id": "check_NWKernelRegression", "locked": true, "schema_version": 3, "solution": false, "task": false}
check("NWKernelRegression")

# %% [markdown]
# ### Training
#
# If a training point were among its own keys, the best $w$ would be huge: the kernel would
# shrink onto the point itself and reproduce its noisy label exactly. So, as in the course
# text, each training input is a query whose keys and values are the **other** $n - 1$
# training pairs (leave one out). Row $i$ of `keys` is `x_train` without its $i$-th entry:
# tile the training inputs into an $n \times n$ matrix and drop the diagonal.

# %%
off_diagonal = ~torch.eye(n_train, dtype=torch.bool)  # (n_train, n_train), False on the diagonal
keys_loo = x_train.repeat((n_train, 1))[off_diagonal].reshape(n_train, -1)  # (n_train, n_train - 1)
values_loo = y_train.repeat((n_train, 1))[off_diagonal].reshape(n_train, -1)  # (n_train, n_train - 1)
print("keys:", tuple(keys_loo.shape), " values:", tuple(values_loo.shape))
assert not (keys_loo == x_train.unsqueeze(1)).any(), "a training point is among its own keys"

# %% [markdown]
# We minimize the squared error with plain stochastic gradient descent (full batch, learning
# rate 0.5, five epochs, as in the course text). The initial $w$ is drawn uniformly from
# $[0, 1)$, so we fix the seed.

# %%
torch.manual_seed(0)
net = NWKernelRegression()
loss = nn.MSELoss(reduction="none")
trainer = torch.optim.SGD(net.parameters(), lr=0.5)
print(f"initial w = {net.w.item():.3f}")
train_losses = []
for epoch in range(5):
    trainer.zero_grad()
    l = loss(net(x_train, keys_loo, values_loo), y_train)
    l.sum().backward()
    trainer.step()
    train_losses.append(l.sum().item())
    print(f"epoch {epoch + 1}, loss {train_losses[-1]:.4f}, w = {net.w.item():.3f}")
plot(train_losses, xlabel=tr("epoch"), ylabel=tr("summed squared error"),
     title=tr("training NWKernelRegression"))
plt.savefig("figures/nw_kernel_regression_loss.png", bbox_inches="tight", dpi=120)

# %% [markdown]
# To predict on the test inputs, every test query gets all $n$ training pairs as its keys and
# values.

# %%
keys_test = x_train.repeat((n_test, 1))  # (n_test, n_train): the same keys for every query
values_test = y_train.repeat((n_test, 1))  # (n_test, n_train)
with torch.no_grad():
    y_hat_param = net(x_test, keys_test, values_test)
print(f"learned w = {net.w.item():.2f}: the kernel is about {abs(net.w.item()):.0f} times narrower than before")
print(f"parametric pooling: test MSE {test_mse(y_hat_param):.3f} "
      f"(non-parametric {test_mse(y_hat_nw):.3f}, average {test_mse(y_hat_avg):.3f})")
plot_kernel_reg(y_hat_param, tr("parametric attention pooling"), "nw_kernel_regression_fit")

# %% [markdown]
# The learned $w$ is far larger than 1, so the kernel is far narrower. The prediction is no
# longer smooth: each test input now listens almost only to its one or two nearest training
# points, and the curve jumps from one noisy label to the next. On this data set the
# non-parametric kernel of width 1 is too wide (it flattens the peak and the valley of the
# truth), so the narrower learned kernel still has the lower test error printed above; with
# noisier or sparser data the balance tips the other way. The heatmap shows where the change
# comes from: the band of attention weights collapses onto the diagonal.

# %%
show_heatmaps(net.attention_weights, xlabel=tr("sorted training inputs (keys)"),
              ylabel=tr("sorted test inputs (queries)"), titles=[tr("learned kernel weights")],
              figsize=(3.5, 3.5))
plt.savefig("figures/nw_kernel_regression_weights.png", bbox_inches="tight", dpi=120)

# %% nbgrader={"grade": true, "grade_id": "test_NWKernelRegression", "locked": true, "points": 6, "schema_version": 3, "solution": false, "task": false}
# Graded cell for NWKernelRegression (6 points): the autograder scores this component in an
# isolated process with hidden tests, in addition to the public tests that check() runs here.
check("NWKernelRegression")

# %% [markdown]
# ## Summary and things to try
#
# * Nadaraya-Watson kernel regression is attention pooling: the query is a test input, the
#   keys are training inputs, the values are training outputs, and the prediction is the
#   attention-weighted average of the values.
# * The Gaussian kernel turns into a softmax over the negative squared distances; the weights of
#   every query are a probability distribution over the keys.
# * Pooling can be non-parametric (fixed kernel) or parametric (here one learnable width $w$).
#
# Things to try (not graded): add more training data and watch the non-parametric estimate
# approach the truth; train without the leave-one-out construction and see what happens to $w$;
# give every query its own learnable width, or use a different kernel such as
# $\exp(-|x - x_i|)$.
