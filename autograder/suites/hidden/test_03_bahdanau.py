"""Hidden tests for assignment 03: the RNN decoder with Bahdanau attention (instructor only).

Encoder outputs come from the given Seq2SeqEncoder run here in the grader and are sent as tensors.
With the course's weights copied in, single steps are checked against computations rebuilt here
from those weights (the query of each step, the GRU input of one step); then the whole decoder is
compared with the reference (also on a few fixed problems at realistic sizes); finally one SGD
step and a short training run go through an EncoderDecoder built from the student's classes.

One check, one score: a comparison of outputs (logits, hidden state) and of the stored
attention_weights is run once per part (`part`), so that a missing or wrong attention_weights
costs only the parts about it. Tests that compare the student's decoder with itself (step by step
against whole) or check properties are of kind "property": they earn credit only in proportion to
the reference comparisons passed, and they run the decoder with the course's weights copied in, as the
comparisons do (`loaded`). The parameters' names are checked once, by the public suite's
test_decoder_contract_names (students see it in their self-check); the tests here bind the course's
weights by structure (T.copy_weights).

Feeding a whole target sequence in eval mode is outside the contract: whole sequences are fed in
training mode with dropout 0 (deterministic), eval mode is exercised one step at a time.
"""
import functools

import pytest
import torch
from hypothesis import given, settings, strategies as st
from torch import nn

from autograder.selfcheck import strategies as S
from autograder.selfcheck import testing as T
from autograder.selfcheck.i18n import N_, _

EXAMPLES = 6  # a decoder example costs several round trips; every mutant is caught by two tests or more
MODULE_HINT = N_("per step: query = hidden_state[-1] (the top layer) as (B, 1, h); context = attention(query, "
                 "enc_outputs, enc_outputs, enc_valid_lens); GRU input cat((context, embedding), dim=-1) as "
                 "(1, B, h + e); one GRU step; dense on the collected outputs; return the updated hidden state")


@st.composite
def dec_case(draw, layers=st.integers(1, 2), steps=st.integers(1, 3), none_lens=True):
    """Sizes, source valid lengths (None or (B,), each >= 1) and a seed."""
    c = dict(V=draw(st.integers(2, 6), label="vocab_size"), E=draw(st.integers(1, 4), label="embed_size"),
             H=draw(st.integers(1, 4), label="num_hiddens"), L=draw(layers, label="num_layers"),
             B=draw(st.integers(1, 3), label="B"), T_enc=draw(st.integers(1, 4), label="T_enc"),
             T_dec=draw(steps, label="T_dec"))
    kinds = ["1d", "none"] if none_lens else ["1d"]
    lens = S.valid_lens(draw, draw(st.sampled_from(kinds), label="valid_lens kind"), c["B"], c["T_enc"],
                        label="enc_valid_lens")
    c.update(lens=lens, seed=draw(S.SEEDS, label="seed"))
    return c


def describe(c, dropout=0.0):
    return (f"Seq2SeqAttentionDecoder(vocab_size={c['V']}, embed_size={c['E']}, num_hiddens={c['H']}, "
            f"num_layers={c['L']}, dropout={dropout})")


def encoder_outputs(ref, c):
    """The given GRU encoder's (outputs (T_enc, B, H), state (L, B, H)) on random tokens, computed here."""
    torch.default_generator.manual_seed(c["seed"])  # not torch.manual_seed: it also queues CUDA seeding, slowly
    enc = ref.Seq2SeqEncoder(c["V"] + 1, 3, c["H"], c["L"]).eval()
    src = torch.randint(0, c["V"] + 1, (c["B"], c["T_enc"]))
    with torch.no_grad():
        outputs, state = enc(src)
    return outputs.clone(), state.clone()


def targets(c, steps=None):
    g = torch.Generator().manual_seed(c["seed"] + 1)
    return torch.randint(0, c["V"], (c["B"], steps or c["T_dec"]), generator=g)


