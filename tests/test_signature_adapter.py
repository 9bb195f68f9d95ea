"""Another edition's signature costs its own test, not the component (issue #23): where the names say
what each of the student's parameters is, the grader calls the student's code by name
(signatures.Adapter through grading/remote.py) and grades what it does; the mismatch fails
test_<component>_contract_signature only.

Real learners' code from the corpus (tests/learners/corpus/, verdicts.json) and the reference with one
signature changed, graded in the real sandbox; the adapter's translation itself without one.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from learners.corpus import agreement
from test_signatures import changed, component, grade

from autograder import config
from autograder.catalogue import index, zoo
from autograder.grading import session, signatures
from autograder.grading.scoring import ComponentScore
from autograder.sandbox.forkserver import Zygote
from autograder.selfcheck.failures import FailFast

ENTRIES = agreement.manifest()
#: A call that reached the student's code in the contract's positions although its signature differs.
CALL_ERRORS = ("positional argument", "unexpected keyword argument")


def graded(zygote: Zygote, slug: str, name: str) -> ComponentScore:
    entry = ENTRIES[slug]
    return component(session.grade_file(zygote, entry["assignment"], agreement.path_of(slug, entry)), name)


def failed(comp: ComponentScore) -> list[str]:
    return [t.function for t in comp.tests if not t.passed]


def signature_output(comp: ComponentScore) -> str:
    """The text of the component's one signature test, which must have failed."""
    [test] = [t for t in comp.tests if t.function == signatures.signature_test(comp.name)]
    assert not test.passed and test.kind == "structure"
    return test.output


@pytest.mark.parametrize("slug,name,takes", [
    ("overduse_multihead", "MultiHeadAttention", "(num_hiddens, num_heads, dropout, bias)"),  # d2l 1.0, LazyLinear
    ("quan0811_multihead", "MultiHeadAttention", "(num_hiddens, num_heads, dropout_rate)"),  # LazyLinear, biased
    ("chenkehan_multihead", "MultiHeadAttention", "(key_size, query_size, value_size, num_hiddens, num_heads, "
                                                  "dropout)"),  # no bias: always biased layers
    ("mkirby42_scoring", "AdditiveAttention", "(num_hiddens, dropout)"),  # d2l 1.0, LazyLinear
    ("yanruhai_scoring", "AdditiveAttention", "(num_hiddens, dropout)"),
])
def test_another_editions_constructor_keeps_the_credit_for_what_the_code_does(zygote: Zygote, slug: str, name: str,
                                                                               takes: str) -> None:
    """Before: every test raised TypeError at the constructor and the component scored 0."""
    comp = graded(zygote, slug, name)
    text = signature_output(comp)
    assert f"signature: your {name} takes {takes}" in text and "the grader passed" in text
    assert sum("signature: your" in t.output for t in comp.tests) == 1  # said once, on its own test
    assert not any(e in t.output for t in comp.tests for e in CALL_ERRORS), failed(comp)
    assert 0 < comp.score < comp.points
    assert agreement.judge(comp, ENTRIES[slug]["components"][name], config.default().scoring) is None


def test_a_correct_lazy_multi_head_attention_loses_its_signature_test_and_its_eager_shapes_only(zygote: Zygote) -> None:
    """overduse's forward is the book's: bound after one forward call, it matches the course's everywhere;
    only the public parameter-shape test (lazy layers have no shape after construction) and the
    signature test fail."""
    comp = graded(zygote, "overduse_multihead", "MultiHeadAttention")
    assert failed(comp) == ["test_mha_contract_names", "test_MultiHeadAttention_contract_signature"]


def test_a_forward_without_valid_lens_is_called_without_them(zygote: Zygote) -> None:
    """nahz1chen: MultiHeadAttention(d_model, n_head) and forward(q, k, v): d2l's spellings name the
    contract's parameters, so its code runs (and fails on its own bugs: keys viewed with the queries'
    length, square layers), not at the call."""
    comp = graded(zygote, "nahz1chen_multihead", "MultiHeadAttention")
    text = signature_output(comp)
    assert "your MultiHeadAttention takes (d_model, n_head)" in text
    assert "your MultiHeadAttention.forward takes (q, k, v)" in text and "and not the valid_lens" in text
    assert not any(e in t.output for t in comp.tests for e in CALL_ERRORS), failed(comp)


