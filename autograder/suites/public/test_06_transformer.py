"""Public tests for assignment 06 (the Transformer): shapes, worked examples and key properties.

These checks ship with the assignment. They use small inputs, hand-computable examples and
properties of the contract (post-norm statistics, causal self-attention, step-by-step decoding),
never the course's own model outputs.

One check, one score: outputs, caches and stored attention weights are separate parts (`part`), so that a
cache never written or attention weights never stored cost only the parts about them. The parameters'
names are checked once, by the hidden suite's test_*_contract_names: these tests bind hand-set weights
by structure (T.copy_weights) and count parameters instead of reading names.
"""
from __future__ import annotations

import torch
import pytest

from autograder.selfcheck import strategies as S
from autograder.selfcheck import testing as T
from autograder.selfcheck.hints import POST_NORM_HINT
from autograder.selfcheck.i18n import _

D, HEADS, FFN_H, VOCAB = 8, 2, 16, 10


def _block_args(dropout: float = 0.0) -> tuple:
    # key_size, query_size, value_size, num_hiddens, norm_shape, ffn_num_input, ffn_num_hiddens,
    # num_heads, dropout
    return (D, D, D, D, [D], D, FFN_H, HEADS, dropout)


def _model_args(num_layers: int, dropout: float = 0.0) -> tuple:
    # vocab_size, key_size, query_size, value_size, num_hiddens, norm_shape, ffn_num_input,
    # ffn_num_hiddens, num_heads, num_layers, dropout
    return (VOCAB, D, D, D, D, [D], D, FFN_H, HEADS, num_layers, dropout)


# ---------------------------------------------------------------------------- PositionWiseFFN
@pytest.mark.component("PositionWiseFFN")
def test_ffn_shape(student):
    """maps (batch, steps, ffn_num_input) to (batch, steps, ffn_num_outputs)"""
    ffn = student.PositionWiseFFN(4, 8, 6)
    ffn.eval()
    T.assert_shape(ffn(torch.ones(2, 3, 4)), (2, 3, 6),
                   _("PositionWiseFFN(4, 8, 6) on an input of shape (2, 3, 4)"))


@pytest.mark.component("PositionWiseFFN")
def test_ffn_worked_example(student):
    """a hand-computed example: dense2(relu(dense1(x)))"""
    ffn = student.PositionWiseFFN(2, 3, 2)
    ffn.eval()  # values are compared in eval mode (docs/course-api.md): a dropout of the student's own is off
    T.copy_weights(ffn, T.contract({  # dense1 and dense2 (nn.Linear with biases), bound by structure
        "dense1.weight": torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
        "dense1.bias": torch.tensor([0.0, 0.0, -1.0]),
        "dense2.weight": torch.tensor([[1.0, 1.0, 1.0], [1.0, -1.0, 0.0]]),
        "dense2.bias": torch.tensor([0.0, 0.5]),
    }))
    X = torch.tensor([[[1.0, -2.0], [2.0, 1.0]]])
    # position 0: dense1 -> [1, -2, -2], relu -> [1, 0, 0], dense2 -> [1, 1.5]
    # position 1: dense1 -> [2, 1, 2], relu keeps it, dense2 -> [5, 1.5]
    T.assert_close(ffn(X), torch.tensor([[[1.0, 1.5], [5.0, 1.5]]]),
                   what=_("PositionWiseFFN with hand-set weights"), inputs={"X": X},
                   hint="the ReLU sits between dense1 and dense2 (negative hidden units become 0); "
                        "no activation after dense2")


# ---------------------------------------------------------------------------- AddNorm
@pytest.mark.component("AddNorm")
def test_addnorm_worked_example(student):
    """a hand-computed example: ln(Y + X) normalizes each position over its features"""
    addnorm = student.AddNorm([4], 0.0)
    addnorm.eval()
    X = torch.tensor([[[1.0, 2.0, 3.0, 4.0]]])
    Y = torch.tensor([[[1.0, 0.0, 1.0, 0.0]]])
    # X + Y = [2, 2, 4, 4]: mean 3, variance 1 -> [-1, -1, 1, 1] (up to LayerNorm's eps)
    expected = torch.tensor([[[-1.0, -1.0, 1.0, 1.0]]]) / (1 + 1e-5) ** 0.5
    T.assert_close(addnorm(X, Y), expected, what=_("AddNorm([4], 0) in eval mode"),
                   inputs={"X": X, "Y": Y},
                   hint="the output is ln(dropout(Y) + X): add the residual X to Y, then normalize "
                        "(post-norm: the LayerNorm comes last)")


