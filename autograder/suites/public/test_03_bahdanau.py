"""Public tests for assignment 03: the RNN decoder with Bahdanau attention.

These run in your notebook's self-check and in the grader. They feed the decoder made-up encoder
outputs and check shapes, the decoder state, the attention weights and that decoding one token
at a time agrees with feeding the whole sequence; the grader runs more tests.
"""
import pytest
import torch

from autograder.selfcheck import testing as T
from autograder.selfcheck.i18n import _

V, E, H, L = 7, 3, 4, 2  # vocabulary, embedding size, hidden units, layers
B, T_ENC, T_DEC = 3, 5, 4
LENS = torch.tensor([5, 2, 1])

DECODER = f"Seq2SeqAttentionDecoder(vocab_size={V}, embed_size={E}, num_hiddens={H}, num_layers={L})"


def encoder_outputs(seed=0):
    """Made-up encoder outputs: (outputs (T_enc, B, H), final state (L, B, H)), time first."""
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(T_ENC, B, H, generator=g) * 2 - 1, torch.rand(L, B, H, generator=g) * 2 - 1)


def tokens(seed=1, steps=T_DEC):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, V, (B, steps), generator=g)


def decoder(student):
    T.seed(student, 0)
    dec = student.Seq2SeqAttentionDecoder(V, E, H, L)
    dec.train()  # dropout is 0: training mode is deterministic, and it may take a whole sequence
    return dec


#: The decoder's parameters by the contract's names (docs/course-api.md), and their shapes.
CONTRACT = {
    "attention.W_k.weight": (H, H), "attention.W_q.weight": (H, H), "attention.w_v.weight": (1, H),
    "embedding.weight": (V, E),
    **{f"rnn.{kind}_l{layer}": shape for layer in range(L) for kind, shape in [
        ("weight_ih", (3 * H, E + H if layer == 0 else H)), ("weight_hh", (3 * H, H)),
        ("bias_ih", (3 * H,)), ("bias_hh", (3 * H,))]},
    "dense.weight": (V, H), "dense.bias": (V,),
}


@pytest.mark.component("Seq2SeqAttentionDecoder")
@pytest.mark.kind("structure")
def test_decoder_contract_names(student):
    """the decoder has the submodules attention, embedding, rnn (a GRU over embed_size + num_hiddens) and dense

    The one check of the names (the hidden suite does not check them again): the hidden tests bind the
    course's weights to yours by structure when the names differ."""
    dec = decoder(student)
    shapes = {k: tuple(v.shape) for k, v in T.state_shapes(dec).items() if not T.is_lazy(v)}
    gru_input = shapes.get("rnn.weight_ih_l0", CONTRACT["rnn.weight_ih_l0"])
    expected = CONTRACT["rnn.weight_ih_l0"]
    if len(gru_input) == 2 and gru_input[1] == expected[1] and gru_input[0] != expected[0]:  # the input size is right
        T.check(False, _("'rnn.weight_ih_l0' has shape {gru_input}, expected {expected}: its first axis is the number of "
                         "gates times num_hiddens, 3 for the contract's nn.GRU (4 is an nn.LSTM's, 1 a plain "
                         "nn.RNN's)").format(gru_input=gru_input, expected=expected))
    T.check(gru_input == expected,
            _("'rnn.weight_ih_l0' has shape {gru_input}, expected {expected}: the GRU reads "
              "cat(context, embedding), so its input size is embed_size + num_hiddens").format(gru_input=gru_input, expected=expected))
    T.assert_contract_names(dec, T.contract(CONTRACT), _("{decoder}: the contract names the submodules attention, "
                                                         "embedding, rnn and dense").format(decoder=DECODER))


@pytest.mark.component("Seq2SeqAttentionDecoder")
def test_init_state(student):
    """init_state returns [encoder outputs batch first (B, T, h) (a permute, not a reshape), hidden state, valid lengths]"""
    outputs, hidden = encoder_outputs()
    state = T.call(f"{DECODER}.init_state((outputs, state), valid_lens)", decoder(student).init_state,
                   (outputs, hidden), LENS, show_args=False)
    T.check(len(state) == 3, _("init_state should return 3 items [outputs, hidden_state, enc_valid_lens], got {count}").format(count=len(state)))
    T.assert_close(state[0], outputs.permute(1, 0, 2), what=_("init_state(...)[0]: the encoder outputs, batch first"),
                   hint="permute(1, 0, 2) swaps the time and batch axes; a reshape to (B, T, h) keeps the time-first "
                        "order of the numbers and mixes up the sequences")
    T.assert_close(state[1], hidden, what=_("init_state(...)[1]: the encoder's final hidden state, unchanged"))
    T.assert_close(state[2], LENS, what=_("init_state(...)[2]: the valid lengths, unchanged"))