def build(student, c, dropout=0.0, mode="train"):
    T.seed(student, c["seed"])
    dec = student.Seq2SeqAttentionDecoder(c["V"], c["E"], c["H"], c["L"], dropout)
    if mode == "train":
        dec.train()
    else:
        dec.eval()
    return dec


#: Calls of the student's code (T.call): the descriptions name the arguments, the hint is the decoder's recipe.
call = functools.partial(T.call, hint=MODULE_HINT, show_args=False)


#: The parts of a comparison that are scored separately (see the module's docstring).
PARTS = ("outputs", "attention_weights")
by_part = pytest.mark.parametrize("part", PARTS)


def step_weights(dec, c, step):
    """The decoder's stored attention_weights (a missing attribute fails here, in the tests that read it)."""
    weights = list(T.attribute(dec, "attention_weights", describe(c)))
    T.check(len(weights) == step, _("after decoding {step} step(s) in one forward call, attention_weights should hold "
                                    "{step} tensor(s), one per decoding step, got {count}").format(step=step, count=len(weights)))
    return [T.as_plain(w) for w in weights]


# Pieces of the decoder rebuilt here from the course's weights, copied into the student's decoder.

def course_weights(dec, ref, c):
    """The course's (random) decoder weights, copied into `dec` (T.copy_weights), as the course names them."""
    r = ref.Seq2SeqAttentionDecoder(c["V"], c["E"], c["H"], c["L"], 0.0)
    T.copy_weights(dec, r)
    return T.state_dict(r)


def loaded(student, ref, c, dropout=0.0, mode="train"):
    """The student's decoder for a property test, in the state the comparisons run it in: built as `build`
    builds it, with the course's weights copied in by `course_weights`, so that code cannot behave one way
    with its own initial weights and another once the course's are loaded. Where they do not bind to it
    (T.copy_weights fails: the comparisons fail too, and the gate pays this test in proportion to them), it
    keeps its own weights."""
    dec = build(student, c, dropout, mode)
    try:
        course_weights(dec, ref, c)
    except Exception:  # no binding; a FailFast (a limit, a stub) is no Exception and ends the test
        dec = build(student, c, dropout, mode)
    return dec


def load(module, sd, prefix, what):
    try:
        module.load_state_dict({k[len(prefix):]: v for k, v in sd.items() if k.startswith(prefix)})
    except RuntimeError as exc:
        raise AssertionError(_("the weights of your '{prefix}' do not fit {what}: {exc}").format(prefix=prefix[:-1], what=what, exc=exc)) from None


def attention_from(sd, H):
    """Additive attention with the student's attention weights (attention.W_q, W_k, w_v)."""
    att = nn.ModuleDict({"W_q": nn.Linear(H, H, bias=False), "W_k": nn.Linear(H, H, bias=False),
                         "w_v": nn.Linear(H, 1, bias=False)})
    load(att, sd, "attention.", f"AdditiveAttention({H}, {H}, {H}, dropout)")

    def weights(query, enc, lens):  # query (B, 1, H), enc (B, T, H) -> (B, 1, T)
        with torch.no_grad():
            scores = att["w_v"](torch.tanh(att["W_q"](query).unsqueeze(2) + att["W_k"](enc).unsqueeze(1))).squeeze(-1)
        if lens is not None:
            mask = torch.arange(enc.shape[1]).reshape(1, 1, -1) < lens.reshape(-1, 1, 1)
            scores = scores.masked_fill(~mask, -float("inf"))
        return torch.softmax(scores, dim=-1)
    return weights


def gru_from(sd, c):
    gru = nn.GRU(c["E"] + c["H"], c["H"], c["L"])
    load(gru, sd, "rnn.", f"nn.GRU(embed_size + num_hiddens, num_hiddens, num_layers={c['L']})")
    return gru