def test_d2l_1_0_s_kernel_parameter_is_given_the_learner_s_own_gaussian(zygote: Zygote) -> None:
    """yanruhai's nadaraya_watson(x_train, y_train, x_val, kernel), d2l 1.0's: nothing of the contract's is a
    kernel, and the book calls it with the learner's `gaussian` (signatures.OwnFunction), which the grader
    passes too. It then fails on its own mistakes only (weights (keys, queries); float64 inputs cast to
    float32), and its signature test; before, every call failed at the missing kernel (0 of 4)."""
    comp = graded(zygote, "yanruhai_nw_d2l1", "nadaraya_watson")
    assert signatures.signature_test("nadaraya_watson") in failed(comp)
    assert "your kernel = gaussian (what a call from the book's code would give it)" in signature_output(comp)
    assert not any(e in t.output for t in comp.tests for e in CALL_ERRORS), failed(comp)
    assert {"test_nw_worked_example", "test_nw_shapes"} <= set(failed(comp))  # (keys, queries) weights
    assert 0 < comp.score < comp.points


def test_a_permuted_function_is_called_in_its_order_for_inputs_and_gradients(zygote: Zygote, tmp_path: Path) -> None:
    """masked_softmax(valid_lens, X): calls, the check that inputs are left unchanged (call_return_args:
    the arguments come back in the contract's order) and the gradient with respect to X (vjp: wrt in
    the student's positions) all reach the right parameter; only the signature test fails."""
    source = changed("02_attention_scoring", "def masked_softmax(X: torch.Tensor, valid_lens: Optional[torch.Tensor])",
                     "def masked_softmax(valid_lens: Optional[torch.Tensor], X: torch.Tensor)")
    comp = component(grade(zygote, tmp_path, "02_attention_scoring", source), "masked_softmax")
    assert failed(comp) == ["test_masked_softmax_contract_signature"]
    assert {"test_ms_input_unchanged", "test_ms_gradient"} <= {t.function for t in comp.tests if t.passed}


def test_code_with_the_contracts_signatures_has_no_signature_test(zygote: Zygote) -> None:
    comp = graded(zygote, "leyusf_multihead", "MultiHeadAttention")
    assert ENTRIES["leyusf_multihead"]["components"]["MultiHeadAttention"]["verdict"] == "correct"
    assert comp.score == comp.points and all(t.function != signatures.signature_test(comp.name) for t in comp.tests)


# --- the translation (no sandbox) -----------------------------------------------------------------

def mismatch(source: str, target: str) -> signatures.Mismatch:
    found = signatures.mismatches(config.default(), [("cell 1", source)])
    return next(m for ms in found.values() for m in ms if m.target == target)


def test_the_contracts_arguments_reach_the_students_parameters_by_name() -> None:
    m = mismatch("class MultiHeadAttention:\n    def __init__(self, num_hiddens, num_heads, dropout, bias=False, "
                 "**kwargs): pass\n", "MultiHeadAttention")
    assert m.adapter is not None and not m.wrong_values
    call = m.adapter.translate([3, 4, 5, 6, 2, 0.1, True], {})
    assert (call.args, call.kwargs, call.where) == ([6, 2, 0.1, True], {}, [None, None, None, 0, 1, 2, 3])
    call = m.adapter.translate([3, 4, 5, 6, 2], {"dropout": 0.5, "key_size": 3})  # keywords by the contract's names
    assert (call.args, call.kwargs) == ([6, 2, 0.5], {})
    permuted = mismatch("def masked_softmax(valid_len, X): pass\n", "masked_softmax").adapter
    assert permuted is not None and permuted.translate(["X", "lens"], {}).args == ["lens", "X"]
    # a class taking nothing is said to be built without arguments (helper-83's F11: "the grader passed  (and not")
    bare = mismatch("class DotProductAttention:\n    def __init__(self): pass\n", "DotProductAttention")
    assert "the grader passed no argument (your code takes none: not the dropout) by name" in bare.message(), bare.message()


def test_a_parameter_after_one_left_to_its_default_goes_by_keyword_and_the_contracts_default_fills_in() -> None:
    pe = mismatch("class PositionalEncoding:\n    def __init__(self, max_len, num_hiddens, dropout): pass\n",
                  "PositionalEncoding").adapter
    assert pe is not None
    assert pe.translate([8, 0.1], {}).args == [1000, 8, 0.1]  # the contract's max_len=1000
    gap = mismatch("class AdditiveAttention:\n    def forward(self, queries, scale=1.0, keys=None, values=None, "
                   "valid_lens=None): pass\n", "AdditiveAttention.forward").adapter
    assert gap is not None
    call = gap.translate(["q", "k", "v", None], {})
    assert (call.args, call.kwargs, call.where) == (["q"], {"keys": "k", "values": "v", "valid_lens": None},
                                                    [0, None, None, None])