@pytest.mark.component("AddNorm")
def test_addnorm_statistics(student):
    """each position of the output has mean 0 and variance 1 over its features (post-norm)"""
    addnorm = student.AddNorm([D], 0.0)
    addnorm.eval()
    X, Y = S.randn((2, 3, D), 0) * 3 + 1, S.randn((2, 3, D), 1)
    T.assert_shape(addnorm(X, Y), (2, 3, D), _("AddNorm on (2, 3, 8) inputs"))
    T.assert_layer_normalized(addnorm(X, Y), _("AddNorm([8], 0) in eval mode"), hint=POST_NORM_HINT)


# ---------------------------------------------------------------------------- EncoderBlock
@pytest.mark.component("EncoderBlock")
def test_encoder_block_shape_and_norm(student):
    """keeps the shape (batch, steps, num_hiddens) and ends with a layer normalization"""
    blk = student.EncoderBlock(*_block_args())
    blk.eval()
    X = S.randn((2, 5, D), 2)
    Y = blk(X, torch.tensor([3, 5]))
    T.assert_shape(Y, (2, 5, D), _("EncoderBlock output for X of shape (2, 5, 8)"))
    T.assert_layer_normalized(Y, _("EncoderBlock output (fresh block, eval mode)"), hint=POST_NORM_HINT)


def _encoder_inputs(enc) -> tuple:
    return torch.tensor([[1, 2, 3]]), None


def _decoder_inputs(dec) -> tuple:
    return torch.tensor([[1, 2, 3]]), dec.init_state(S.randn((1, 4, D), 3), None)


def _check_own_blocks(build, inputs, what: str) -> None:
    """Every block has its own weights: each further block adds the same number of trainable numbers
    (named_parameters() lists a shared parameter once; counted, not named: names are the naming test's)."""
    count = [T.trainable_numbers(m, *inputs(m)) for m in map(build, (1, 2, 3))]
    T.check(count[1] > count[0] and count[2] - count[1] == count[1] - count[0],
            _("{what} with num_layers=1, 2, 3: every block should have its own weights, but named_parameters() "
              "lists {count} trainable numbers (each further block should add the same number)\n"
              "  hint: create a new block in every iteration of the loop; appending the same block "
              "object num_layers times shares one set of weights").format(what=what, count=count))


#: The parts of an encoder's and a decoder's checks scored separately.
ENCODER_PARTS = ("output", "attention_weights")
DECODER_PARTS = ("logits", "cache", "attention_weights")


# ---------------------------------------------------------------------------- TransformerEncoder
@pytest.mark.component("TransformerEncoder")
@pytest.mark.kind("structure")
def test_encoder_own_blocks(student):
    """every block of the encoder has its own weights"""
    _check_own_blocks(lambda layers: student.TransformerEncoder(*_model_args(layers)), _encoder_inputs,
                      "TransformerEncoder")


