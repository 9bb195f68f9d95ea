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
# # Assignment 03: Bahdanau attention
#
# A plain RNN encoder-decoder squeezes the whole source sequence into one fixed-size context
# vector $\mathbf c$, the encoder's final hidden state, and the decoder uses that *same* vector
# at every output step, whether it is producing the first token or the last. Not every source
# token matters for every output token, though. Bahdanau, Cho and Bengio (2014), inspired by
# Graves' differentiable alignment for handwriting generation, let the decoder **look back** at
# all the encoder states at each step and pick what it needs: the context vector becomes the
# output of attention pooling, recomputed at every decoding step. The attention weights then
# show which source tokens each output token was read from, a learned *alignment*.
#
# | component | points | what it is |
# |---|---|---|
# | `Seq2SeqAttentionDecoder` | 10 | a GRU decoder with additive attention over the encoder states |
#
# You are given the encoder-decoder interfaces (`Encoder`, `Decoder`, `AttentionDecoder`), the
# GRU encoder `Seq2SeqEncoder`, the glue `EncoderDecoder`, the course's `AdditiveAttention`
# (assignment 02) and a data and training toolkit, all in the `attention_support` module next
# to this notebook. In the solution cell, replace the `raise NotImplementedError()` lines by
# your code, keep names, signatures and attribute names, and run the `check(...)` cell.
#
# ## The model
#
# Let the encoder read the source $x_1, \ldots, x_T$ and produce top-layer hidden states
# $\mathbf h_1, \ldots, \mathbf h_T$. At decoding step $t'$ the context vector is
#
# $$\mathbf c_{t'} = \sum_{t=1}^{T} \alpha(\mathbf s_{t'-1}, \mathbf h_t)\, \mathbf h_t ,$$
#
# an attention pooling in which
#
# * the **query** is $\mathbf s_{t'-1}$, the decoder's top-layer hidden state after the previous
#   step (for the first step: the encoder's final state, which initializes the decoder);
# * the encoder states $\mathbf h_t$ are both the **keys** and the **values**;
# * the weights $\alpha$ come from **additive attention** (assignment 02) with a masked softmax,
#   so that padded source positions get weight exactly 0.
#
# The decoder's GRU input at step $t'$ is the concatenation $[\mathbf c_{t'}; \mathbf e(y_{t'-1})]$
# of the context and the embedding of the previous output token, in that order; a linear layer
# turns the GRU output into logits over the target vocabulary.

# %%
import math
import os
from typing import Any, Optional

import matplotlib.pyplot as plt
import torch
from torch import nn

from autograder.selfcheck import check
from attention_support import (AdditiveAttention, AttentionDecoder, EncoderDecoder,
                               Seq2SeqEncoder, Timer, cross_attention_matrix, evaluate,
                               load_data_dates, make_date_texts, make_test_pairs, plot_alignment,
                               plot_losses, predict_seq2seq, set_seed, tr, train_seq2seq)

os.makedirs("figures", exist_ok=True)


# %% [markdown]
# ## The given encoder
#
# `Seq2SeqEncoder(vocab_size, embed_size, num_hiddens, num_layers, dropout=0)` embeds token ids
# `(B, T)` and runs a GRU over them, **time first** as PyTorch's RNNs expect. It returns
# `(outputs, state)`: `outputs` of shape `(T, B, num_hiddens)` holds the top layer's state at
# every source position, `state` of shape `(num_layers, B, num_hiddens)` the final state of
# every layer. `EncoderDecoder(encoder, decoder)` calls
# `decoder.init_state(encoder(X, valid_lens), valid_lens)` and then `decoder(dec_X, state)`.
#
# ## The decoder
#
# **Your task.** Implement `Seq2SeqAttentionDecoder(vocab_size, embed_size, num_hiddens,
# num_layers, dropout=0)`, a subclass of `AttentionDecoder`:
#
# * submodules (contract names): `self.attention = AdditiveAttention(num_hiddens, num_hiddens,
#   num_hiddens, dropout)`, `self.embedding = nn.Embedding(vocab_size, embed_size)`,
#   `self.rnn = nn.GRU(embed_size + num_hiddens, num_hiddens, num_layers, dropout=dropout)` and
#   `self.dense = nn.Linear(num_hiddens, vocab_size)`;
# * `init_state(enc_outputs, enc_valid_lens)` takes the encoder's `(outputs, state)` and returns
#   the decoder state `[outputs (B, T, num_hiddens), hidden_state, enc_valid_lens]`: the encoder
#   outputs **batch first**, ready to serve as keys and values, and the encoder's final state as
#   the decoder's initial hidden state;
# * `forward(X, state)` takes target token ids `X` `(B, T_dec)` and the state and returns
#   `(logits (B, T_dec, vocab_size), new_state)`. Loop over the time steps: at each step the
#   query is the top layer of the current hidden state, shaped `(B, 1, num_hiddens)`; the
#   context is the additive attention of that query over the encoder outputs (with the valid
#   lengths); concatenate `(context, embedding)` on the feature axis, run one GRU step, and
#   collect the output. The new state carries the updated hidden state, so that decoding one
#   token at a time (as in prediction) gives the same result as feeding the whole sequence;
# * the property `attention_weights` returns the weights of the last `forward` call: a list with
#   one `(B, 1, T_enc)` tensor per decoding step (the attention module keeps the latest ones in
#   `self.attention.attention_weights`).