def test_parameters_no_name_identifies_take_the_contracts_unnamed_ones_in_order() -> None:
    """By name where the names say, by position for the rest (issue #23's second audit: a learner's
    correct MultiHeadAttention(query_size, key_size, value_size, mha_num_hiddens, mha_num_heads, ...)
    was called by position, its query_size got the key_size: 0/6; a PositionalEncoding(divide_batch_added=32,
    divide_group_len=301, dropout=0) kept its own defaults for num_hiddens and max_len: 0.17/6)."""
    mha = mismatch("class MultiHeadAttention:\n    def __init__(self, query_size, key_size, value_size, mha_num_hiddens, "
                   "mha_num_heads, dropout=0.0, bias=False): pass\n", "MultiHeadAttention").adapter
    assert mha is not None
    assert mha.translate([3, 4, 5, 6, 2, 0.1], {}).args == [4, 3, 5, 6, 2, 0.1]
    assert "the num_heads as your mha_num_heads" in mha.show()
    pe = mismatch("class PositionalEncoding:\n    def __init__(self, divide_batch_added=32, divide_group_len=301, "
                  "dropout=0): pass\n", "PositionalEncoding").adapter
    assert pe is not None
    call = pe.translate([8, 0.1], {"max_len": 50})
    assert call.args + list(call.kwargs.values()) == [8, 50, 0.1]
    # Never an option of the student's own for a parameter of another kind, nor when the counts differ:
    own = signatures.adapter(signatures.Params(("num_hiddens", "dropout", "batch_first"), (None, None, "False")),
                             signatures.Params(("num_hiddens", "dropout", "max_len"), (None, None, "1000")))
    assert own is not None and own.names == ("num_hiddens", "dropout", None)
    assert mismatch("class MultiHeadAttention:\n    def __init__(self, key_size, query_size, value_size, hid, heads, "
                    "extra, dropout, bias=False): pass\n", "MultiHeadAttention").adapter is None
    # Fewer left than the contract's, words silent: the student's required ones are the contract's required ones
    # in order (helper-69's F16: MultiHeadAttention(..., attn_size, num_heads, dropout) without bias, "takes 7
    # positional arguments but 8 were given" on every test), and the contract's bias=False is left out.
    no_bias = mismatch("class MultiHeadAttention:\n    def __init__(self, query_size, key_size, value_size, attn_size, "
                       "num_heads, dropout): pass\n", "MultiHeadAttention").adapter
    assert no_bias is not None and no_bias.names[3] == "attn_size" and no_bias.names[6] is None
    assert no_bias.translate([3, 4, 5, 6, 2, 0.1, True], {}).args == [4, 3, 5, 6, 2, 0.1]


def test_parameters_no_name_identifies_pair_by_their_words_before_their_order() -> None:
    """Helper-49's audit (session 35): a learner's EncoderBlock(Q_size, K_size, V_size, num_hiddens, num_heads,
    dropout, ffn_in_ch, ffn_hid_ch, nomalized_shape, use_bias) had its three leftovers paired in order with
    the contract's (norm_shape, ffn_num_input, ffn_num_hiddens): its FFN got norm_shape, a list, and the block
    and the encoder built on it scored 0/4 each. Their words say which is which; where words leave a tie,
    or say no more than the order does, the order stands."""
    block = mismatch("class EncoderBlock:\n    def __init__(self, Q_size, K_size, V_size, num_hiddens, num_heads, dropout, "
                     "ffn_in_ch, ffn_hid_ch, nomalized_shape, use_bias=False): pass\n", "EncoderBlock").adapter
    assert block is not None
    assert "the norm_shape as your nomalized_shape, the ffn_num_input as your ffn_in_ch, the ffn_num_hiddens as " \
           "your ffn_hid_ch" in block.show()
    call = block.translate([4, 3, 5, 8, [8], 8, 16, 2, 0.1], {})
    assert call.args == [3, 4, 5, 8, 2, 0.1, 8, 16, [8]]
    P = signatures.Params
    tied = signatures.adapter(P(("size_a", "size_b"), (None, None)), P(("key_size", "query_size"), (None, None)))
    assert tied is not None and tied.names == ("size_a", "size_b")  # both share "size" with both: in order
    wordless = signatures.adapter(P(("a1", "b1"), (None, None)), P(("num_hiddens", "dropout"), (None, None)))
    assert wordless is not None and wordless.names == ("a1", "b1")
    # The same learner's TransformerEncoder has no ffn_num_input (its FFN takes num_hiddens): its lone
    # ffn_hid_ch is the ffn_num_hiddens, and the ffn_num_input it lacks is left out, as d2l 1.0's sizes are.
    encoder = mismatch("class TransformerEncoder:\n    def __init__(self, vocab_size, key_size, query_size, value_size, "
                       "num_hiddens, num_heads, ffn_hid_ch, norm_shape, num_layers, dropout, use_bias=False, "
                       "**kwargs): pass\n", "TransformerEncoder").adapter
    assert encoder is not None and "the ffn_num_hiddens as your ffn_hid_ch" in encoder.show()
    call = encoder.translate([200, 4, 3, 5, 8, [8], 8, 16, 2, 2, 0.1], {})
    assert call.args == [200, 4, 3, 5, 8, 2, 16, [8], 2, 0.1]
    # Fewer of the student's than the contract's, words silent: the places a call by position gives them, the
    # contract's last ones left out (helper-70: `PositionWiseFFN(d_model, d_ff)` raised "takes 3 positional
    # arguments but 4 were given" on every test, 0 of 2, where the same class with an unused `dropout=0.1` got
    # 0.91); not where the student's are not the first places
    prefix = signatures.adapter(P(("a1",), (None,)), P(("num_hiddens", "dropout"), (None, None)))
    assert prefix is not None and prefix.names == ("a1", None)
    assert signatures.adapter(P(("num_hiddens", "x"), (None, None)), P(("key_size", "num_hiddens", "y", "z"),
                                                                       (None, None, None, None))) is None


