"""Given training toolkit for the sequence-to-sequence assignments (03 Bahdanau, 06 Transformer).

Loss, training loop, greedy decoding, BLEU / exact-match evaluation and plotting helpers.
Every function is device-agnostic: by default it runs on the device of the model's parameters.
Plots use matplotlib's object API through pyplot and never call `show()`, so they work with the
Agg backend (no display); pass `path=` to save a figure to a file.
"""
from __future__ import annotations

import collections
import math
import numbers
import random
import time
from typing import Any, Optional, Union
from collections.abc import Callable, Sequence

import torch
from torch import nn

from solutions.datasets import Pair, Vocab, truncate_pad
from solutions.given import tr


# --------------------------------------------------------------------------- utilities

def set_seed(seed: int) -> None:
    """Seed Python's, torch's (and numpy's, if installed) random number generators."""
    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy ships with matplotlib
        return
    np.random.seed(seed)


def model_device(net: nn.Module) -> torch.device:
    """The device of the model's first parameter (cpu for a model without parameters)."""
    for param in net.parameters():
        return param.device
    return torch.device("cpu")


def grad_clipping(net: nn.Module, theta: float) -> float:
    """Rescale the gradients of `net` in place so that their global L2 norm is at most theta.

    Returns the norm before clipping.
    """
    params = [p for p in net.parameters() if p.requires_grad and p.grad is not None]
    if not params:
        return 0.0
    norm = torch.sqrt(sum(torch.sum(p.grad ** 2) for p in params))
    if norm > theta:
        for param in params:
            param.grad.mul_(theta / norm)
    return float(norm)


def xavier_init_weights(module: nn.Module) -> None:
    """Xavier-uniform init of Linear, Embedding and GRU weight matrices.

    The book's trainer leaves embeddings at N(0, 1); the Transformer then multiplies them by
    sqrt(num_hiddens), which drowns the positional encoding (values in [-1, 1]) and slows
    training a lot. Xavier-uniform embeddings (std ~ sqrt(2 / (vocab + d))) keep both in scale.
    """
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.xavier_uniform_(module.weight)
    if isinstance(module, nn.GRU):
        for name, param in module.named_parameters():
            if "weight" in name:
                nn.init.xavier_uniform_(param)


# --------------------------------------------------------------------------- loss and training

class MaskedSoftmaxCELoss(nn.CrossEntropyLoss):
    """Softmax cross-entropy that ignores the positions at or past each sequence's valid length.

    forward(pred (B, T, V) logits, label (B, T) indices, valid_len (B,)) -> (B,): for each
    sequence, the sum of its unmasked per-token losses divided by T (masked positions count 0),
    as in the book.
    """

    def __init__(self) -> None:
        super().__init__(reduction="none")

    def forward(self, pred: torch.Tensor, label: torch.Tensor,  # type: ignore[override]
                valid_len: torch.Tensor) -> torch.Tensor:
        # Written out here (not 02's sequence_mask) so that the toolkit hands out no solution.
        positions = torch.arange(label.shape[1], device=label.device)  # (T,)
        weights = (positions.unsqueeze(0) < valid_len.unsqueeze(1)).to(pred.dtype)  # (B, T)
        # CrossEntropyLoss wants the class axis second: (B, V, T).
        unweighted = super().forward(pred.permute(0, 2, 1), label)  # (B, T)
        return (unweighted * weights).mean(dim=1)  # (B,)