def decoder_step(sd, c, gru, enc_bt, hidden, tokens, layer=-1, context_first=True):
    """One decoding step rebuilt from the course's weights `sd`: the query is hidden[layer], the GRU input
    cat(context, embedding) (or the reverse): (attention weights (B, 1, T_enc), logits (B, 1, V), new hidden)."""
    weights = attention_from(sd, c["H"])(hidden[layer].unsqueeze(1), enc_bt, c["lens"])
    context = weights @ enc_bt  # (B, 1, H)
    emb = sd["embedding.weight"][tokens].unsqueeze(1)  # (B, 1, E)
    pair = (context, emb) if context_first else (emb, context)
    with torch.no_grad():
        out, new_hidden = gru(torch.cat(pair, dim=-1).permute(1, 0, 2), hidden)
        logits = (out @ sd["dense.weight"].T + sd["dense.bias"]).permute(1, 0, 2)
    return weights, logits, new_hidden


# ---------------------------------------------------------------- init_state

@pytest.mark.component("Seq2SeqAttentionDecoder")
@settings(max_examples=EXAMPLES)
@given(c=dec_case())
def test_init_state_permutes_batch_first(student, ref, c):
    """init_state permutes the encoder outputs (T, B, h) to batch first (B, T, h) and keeps the hidden state and valid lengths"""
    dec = build(student, c)
    outputs, hidden = encoder_outputs(ref, c)
    state = call(f"{describe(c)}.init_state((outputs, state), enc_valid_lens)", dec.init_state, (outputs, hidden),
                 c["lens"])
    T.check(len(state) == 3, _("init_state should return [outputs, hidden_state, enc_valid_lens], got {count} items").format(count=len(state)))
    T.assert_shape(state[0], (c["B"], c["T_enc"], c["H"]), _("init_state(...)[0], the encoder outputs batch first"))
    T.check(torch.equal(T.as_plain(state[0]), outputs.permute(1, 0, 2)),
            _("init_state(...)[0] must be outputs.permute(1, 0, 2): entry [b, t] is the encoder output of sequence b "
              "at step t (outputs of shape {shape}). hint: reshape(B, T, h) keeps the time-first "
              "order of the numbers and mixes up sequences; permute (or transpose(0, 1)) swaps the axes").format(shape=tuple(outputs.shape)))
    T.check(torch.equal(T.as_plain(state[1]), hidden), _("init_state(...)[1] must be the encoder's final hidden state "
                                                         "(num_layers, B, h), unchanged"))
    T.check((state[2] is None) if c["lens"] is None else torch.equal(T.as_plain(state[2]), c["lens"]),
            _("init_state(...)[2] must be enc_valid_lens unchanged ({lens}), got {got}").format(lens=c['lens'], got=state[2]))


# ---------------------------------------------------------------- attention weights

@pytest.mark.component("Seq2SeqAttentionDecoder")
@pytest.mark.kind("property")  # `ref` only builds the encoder outputs and gives the weights the comparisons load
@settings(max_examples=EXAMPLES)
@given(c=dec_case(none_lens=False), first=st.integers(1, 3))
def test_attention_weights_per_step_masked_and_normalized(student, ref, c, first):
    """attention_weights holds one (B, 1, T_enc) tensor per step of the last forward call, zero beyond enc_valid_lens, summing to 1"""
    dec = loaded(student, ref, c)
    enc = encoder_outputs(ref, c)
    call(f"{describe(c)}(X, state)", dec, targets(c, first), dec.init_state(enc, c["lens"]))
    call(f"{describe(c)}(X, state)", dec, targets(c), dec.init_state(enc, c["lens"]))
    held = len(list(T.attribute(dec, "attention_weights", describe(c))))
    T.check(held == c["T_dec"],
            _("after a forward call of {first} step(s) then one of {steps} step(s), attention_weights holds "
              "{held} tensors: it must hold the {steps} of the last forward call, one per decoding step (start a "
              "new list in every forward call)").format(first=first, steps=c['T_dec'], held=held))
    for t, w in enumerate(step_weights(dec, c, c["T_dec"])):
        T.assert_shape(w, (c["B"], 1, c["T_enc"]), f"attention_weights[{t}]")
        for b, n in enumerate(c["lens"].tolist()):
            T.check(bool((w[b, 0, n:] == 0).all()),
                    _("attention_weights[{t}][{b}] = {weights}: source positions beyond the valid length {n} "
                      "must get weight exactly 0. hint: pass enc_valid_lens (state[2]) to the attention").format(t=t, b=b, weights=w[b, 0].tolist(), n=n))
        T.assert_close(w.sum(-1), torch.ones(c["B"], 1), what=_("attention_weights[{t}] summed over the source positions").format(t=t))


