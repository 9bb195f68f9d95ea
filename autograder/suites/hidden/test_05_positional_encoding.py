"""Hidden tests for assignment 05: sinusoidal positional encoding (instructor only).

The table is compared with the closed form computed here in float64 (about 1e-4 absolute at large
positions, per the contract: pow and exp/log forms differ there), and checked through properties
of the construction: unit sine/cosine pairs, relative positions as rotations, prefixes. Dropout is
checked through properties that do not depend on the random stream.

The table's name is checked once, by the public suite's test_pe_contract_names (students see it in
their self-check): the tests here read the table as `P`
or, when the module has no `P`, as its one buffer of shape (1, max_len, num_hiddens), so that a
misnamed table costs only the naming test. A comparison of the table and of forward's output scores
each part separately (`part`).
"""
import functools

import pytest
import torch
from hypothesis import example, given, settings, strategies as st

from autograder.selfcheck import strategies as S
from autograder.selfcheck import testing as T
from autograder.selfcheck.hints import PE_FORWARD_HINT, PE_LAYOUT_HINT as LAYOUT_HINT
from autograder.selfcheck.i18n import _

ATOL = 1e-4  # contract: positional encodings at large positions around 1e-4 absolute
EVEN_D = st.integers(1, 16).map(lambda n: 2 * n)


def closed_form(max_len, d):
    """The contract's table in float64, shape (1, max_len, d), d even."""
    i = torch.arange(max_len, dtype=torch.float64).reshape(-1, 1)
    angles = i / torch.pow(torch.tensor(10000.0, dtype=torch.float64),
                           torch.arange(0, d, 2, dtype=torch.float64) / d)
    P = torch.empty(1, max_len, d, dtype=torch.float64)
    P[0, :, 0::2], P[0, :, 1::2] = torch.sin(angles), torch.cos(angles)
    return P


#: Calls of the student's code (T.call): the descriptions name the arguments.
call = functools.partial(T.call, hint=PE_FORWARD_HINT, show_args=False)


def table(student, d, max_len, dropout=0.0, as_stored=False):
    """(module, its table as float64 (1, max_len, d)): read as the public suite's `table` reads it (a misnamed
    table: the public naming test charges it; a table built on forward's first call: read after one call)."""
    pe = student.PositionalEncoding(d, dropout, max_len)
    pe.eval()  # as forward adds it in test_forward_adds_rows_of_its_table (a table that differs by mode is no table)
    what = f"PositionalEncoding(num_hiddens={d}, dropout={dropout}, max_len={max_len}).P"
    P = T.stored_table(pe, "P", (1, max_len, d), what, as_stored=as_stored,
                       after_call=lambda: pe(torch.zeros(1, max_len, d)))
    T.assert_shape(T.as_plain(P, what), (1, max_len, d), what)
    return pe, T.as_plain(P).to(torch.float64)


@pytest.mark.component("PositionalEncoding")
@given(d=EVEN_D, max_len=st.integers(1, 40))
def test_table_shape(student, d, max_len):
    """P has shape (1, max_len, num_hiddens) for any max_len and even num_hiddens"""
    table(student, d, max_len, as_stored=True)


@pytest.mark.component("PositionalEncoding")
@pytest.mark.part("table")  # a stored table: the scoring gate weighs what forward returns
@given(d=EVEN_D, max_len=st.sampled_from([1, 7, 100, 1000]))
def test_table_closed_form(student, d, max_len):
    """every entry of P follows the sine/cosine formula, up to max_len positions"""
    _pe, P = table(student, d, max_len)
    T.assert_close(P, closed_form(max_len, d), what=_("PositionalEncoding({d}, 0, max_len={max_len}).P vs the formula").format(d=d, max_len=max_len),
                   hint=LAYOUT_HINT, atol=ATOL, rtol=0)


@pytest.mark.component("PositionalEncoding")
@pytest.mark.part("table")
@given(d=EVEN_D)
def test_pairs_are_unit_sin_cos(student, d):
    """columns 2j and 2j+1 hold the sine and cosine of one angle: sin^2 + cos^2 = 1 at every position"""
    _pe, P = table(student, d, 60)
    norms = P[0, :, 0::2] ** 2 + P[0, :, 1::2] ** 2  # (max_len, d/2)
    T.assert_close(norms, torch.ones_like(norms), what=_("P[0, i, 2j]**2 + P[0, i, 2j+1]**2 for num_hiddens={d}").format(d=d),
                   hint="the sine and the cosine of the same angle sit side by side (interleaved columns 2j, 2j+1), "
                        "not all sines followed by all cosines", atol=ATOL, rtol=0)
    T.assert_close(P[0, 0], closed_form(1, d)[0, 0], what=_("P[0, 0] (position 0: sin 0 = 0 in even columns, "
                     "cos 0 = 1 in odd columns)"), hint=LAYOUT_HINT, atol=ATOL, rtol=0)