# %% nbgrader={"grade": false, "grade_id": "Seq2SeqAttentionDecoder", "locked": false, "schema_version": 3, "solution": true, "task": false}
class Seq2SeqAttentionDecoder(AttentionDecoder):
    """GRU decoder whose query at each step is the previous top-layer hidden state."""

    def __init__(self, vocab_size: int, embed_size: int, num_hiddens: int, num_layers: int,
                 dropout: float = 0, **kwargs: Any) -> None:
        ### BEGIN SOLUTION
        super().__init__(**kwargs)
        self.attention = AdditiveAttention(num_hiddens, num_hiddens, num_hiddens, dropout)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size + num_hiddens, num_hiddens, num_layers, dropout=dropout)
        self.dense = nn.Linear(num_hiddens, vocab_size)
        self._attention_weights: list[torch.Tensor] = []
        ### END SOLUTION

    def init_state(self, enc_outputs: tuple[torch.Tensor, torch.Tensor],
                   enc_valid_lens: Optional[torch.Tensor], *args: Any) -> list[Any]:
        """(outputs (T, B, h), hidden (L, B, h)) -> [outputs (B, T, h), hidden, enc_valid_lens]."""
        ### BEGIN SOLUTION
        outputs, hidden_state = enc_outputs
        return [outputs.permute(1, 0, 2), hidden_state, enc_valid_lens]
        ### END SOLUTION

    def forward(self, X: torch.Tensor, state: list[Any]) -> tuple[torch.Tensor, list[Any]]:
        """X (B, T) token ids -> (logits (B, T, vocab), new state)."""
        ### BEGIN SOLUTION
        enc_outputs, hidden_state, enc_valid_lens = state
        X = self.embedding(X).permute(1, 0, 2)  # (T, B, embed_size)
        outputs, self._attention_weights = [], []
        for x in X:  # x (B, embed_size)
            query = hidden_state[-1].unsqueeze(1)  # (B, 1, h): the top layer's state
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)  # (B, 1, h)
            x = torch.cat((context, x.unsqueeze(1)), dim=-1)  # (B, 1, h + embed_size)
            out, hidden_state = self.rnn(x.permute(1, 0, 2), hidden_state)  # out (1, B, h)
            outputs.append(out)
            self._attention_weights.append(self.attention.attention_weights)  # (B, 1, T_enc)
        logits = self.dense(torch.cat(outputs, dim=0))  # (T, B, vocab)
        return logits.permute(1, 0, 2), [enc_outputs, hidden_state, enc_valid_lens]
        ### END SOLUTION

    @property
    def attention_weights(self) -> list[torch.Tensor]:
        """One (B, 1, T_enc) tensor per decoding step of the last forward call."""
        ### BEGIN SOLUTION
        return self._attention_weights
        ### END SOLUTION


# %% nbgrader={"grade": false, "grade_id": "check_Seq2SeqAttentionDecoder", "locked": true, "schema_version": 3, "solution": false, "task": false}
check("Seq2SeqAttentionDecoder")

# %% [markdown]
# A shape check on a toy batch: 4 sequences of 7 tokens, a vocabulary of 10, 16 hidden units in
# 2 layers. The source valid lengths are 7, 5, 3 and 1, so the attention weights of sequence
# `b` must vanish past position `valid_lens[b]`.

# %%
torch.manual_seed(0)
encoder = Seq2SeqEncoder(vocab_size=10, embed_size=8, num_hiddens=16, num_layers=2)
decoder = Seq2SeqAttentionDecoder(vocab_size=10, embed_size=8, num_hiddens=16, num_layers=2)
encoder.eval()
decoder.eval()
X = torch.randint(0, 10, (4, 7))  # (B, T)
valid_lens = torch.tensor([7, 5, 3, 1])
state = decoder.init_state(encoder(X), valid_lens)
output, state = decoder(X, state)
print("logits:", tuple(output.shape), " state: encoder outputs", tuple(state[0].shape),
      " hidden", tuple(state[1].shape))
print("attention weights:", len(decoder.attention_weights), "steps of",
      tuple(decoder.attention_weights[0].shape))