@pytest.mark.component("Seq2SeqAttentionDecoder")
@pytest.mark.weight(1 / len(PARTS))  # the parts share one test's weight
@by_part
@settings(max_examples=EXAMPLES)
@given(c=dec_case(layers=st.integers(2, 3), steps=st.just(3)))
def test_query_is_top_layer_of_current_hidden_state(student, ref, part, c):
    """at every step the attention query is the top layer (hidden_state[-1]) of the current hidden state (num_layers >= 2)"""
    def run() -> tuple:  # every step's input hidden state, logits, weights, new hidden state, expected step
        dec = build(student, c, mode="eval")
        sd = course_weights(dec, ref, c)
        gru = gru_from(sd, c)
        enc = encoder_outputs(ref, c)
        state = dec.init_state(enc, c["lens"])
        # the grader's own batch-first outputs: how the student's state keeps them is test_init_state's question
        enc_bt = enc[0].permute(1, 0, 2)

        def step(t: int) -> tuple:
            nonlocal state
            hidden = T.as_plain(state[1])
            logits, state = call(_("{module} in eval mode on X[:, {t}:{next}]").format(module=describe(c), t=t, next=t + 1),
                                 dec, X[:, t:t + 1], state)
            # what one part alone reads, as T.Snapshot: the logits as a tensor, the weights, the new hidden state
            return (hidden, T.Snapshot(lambda: T.as_plain(logits)), T.Snapshot(lambda: step_weights(dec, c, 1)[0]),
                    T.Snapshot(lambda: state[1]), decoder_step(sd, c, gru, enc_bt, hidden, X[:, t]))
        return sd, enc_bt, T.steps(step, c["T_dec"])

    X = targets(c)
    sd, enc_bt, (done, stopped) = T.shared(student, run, c)
    index = 0 if part == "attention_weights" else 1  # in decoder_step's result
    for t, (hidden, logits, weights, new_hidden, expected) in enumerate(done):
        got = weights.get() if part == "attention_weights" else logits.get()
        if not torch.allclose(got, expected[index], rtol=1e-5, atol=1e-5):
            gru = gru_from(sd, c)
            layers = [i for i in range(c["L"] - 1) if torch.allclose(
                got, decoder_step(sd, c, gru, enc_bt, hidden, X[:, t], layer=i)[index], atol=1e-5)]
            hint = ("the query must be the top layer of the current hidden state, hidden_state[-1], as (B, 1, h)"
                    + (f"; your decoder matches layer {layers[0]} instead (hidden_state[0] is the bottom layer)"
                       if layers else ""))
            what = _("attention weights") if part == "attention_weights" else _("logits")
            T.assert_close(got, expected[index], what=_("{what} of step {t} (fed one token at a time) vs a step "
                             "computed with the same weights and query = top layer of the hidden state").format(what=what, t=t), hint=hint)
        if part == "outputs":
            T.assert_close(new_hidden.get(), expected[2], what=_("the hidden state returned by step {t} vs a step computed "
                             "with the same weights and query = top layer of the hidden state").format(t=t), hint=MODULE_HINT)
    if stopped is not None:
        raise stopped