@pytest.mark.component("Seq2SeqAttentionDecoder")
def test_forward_shapes(student):
    """forward returns logits (B, T, vocab_size) and the state [encoder outputs, new hidden state, valid lengths]"""
    dec = decoder(student)
    outputs, hidden = encoder_outputs()
    state = dec.init_state((outputs, hidden), LENS)
    X = tokens()
    logits, new_state = T.call(_("{decoder}(X of shape {shape}, state)").format(decoder=DECODER, shape=tuple(X.shape)), dec, X, state, show_args=False,
                               hint="loop over the time steps of the embedded X (time first), one GRU step each")
    T.assert_shape(logits, (B, T_DEC, V), _("the logits of {decoder} on X of shape {shape}").format(decoder=DECODER, shape=tuple(X.shape)))
    T.check(len(new_state) == 3, _("the returned state should have 3 items [enc_outputs, hidden_state, enc_valid_lens]"))
    T.assert_close(new_state[0], outputs.permute(1, 0, 2), what=_("returned state[0]: the encoder outputs, batch first"))
    T.assert_shape(new_state[1], (L, B, H), _("returned state[1]: the new hidden state (num_layers, B, num_hiddens)"))
    T.assert_close(new_state[2], LENS, what=_("returned state[2]: the valid lengths"))


@pytest.mark.component("Seq2SeqAttentionDecoder")
def test_attention_weights(student):
    """attention_weights holds one (B, 1, T_enc) tensor per decoding step, zero beyond each valid length, summing to 1"""
    dec = decoder(student)
    state = dec.init_state(encoder_outputs(), LENS)
    T.call(f"{DECODER}(X, state)", dec, tokens(), state, show_args=False)
    weights = T.attribute(dec, "attention_weights", DECODER)
    T.check(len(weights) == T_DEC, _("after decoding {t_dec} steps, attention_weights should hold {t_dec} tensors "
                                     "(one per decoding step), got {count}").format(t_dec=T_DEC, count=len(weights)))
    for t, w in enumerate(weights):
        T.assert_shape(w, (B, 1, T_ENC), f"attention_weights[{t}]")
        w = T.as_plain(w)
        for b, n in enumerate(LENS.tolist()):
            T.check(bool((w[b, 0, n:] == 0).all()),
                    _("attention_weights[{t}][{b}] = {weights} gives weight to source positions beyond the "
                      "valid length {n}: pass enc_valid_lens to the attention").format(t=t, b=b, weights=w[b, 0].tolist(), n=n))
        T.assert_close(w.sum(-1), torch.ones(B, 1), what=_("attention_weights[{t}] summed over the source positions").format(t=t))


@pytest.mark.component("Seq2SeqAttentionDecoder")
def test_step_by_step_equals_whole_sequence(student):
    """decoding step by step, passing the returned state on, equals feeding the whole sequence at once"""
    dec = decoder(student)
    enc = encoder_outputs()
    X = tokens()
    whole, whole_state = T.call(f"{DECODER}(X, state)", dec, X, dec.init_state(enc, LENS), show_args=False)
    state = dec.init_state(enc, LENS)
    steps = []
    for t in range(T_DEC):
        out, state = T.call(f"{DECODER}(X[:, {t}:{t + 1}], state)", dec, X[:, t:t + 1], state, show_args=False)
        steps.append(T.as_plain(out))
    T.assert_close(torch.cat(steps, dim=1), whole, what=_("logits decoded step by step vs the whole sequence at once"),
                   sides=(_("one at a time"), _("whole sequence")),
                   hint="the query of every step must be the top layer of the *current* hidden state "
                        "(hidden_state[-1], updated by each GRU step), and forward must return the updated hidden "
                        "state in the new state")
    T.assert_close(state[1], whole_state[1], what=_("the hidden state after the last step, step by step vs at once"),
                   sides=(_("one at a time"), _("whole sequence")))