def train_seq2seq(net: nn.Module, data_iter: Any, lr: float, num_epochs: int, tgt_vocab: Vocab,
                  device: Optional[Union[str, torch.device]] = None,
                  log: Optional[Callable[[int, float], None]] = None,
                  init_weights: bool = True) -> list[float]:
    """Train an EncoderDecoder with Adam, gradient clipping at 1 and teacher forcing.

    data_iter yields (X (B, T), X_valid_len (B,), Y (B, T), Y_valid_len (B,)); the decoder input
    is `<bos>` followed by Y[:, :-1]. With init_weights (as in the book), the weights are first
    re-initialized by `xavier_init_weights` from the current torch seed.
    `log(epoch, loss)` (epochs counted from 1) is called after every epoch.
    Returns the mean training loss per target token of every epoch.
    """
    if device is None:
        device = model_device(net)
    device = torch.device(device)
    if init_weights:
        net.apply(xavier_init_weights)
    net.to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    loss_fn = MaskedSoftmaxCELoss()
    losses: list[float] = []
    for epoch in range(1, num_epochs + 1):
        net.train()  # every epoch: `log` may have evaluated (and so switched to eval mode)
        total_loss, total_tokens = 0.0, 0
        for batch in data_iter:
            X, X_valid_len, Y, Y_valid_len = (t.to(device) for t in batch)
            bos = torch.full((Y.shape[0], 1), tgt_vocab["<bos>"], dtype=Y.dtype, device=device)
            dec_input = torch.cat([bos, Y[:, :-1]], dim=1)  # (B, T): teacher forcing
            Y_hat, _ = net(X, dec_input, X_valid_len)  # (B, T, V)
            l = loss_fn(Y_hat, Y, Y_valid_len)  # (B,)
            optimizer.zero_grad()
            l.sum().backward()
            grad_clipping(net, 1)
            optimizer.step()
            with torch.no_grad():
                total_loss += float(l.sum()) * Y.shape[1]  # undo the mean over T: a token sum
                total_tokens += int(Y_valid_len.sum())
        losses.append(total_loss / max(total_tokens, 1))
        if log is not None:
            log(epoch, losses[-1])
    return losses


# --------------------------------------------------------------------------- prediction

@torch.no_grad()
def predict_seq2seq(net: nn.Module, src_tokens: Sequence[str], src_vocab: Vocab,
                    tgt_vocab: Vocab, num_steps: int,
                    device: Optional[Union[str, torch.device]] = None,
                    save_attention_weights: bool = False) -> tuple[list[str], list[Any]]:
    """Greedy decoding of one source sentence, one target token at a time.

    The source gets `<eos>` and is padded to num_steps exactly as in training. Each step feeds
    the previous prediction (B=1, T=1) and the decoder state back, so it works both for
    Seq2SeqAttentionDecoder (state = hidden state) and TransformerDecoder (state = key/value
    cache). Stops at `<eos>` or after num_steps tokens. Returns (predicted tokens without
    `<eos>`, attention weights): with save_attention_weights, one entry per decoding step
    (including the step that produced `<eos>`), each `net.decoder.attention_weights` of that step.
    Puts the model in eval mode.
    """
    if device is None:
        device = model_device(net)
    net.eval()
    src_indices = src_vocab[list(src_tokens)] + [src_vocab["<eos>"]]
    enc_valid_len = torch.tensor([min(len(src_indices), num_steps)], device=device)  # (1,)
    enc_X = torch.tensor([truncate_pad(src_indices, num_steps, src_vocab["<pad>"])],
                         dtype=torch.long, device=device)  # (1, num_steps)
    enc_outputs = net.encoder(enc_X, enc_valid_len)
    dec_state = net.decoder.init_state(enc_outputs, enc_valid_len)
    dec_X = torch.tensor([[tgt_vocab["<bos>"]]], dtype=torch.long, device=device)  # (1, 1)
    output: list[int] = []
    attention_weight_seq: list[Any] = []
    for _ in range(num_steps):
        Y, dec_state = net.decoder(dec_X, dec_state)  # Y (1, 1, V)
        dec_X = Y.argmax(dim=2)  # (1, 1)
        pred = int(dec_X.item())
        if save_attention_weights:
            attention_weight_seq.append(net.decoder.attention_weights)
        if pred == tgt_vocab["<eos>"]:
            break
        output.append(pred)
    return tgt_vocab.to_tokens(output), attention_weight_seq


def cross_attention_matrix(attention_weight_seq: Sequence[Any], layer: int = -1,
                           head: Optional[int] = None) -> torch.Tensor:
    """Stack the per-step weights of `predict_seq2seq` into one (T_out, T_src) matrix.

    Works for both decoders: a Seq2SeqAttentionDecoder step holds [(1, 1, T_src)]; a
    TransformerDecoder step holds [self-attention per block, cross-attention per block] with
    cross-attention (num_heads, 1, T_src) -- take block `layer`, and head `head` or the mean
    over heads when head is None.
    """
    rows = []
    for step in attention_weight_seq:
        if isinstance(step[0], (list, tuple)):  # Transformer: [self per block, cross per block]
            weights = step[1][layer]  # (num_heads, 1, T_src)
            row = weights.mean(dim=0) if head is None else weights[head]  # (1, T_src)
        else:  # Bahdanau: one (1, 1, T_src) tensor for the single step decoded
            row = step[-1].reshape(1, -1)  # (1, T_src)
        rows.append(row.reshape(-1).detach().cpu())
    return torch.stack(rows)  # (T_out, T_src)