@pytest.mark.component("Seq2SeqAttentionDecoder")
@settings(max_examples=EXAMPLES)
@given(c=dec_case(steps=st.just(1)), data=st.data())
def test_gru_input_is_context_then_embedding(student, ref, c, data):
    """one decoding step runs the GRU on cat(context, embedding), in that order, then dense"""
    dec = build(student, c, mode="eval")
    sd = course_weights(dec, ref, c)
    enc = encoder_outputs(ref, c)
    X = targets(c)
    logits, state = call(_("{module} in eval mode on one step").format(module=describe(c)), dec, X, dec.init_state(enc, c["lens"]))
    enc_bt, hidden = enc[0].permute(1, 0, 2), enc[1]
    gru = gru_from(sd, c)
    _weights, expected, expected_hidden = decoder_step(sd, c, gru, enc_bt, hidden, X[:, 0])
    hint = "the GRU input is torch.cat((context, embedding), dim=-1): the context first, then the embedding"
    if not torch.allclose(T.as_plain(logits), expected, atol=1e-5):
        swapped = decoder_step(sd, c, gru, enc_bt, hidden, X[:, 0], context_first=False)[1]
        if torch.allclose(T.as_plain(logits), swapped, atol=1e-5):
            hint = "you concatenated (embedding, context): the contract's order is cat((context, embedding), dim=-1)"
    T.assert_close(logits, expected, what=_("{module}: logits of one step vs dense(GRU(cat(context, embedding)))").format(module=describe(c)),
                   hint=hint + "; " + MODULE_HINT)
    T.assert_close(state[1], expected_hidden, what=_("the hidden state returned after one step"),
                   hint="the new state must carry the hidden state computed by the GRU step; " + hint)


# ---------------------------------------------------------------- decoding step by step

@pytest.mark.component("Seq2SeqAttentionDecoder")
@pytest.mark.kind("property")  # the decoder against itself; `ref` builds the encoder outputs, gives the weights
@pytest.mark.weight(1 / len(PARTS))  # the parts share one test's weight
@by_part
@settings(max_examples=EXAMPLES)
@given(c=dec_case(steps=st.integers(2, 4)))
def test_step_by_step_equals_whole_sequence(student, ref, part, c):
    """feeding the target one token at a time (passing the returned state on) equals feeding it whole (training mode, dropout 0)"""
    def run() -> tuple:  # the whole sequence's logits, state and weights; every step's logits and weights
        dec = loaded(student, ref, c)
        enc = encoder_outputs(ref, c)
        whole, whole_state = call(f"{describe(c)}(X, state)", dec, X, dec.init_state(enc, c["lens"]))
        whole_weights = T.Snapshot(lambda: step_weights(dec, c, c["T_dec"]))
        state = dec.init_state(enc, c["lens"])

        def step(t: int) -> tuple:
            nonlocal state
            out, state = call(f"{describe(c)}(X[:, {t}:{t + 1}], state)", dec, X[:, t:t + 1], state)
            return T.as_plain(out), T.Snapshot(lambda: step_weights(dec, c, 1))
        done, stopped = T.steps(step, c["T_dec"])
        return whole, whole_state, whole_weights, done, stopped, state

    X = targets(c)
    whole, whole_state, whole_weights, done, stopped, state = T.shared(student, run, c)
    if part == "attention_weights":
        whole_weights = whole_weights.get()
        weights = [w for _out, step in done for w in step.get()]
    if stopped is not None:
        raise stopped
    hint = ("inside forward, each step's query must come from the hidden state updated by the previous GRU step "
            "(not the one forward started with), and forward must return that updated hidden state in its new state")
    if part == "outputs":
        T.assert_close(torch.cat([out for out, _weights in done], dim=1), whole,
                       what=_("logits decoded step by step vs the whole sequence at once"),
                       hint=hint, sides=(_("one at a time"), _("whole sequence")))
        T.assert_close(state[1], whole_state[1], what=_("final hidden state step by step vs at once"), hint=hint,
                       sides=(_("one at a time"), _("whole sequence")))
    else:
        T.assert_close(torch.cat(weights, dim=1), torch.cat(whole_weights, dim=1),
                       what=_("attention weights step by step vs at once"), hint=hint, sides=(_("one at a time"), _("whole sequence")))


# ---------------------------------------------------------------- the reference

