"""Train the reference models of assignments 03 and 06 on the date task and report.

    python -m solutions.train_reference bahdanau|transformer [--out DIR] [--epochs N]

Prints wall and CPU time, final training loss, held-out BLEU and exact match (200 pairs), and
writes DIR/<model>_loss.png (training curve) and DIR/<model>_attention.png (the cross-attention
of one example: by default "Thursday, March 3rd, 1994", a surface form that mixes two training
formats but never occurs in training; `--example TEXT` picks another), plus, for the
Transformer, DIR/transformer_attention_heads.png (every head of every block).
`train_bahdanau` / `train_transformer` return (net, losses, metrics) and take smaller budgets
for tests and notebooks.
"""
from __future__ import annotations

import argparse
import os
import time
from typing import Any, Optional

import torch

from solutions.bahdanau import Seq2SeqAttentionDecoder
from solutions.datasets import Vocab, load_data_dates, make_test_pairs, tokenize_date
from solutions.given import EncoderDecoder, Seq2SeqEncoder
from solutions.training import (cross_attention_matrix, evaluate, plot_alignment, plot_losses,
                                predict_seq2seq, set_seed, show_heatmaps, train_seq2seq)
from solutions.transformer import TransformerDecoder, TransformerEncoder

# The shared data setup: 10k training pairs, sequences padded to 12 (the longest target is
# 10 characters + <eos>), 200 held-out pairs whose sources never occur in training.
NUM_STEPS = 12
NUM_EXAMPLES = 10000
NUM_TEST = 200
DATA_SEED = 0
TEST_SEED = 1
EXAMPLE_SOURCE = ["thursday", ",", "march", "3rd", ",", "1994"]

BAHDANAU_CONFIG: dict[str, Any] = dict(
    embed_size=32, num_hiddens=64, num_layers=2, dropout=0.1,
    batch_size=128, lr=0.005, num_epochs=10, seed=0)

# No dropout: with 10k fresh pairs there is nothing to regularize, and dropout slows training.
TRANSFORMER_CONFIG: dict[str, Any] = dict(
    num_hiddens=64, num_layers=2, num_heads=4, ffn_num_hiddens=128, dropout=0.0,
    batch_size=128, lr=0.002, num_epochs=10, seed=0)

Result = tuple[EncoderDecoder, list[float], dict[str, Any]]


def _data(batch_size: int, num_examples: int) -> tuple[Any, Vocab, Vocab]:
    return load_data_dates(batch_size, NUM_STEPS, num_examples=num_examples, seed=DATA_SEED)


def _finish(net: EncoderDecoder, losses: list[float], src_vocab: Vocab, tgt_vocab: Vocab,
            num_examples: int, num_test: int, seconds: tuple[float, float],
            config: dict[str, Any]) -> Result:
    metrics: dict[str, Any] = {"train_seconds": seconds[0], "train_cpu_seconds": seconds[1],
                               "final_loss": losses[-1] if losses else float("nan"),
                               "config": dict(config, num_examples=num_examples,
                                              num_steps=NUM_STEPS)}
    if num_test > 0:
        pairs = make_test_pairs(num_test, seed=TEST_SEED, num_train=num_examples,
                                train_seed=DATA_SEED)
        metrics.update(evaluate(net, pairs, src_vocab, tgt_vocab, NUM_STEPS))
    net.src_vocab, net.tgt_vocab = src_vocab, tgt_vocab  # handy for predict_seq2seq callers
    return net, losses, metrics


def build_bahdanau(src_vocab_size: int, tgt_vocab_size: int, embed_size: int, num_hiddens: int,
                   num_layers: int, dropout: float) -> EncoderDecoder:
    """Seq2SeqEncoder + Seq2SeqAttentionDecoder (assignment 03)."""
    encoder = Seq2SeqEncoder(src_vocab_size, embed_size, num_hiddens, num_layers, dropout)
    decoder = Seq2SeqAttentionDecoder(tgt_vocab_size, embed_size, num_hiddens, num_layers, dropout)
    return EncoderDecoder(encoder, decoder)


def build_transformer(src_vocab_size: int, tgt_vocab_size: int, num_hiddens: int,
                      num_layers: int, num_heads: int, ffn_num_hiddens: int,
                      dropout: float) -> EncoderDecoder:
    """TransformerEncoder + TransformerDecoder (assignment 06); key/query/value sizes = num_hiddens."""
    h = num_hiddens
    encoder = TransformerEncoder(src_vocab_size, h, h, h, h, [h], h, ffn_num_hiddens, num_heads,
                                 num_layers, dropout)
    decoder = TransformerDecoder(tgt_vocab_size, h, h, h, h, [h], h, ffn_num_hiddens, num_heads,
                                 num_layers, dropout)
    return EncoderDecoder(encoder, decoder)


def train_bahdanau(num_epochs: Optional[int] = None, num_examples: int = NUM_EXAMPLES,
                   num_test: int = NUM_TEST, log: Any = None, **overrides: Any) -> Result:
    """Train the assignment-03 reference model; returns (net, per-epoch losses, metrics).

    metrics holds train_seconds (wall), train_cpu_seconds, final_loss, config and, when
    num_test > 0, the held-out 'bleu', 'exact_match' and 'n'. Keyword overrides replace
    entries of BAHDANAU_CONFIG. The vocabularies are attached as net.src_vocab, net.tgt_vocab.
    """
    config = dict(BAHDANAU_CONFIG, **overrides)
    if num_epochs is not None:
        config["num_epochs"] = num_epochs
    data_iter, src_vocab, tgt_vocab = _data(config["batch_size"], num_examples)
    set_seed(config["seed"])
    net = build_bahdanau(len(src_vocab), len(tgt_vocab), config["embed_size"],
                         config["num_hiddens"], config["num_layers"], config["dropout"])
    start, cpu_start = time.perf_counter(), time.process_time()
    losses = train_seq2seq(net, data_iter, config["lr"], config["num_epochs"], tgt_vocab, log=log)
    seconds = (time.perf_counter() - start, time.process_time() - cpu_start)
    return _finish(net, losses, src_vocab, tgt_vocab, num_examples, num_test, seconds, config)