@pytest.mark.component("TransformerEncoder")
@pytest.mark.weight(1 / len(ENCODER_PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", ENCODER_PARTS)
def test_encoder_shapes(student, part):
    """outputs (batch, steps, num_hiddens) and one attention weight tensor per block, zero on padding"""
    enc = student.TransformerEncoder(*_model_args(2))
    enc.eval()
    X = torch.tensor([[1, 2, 3, 4], [5, 6, 0, 0]])
    lens = torch.tensor([4, 2])
    Y = T.call(_("TransformerEncoder(X of shape (2, 4), valid_lens)"), enc, X, lens, show_args=False)
    if part == "output":
        T.assert_shape(Y, (2, 4, D), _("TransformerEncoder output for token ids of shape (2, 4)"))
        return
    weights = T.present(T.attribute(enc, "attention_weights", "TransformerEncoder"))
    T.check(isinstance(weights, (list, tuple)) and len(weights) == 2,
            _("attention_weights should be a list with one entry per block (2 blocks here)"))
    for i, w in enumerate(weights):
        T.assert_shape(w, (2 * HEADS, 4, 4), f"attention_weights[{i}] (batch*heads, steps, steps)")
        T.check(bool((T.as_plain(w)[HEADS:, :, 2:] == 0).all()),
                _("attention_weights[{i}]: the second sequence has valid length 2, so its padded key "
                  "positions 2 and 3 must get weight exactly 0 (pass valid_lens to every block)").format(i=i))


# ---------------------------------------------------------------------------- DecoderBlock
def _fresh_state(enc: torch.Tensor, lens, num_blocks: int = 1) -> list:
    return [enc, lens, [None] * num_blocks]


@pytest.mark.component("DecoderBlock")
@pytest.mark.weight(1 / 2)  # the output and the cache share one test's weight
@pytest.mark.parametrize("part", ["output", "cache"])
def test_decoder_block_shape_and_cache(student, part):
    """returns (batch, steps, num_hiddens) and appends its input to the block's cache"""
    blk = student.DecoderBlock(*_block_args(), 0)
    blk.eval()
    X, enc = S.randn((2, 3, D), 3), S.randn((2, 4, D), 4)
    Y, state = T.call(_("DecoderBlock(X of shape (2, 3, 8), state)"), blk, X, _fresh_state(enc, torch.tensor([4, 2])),
                      show_args=False)
    if part == "output":
        T.assert_shape(Y, (2, 3, D), _("DecoderBlock output for X of shape (2, 3, 8)"))
    else:
        T.assert_close(state[2][0], X, what=_("state[2][0] after one call on an empty cache"),
                       hint="the cache holds the inputs X this block has seen: cat(cache, X) on the time axis")


@pytest.mark.component("DecoderBlock")
def test_decoder_block_causal_in_eval(student):
    """self-attention is causal in eval mode too: changing a later step leaves earlier outputs alone"""
    blk = student.DecoderBlock(*_block_args(0.2), 0)
    blk.eval()
    X, enc = S.randn((2, 4, D), 5), S.randn((2, 3, D), 6)
    X2 = X.clone()
    X2[:, 2:] += 5 * S.randn((2, 2, D), 7)
    lens = torch.tensor([3, 2])
    Y, _state = blk(X, _fresh_state(enc, lens))
    Y2, _state = blk(X2, _fresh_state(enc, lens))
    T.assert_close(Y2[:, :2], Y[:, :2], what=_("outputs at steps 0 and 1 after changing steps 2 and 3"),
                   hint="the query at step p may only see steps 0..p (causal mask), in training AND in "
                        "eval mode: an eval-mode mask of None lets earlier positions see future ones")


# ---------------------------------------------------------------------------- TransformerDecoder
@pytest.mark.component("TransformerDecoder")
@pytest.mark.kind("structure")
def test_decoder_own_blocks(student):
    """every block of the decoder has its own weights"""
    _check_own_blocks(lambda layers: student.TransformerDecoder(*_model_args(layers)), _decoder_inputs,
                      "TransformerDecoder")


@pytest.mark.component("TransformerDecoder")
@pytest.mark.weight(1 / len(DECODER_PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", DECODER_PARTS)
def test_decoder_shapes(student, part):
    """logits (batch, steps, vocab); every block has its own cache and attention weights"""
    dec = student.TransformerDecoder(*_model_args(2))
    dec.eval()
    enc, lens = S.randn((2, 5, D), 8), torch.tensor([5, 3])
    X = torch.tensor([[1, 2, 3], [4, 5, 6]])
    logits, state = T.call(_("TransformerDecoder(X of shape (2, 3), init_state(enc_outputs, enc_valid_lens))"), dec, X,
                           dec.init_state(enc, lens), show_args=False)
    if part == "logits":
        T.assert_shape(logits, (2, 3, VOCAB), _("TransformerDecoder logits for token ids of shape (2, 3)"))
    elif part == "cache":
        T.check(len(state) == 3 and len(state[2]) == 2,
                _("the state is [enc_outputs, enc_valid_lens, cache] with one cache entry per block"))
        for i in range(2):
            T.assert_shape(state[2][i], (2, 3, D), _("state[2][{i}] (the cache of block {i})").format(i=i))
    else:
        self_w, cross_w = T.attribute(dec, "attention_weights", "TransformerDecoder")
        for i in range(2):
            T.assert_shape(self_w[i], (2 * HEADS, 3, 3),
                           _("attention_weights[0][{i}] (block {i}'s self-attention: attention1's weights)").format(i=i))
            T.assert_shape(cross_w[i], (2 * HEADS, 3, 5),
                           _("attention_weights[1][{i}] (block {i}'s encoder-decoder attention: attention2's weights)").format(i=i))


@pytest.mark.component("TransformerDecoder")
def test_decoder_step_by_step(student):
    """decoding one token at a time gives the same logits as the whole sequence (true positions)"""
    dec = student.TransformerDecoder(*_model_args(2))
    dec.eval()
    enc, lens = S.randn((2, 5, D), 9), torch.tensor([5, 3])
    X = torch.tensor([[1, 2, 3, 4], [4, 5, 6, 7]])
    whole, _state = dec(X, dec.init_state(enc, lens))
    state, steps = dec.init_state(enc, lens), []
    for t in range(4):
        logits, state = dec(X[:, t:t + 1], state)
        steps.append(logits)
    T.assert_close(torch.cat(steps, 1), whole, what=_("step-by-step logits vs whole-sequence logits"),
                   inputs={"X": X}, rtol=1e-4, atol=1e-4, sides=(_("one at a time"), _("whole sequence")),
                   hint="the token after t cached ones sits at position t: add P[t], not P[0] "
                        "(the positional encoding must follow the cache length)")