@pytest.mark.component("Seq2SeqAttentionDecoder")
@pytest.mark.weight(1 / len(PARTS))  # the parts share one test's weight
@by_part
@settings(max_examples=EXAMPLES)
@given(c=dec_case(steps=st.integers(1, 4)))
def test_matches_reference(student, ref, part, c):
    """with the course's weights copied in, logits, hidden state and attention weights match the course's decoder"""
    def run() -> list:  # each step's logits, hidden state and weights, the student's and the course's
        dec = build(student, c, dropout=0.3, mode="train")
        r = ref.Seq2SeqAttentionDecoder(c["V"], c["E"], c["H"], c["L"], 0.3)
        T.copy_weights(dec, r)
        enc = encoder_outputs(ref, c)
        # One token at a time in eval mode (dropout 0.3 must be off).
        dec.eval()
        r.eval()
        state, r_state = dec.init_state(enc, c["lens"]), r.init_state(enc, c["lens"])

        def step(t: int) -> tuple:
            nonlocal state, r_state
            out, state = call(_("{module} in eval mode on X[:, {t}:{next}]").format(module=describe(c, 0.3), t=t, next=t + 1),
                              dec, X[:, t:t + 1], state)
            with torch.no_grad():
                r_out, r_state = r(X[:, t:t + 1], r_state)
            return (out, T.Snapshot(lambda: state[1]), T.Snapshot(lambda: step_weights(dec, c, 1)[0]), r_out, r_state[1],
                    r.attention_weights[0])
        return T.steps(step, c["T_dec"])

    X = targets(c)
    done, stopped = T.shared(student, run, c)
    for t, (out, hidden, weights, r_out, r_hidden, r_weights) in enumerate(done):
        what = _("{module} in eval mode, step {t}, vs the course's decoder with the same weights").format(module=describe(c, 0.3), t=t)
        if part == "outputs":
            T.assert_close(out, r_out, what=f"{what}: logits", hint="in eval mode dropout must be off; " + MODULE_HINT)
            T.assert_close(hidden.get(), r_hidden, what=_("{what}: hidden state").format(what=what), hint=MODULE_HINT)
        else:
            T.assert_close(weights.get(), r_weights, what=_("{what}: attention weights").format(what=what),
                           hint=MODULE_HINT)
    if stopped is not None:
        raise stopped


@pytest.mark.component("Seq2SeqAttentionDecoder")
@pytest.mark.weight(1 / len(PARTS))  # the parts share one test's weight
@by_part
@settings(max_examples=EXAMPLES)
@given(c=dec_case(steps=st.integers(1, 4)))
def test_matches_reference_whole_sequence(student, ref, part, c):
    """on a whole target sequence (training mode, dropout 0) the decoder matches the course's decoder with the same weights"""
    check_whole_sequence_matches_reference(student, ref, c, part)


def check_whole_sequence_matches_reference(student, ref, c, part):
    """The student's decoder and the course's, same weights, training mode, dropout 0, on case `c`: the outputs
    (logits, final hidden state) or the attention weights step after step (`part`); both parts check
    one call (T.shared)."""
    X = targets(c)

    def run():
        dec = build(student, c)
        r = ref.Seq2SeqAttentionDecoder(c["V"], c["E"], c["H"], c["L"], 0.0).train()
        T.copy_weights(dec, r)
        enc = encoder_outputs(ref, c)
        out, state = call(f"{describe(c)}(X, state)", dec, X, dec.init_state(enc, c["lens"]))
        weights = T.Snapshot(lambda: step_weights(dec, c, c["T_dec"]))
        with torch.no_grad():
            r_out, r_state = r(X, r.init_state(enc, c["lens"]))
        return weights, out, state, r_out, r_state, list(r.attention_weights)

    weights, out, state, r_out, r_state, r_weights = T.shared(student, run, c)
    what = _("{module} on X of shape {shape} vs the course's decoder with the same weights").format(module=describe(c), shape=tuple(X.shape))
    if part == "attention_weights":
        T.assert_close(torch.cat(weights.get(), 1), torch.cat(r_weights, 1),
                       what=_("{what}: attention weights, step after step").format(what=what), hint=MODULE_HINT)
        return
    T.assert_close(out, r_out, what=f"{what}: logits", hint=MODULE_HINT)
    T.assert_close(state[1], r_state[1], what=_("{what}: final hidden state").format(what=what), hint=MODULE_HINT)
    # how the returned state keeps the encoder outputs (batch first) is test_forward_shapes' check, not this one's