def test_a_call_that_leaves_out_a_tests_input_names_no_misconception() -> None:
    """Found by a review: a sequence_mask(X, valid_len) without `value` never got the test's value=-1, wrote
    -1e6, and was told it "makes -1e6 the default of value". Its outputs answer other inputs: the signature
    finding names the mistake, no misconception does. A constructor's left-out sizes are no inputs."""
    dropped = mismatch("def sequence_mask(X, valid_len):\n    pass\n", "sequence_mask")
    assert dropped.adapter is not None and dropped.drops_inputs
    assert signatures.misleading({"sequence_mask": [dropped]}, "sequence_mask")
    sizes = mismatch("class MultiHeadAttention:\n    def __init__(self, num_hiddens, num_heads, dropout, bias=False): "
                     "pass\n", "MultiHeadAttention")
    assert sizes.adapter is not None and not sizes.drops_inputs
    assert not signatures.misleading({"MultiHeadAttention": [sizes]}, "MultiHeadAttention")


def test_d2l_1_0_s_num_blks_and_a_constructor_without_parameters_are_called_by_name() -> None:
    """Found by a review: d2l 1.0's TransformerEncoder(vocab_size, num_hiddens, ffn_num_hiddens, num_heads,
    num_blks, dropout, use_bias) was called by position (num_blks named nothing): 0/4; a
    DotProductAttention() that takes no dropout crashed on every test (no name in common): 0/4."""
    enc = mismatch("class TransformerEncoder:\n    def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, "
                   "num_blks, dropout, use_bias=False): pass\n", "TransformerEncoder").adapter
    assert enc is not None and "the num_layers as your num_blks" in enc.show()
    bare = mismatch("class DotProductAttention:\n    def __init__(self): pass\n", "DotProductAttention").adapter
    assert bare is not None
    call = bare.translate([0.1], {})
    assert call.args == [] and call.kwargs == {}


@pytest.mark.parametrize("source,target", [
    ("def nadaraya_watson(x_train, y_train, x_val, bandwidth): pass\n", "nadaraya_watson"),  # no contract name
    ("class DotProductAttention:\n    def forward(self, keys, values, queries, valid_len, valid_lens=None): pass\n",
     "DotProductAttention.forward"),  # two parameters that mean valid_lens
])
def test_no_call_by_name_where_the_names_leave_it_open(source: str, target: str) -> None:
    assert mismatch(source, target).adapter is None


def test_a_kernel_parameter_is_given_the_submission_s_own_gaussian_by_name() -> None:
    """d2l 1.0's nadaraya_watson(x_train, y_train, x_val, kernel): called by name, the kernel supplied as the
    submission's own `gaussian`, resolved where the call runs (`resolve_own`); a namespace without one says so."""
    adapter = mismatch("def nadaraya_watson(x_train, y_train, x_val, kernel): pass\n", "nadaraya_watson").adapter
    assert adapter is not None and adapter.supplied == (("kernel", signatures.OwnFunction("gaussian", "kernel")),)
    call = signatures.resolve_own(adapter.translate(["q", "k", "v"], {}), lambda own: f"<{own.name}>")
    assert call.args == ["k", "v", "q", "<gaussian>"] and call.kwargs == {}
    with pytest.raises(FailFast, match=r"^`gaussian` is not defined in your submission: your code takes a `kernel`"):
        signatures._own({}, signatures.OwnFunction("gaussian", "kernel"))
    # a kernel's width without a default is the contract's, 1 (helper-70: "missing 1 required positional argument")
    width = mismatch("def nadaraya_watson(x_train, y_train, x_val, sigma): pass\n", "nadaraya_watson").adapter
    assert width is not None and width.translate(["q", "k", "v"], {}).args == ["k", "v", "q", 1.0]