def train_transformer(num_epochs: Optional[int] = None, num_examples: int = NUM_EXAMPLES,
                      num_test: int = NUM_TEST, log: Any = None, **overrides: Any) -> Result:
    """Train the assignment-06 reference model; returns (net, per-epoch losses, metrics).

    Same contract as `train_bahdanau`, with TRANSFORMER_CONFIG.
    """
    config = dict(TRANSFORMER_CONFIG, **overrides)
    if num_epochs is not None:
        config["num_epochs"] = num_epochs
    data_iter, src_vocab, tgt_vocab = _data(config["batch_size"], num_examples)
    set_seed(config["seed"])
    net = build_transformer(len(src_vocab), len(tgt_vocab), config["num_hiddens"],
                            config["num_layers"], config["num_heads"], config["ffn_num_hiddens"],
                            config["dropout"])
    start, cpu_start = time.perf_counter(), time.process_time()
    losses = train_seq2seq(net, data_iter, config["lr"], config["num_epochs"], tgt_vocab, log=log)
    seconds = (time.perf_counter() - start, time.process_time() - cpu_start)
    return _finish(net, losses, src_vocab, tgt_vocab, num_examples, num_test, seconds, config)


def save_attention_figures(net: EncoderDecoder, model: str, out_dir: str,
                           source: list[str] = EXAMPLE_SOURCE) -> list[str]:
    """Decode `source` and write its cross-attention heatmap(s) to out_dir; return the paths."""
    src_vocab, tgt_vocab = net.src_vocab, net.tgt_vocab
    pred, weights = predict_seq2seq(net, source, src_vocab, tgt_vocab, NUM_STEPS,
                                    save_attention_weights=True)
    out_tokens = pred + (["<eos>"] if len(weights) > len(pred) else [])
    src_labels = list(source) + ["<eos>"]
    title = f"{model}: {' '.join(source)} -> {''.join(pred)}"
    paths = [os.path.join(out_dir, f"{model}_attention.png")]
    plot_alignment(cross_attention_matrix(weights), src_labels, out_tokens, title=title,
                   path=paths[0])
    if isinstance(weights[0][0], (list, tuple)):  # a Transformer: also every head of every block
        num_layers, num_heads = len(weights[0][1]), weights[0][1][0].shape[0]
        grid = torch.stack([
            torch.stack([cross_attention_matrix(weights, layer=layer, head=head)
                         for head in range(num_heads)])
            for layer in range(num_layers)])[..., :len(src_labels)]  # (layers, heads, T_out, T_src)
        paths.append(os.path.join(out_dir, f"{model}_attention_heads.png"))
        titles = [[f"block {layer} head {head}" for head in range(num_heads)]
                  for layer in range(num_layers)]
        show_heatmaps(grid, "source", "output", titles=titles, figsize=(2.6, 2.6),
                      path=paths[1], xticklabels=src_labels, yticklabels=out_tokens)
    return paths


def main(argv: Optional[list[str]] = None) -> dict[str, Any]:
    """Command-line entry point; returns the metrics."""
    import matplotlib
    matplotlib.use("Agg")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=["bahdanau", "transformer"])
    parser.add_argument("--out", default=".", help="directory for the PNG figures")
    parser.add_argument("--epochs", type=int, default=None, help="override the epoch budget")
    # One thread: a second one gains little on these small tensors, and when the CPU is shared
    # (oversubscribed) spinning OpenMP threads make training many times slower.
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    parser.add_argument("--quiet", action="store_true", help="no per-epoch log")
    parser.add_argument("--example", default=" ".join(EXAMPLE_SOURCE),
                        help="free-form date whose attention to plot, e.g. '03/04/1994'")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    os.makedirs(args.out, exist_ok=True)

    def log(epoch: int, loss: float) -> None:
        if not args.quiet:
            print(f"epoch {epoch:3d}  loss {loss:.4f}", flush=True)

    train = train_bahdanau if args.model == "bahdanau" else train_transformer
    start = time.perf_counter()
    net, losses, metrics = train(num_epochs=args.epochs, log=log)
    wall = time.perf_counter() - start
    loss_path = os.path.join(args.out, f"{args.model}_loss.png")
    plot_losses(losses, path=loss_path, title=f"{args.model} on the date task")
    paths = save_attention_figures(net, args.model, args.out, tokenize_date(args.example))
    print(f"model        {args.model}  config {metrics['config']}")
    print(f"train time   {metrics['train_seconds']:.1f} s wall, "
          f"{metrics['train_cpu_seconds']:.1f} s CPU, {torch.get_num_threads()} threads "
          f"(total wall incl. data + eval {wall:.1f} s)")
    print(f"final loss   {metrics['final_loss']:.4f} per token")
    print(f"held-out     BLEU {metrics['bleu']:.4f}  exact match {metrics['exact_match']:.3f}  "
          f"(n={metrics['n']})")
    print(f"figures      {loss_path} {' '.join(paths)}")
    return metrics


if __name__ == "__main__":
    main()