@pytest.mark.component("PositionalEncoding")
@pytest.mark.part("table")
@given(d=EVEN_D, i=st.integers(0, 100), k=st.integers(1, 99))
def test_relative_position_is_a_rotation(student, d, i, k):
    """P[i+k] is P[i] with each sine/cosine pair rotated by the angle k / 10000**(2j/d)"""
    _pe, P = table(student, d, 200)
    omega = 1.0 / torch.pow(torch.tensor(10000.0, dtype=torch.float64), torch.arange(0, d, 2, dtype=torch.float64) / d)
    c, s = torch.cos(k * omega), torch.sin(k * omega)
    sin_i, cos_i = P[0, i, 0::2], P[0, i, 1::2]
    T.check(bool((sin_i ** 2 + cos_i ** 2 > 1e-3).all()),  # a table of zeros turns trivially
            _("P[0, {i}] has a pair of columns that are both 0 (num_hiddens={d}): every pair holds the sine and cosine "
              "of an angle").format(i=i, d=d))
    rotated = torch.empty(d, dtype=torch.float64)
    rotated[0::2] = c * sin_i + s * cos_i  # sin(a + b)
    rotated[1::2] = c * cos_i - s * sin_i  # cos(a + b)
    T.assert_close(P[0, i + k], rotated, what=_("P[0, {shifted}] vs P[0, {i}] rotated by {k} positions "
                     "(num_hiddens={d})").format(shifted=i + k, i=i, k=k, d=d), atol=ATOL, rtol=0,
                   hint="pair j turns at frequency 1 / 10000**(2j/d) per position; " + LAYOUT_HINT)


@pytest.mark.component("PositionalEncoding")
@given(d=EVEN_D, max_len=st.integers(1, 40))
def test_not_a_parameter(student, d, max_len):
    """P is not a trainable parameter (it is not in named_parameters)"""
    pe = student.PositionalEncoding(d, 0.1, max_len)
    names = T.param_names(pe)
    T.check(not any(n.split(".")[-1] == "P" for n in names),
            _("P appears among the trainable parameters {names}: an optimizer would change the encoding; keep P "
              "as a plain tensor (register_buffer or a plain attribute), not an nn.Parameter").format(names=names))
    T.check(not names, _("PositionalEncoding should have no trainable parameters, found {names}").format(names=names))


@st.composite
def forward_case(draw):
    d = draw(EVEN_D, label="num_hiddens")
    max_len = draw(st.integers(1, 30), label="max_len")
    steps = draw(st.integers(1, max_len), label="T")
    B = draw(st.integers(1, 3), label="B")
    dtype = draw(S.FLOAT_DTYPES, label="dtype")
    X = S.randn((B, steps, d), draw(S.SEEDS, label="seed"), dtype)
    return d, max_len, X


@pytest.mark.component("PositionalEncoding")
@given(case=forward_case())
def test_forward_adds_first_positions(student, case):
    """in eval mode, forward(X) is X + P[:, :T], the formula's first T positions added to every sequence"""
    d, max_len, X = case
    pe = student.PositionalEncoding(d, 0.5, max_len)
    pe.eval()
    expected = X.to(torch.float64) + closed_form(max_len, d)[:, :X.shape[1]]
    what = _("PositionalEncoding({d}, dropout=0.5, max_len={max_len}) in eval mode on X of shape {shape}").format(d=d, max_len=max_len, shape=tuple(X.shape))
    T.assert_close(call(what, pe, X), expected, what=what, check_dtype=False, atol=ATOL, rtol=0,
                   hint="return dropout(X + self.P[:, :X.shape[1], :]): the positions run along axis 1 of X, and "
                        "eval mode switches dropout off")


@pytest.mark.component("PositionalEncoding")
@given(case=forward_case(), data=st.data())
def test_prefix_gets_same_encodings(student, case, data):
    """a prefix of a longer sequence gets the same encodings as the start of the whole sequence"""
    d, max_len, X = case
    t = data.draw(st.integers(1, X.shape[1]), label="prefix length")
    pe = student.PositionalEncoding(d, 0.0, max_len)
    pe.eval()
    what = _("PositionalEncoding({d}, 0, max_len={max_len}) on X of shape {shape}").format(d=d, max_len=max_len, shape=tuple(X.shape))
    whole = T.as_plain(call(what, pe, X))
    T.assert_close(call(_("{call} cut to {t} steps").format(call=what, t=t), pe, X[:, :t]), whole[:, :t],
                   what=_("forward(X[:, :{t}]) vs forward(X)[:, :{t}] for X of shape {shape}").format(t=t, shape=tuple(X.shape)),
                   hint="position i always gets P[0, i], whatever the sequence length: add P[:, :T], the first T "
                        "rows of the table")