def test_a_left_out_input_may_be_named_only_as_the_mistake_of_ignoring_it(tmp_path: Path) -> None:
    """Helper-52's Mr-Talon AdditiveAttention: `forward(queries, keys, values)`, valid_lens commented out. Its
    outputs are those of code that ignores valid_lens, and that mistake alone may be named for it (catalogue
    entries' `ignores`): with its floor it scores as the same code with an unused valid_lens less the signature
    test (it had 0.77 of 4, no diagnosis). The review's cases stay unnamed: a sequence_mask(X, valid_len) that
    writes -1e6 is no mistake that ignores `value` (it was told "makes -1e6 the default of value")."""
    assert session.ignoring("AdditiveAttention", frozenset({"valid_lens"})) == {"valid-lens-ignored"}
    assert session.ignoring("sequence_mask", frozenset({"value"})) == {"sm_ignores_value"}
    assert session.ignoring("AdditiveAttention", frozenset({"queries"})) == frozenset()
    plain = ("        self.attention_weights = masked_softmax(scores, valid_lens)  # (B, Q, K), before dropout\n"
             "        return torch.bmm(self.dropout(self.attention_weights), values)  # (B, Q, v)\n\n\n"
             "class DotProductAttention")
    ignored = plain.replace("masked_softmax(scores, valid_lens)", "torch.softmax(scores, dim=-1)")
    graded = {}
    for name, signature in (("unused", "valid_lens: Optional[torch.Tensor]"), ("dropped", "")):
        source = changed("02_attention_scoring", plain, ignored).replace(
            "values: torch.Tensor,\n                valid_lens: Optional[torch.Tensor]) -> torch.Tensor:\n"
            "        \"\"\"queries (B, Q, q)",
            f"values: torch.Tensor,\n                {signature}) -> torch.Tensor:\n        \"\"\"queries (B, Q, q)", 1)
        path = tmp_path / f"{name}.py"
        path.write_text(source)
        graded[name] = component(session.run_in_process("02_attention_scoring", path, components=["AdditiveAttention"]),
                                  "AdditiveAttention")
    unused, dropped = graded["unused"], graded["dropped"]
    assert [m.family for m in unused.misconceptions] == [m.family for m in dropped.misconceptions] == \
        ["valid-lens-ignored"]
    assert sorted(failed(dropped)) == sorted(failed(unused) + [signatures.signature_test("AdditiveAttention")])
    assert unused.score > dropped.score > 0.9 * unused.score
    source = changed("02_attention_scoring", "def sequence_mask(X: torch.Tensor, valid_len: torch.Tensor, value: float = 0)",
                     "def sequence_mask(X: torch.Tensor, valid_len: torch.Tensor)").replace(
                         "return X.masked_fill(~keep, value)", "return X.masked_fill(~keep, -1e6)", 1)
    (tmp_path / "sm.py").write_text(source)
    mask = component(session.run_in_process("02_attention_scoring", tmp_path / "sm.py", components=["sequence_mask"]),
                     "sequence_mask")
    assert mask.score < mask.points and not mask.misconceptions


def test_a_second_mistake_beside_a_left_out_input_is_named_from_replays_without_it(tmp_path: Path) -> None:
    """The corpus's guohm230: `forward(queries, keys, values)` *and* the softmax over dim=1, the queries'
    axis. No replay made as the tests call it reproduced anything (the catalogue's mistakes take valid_lens),
    so nothing was named and the gate left its passed tests nothing: 0 of 4. Its failures are now replayed as
    code without valid_lens is called (diagnosis.reproducing_without): the softmax over the queries is named,
    and it earns what one named mistake leaves, less what it also breaks: below the same code with valid_lens
    taken and masked (that mistake alone), and below the left-out valid_lens alone."""
    head = ("values: torch.Tensor,\n                valid_lens: Optional[torch.Tensor] = None) -> torch.Tensor:\n"
            "        \"\"\"queries (B, Q, d)")
    masked = ("math.sqrt(d)  # (B, Q, K)\n        self.attention_weights = masked_softmax(scores, valid_lens)")
    sources = {
        "queries_axis": changed("02_attention_scoring", masked, (
            "math.sqrt(d)  # (B, Q, K)\n        if valid_lens is not None:  # the book's masking, then the softmax over the queries\n"
            "            B, Q, K = scores.shape\n"
            "            lens = torch.repeat_interleave(valid_lens, Q) if valid_lens.dim() == 1 else valid_lens.reshape(-1)\n"
            "            scores = sequence_mask(scores.reshape(-1, K), lens, value=-1e6).reshape(B, Q, K)\n"
            "        self.attention_weights = torch.softmax(scores, dim=1)")),
        "no_valid_lens": changed("02_attention_scoring", head, head.replace(",\n                valid_lens: "
                                 "Optional[torch.Tensor] = None", "")).replace(
            masked, masked.replace("masked_softmax(scores, valid_lens)", "torch.softmax(scores, dim=-1)"), 1),
    }
    sources["both"] = sources["no_valid_lens"].replace("torch.softmax(scores, dim=-1)", "torch.softmax(scores, dim=1)", 1)
    graded = {}
    for name, source in sources.items():
        (tmp_path / f"{name}.py").write_text(source)
        graded[name] = component(session.run_in_process("02_attention_scoring", tmp_path / f"{name}.py",
                                                          components=["DotProductAttention"]), "DotProductAttention")
    assert [m.family for m in graded["no_valid_lens"].misconceptions] == ["valid-lens-ignored"]
    assert [m.family for m in graded["queries_axis"].misconceptions] == ["softmax-over-queries"]
    both = graded["both"]
    assert [m.family for m in both.misconceptions] == ["softmax-over-queries"], failed(both)
    assert 0 < both.score < min(graded["queries_axis"].score, graded["no_valid_lens"].score), \
        {n: c.score for n, c in graded.items()}