def realistic_case(V, E, H, L, T_enc, T_dec, kind, seed, B=8):
    """A fixed problem at a realistic size (the keys of dec_case), enc_valid_lens None or (B,) drawn from `seed`."""
    g = torch.Generator().manual_seed(seed + 1000)
    lens = None if kind == "none" else torch.randint(1, T_enc + 1, (B,), generator=g)
    return dict(V=V, E=E, H=H, L=L, B=B, T_enc=T_enc, T_dec=T_dec, lens=lens, seed=seed)


#: Fixed problems at realistic sizes: batch 8, source length != target length, embed_size != num_hiddens != vocab.
REALISTIC = [realistic_case(48, 32, 64, 1, 64, 40, "none", 301), realistic_case(40, 56, 32, 2, 48, 32, "1d", 302),
             realistic_case(64, 40, 48, 2, 56, 36, "1d", 303)]


def realistic_id(c):
    """A short test id for a realistic case."""
    lens = "none" if c["lens"] is None else "1d"
    return (f"B={c['B']}-T_enc={c['T_enc']}-T_dec={c['T_dec']}-V={c['V']}-E={c['E']}-H={c['H']}-L={c['L']}-"
            f"valid_lens={lens}")


@pytest.mark.component("Seq2SeqAttentionDecoder")
@pytest.mark.weight(1 / (len(REALISTIC) * len(PARTS)))  # the cases and parts share one test's weight
@by_part
@pytest.mark.parametrize("c", REALISTIC, ids=realistic_id)
def test_matches_reference_at_realistic_size(student, ref, c, part):
    """at realistic sizes (batch 8, 32-64 source and target steps, 32-64 features) the decoder matches the course's decoder with the same weights"""
    check_whole_sequence_matches_reference(student, ref, c, part)


# ---------------------------------------------------------------- training through the given EncoderDecoder

def given_class(student, name):
    try:
        return getattr(student, name)
    except AttributeError:
        raise AssertionError(_("`{name}` (given code) is not available in your submission: keep the line that "
                               "imports it from attention_support").format(name=name)) from None


def seq2seq(student, V, E, H, L, seed):
    T.seed(student, seed)
    enc = given_class(student, "Seq2SeqEncoder")(V, E, H, L)
    dec = student.Seq2SeqAttentionDecoder(V, E, H, L)
    return given_class(student, "EncoderDecoder")(enc, dec)


def reversal_batch(seed, B=16, S=4, V=6):
    """Reverse a sequence of symbols 2..V-1 (0 pads, 1 is <bos>): [enc_X, enc_len, dec_in, target, target_len]."""
    g = torch.Generator().manual_seed(seed)
    lens = torch.randint(2, S + 1, (B,), generator=g)
    src = torch.randint(2, V, (B, S), generator=g) * (torch.arange(S) < lens[:, None])
    tgt = torch.zeros_like(src)
    for b in range(B):
        tgt[b, :int(lens[b])] = src[b, :int(lens[b])].flip(0)
    dec_in = torch.cat([torch.ones(B, 1, dtype=torch.long), tgt[:, :-1]], dim=1)
    return [src, lens, dec_in, tgt, lens.clone()]


def masked_ce(model, batch):
    """The loss per target token, measured here on the model's logits (training mode, dropout 0)."""
    enc_X, enc_len, dec_in, tgt, tgt_len = batch
    model.train()
    logits, _state = call(_("EncoderDecoder(Seq2SeqEncoder, your decoder)(enc_X, dec_X, enc_valid_len)"), model, enc_X, dec_in,
                     enc_len)
    T.assert_shape(logits, tuple(tgt.shape) + (6,), _("the logits of the EncoderDecoder"))
    mask = torch.arange(tgt.shape[1])[None] < tgt_len[:, None]
    ce = nn.functional.cross_entropy(T.as_plain(logits).permute(0, 2, 1), tgt, reduction="none")
    return float((ce * mask).sum() / mask.sum())