@pytest.mark.component("PositionalEncoding")
@given(case=forward_case())
def test_input_unchanged(student, case):
    """forward leaves the caller's input unchanged, whatever its shape and dtype"""
    d, max_len, X = case
    pe = student.PositionalEncoding(d, 0.0, max_len)
    pe.eval()
    _result, (after,) = call(_("PositionalEncoding({d}, 0, max_len={max_len}) on X of shape {shape}").format(d=d, max_len=max_len, shape=tuple(X.shape)),
                       T.call_and_inputs, pe, X)
    T.assert_close(after, X, what=_("the caller's input X after forward(X)"),
                   hint="X += ... changes the caller's tensor in place; write X = X + ... instead")


@st.composite
def shorter_case(draw):
    """A forward case whose sequence is shorter than the table (T < max_len): whether forward reads its table,
    not whether it handles a full-length sequence (test_forward_adds_first_positions charges that)."""
    d = draw(EVEN_D, label="num_hiddens")
    max_len = draw(st.integers(2, 30), label="max_len")
    steps = draw(st.integers(1, max_len - 1), label="T")
    B = draw(st.integers(1, 3), label="B")
    seed = draw(S.SEEDS, label="seed")
    return d, max_len, S.randn((B, steps, d), seed, draw(S.FLOAT_DTYPES, label="dtype")), seed


@pytest.mark.component("PositionalEncoding")
@pytest.mark.kind("reads")
@settings(max_examples=10)
@given(case=shorter_case())
@example(case=(64, 1000, S.randn((8, 40, 64), 304), 304))  # a realistic size
def test_forward_adds_rows_of_its_table(student, ref, case):
    """in eval mode forward(X) is X plus rows of its own table, and each output depends on X as the course's does: the table's tests then count on their own"""
    d, max_len, X, seed = case
    pe = student.PositionalEncoding(d, 0.5, max_len)
    pe.eval()
    what = _("PositionalEncoding({d}, dropout=0.5, max_len={max_len}) in eval mode on X of shape {shape}").format(
        d=d, max_len=max_len, shape=tuple(X.shape))
    # The table the table tests read (`table`: a module of its own, in eval mode, read before any call but the one that
    # builds a table forward builds) must be the one this module's forward adds rows of, read after its calls: a
    # forward that rewrote P to what it added, or built P from the first input it met, passed (helper-79's A1, A1d)
    name = f"PositionalEncoding({d}, 0.5, max_len={max_len}).P"
    _pe, P = table(student, d, max_len, 0.5)
    rows = P.reshape(max_len, d)
    b, t = seed % X.shape[0], seed % X.shape[1]  # a position drawn from the seed
    T.assert_depends_like(what, pe, ref.PositionalEncoding(d, 0.5, max_len).eval(), [X],
                          [(_("X[{b}, {t}] changes").format(b=b, t=t), S.changed_at([X], 0, (b, t), seed + 1))])
    added = T.as_plain(call(what, pe, X)).to(torch.float64) - X.to(torch.float64)  # (B, T, d)
    after = T.stored_table(pe, "P", (1, max_len, d), name)
    T.check(isinstance(after, torch.Tensor) and torch.equal(T.as_plain(after).to(torch.float64).reshape(max_len, d), rows),
            _("{what}: after forward your table P is not the table a new module holds: the table is fixed when the module "
              "is built, whatever forward is called with, and forward only reads it").format(what=what))
    # (B, T): the largest difference to the closest row; (B*T, max_len) at once, not (B, T, max_len, d)
    nearest = torch.cdist(added.reshape(-1, d), rows, p=float("inf")).amin(-1).reshape(added.shape[:2])
    if bool((nearest > ATOL).any()):
        i, j = (int(k) for k in (nearest > ATOL).nonzero()[0])
        raise AssertionError(_("{what}: forward(X)[{i}, {j}] - X[{i}, {j}] is no row of your table P (the closest "
                               "is {distance:.3g} away): forward should add the table's rows to X").format(
            what=what, i=i, j=j, distance=float(nearest[i, j])))