def test_a_masked_softmax_that_takes_no_valid_lens_is_degenerate_as_one_that_ignores_them(tmp_path: Path) -> None:
    """Session 44's own attack on the left-out-input rule: `masked_softmax(X)` returning a plain softmax got no
    diagnosis and 0.99 of 4, as the same code with an unused valid_lens did; session 44 named both
    valid-lens-ignored, whose floor paid 2.36 of 4 for code that leaves out all that masked_softmax adds to a
    softmax (helper-70). A degenerate version of the catalogue ignores valid_lens now
    (`degenerate/ms_ignores_valid_lens`): both forms are degenerate, at most 10%."""
    assert session.ignoring("masked_softmax", frozenset({"valid_lens"})) == {"degenerate:ms_ignores_valid_lens"}
    share = config.default().scoring.degenerate_share
    for name, signature in (("unused", "X, valid_lens"), ("dropped", "X")):
        (tmp_path / f"{name}.py").write_text(changed("02_attention_scoring", "\n\nclass AdditiveAttention", (
            f"\n\ndef masked_softmax({signature}):\n    return torch.softmax(X, dim=-1)\n\n\nclass AdditiveAttention")))
        graded = component(session.run_in_process("02_attention_scoring", tmp_path / f"{name}.py",
                                                   components=["masked_softmax"]), "masked_softmax")
        assert 0 < graded.score <= share * graded.points + 1e-9, (name, graded.score)
        assert not [m for m in graded.misconceptions if not m.degenerate], (name, graded.misconceptions)


@pytest.mark.parametrize("name", ["dot_uniform_all", "dot_zeros", "dot_random_weights"])
def test_degenerate_code_without_a_left_out_input_earns_at_most_its_share(name: str, tmp_path: Path) -> None:
    """Replays made as code without valid_lens is called (diagnosis.reproducing_without) weigh the catalogue's
    degenerate versions too: the catalogue's degenerate DotProductAttentions with `forward(queries, keys,
    values)` are degenerate, never a realistic mistake with its floor."""
    entry = next(e for e in zoo.entries("02_attention_scoring") if e.name == name)
    source = entry.path.read_text()
    assert source.count(", valid_lens=None)") == 1
    (tmp_path / "entry.py").write_text(source.replace(", valid_lens=None)", ")"))
    path = zoo.compose(dataclasses.replace(entry, path=tmp_path / "entry.py"), tmp_path)
    comp = component(session.run_in_process("02_attention_scoring", path, components=["DotProductAttention"]),
                     "DotProductAttention")
    assert comp.score <= index.DEGENERATE_SHARE * comp.points, (comp.score, [d.family for d in comp.misconceptions])
    assert not comp.mistakes


def test_no_call_by_name_where_a_call_by_position_works() -> None:
    """Other names in the contract's places with its defaults: no mismatch, nothing to adapt."""
    found = signatures.mismatches(config.default(), [(
        "cell 1", "class DotProductAttention:\n    def forward(self, q, k, v, valid_lens=None): pass\n")])
    assert not [m for ms in found.values() for m in ms if m.target == "DotProductAttention.forward"]