weights = torch.cat(decoder.attention_weights, dim=1)  # (B, T_dec, T_enc)
for b, n in enumerate(valid_lens.tolist()):
    assert torch.all(weights[b, :, n:] == 0), f"sequence {b} attends past its valid length"
print("weights past the valid lengths are exactly 0")

# %% nbgrader={"grade": true, "grade_id": "test_Seq2SeqAttentionDecoder", "locked": true, "points": 10, "schema_version": 3, "solution": false, "task": false}
# Graded cell for Seq2SeqAttentionDecoder (10 points): the autograder scores this component in
# an isolated process with hidden tests, in addition to the public tests that check() runs here.
check("Seq2SeqAttentionDecoder")

# %% [markdown]
# ## The date task
#
# Instead of a real translation corpus (large, and slow to train on two CPU cores), the
# toolkit generates a small task with the same structure and a very readable alignment:
# translate free-form English dates into ISO dates. The source is split into words, numbers and
# symbols (`thursday , march 3rd , 1994`); the target into characters (`1 9 9 4 - 0 3 - 0 3`).
# Thirteen surface forms mix day-first, month-first and numeric orders, some with a weekday the
# output never needs. To produce the year digits the decoder has to find the year in the
# source, for the month digits the month name or number, and so on: the attention weights
# should show it.
#
# `load_data_dates(batch_size, num_steps)` builds the vocabularies and a re-iterable batch
# iterator over 10,000 generated pairs, each sequence `<eos>`-terminated and padded to
# `num_steps = 12` (the longest target is 10 characters plus `<eos>`). Each batch is
# `(X, X_valid_len, Y, Y_valid_len)`.

# %%
for text, iso in make_date_texts(6, seed=3):
    print(f"{text:32s} -> {iso}")
NUM_STEPS = 12
BATCH_SIZE = 128
data_iter, src_vocab, tgt_vocab = load_data_dates(BATCH_SIZE, NUM_STEPS, num_examples=10000, seed=0)
X, X_valid_len, Y, Y_valid_len = next(iter(data_iter))
print(f"source vocabulary {len(src_vocab)} tokens, target vocabulary {len(tgt_vocab)} tokens")
print("one batch:", tuple(X.shape), tuple(X_valid_len.shape), tuple(Y.shape), tuple(Y_valid_len.shape))
print("first source:", src_vocab.to_tokens(X[0][:int(X_valid_len[0])]))
print("first target:", tgt_vocab.to_tokens(Y[0][:int(Y_valid_len[0])]))

# %% [markdown]
# ## Training
#
# `train_seq2seq` trains with Adam and teacher forcing (the decoder input is `<bos>` followed by
# the target shifted right), a cross-entropy that ignores padding, and gradient clipping; it
# returns the loss per target token of every epoch. The hyperparameters are those of the course
# reference run: a 2-layer GRU encoder and decoder with 64 hidden units, 32-dimensional
# embeddings, dropout 0.1, learning rate 0.005, 12 epochs. That takes one to two minutes on two
# CPU cores. (Set the environment variable `COURSE_EPOCHS` to train for fewer epochs while you
# debug; the results discussed below are those of the full 12. The model is so small that extra
# threads barely help: on a busy machine `torch.set_num_threads(1)` can be much faster.)

# %%
NUM_EPOCHS = int(os.environ.get("COURSE_EPOCHS", "12"))
EMBED_SIZE, NUM_HIDDENS, NUM_LAYERS, DROPOUT, LR = 32, 64, 2, 0.1, 0.005

set_seed(0)
encoder = Seq2SeqEncoder(len(src_vocab), EMBED_SIZE, NUM_HIDDENS, NUM_LAYERS, DROPOUT)
decoder = Seq2SeqAttentionDecoder(len(tgt_vocab), EMBED_SIZE, NUM_HIDDENS, NUM_LAYERS, DROPOUT)
net = EncoderDecoder(encoder, decoder)


def log(epoch: int, loss: float) -> None:
    print(f"epoch {epoch:2d}  loss {loss:.4f} per token", flush=True)


with Timer() as timer:
    losses = train_seq2seq(net, data_iter, LR, NUM_EPOCHS, tgt_vocab, log=log)
print(f"trained {NUM_EPOCHS} epochs in {timer.elapsed:.0f} s")
plot_losses(losses, title=tr("Bahdanau attention on the date task"))
plt.savefig("figures/bahdanau_loss.png", bbox_inches="tight", dpi=120)

# %% [markdown]
# The loss (log scale) falls steeply in the first epochs, while the model learns the output
# format and which source word holds which field, and then keeps decreasing slowly.
#
# ## Greedy decoding
#
# At prediction time there is no target to feed. `predict_seq2seq` encodes the source, feeds
# `<bos>` to the decoder, takes the most likely token (greedy decoding), feeds it back as the
# next input together with the decoder state, and stops at `<eos>` or after `num_steps` tokens.
# Because our decoder carries its hidden state in the state it returns, each call handles one
# new token. We decode a few **held-out** sources (`make_test_pairs` draws dates whose source
# never occurs in the training data).