def own_table(pe, d, max_len):
    """The student's own table as float64 (1, max_len, d), or the formula's if they store no such table in
    [-1, 1]: a test of dropout compares with the student's X + P, so that a wrong table is not blamed on dropout."""
    P = T.stored_table(pe, "P", (1, max_len, d), f"PositionalEncoding({d}, dropout, max_len={max_len}).P")
    P = P if isinstance(P, torch.Tensor) else None  # a missing table or not a tensor: the other tests charge it
    if P is None or tuple(P.shape) != (1, max_len, d) or not bool((P.abs() <= 1).all()):
        return closed_form(max_len, d)  # (X + P >= 0.5 below needs |P| <= 1)
    return T.as_plain(P).to(torch.float64)


@pytest.mark.component("PositionalEncoding")
@settings(max_examples=10)
@given(d=EVEN_D, p=st.sampled_from([0.3, 0.5]), seed=S.SEEDS)
def test_dropout_in_training_only(student, d, p, seed):
    """dropout acts on X + P in training mode (each entry zeroed or scaled by 1/(1-p)) and is off in eval mode"""
    pe = student.PositionalEncoding(d, p, 16)
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(4, 16, d, generator=g) + 1.5  # X + P >= 0.5, so a zero can only come from dropout
    full = X.to(torch.float64) + own_table(pe, d, 16)
    pe.train()
    T.seed(student, seed)
    out = T.as_plain(call(_("PositionalEncoding({d}, dropout={p}) in training mode").format(d=d, p=p), pe, X)).to(torch.float64)
    T.assert_shape(out, tuple(X.shape), _("PositionalEncoding({d}, dropout={p}) in training mode").format(d=d, p=p))
    dropped = out == 0
    kept_ok = (out - full / (1 - p)).abs() <= 1e-3 * (1 + full.abs())
    never = _("PositionalEncoding({d}, dropout={p}) in training mode zeroed none of the {numel} entries: dropout "
              "must be active in training mode (apply self.dropout in forward)").format(d=d, p=p, numel=out.numel())
    # Untouched X + P is dropout never applied; anything else that is not 0 or (X + P)/(1-p) was dropped
    # elsewhere (X before P is added: it zeroes no entry where no P is 0, as with positions from 1).
    T.check(bool(dropped.any()) or not bool(((out - full).abs() <= 1e-3 * (1 + full.abs())).all()), never)
    bad = ~(dropped | kept_ok)
    if bool(bad.any()):
        idx = tuple(int(i) for i in bad.nonzero()[0])
        raise AssertionError(
            _("PositionalEncoding({d}, dropout={p}) in training mode: entry {index} is {got:.6g}; "
              "with dropout applied to X + P it must be 0 or (X + P)/(1-p) = {kept:.6g}. "
              "hint: add P first, then apply dropout to the sum: dropout(X + P[:, :T])").format(d=d, p=p, index=list(idx), got=float(out[idx]), kept=float(full[idx] / (1 - p))))
    T.check(bool(dropped.any()), never)
    pe.eval()
    T.assert_close(pe(X), full, what=_("PositionalEncoding({d}, dropout={p}) in eval mode vs X + its own P").format(d=d, p=p),
                   atol=ATOL, rtol=0, check_dtype=False,
                   hint="eval mode must switch dropout off: use nn.Dropout, not F.dropout(..., training=True)")


#: Fixed problems at realistic sizes, (num_hiddens, max_len, T, seed): the default max_len 1000 or a table
#: just long enough, batch 8, 40-64 steps, 32-64 features.
REALISTIC_PE = [(32, 1000, 64, 301), (64, 1000, 40, 302), (64, 64, 64, 303)]


#: The parts of a realistic-size comparison scored separately.
PE_PARTS = ("table", "forward")


@pytest.mark.component("PositionalEncoding")
@pytest.mark.weight(1 / (len(REALISTIC_PE) * len(PE_PARTS)))  # the cases and parts share one test's weight
@pytest.mark.parametrize("part", PE_PARTS)
@pytest.mark.parametrize("d,max_len,steps,seed", REALISTIC_PE,
                         ids=[f"d{d}-max_len{m}-T{t}" for d, m, t, _ in REALISTIC_PE])