def test_a_default_the_contract_has_and_the_student_s_lacks_is_given_where_a_test_leaves_it_out(
        zygote: Zygote, tmp_path: Path) -> None:
    """`sequence_mask(X, valid_lens, value)` (helper-69, an index file): every comparison leaves `value` out and
    raised "missing 1 required positional argument", 0 of 2 for code right on every input. The contract's
    default is given (Adapter.defaults), and the signature test alone costs it, saying which default."""
    m = mismatch("class DotProductAttention:\n    def forward(self, queries, keys, values, valid_lens): pass\n",
                 "DotProductAttention.forward")
    assert m.no_default == (3,) and m.adapter is not None
    assert m.adapter.translate(["q", "k", "v"], {}).args == ["q", "k", "v", None]
    source = changed("02_attention_scoring", "value: float = 0)", "value: float)")
    comp = component(grade(zygote, tmp_path, "02_attention_scoring", source), "sequence_mask")
    assert failed(comp) == ["test_sequence_mask_contract_signature"]
    assert signature_output(comp).startswith("signature: your sequence_mask takes (X, valid_len, value); the "
                                             "contract is (X, valid_len, value=0)")


def test_keywords_the_contract_lacks_pair_with_the_parameters_a_call_leaves_out() -> None:
    """signatures.keywords_called, what the course's class standing in for code not handed in reads: a keyword
    goes by its name (`d_model`), by its words (`ffn_hid_ch` is ffn_num_hiddens), or as the one keyword left
    for the one required parameter left (`encoding_dim` for num_hiddens: max_len has a default). Where that
    does not decide, or two calls read one keyword differently, nothing is read (the call fails as it would)."""
    signatures_ = signatures.contract(config.default())

    def read(source: str) -> dict[str, dict[str, str]]:
        return signatures.keywords_called(signatures_, [("cell", source)])

    assert read("pe = PositionalEncoding(encoding_dim=8, dropout=0.1)") == {
        "PositionalEncoding": {"encoding_dim": "num_hiddens"}}
    assert read("PositionalEncoding(d_model=8, dropout=0.1)\nPositionWiseFFN(ffn_in=4, ffn_hid_ch=8, ffn_num_outputs=4)") \
        == {"PositionalEncoding": {"d_model": "num_hiddens"},
            "PositionWiseFFN": {"ffn_in": "ffn_num_input", "ffn_hid_ch": "ffn_num_hiddens"}}
    assert read("PositionalEncoding(8, dropout=0.1, maxlen=50)") == {"PositionalEncoding": {"maxlen": "max_len"}}
    assert read("PositionalEncoding(size=8, p=0.1)") == {}  # two keywords, no words in common: open
    assert read("PositionalEncoding(8, 0.1, size=50)") == {}  # nothing required is left for it
    assert read("PositionalEncoding(dim=8, dropout=0.1)\nx = PositionalEncoding(8, dim=0.1)") == {}  # read two ways
    assert read("PositionalEncoding(num_hiddens=8, dropout=0.1)") == {}  # the contract's own: nothing to read


def test_a_parameter_named_for_another_kind_of_value_never_takes_a_contract_argument(tmp_path: Path) -> None:
    """Helper-69's F15: `PositionWiseFFN(d_model, d_ff, dropout=0.1)` (The Annotated Transformer's FFN) was called
    by position with the contract's (ffn_num_input, ffn_num_hiddens, ffn_num_outputs): its dropout got the output
    size, every test raised "dropout probability has to be between 0 and 1, but got 6" (0 of 2), and no signature
    test said why. A name that says which kind of value it takes (signatures.ROLES) takes no contract parameter
    of another kind: the dropout keeps its default, the output size is left out and said so, and the FFN is
    graded on what it does (it has no output size of its own: `ffn_output_size_is_input`)."""
    m = mismatch("class PositionWiseFFN:\n    def __init__(self, d_model, d_ff, dropout=0.1): pass\n", "PositionWiseFFN")
    assert m.misplaced == (2,) and m.adapter is not None
    assert m.adapter.names == ("d_model", "d_ff", None)
    assert m.adapter.translate([6, 8, 6], {}).args == [6, 8]
    # without the dropout (helper-69's F6), nothing in the words: the places a call by position gives them
    two = mismatch("class PositionWiseFFN:\n    def __init__(self, d_model, d_ff): pass\n", "PositionWiseFFN").adapter
    assert two is not None and two.names == ("d_model", "d_ff", None)
    # an option of the student's own beside them keeps its default (helper-70: a learner's PositionEncoding(
    # embedding_dims, max_len, dropout, device=None) was called by position, its dropout got max_len: 0 of 6)
    pe = mismatch("class PositionalEncoding:\n    def __init__(self, embedding_dims, max_len, dropout, device=None): "
                  "pass\n", "PositionalEncoding").adapter
    assert pe is not None and pe.names == ("embedding_dims", "dropout", "max_len")
    assert pe.translate([8, 0.1], {}).args == [8, 1000, 0.1]
    forward = mismatch("class AdditiveAttention:\n    def forward(self, keys, vals, queries, valid_len, scale=1.0): pass\n",
                       "AdditiveAttention.forward").adapter
    assert forward is not None and forward.names == ("queries", "keys", "vals", "valid_len")
    # a required one of another kind pairs nothing: calls go by position and each failure says what it got
    required = mismatch("class PositionWiseFFN:\n    def __init__(self, d_model, d_ff, dropout): pass\n", "PositionWiseFFN")
    assert required.adapter is None and required.wrong_values
    assert "your dropout gets the ffn_num_outputs" in required.message()
    # the contract's own kind at that place is no conflict (AddNorm's dropout), nor a name without a kind
    found = signatures.mismatches(config.default(), [("cell 1", "class AddNorm:\n    def __init__(self, shape, drop_rate): "
                                                                 "pass\n")])
    assert not found.get("AddNorm")
    source = changed("06_transformer", "    def __init__(self, ffn_num_input: int, ffn_num_hiddens: int, ffn_num_outputs: int,\n"
                     "                 **kwargs: object) -> None:\n        super().__init__(**kwargs)\n",
                     "    def __init__(self, ffn_num_input: int, ffn_num_hiddens: int, dropout: float = 0.1) -> None:\n"
                     "        super().__init__()\n        ffn_num_outputs = ffn_num_input\n")
    path = tmp_path / "06_transformer.py"
    path.write_text(source)  # graded in-process, the FFN alone (both paths call by name alike: test_learner_code)
    comp = component(session.run_in_process("06_transformer", path, components=["PositionWiseFFN"]), "PositionWiseFFN")
    assert 0.5 * comp.points > comp.score > 0.25 * comp.points, comp.score
    assert "between 0 and 1" not in "".join(t.output for t in comp.tests)
    assert [d.family for d in comp.misconceptions] == ["ffn_output_size_is_input"]
    assert "(and not the ffn_num_outputs, which your code does not take)" in signature_output(comp)