def reference_sgd_step(model, batch, lr):
    """T.fit's SGD step (masked cross-entropy, gradient norm clipped to 1), without building an optimizer
    here (the first torch.optim optimizer of a process imports torch._dynamo, seconds of start-up)."""
    enc_X, enc_len, dec_in, tgt, tgt_len = batch
    model.train()
    logits, _ = model(enc_X, dec_in, enc_len)
    mask = torch.arange(tgt.shape[1])[None] < tgt_len[:, None]
    ce = nn.functional.cross_entropy(logits.permute(0, 2, 1), tgt, reduction="none")
    model.zero_grad()
    ((ce * mask).sum() / mask.sum()).backward()
    params = [p for p in model.parameters() if p.requires_grad]
    nn.utils.clip_grad_norm_(params, 1.0)
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad


@pytest.mark.component("Seq2SeqAttentionDecoder")
@settings(max_examples=3)
@given(L=st.integers(1, 2), seed=S.SEEDS)
def test_one_sgd_step_matches_reference(student, ref, L, seed):
    """one SGD step through EncoderDecoder changes every weight as the course's model does (gradients flow through every step)"""
    V, E, H, LR = 6, 3, 4, 0.5
    model = seq2seq(student, V, E, H, L, seed)
    r = ref.EncoderDecoder(ref.Seq2SeqEncoder(V, E, H, L), ref.Seq2SeqAttentionDecoder(V, E, H, L))
    T.copy_weights(model, r)
    batch = [{"inputs": reversal_batch(seed)}]
    call(_("T.fit(EncoderDecoder(Seq2SeqEncoder, your decoder), one SGD step)"), T.fit, model, batch,
         loss="masked_ce", lr=LR, steps=1, optimizer="sgd")
    before = {T.normalize_key(k): v.detach().clone() for k, v in r.state_dict().items()}
    reference_sgd_step(r, batch[0]["inputs"], lr=LR)
    # The student's weights under the contract's names, bound as copy_weights bound them (names may differ).
    mine, theirs = T.bound_state(model, r), {T.normalize_key(k): v for k, v in r.state_dict().items()}
    for name in sorted(theirs):
        # Compare the steps (the clipped gradients), not the weights: a step is small next to a weight.
        T.assert_close((mine[name] - before[name]) / LR, (theirs[name] - before[name]) / LR,
                       what=_("the change of '{name}' in one SGD step, divided by the learning rate (the clipped "
                              "gradient; num_layers={L})").format(name=name, L=L), rtol=1e-4, atol=1e-6,
                       hint="the gradient must reach every weight through every decoding step: do not detach the "
                            "hidden state or the context between steps (detaching is for truncated backpropagation "
                            "in language models, not here), and do not compute them under torch.no_grad()")


@pytest.mark.component("Seq2SeqAttentionDecoder")
@pytest.mark.keep("end to end: the decoder trains inside the given EncoderDecoder; no single mutant is specific to it")
@settings(max_examples=1)
@given(seed=st.just(0))
def test_learns_to_reverse(student, seed):
    """inside EncoderDecoder the decoder learns a tiny reversal task: the held-out loss falls well below its start"""
    # Kills no mutant of its own (every value or gradient bug is caught above); it guards the integration.
    model = seq2seq(student, 6, 6, 12, 1, seed)
    held_out = reversal_batch(99)
    before = masked_ce(model, held_out)
    call(_("T.fit(EncoderDecoder(Seq2SeqEncoder, your decoder), 20 Adam steps)"), T.fit, model,
         [{"inputs": reversal_batch(s)} for s in range(4)], loss="masked_ce", lr=0.05, steps=20)
    after = masked_ce(model, held_out)
    T.check(after < 0.6 * before, _("after 20 Adam steps on a reversal task the held-out loss went from {before:.3f} to "
                                    "{after:.3f} per token; the course's decoder gets below {target:.3f}. "
                                    "hint: {module_hint}").format(before=before, after=after, target=0.6 * before, module_hint=_(MODULE_HINT)))