# --------------------------------------------------------------------------- evaluation

def bleu(pred_tokens: Sequence[str], label_tokens: Sequence[str], k: int = 4) -> float:
    """BLEU as in the book: exp(min(0, 1 - len_label / len_pred)) * prod_n p_n^(1/2^n).

    p_n is the clipped n-gram precision of the prediction, n = 1..k. Orders with no n-gram in
    the prediction (len_pred < n) are skipped, so identical sequences score 1 whatever their
    length; the brevity penalty still punishes short predictions. An empty prediction scores 0.
    """
    len_pred, len_label = len(pred_tokens), len(label_tokens)
    if len_pred == 0:
        return 1.0 if len_label == 0 else 0.0
    score = math.exp(min(0.0, 1 - len_label / len_pred))
    for n in range(1, min(k, len_pred) + 1):
        label_ngrams = collections.Counter(
            tuple(label_tokens[i:i + n]) for i in range(len_label - n + 1))
        pred_ngrams = collections.Counter(
            tuple(pred_tokens[i:i + n]) for i in range(len_pred - n + 1))
        matches = sum(min(count, label_ngrams[gram]) for gram, count in pred_ngrams.items())
        score *= math.pow(matches / (len_pred - n + 1), math.pow(0.5, n))
    return score


def exact_match(pred_tokens: Sequence[str], label_tokens: Sequence[str]) -> float:
    """1.0 if the two token sequences are identical, else 0.0."""
    return float(list(pred_tokens) == list(label_tokens))


def evaluate(net: nn.Module, pairs: Sequence[Pair], src_vocab: Vocab, tgt_vocab: Vocab,
             num_steps: int, device: Optional[Union[str, torch.device]] = None,
             k: int = 4) -> dict[str, float]:
    """Greedy-decode every source of `pairs`; return {'bleu': mean BLEU-k,
    'exact_match': fraction of exact predictions, 'n': number of pairs}."""
    if not pairs:
        return {"bleu": float("nan"), "exact_match": float("nan"), "n": 0}
    total_bleu, total_exact = 0.0, 0.0
    for source, target in pairs:
        pred, _ = predict_seq2seq(net, source, src_vocab, tgt_vocab, num_steps, device)
        total_bleu += bleu(pred, target, k)
        total_exact += exact_match(pred, target)
    return {"bleu": total_bleu / len(pairs), "exact_match": total_exact / len(pairs),
            "n": len(pairs)}


# --------------------------------------------------------------------------- plotting

def _finish(fig: Any, path: Optional[str]) -> Any:
    """Save `fig` to `path` (then close it, so scripts do not pile up figures); return it."""
    if path is not None:
        import matplotlib.pyplot as plt
        fig.savefig(path, bbox_inches="tight", dpi=120)
        plt.close(fig)
    return fig


def show_heatmaps(matrices: Union[torch.Tensor, Sequence[Any]], xlabel: str, ylabel: str,
                  titles: Optional[Sequence[str]] = None, figsize: tuple[float, float] = (2.5, 2.5),
                  cmap: str = "Reds", path: Optional[str] = None,
                  xticklabels: Optional[Sequence[str]] = None,
                  yticklabels: Optional[Sequence[str]] = None) -> Any:
    """Plot a grid of heatmaps; matrices is (rows, cols, Q, K), (cols, Q, K) or (Q, K).

    titles name the columns (one per column, as in the book) or every panel (a list of rows).
    figsize is per panel. Tick labels (length K / Q) name the keys and queries. Returns the
    figure; with `path` it is also saved there and closed.
    """
    import matplotlib.pyplot as plt
    matrices = torch.as_tensor(
        matrices.detach().cpu() if isinstance(matrices, torch.Tensor) else matrices)
    while matrices.dim() < 4:
        matrices = matrices.unsqueeze(0)
    num_rows, num_cols = matrices.shape[0], matrices.shape[1]
    fig, axes = plt.subplots(num_rows, num_cols, figsize=(figsize[0] * num_cols,
                                                          figsize[1] * num_rows),
                             sharex=True, sharey=True, squeeze=False)
    image = None
    for i in range(num_rows):
        for j in range(num_cols):
            ax = axes[i][j]
            image = ax.imshow(matrices[i, j].numpy(), cmap=cmap, vmin=0, aspect="auto")
            if xticklabels is not None:
                ax.set_xticks(range(len(xticklabels)), labels=list(xticklabels), rotation=90)
            if yticklabels is not None:
                ax.set_yticks(range(len(yticklabels)), labels=list(yticklabels))
            if i == num_rows - 1:
                ax.set_xlabel(xlabel)
            if j == 0:
                ax.set_ylabel(ylabel)
            if titles is not None:
                title = titles[i][j] if isinstance(titles[0], (list, tuple)) else titles[j]
                ax.set_title(title)
    fig.colorbar(image, ax=axes, shrink=0.6)
    return _finish(fig, path)