def test_a_synonym_gives_way_to_the_contract_s_own_word() -> None:
    """Helper-83's F1: `embed_dim` is torch's word for MultiheadAttention's width (SYNONYMS: num_hiddens), and a
    decoder's `Seq2SeqAttentionDecoder(vocab_size, embed_dim, hidden_dim, n_layers, dropout)`, in the contract's order,
    had its embed_dim read as num_hiddens and its hidden_dim then paired with embed_size: the two sizes swapped, 0.38
    of 10, the GRU's input size blamed. Where the contract has one parameter with the name's first word (embed_size)
    the synonym gives way; where it has none (MultiHeadAttention) it stands."""
    decoder = ["vocab_size", "embed_size", "num_hiddens", "num_layers", "dropout"]
    assert signatures.identify(["vocab_size", "embed_dim", "hidden_dim", "n_layers", "dropout"], decoder)[:2] == \
        ["vocab_size", "embed_size"]
    source = "class Seq2SeqAttentionDecoder:\n    def __init__(self, vocab_size, embed_dim, hidden_dim, n_layers, dropout=0): pass\n"
    assert not signatures.mismatches(config.default(), [("cell 1", source)]).get("Seq2SeqAttentionDecoder")  # by position
    mha = ["key_size", "query_size", "value_size", "num_hiddens", "num_heads", "dropout", "bias"]
    assert signatures.identify(["embed_dim", "num_heads", "dropout"], mha) == ["num_hidden", "num_head", "dropout"]


def test_a_constructor_whose_words_say_another_order_is_called_by_name(zygote: Zygote, tmp_path: Path) -> None:
    """Helper-83's F2: `AdditiveAttention(query_features, key_features, num_hiddens, dropout)` names no contract
    parameter, so `compare` saw no mismatch and the tests called it by position: the key size reached its
    query_features, the course's W_q bound to its W_k by shape, 0 of 4 and a wrong diagnosis ("applies W_q to the
    keys"), while the same order spelled `query_size, key_size` was called by name (5.82 of 6 for such a
    MultiHeadAttention). The order the words say (`_by_rank`, which `adapter` pairs by) is now the order `compare`
    checks: the signature test alone is charged."""
    source = changed("02_attention_scoring", "    def __init__(self, key_size: int, query_size: int, num_hiddens: int, "
                     "dropout: float,\n                 **kwargs: object) -> None:\n",
                     "    def __init__(self, query_features, key_features, num_hiddens, dropout, **kwargs):\n")
    source = source.replace("nn.Linear(key_size, num_hiddens", "nn.Linear(key_features, num_hiddens").replace(
        "nn.Linear(query_size, num_hiddens", "nn.Linear(query_features, num_hiddens")
    path = tmp_path / "query_first.py"
    path.write_text(source)
    comp = component(session.grade_file(zygote, "02_attention_scoring", path), "AdditiveAttention")
    assert [t.function for t in comp.tests if not t.passed] == ["test_AdditiveAttention_contract_signature"], \
        [t.output[:200] for t in comp.tests if not t.passed]
    assert not comp.misconceptions