# %%
test_pairs = make_test_pairs(200, seed=1, num_train=10000, train_seed=0)
for source, target in test_pairs[:8]:
    pred, _ = predict_seq2seq(net, source, src_vocab, tgt_vocab, NUM_STEPS)
    mark = "ok " if pred == target else "   "
    print(f"{mark} {' '.join(source):34s} -> {''.join(pred):12s} (target {''.join(target)})")

# %% [markdown]
# ## Evaluation: BLEU and exact match
#
# BLEU compares the n-grams of a prediction with those of the reference. With $p_n$ the
# precision of the prediction's n-grams (each counted at most as often as in the reference),
#
# $$\mathrm{BLEU} = \exp\left(\min\left(0, 1 - \frac{\mathrm{len}_{\text{label}}}{\mathrm{len}_{\text{pred}}}\right)\right) \prod_{n=1}^{4} p_n^{1/2^n},$$
#
# where the first factor penalizes predictions that are too short and longer n-grams weigh
# more. For dates, a single wrong digit makes the answer wrong, so we also report the
# **exact-match** rate: the fraction of predictions identical to the target. `evaluate` decodes
# all 200 held-out sources greedily and averages both. With the full budget the model gets
# every one of them exactly right (BLEU 1.000, exact match 1.000); after two epochs it is still
# far from that.

# %%
metrics = evaluate(net, test_pairs, src_vocab, tgt_vocab, NUM_STEPS)
print(f"held-out: BLEU {metrics['bleu']:.3f}, exact match {metrics['exact_match']:.3f} "
      f"(n = {metrics['n']})")


# %% [markdown]
# ## Alignment: where does the decoder look?
#
# Decode one source again, keeping the attention weights of every step, and stack them into an
# (output tokens $\times$ source tokens) matrix: row $t'$ is the distribution
# $\alpha(\mathbf s_{t'-1}, \cdot)$ used to produce output token $t'$. The columns include the
# source's `<eos>`; padding positions are not shown (their weight is exactly 0).

# %%
def show_alignment(source: list[str], name: str) -> list[str]:
    """Decode `source`, plot its alignment heatmap, save it as figures/<name>.png; return the prediction."""
    pred, steps = predict_seq2seq(net, source, src_vocab, tgt_vocab, NUM_STEPS,
                                  save_attention_weights=True)
    matrix = cross_attention_matrix(steps)  # (T_out, NUM_STEPS)
    out_tokens = pred + (["<eos>"] if len(steps) > len(pred) else [])
    plot_alignment(matrix, list(source) + ["<eos>"], out_tokens,
                   title=f"{' '.join(source)} -> {''.join(pred)}")
    plt.savefig(f"figures/{name}.png", bbox_inches="tight", dpi=120)
    return pred


show_alignment(["thursday", ",", "march", "3rd", ",", "1994"], "bahdanau_alignment")

# %% [markdown]
# After full training the alignment tracks the source, in the order of the *output*: year,
# month, day. The month (the separator `-` and the digits `0 3`) is read from `march`, the day
# from `3rd`. The year digits look at `1994` and even more at the `<eos>` right after it: the
# encoder is a one-directional GRU, so its state at `<eos>` has just read the year and carries
# it. Each separator row already looks at the field that follows it: the decoder fetches the
# field while it writes the `-` and keeps it in its hidden state for the next two digits. The
# weekday and the commas get almost no weight (except in the last row, which only has to decide
# to stop): they are redundant for the output. Nobody told the model which word is the year;
# the alignment emerges from training on input-output pairs alone.
#
# A day-first numeric date needs the opposite order: the year from the end of the source, the
# month from the middle, the day from the beginning. The same network handles both orders
# because the weights are computed from the content of the encoder states, not from positions.

# %%
show_alignment(["17", "/", "08", "/", "2031"], "bahdanau_alignment_numeric")

# %% [markdown]
# ## Summary and things to try
#
# * Bahdanau attention replaces the fixed context of an RNN encoder-decoder by an attention
#   pooling over all encoder states, recomputed at every decoding step.
# * The query is the decoder's previous hidden state; the encoder states are keys and values;
#   the weights come from additive attention with a masked softmax over the valid source length.
# * The attention weights form an interpretable alignment between output and source tokens.
#
# Things to try (not graded): replace `AdditiveAttention` by `DotProductAttention` (the sizes
# match); train a decoder without attention (use the encoder's final state as a fixed context)
# and compare the exact-match rate; decode the same date in several surface forms and compare
# the heatmaps.