def plot_alignment(matrix: torch.Tensor, src_tokens: Sequence[str], out_tokens: Sequence[str],
                   title: Optional[str] = None, path: Optional[str] = None,
                   cmap: str = "Reds") -> Any:
    """One labelled alignment heatmap: rows = output tokens (T_out), columns = source tokens.

    matrix is (T_out, T_src); columns past len(src_tokens) (padding) are dropped.
    """
    matrix = matrix[:len(out_tokens), :len(src_tokens)]
    size = (0.5 * len(src_tokens) + 1.5, 0.35 * len(out_tokens) + 1.0)
    return show_heatmaps(matrix, tr("source"), tr("output"), titles=None if title is None else [title],
                         figsize=size, cmap=cmap, path=path, xticklabels=src_tokens,
                         yticklabels=out_tokens)


def plot(X: Union[Sequence[float], Sequence[Sequence[float]]],
         Y: Optional[Union[Sequence[float], Sequence[Sequence[float]]]] = None,
         xlabel: Optional[str] = None, ylabel: Optional[str] = None,
         legend: Optional[Sequence[str]] = None, title: Optional[str] = None,
         xscale: str = "linear", yscale: str = "linear",
         fmts: Sequence[str] = ("-", "m--", "g-.", "r:"), figsize: tuple[float, float] = (4.5, 3),
         path: Optional[str] = None) -> Any:
    """Line plot of one or several curves: plot(Y) or plot(X, Y), each a list or list of lists."""
    import matplotlib.pyplot as plt

    def as_curves(values: Any) -> list[list[float]]:
        """A curve or a list of curves (lists, tensors or arrays) -> a list of lists of floats."""
        if isinstance(values, torch.Tensor):
            values = values.detach().cpu().tolist()
        values = list(values)
        if values and (isinstance(values[0], numbers.Number)
                       or (isinstance(values[0], torch.Tensor) and values[0].dim() == 0)):
            return [[float(v) for v in values]]
        return [[float(v) for v in curve] for curve in values]

    if Y is None:
        Y_curves = as_curves(X)
        X_curves = [list(range(1, len(y) + 1)) for y in Y_curves]
    else:
        Y_curves, X_curves = as_curves(Y), as_curves(X)
        if len(X_curves) == 1:
            X_curves = X_curves * len(Y_curves)
    fig, ax = plt.subplots(figsize=figsize)
    for i, (x, y) in enumerate(zip(X_curves, Y_curves)):
        ax.plot(x, y, fmts[i % len(fmts)])
    ax.set_xscale(xscale)
    ax.set_yscale(yscale)
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    if legend:
        ax.legend(legend)
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    return _finish(fig, path)


def plot_losses(losses: Sequence[float], path: Optional[str] = None,
                title: Optional[str] = None, log_scale: bool = True) -> Any:
    """The training curve returned by `train_seq2seq`: loss per token against epoch."""
    return plot(list(losses), xlabel=tr("epoch"), ylabel=tr("loss per token"), title=title,
                yscale="log" if log_scale else "linear", path=path)


class Timer:
    """A minimal stopwatch: `with Timer() as t: ...` then t.elapsed (seconds)."""

    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        self.elapsed = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.elapsed = time.perf_counter() - self.start


__all__ = [
    "set_seed", "model_device", "grad_clipping", "xavier_init_weights", "MaskedSoftmaxCELoss",
    "train_seq2seq", "predict_seq2seq", "cross_attention_matrix", "bleu", "exact_match",
    "evaluate", "show_heatmaps", "plot_alignment", "plot", "plot_losses", "Timer",
]