def test_pe_at_realistic_size(student, ref, d, max_len, steps, seed, part):
    """the table and the eval-mode forward match the course's at realistic sizes (batch 8, 40-64 steps, 32-64 features, max_len up to 1000)"""
    r = ref.PositionalEncoding(d, 0.5, max_len).eval()
    if part == "table":
        _pe, P = table(student, d, max_len)
        T.assert_close(P, T.as_plain(r.P).to(torch.float64),
                       what=_("PositionalEncoding({d}, 0, max_len={max_len}).P vs the course's table").format(d=d, max_len=max_len),
                       hint=LAYOUT_HINT, atol=ATOL, rtol=0)
        return
    pe = student.PositionalEncoding(d, 0.5, max_len)
    pe.eval()
    X = S.randn((8, steps, d), seed)
    expected = r(X)
    what = _("PositionalEncoding({d}, dropout=0.5, max_len={max_len}) in eval mode on X of shape {shape}").format(d=d, max_len=max_len, shape=tuple(X.shape))
    T.assert_close(call(what, pe, X), expected, what=_("{call} vs the course's model").format(call=what), check_dtype=False, atol=ATOL,
                   rtol=0, hint="return dropout(X + self.P[:, :X.shape[1], :]): the positions run along axis 1 of "
                                "X, and eval mode switches dropout off")


# ---------------------------------------------------------------- for 06 (not scored)
# 06's Transformer feeds PositionalEncoding's output to float32 layers, and its decoder adds the
# positions of the tokens' true places itself, then applies `pos_encoding.dropout`. Assignment 05's
# contract asks for neither (the tests above compare values), so these cost nothing here; they trigger
# the dependency rule: 06 grades the Transformer built on a PositionalEncoding that fails one with the
# course's too and keeps the better score, instead of costing 06 points for code that 05 accepted.

@pytest.mark.component("PositionalEncoding")
@pytest.mark.weight(0)  # not scored: decides which PositionalEncoding 06 grades with (see above)
@pytest.mark.keep("06's need, not 05's contract: a correct float64 table fails it and keeps its 05 points")
def test_forward_keeps_the_input_dtype_for_06(student):
    """for 06, not scored: forward(X) has X's dtype (a float32 X comes out float32)"""
    pe = student.PositionalEncoding(8, 0.5, 20)
    pe.eval()
    for dtype in (torch.float32, torch.float64):  # fixed inputs: a contract check needs no search
        X = S.randn((2, 5, 8), 11, dtype)
        what = _("PositionalEncoding(8, dropout=0.5, max_len=20) in eval mode on a {dtype} X of shape (2, 5, 8)").format(dtype=dtype)
        out = call(what, pe, X)
        T.check(isinstance(out, torch.Tensor) and out.dtype == X.dtype,
                _("{what}: the output's dtype is {got}, X's {dtype} (not "
                  "scored in 05; 06's float32 layers need X's dtype, and while yours fails this, 06 grades with the "
                  "course's PositionalEncoding too and keeps the better score: build P in X's dtype, or cast P[:, :T] to X.dtype)").format(what=what, got=getattr(out, 'dtype', T.type_name(out)), dtype=X.dtype))


@pytest.mark.component("PositionalEncoding")
@pytest.mark.weight(0)  # not scored: decides which PositionalEncoding 06 grades with (see above)
@pytest.mark.keep("06's need, not 05's contract: a correct F.dropout(..., self.training) fails it and keeps its 05 points")
def test_dropout_is_a_module_for_06(student):
    """for 06, not scored: pos_encoding.dropout is the dropout module forward applies: the identity in eval mode, zeroing entries in training mode"""
    d, seed = 8, 12  # fixed: a contract check needs no search
    pe = student.PositionalEncoding(d, 0.5, 16)
    what = f"PositionalEncoding({d}, dropout=0.5).dropout"
    why = (_("(not scored in 05; 06's decoder adds the positions itself and applies pos_encoding.dropout, and while "
             "yours fails this, 06 grades with the course's PositionalEncoding too and keeps the better score: self.dropout = nn.Dropout(dropout))"))
    drop = T.attribute(pe, "dropout", f"PositionalEncoding({d}, dropout=0.5)")
    T.check(callable(drop), _("{what} should be the nn.Dropout that forward applies {why}").format(what=what, why=why))
    Y = torch.rand(4, 16, d, generator=torch.Generator().manual_seed(seed)) + 1.0
    pe.eval()
    T.assert_close(call(_("{what} in eval mode").format(what=what), drop, Y), Y, what=_("{what} in eval mode {why}").format(what=what, why=why), atol=0, rtol=0)
    pe.train()
    T.seed(student, seed)
    out = T.as_plain(call(_("{what} in training mode").format(what=what), drop, Y))
    T.check(bool((out == 0).any()), _("{what} in training mode zeroed none of the {numel} entries {why}").format(what=what, numel=Y.numel(), why=why))
