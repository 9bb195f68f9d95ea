"""Binding the course's weights to a student's module (issue #23): by the contract's names, else by
spelling, else by structure (shape, kind and registration order, a projection's role as tie-break),
so that a naming difference costs the naming test only."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from autograder.grading import scoring, session
from autograder.sandbox.forkserver import Zygote
from autograder.selfcheck import testing as T


class Reference(nn.Module):
    def __init__(self, key_size: int = 3, query_size: int = 3, hidden: int = 4) -> None:
        super().__init__()
        self.W_k = nn.Linear(key_size, hidden, bias=False)
        self.W_q = nn.Linear(query_size, hidden, bias=False)
        self.w_v = nn.Linear(hidden, 1, bias=False)


class Spelled(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.Wk, self.W_Q, self.W_V = nn.Linear(3, 4, bias=False), nn.Linear(3, 4, bias=False), nn.Linear(4, 1, bias=False)


class Roles(nn.Module):
    """Queries registered first, both projections (4, 3): only the names' roles tell them apart."""

    def __init__(self) -> None:
        super().__init__()
        self.query_proj, self.key_proj = nn.Linear(3, 4, bias=False), nn.Linear(3, 4, bias=False)
        self.score = nn.Linear(4, 1, bias=False)


def test_contract_names_bind_by_name_and_cost_nothing() -> None:
    mine, ref = Reference(), Reference()
    binding = T.copy_weights(mine, ref)
    assert binding.renamed == [] and torch.equal(mine.W_q.weight, ref.W_q.weight)
    T.assert_contract_names(mine, ref, "AdditiveAttention")


def test_other_spellings_bind_to_the_same_names() -> None:
    mine, ref = Spelled(), Reference()
    T.copy_weights(mine, ref)
    assert torch.equal(mine.Wk.weight, ref.W_k.weight) and torch.equal(mine.W_Q.weight, ref.W_q.weight)
    assert torch.equal(mine.W_V.weight, ref.w_v.weight)


def test_structure_binds_by_role_when_shapes_tie_and_the_naming_test_says_what_was_bound() -> None:
    mine, ref = Roles(), Reference()
    T.copy_weights(mine, ref)
    assert torch.equal(mine.query_proj.weight, ref.W_q.weight) and torch.equal(mine.key_proj.weight, ref.W_k.weight)
    assert torch.equal(mine.score.weight, ref.w_v.weight)
    with pytest.raises(AssertionError) as info:
        T.assert_contract_names(mine, ref, "AdditiveAttention")
    assert "your `query_proj.weight` as the contract's `W_q.weight`" in str(info.value)
    assert set(T.bound_state(mine, ref)) == {"W_k.weight", "W_q.weight", "w_v.weight"}


def test_a_wrong_shape_or_an_extra_entry_is_named() -> None:
    class Wide(Reference):
        def __init__(self) -> None:
            super().__init__(hidden=5)

    with pytest.raises(AssertionError, match=r"parameter 'W_k.weight' has shape \(5, 3\), expected \(4, 3\)"):
        T.copy_weights(Wide(), Reference())

    class Short(nn.Module):  # W_k of the wrong width under a name of its own: said as the course's W_k, in order
        def __init__(self) -> None:
            super().__init__()
            self.query_proj, self.key_proj = nn.Linear(3, 4, bias=False), nn.Linear(3, 5, bias=False)
            self.score = nn.Linear(4, 1, bias=False)

    with pytest.raises(AssertionError, match=r"parameter 'W_k.weight' has shape \(5, 3\), expected \(4, 3\)\n  where: "
                                             r"your `key_proj.weight` in its place, by registration order"):
        T.copy_weights(Short(), Reference())

    class Extra(Short):  # and an entry more than the course's: nothing pairs in order, the entry is named
        def __init__(self) -> None:
            super().__init__()
            self.gate = nn.Linear(4, 4, bias=False)

    with pytest.raises(AssertionError, match=r"'key_proj.weight' of shape \(5, 3\) that matches none"):
        T.copy_weights(Extra(), Reference())


def test_one_number_or_one_vector_binds_in_another_shape_and_a_matrix_does_not() -> None:
    """A 0-d `w` (`nn.Parameter(torch.tensor(0.5))`, common in learners' kernel regression) holds the contract's
    (1,) `w`, and a (4, 1) vector a (1, 4) one, value for value (`same_layout`): the structure tests
    judge the shape, the comparisons the maths (the catalogue's nwk_scalar_w kept 34% of NWKernelRegression:
    every comparison ran on its own random w). A transposed matrix is another layout and still fails."""
    class Scalar(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = nn.Parameter(torch.tensor(0.5))

    mine = Scalar()
    T.copy_weights(mine, T.contract({"w": torch.tensor([2.0])}))
    assert mine.w.shape == () and float(mine.w) == 2.0
    assert T.bound_state(mine, T.contract({"w": torch.tensor([1.0])}))["w"].shape == (1,)

    assert T.same_layout((4, 1), (1, 4)) and T.same_layout((), (1,)) and not T.same_layout((3, 4), (4, 3))


def test_a_zero_d_w_loses_its_structure_test_alone_in_the_sandbox(zygote: Zygote, tmp_path: Path) -> None:
    from autograder.catalogue import zoo
    entry = next(e for e in zoo.entries("01_kernel_regression") if e.name == "nwk_scalar_w")
    result = session.grade_file(zygote, entry.assignment, zoo.compose(entry, tmp_path))
    comp = next(c for c in result.components if c.name == "NWKernelRegression")
    assert [t.function for t in comp.tests if not t.passed] == ["test_nwk_contract_names"]
    assert [d.family for d in comp.misconceptions] == ["nwk_scalar_w"] and comp.score > 0.9 * comp.points


def test_an_entry_the_contract_does_not_have_is_left_as_it_is_and_costs_the_naming_test() -> None:
    """helper-54 (session 40): d2l 1.0's TransformerEncoder with an extra `dense = nn.LazyLinear(vocab_size)`
    that forward never calls failed every comparison with the course's encoder ("their names are not the
    contract's: `dense.weight`"). Once every course entry is bound, what is left keeps its own values: the
    behaviour tests say whether it changes anything, and the naming test names it."""
    class Extra(Roles):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("scale", torch.ones(7))
            self.dense = nn.LazyLinear(11)

    mine, ref = Extra(), Reference()
    binding = T.copy_weights(mine, ref)
    assert binding.extra == ["scale", "dense.weight", "dense.bias"]
    assert torch.equal(mine.query_proj.weight, ref.W_q.weight) and torch.equal(mine.scale, torch.ones(7))
    with pytest.raises(AssertionError, match=r"parameters or buffers the contract's does not have: `scale`, "
                                             r"`dense.weight`, `dense.bias`"):
        T.assert_contract_names(mine, ref, "AdditiveAttention")


def test_a_bias_the_contract_does_not_have_is_zeroed_and_costs_the_naming_test() -> None:
    """A layer the contract has with bias=False, written with a bias: the bias is set to 0 (the
    contract's maths), so the behaviour tests compare the rest; the naming test names the bias."""
    class Biased(Roles):
        def __init__(self) -> None:
            super().__init__()
            self.key_proj = nn.Linear(3, 4)

    mine, ref = Biased(), Reference()
    binding = T.copy_weights(mine, ref)
    assert binding.zeroed == ["key_proj.bias"] and torch.equal(mine.key_proj.bias, torch.zeros(4))
    assert torch.equal(mine.key_proj.weight, ref.W_k.weight)
    with pytest.raises(AssertionError, match=r"biases the contract's do not have \(bias=False\): `key_proj.bias`"):
        T.assert_contract_names(mine, ref, "AdditiveAttention")
    assert set(T.bound_state(mine, ref)) == {"W_k.weight", "W_q.weight", "w_v.weight"}


def test_lazy_layers_are_named_as_such_by_the_naming_test_and_bound_by_name_or_after_one_call() -> None:
    """d2l 1.0 builds nn.LazyLinear layers: no shapes before the first call. The naming test says so in
    the contract's terms (not torch's "uninitialized parameter"); under the contract's names the weights
    are copied in without a call (torch's lazy load hook gives the layers their shapes); under other
    names only the module's first call gives the shapes that binding by structure reads."""
    class Lazy(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.W_k, self.W_q, self.w_v = nn.LazyLinear(4, bias=False), nn.LazyLinear(4, bias=False), nn.LazyLinear(1, bias=False)

        def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
            return self.w_v(torch.tanh(self.W_q(q) + self.W_k(k)))

    with pytest.raises(AssertionError, match=r"^AdditiveAttention: your layers are lazy \(nn.LazyLinear") as info:
        T.assert_contract_names(Lazy(), Reference(), "AdditiveAttention")
    assert "uninitialized" not in str(info.value) and "(`W_k.weight`, `W_q.weight`, `w_v.weight`)" in str(info.value)
    mine, ref = Lazy(), Reference()
    T.copy_weights(mine, ref)
    assert torch.equal(mine.W_k.weight, ref.W_k.weight) and torch.equal(mine.w_v.weight, ref.w_v.weight)

    class Renamed(Lazy):
        def __init__(self) -> None:
            super().__init__()
            self.key_proj, self.query_proj, self.score = self.W_k, self.W_q, self.w_v
            del self.W_k, self.W_q, self.w_v

        def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
            return self.score(torch.tanh(self.query_proj(q) + self.key_proj(k)))

    mine, q = Renamed(), torch.randn(2, 3)
    T.with_lazy_parameters(lambda: T.copy_weights(mine, ref), mine, q, q)
    assert torch.equal(mine.key_proj.weight, ref.W_k.weight) and torch.equal(mine.score.weight, ref.w_v.weight)


class LazyFFN(nn.Module):
    """d2l 1.0's PositionWiseFFN as learners write it (helper-75's D8, code-index 19700238154): lazy layers in an
    nn.Sequential, so under names of their own (`net.0`, `net.2`) and with no shapes before the first call."""

    def __init__(self, hiddens: int, outputs: int, registered_backwards: bool = False) -> None:
        super().__init__()
        if registered_backwards:  # the output layer registered first: only its declared size places it
            self.out, self.hidden = nn.LazyLinear(outputs), nn.LazyLinear(hiddens)
        else:
            self.net = nn.Sequential(nn.LazyLinear(hiddens), nn.ReLU(), nn.LazyLinear(outputs))

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.hidden(X))) if hasattr(self, "out") else self.net(X)


class CourseFFN(nn.Module):
    def __init__(self, inputs: int, hiddens: int, outputs: int) -> None:
        super().__init__()
        self.dense1, self.relu, self.dense2 = nn.Linear(inputs, hiddens), nn.ReLU(), nn.Linear(hiddens, outputs)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return self.dense2(self.relu(self.dense1(X)))


@pytest.mark.parametrize("registered_backwards", [False, True])
def test_lazy_layers_under_other_names_bind_without_a_call_by_their_place_and_declared_size(
        registered_backwards: bool) -> None:
    """Where no call can give lazy layers their shapes first (the 06 suite binds before it knows the inputs), lazy
    layers under other names bind as whole layers to the course's linear layers: each to one of the output size it
    declares, in registration order among equals. Before, a correct d2l 1.0 FFN kept 0 of 2 (every test: "your
    layers are lazy ... and their names are not the contract's")."""
    mine, ref, X = LazyFFN(6, 4, registered_backwards), CourseFFN(4, 6, 4), torch.randn(2, 3, 4)
    binding = T.copy_weights(mine, ref)
    first, second = ("hidden", "out") if registered_backwards else ("net.0", "net.2")
    assert binding.pairs[f"{first}.weight"] == "dense1.weight" and binding.pairs[f"{second}.bias"] == "dense2.bias"
    torch.testing.assert_close(mine(X), ref(X), rtol=0, atol=0)
    with pytest.raises(AssertionError, match=r"your layers are lazy \(nn.LazyLinear"):  # the naming test's share
        T.assert_contract_names(LazyFFN(6, 4, registered_backwards), ref, "PositionWiseFFN")


def test_a_lazy_layer_bound_in_order_is_held_to_its_declared_size_and_ambiguity_binds_nothing() -> None:
    """Order binding never hides a wrong size (loading would give the layer the course's shape whatever it
    declares), and where the student's lazy layers and the course's linear layers do not pair one to one there is no
    binding: the entries are reported lazy, as before."""
    with pytest.raises(AssertionError, match=r"parameter 'net.2.weight' has shape \(5, \.\.\.\), expected \(4, 6\)"):
        T.copy_weights(LazyFFN(6, 5), CourseFFN(4, 6, 4))
    extra = LazyFFN(6, 4)
    extra.spare = nn.LazyLinear(4)
    with pytest.raises(T.LazyLayers, match=r"their names are not the contract's"):
        T.copy_weights(extra, CourseFFN(4, 6, 4))


def test_with_a_call_ahead_lazy_layers_wait_for_its_shapes_instead_of_binding_in_order() -> None:
    """Where a test can call the module first (`with_lazy_parameters`), that call's shapes bind it exactly: a lazy
    attention whose names say nothing, the queries' projection registered first and queries wider than keys, binds
    its first layer to W_q (by input size), where order alone would bind it to W_k."""
    class Unsaid(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a, self.b, self.c = nn.LazyLinear(4, bias=False), nn.LazyLinear(4, bias=False), nn.LazyLinear(1, bias=False)

        def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
            return self.c(torch.tanh(self.a(q) + self.b(k)))

    ref, q, k = Reference(key_size=3, query_size=5), torch.randn(2, 5), torch.randn(2, 3)
    assert T.copy_weights(Unsaid(), ref).pairs["a.weight"] == "W_k.weight"  # no call: by place only
    mine = Unsaid()
    binding = T.with_lazy_parameters(lambda: T.copy_weights(mine, ref), mine, q, k)
    assert binding.pairs["a.weight"] == "W_q.weight" and binding.pairs["b.weight"] == "W_k.weight"
    torch.testing.assert_close(mine(q, k), torch.tanh(ref.W_q(q) + ref.W_k(k)) @ ref.w_v.weight.T, rtol=0, atol=0)


def test_a_table_under_another_name_is_found_by_its_shape() -> None:
    """stored_table: a plain attribute (not a buffer) under another name, or a buffer with its size-1
    axis elsewhere, is the table (in the contract's shape); two candidates or none: Missing."""
    table = torch.arange(12.0).reshape(1, 3, 4)

    class Plain(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoding = table.clone()

    class SequenceFirst(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("pe", table.reshape(3, 1, 4).clone())

    class Two(Plain):
        def __init__(self) -> None:
            super().__init__()
            self.other = table.clone()

    for module in (Plain(), SequenceFirst()):
        assert torch.equal(T.stored_table(module, "P", (1, 3, 4), "P"), table)
    assert isinstance(T.stored_table(Two(), "P", (1, 3, 4), "P"), T.Missing)
    assert isinstance(T.stored_table(Plain(), "P", (1, 5, 4), "P"), T.Missing)



def test_a_table_comes_back_in_the_contract_s_shape_whatever_its_name_and_after_one_call_if_forward_builds_it() -> None:
    """stored_table: a (max_len, d) table under the contract's name comes back as (1, max_len, d), as one under
    another name does, unless `as_stored` (the shape test reads it so); a module without a table until forward
    runs is read after `after_call`, once; a forward that raises leaves what was there (None), for the test to fail
    on where it uses it."""
    table = torch.arange(12.0).reshape(3, 4)

    class Flat(nn.Module):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.register_buffer(name, table.clone())

    for name in ("P", "pe"):
        assert torch.equal(T.stored_table(Flat(name), "P", (1, 3, 4), "P"), table.reshape(1, 3, 4))
        assert tuple(T.stored_table(Flat(name), "P", (1, 3, 4), "P", as_stored=True).shape) == (3, 4)

    class Lazy(nn.Module):
        def __init__(self, fails: bool = False) -> None:
            super().__init__()
            self.P, self.calls, self.fails = None, 0, fails

        def forward(self, X: torch.Tensor) -> torch.Tensor:
            self.calls += 1
            if self.fails:
                raise RuntimeError("broken")
            self.P = table.reshape(1, 3, 4).clone()
            return X + self.P[:, : X.shape[1]]

    lazy = Lazy()
    assert torch.equal(T.stored_table(lazy, "P", (1, 3, 4), "P", after_call=lambda: lazy(torch.zeros(1, 3, 4))),
                       table.reshape(1, 3, 4)) and lazy.calls == 1
    assert T.stored_table(lazy, "P", (1, 3, 4), "P", after_call=lambda: lazy(torch.zeros(1, 3, 4))) is not None
    assert lazy.calls == 1, "a table already there is read without a call"
    broken = Lazy(fails=True)
    assert T.stored_table(broken, "P", (1, 3, 4), "P", after_call=lambda: broken(torch.zeros(1, 3, 4))) is None
    assert T.stored_table(Lazy(), "P", (1, 3, 4), "P") is None, "without after_call, no call"

def test_a_misnamed_table_of_another_length_is_said_to_be_one() -> None:
    """Helper-52's aiwq2 PositionalEncoding: a buffer `pe` built with max_len=5000 by default, where a call with
    the contract's default asks for (1, 1000, d). The test of the table's shape said "no attribute `P`" (the
    name, which the naming test charges); it now names the table it found and its length."""
    class LongTable(nn.Module):
        def __init__(self, max_len: int = 7) -> None:
            super().__init__()
            self.register_buffer("pe", torch.zeros(1, max_len, 4))

    found = T.stored_table(LongTable(), "P", (1, 3, 4), "PositionalEncoding(4, 0).P")
    assert isinstance(found, T.Missing) and found.reason == (
        "PositionalEncoding(4, 0).P: your module has no `P`, and its table `pe` has shape (1, 7, 4) where (1, 3, 4) is "
        "expected: the table for another max_len")
    assert torch.equal(T.stored_table(LongTable(3), "P", (1, 3, 4), "P"), torch.zeros(1, 3, 4))
    other_width = T.stored_table(LongTable(), "P", (1, 3, 5), "P")  # another width: not the table, the name
    assert isinstance(other_width, T.Missing) and "no attribute `P`" in other_width.reason


def test_a_table_under_another_name_and_length_costs_two_tests_each_saying_its_own_cause(tmp_path: Path) -> None:
    """The whole of aiwq2's pattern, graded: the naming test says the name (it said "got Missing"), the shape
    test the length; every other test reads the table as `pe` and passes."""
    from test_signatures import changed
    source = changed("05_positional_encoding", "max_len: int = 1000", "max_len: int = 5000")
    source = source.replace('self.register_buffer("P", P, persistent=False)', 'self.register_buffer("pe", P)')
    path = tmp_path / "pe.py"
    path.write_text(source.replace("self.P[", "self.pe["))
    [comp] = session.run_in_process("05_positional_encoding", path).components
    failed = {t.function: t.output for t in comp.tests if not t.passed}
    assert sorted(failed) == ["test_pe_contract_names", "test_table_shape"], failed
    assert failed["test_pe_contract_names"].endswith("your module has no attribute `P` (the contract names it so)")
    assert failed["test_table_shape"].endswith("your module has no `P`, and its table `pe` has shape (1, 5000, 4) "
                                               "where (1, 1000, 4) is expected: the table for another max_len")


def test_renamed_correct_attention_loses_at_most_its_naming_test(zygote: Zygote) -> None:
    """Graded for real: other names for correct maths cost the naming test's share, nothing else."""
    path = Path(__file__).resolve().parent / "learners" / "additive_renamed.py"
    result = session.grade_file(zygote, "02_attention_scoring", path)
    comp = next(c for c in result.components if c.name == "AdditiveAttention")
    shares = scoring.shares(comp.points, comp.tests, result.scoring)
    naming = sum(s.max_score for s in shares if "_contract_names" in s.outcome.function and not s.outcome.passed)
    failed = [t.output[:300] for t in comp.tests if not t.passed and "_contract_names" not in t.function]
    assert not failed, failed
    assert comp.points - comp.score <= naming + 1e-9
    assert not comp.misconceptions
    assert all(c.score == c.points for c in result.components if c.name != "AdditiveAttention")


def naming_share_only(result: session.Result, component: str) -> list[str]:
    """The failures of `component` other than its naming test, after checking the component lost no more
    than that test's share."""
    comp = next(c for c in result.components if c.name == component)
    shares = scoring.shares(comp.points, comp.tests, result.scoring)
    naming = sum(s.max_score for s in shares if "_contract_names" in s.outcome.function and not s.outcome.passed)
    failed = [t.output[:300] for t in comp.tests if not t.passed and "_contract_names" not in t.function]
    assert failed or comp.points - comp.score <= naming + 1e-9, (comp.score, comp.points, naming)
    return failed


def test_a_renamed_attention_inside_a_correct_decoder_costs_only_the_naming_test(zygote: Zygote,
                                                                                 tmp_path: Path) -> None:
    """The book's decoder with its attention under another name (`self.attn`): the one SGD step is compared
    under the binding copy_weights made (it read the student's weights by the contract's names: KeyError,
    7.92 of 10 instead of 9.63)."""
    from kit_helpers import reference_source

    source = reference_source("03_bahdanau")
    at = source.index("class Seq2SeqAttentionDecoder")
    decoder = source[at:].replace("self.attention =", "self.attn =").replace("self.attention(", "self.attn(")
    decoder = decoder.replace("self.attention.", "self.attn.")
    assert "self.attention" not in decoder
    path = tmp_path / "renamed_attention.py"
    path.write_text(source[:at] + decoder)
    result = session.grade_file(zygote, "03_bahdanau", path)
    assert naming_share_only(result, "Seq2SeqAttentionDecoder") == []


def test_a_lazy_layer_of_the_wrong_size_fails_the_binding_as_an_nn_linear_of_that_size_does() -> None:
    """Loading would give a lazy layer the course's shape whatever it declares: its out_features is checked."""
    class Wrong(nn.Module):
        def __init__(self, lazy: bool) -> None:
            super().__init__()
            self.W_k = nn.LazyLinear(9, bias=False) if lazy else nn.Linear(3, 9, bias=False)
            self.W_q, self.w_v = nn.Linear(3, 4, bias=False), nn.Linear(4, 1, bias=False)

    for lazy, shape in ((True, r"\(9, \.\.\.\)"), (False, r"\(9, 3\)")):
        with pytest.raises(AssertionError, match=rf"parameter 'W_k.weight' has shape {shape}, expected \(4, 3\)"):
            T.copy_weights(Wrong(lazy), Reference())


def test_a_course_class_built_lazily_under_another_attribute_binds_by_the_names_inside_it() -> None:
    """A d2l 1.0 decoder keeping the course's AdditiveAttention (built the 1.0 way: lazy W_k, W_q) as `attn`:
    each lazy entry binds to the reference entry that ends the same way, and loading gives it that shape."""
    class Decoder(nn.Module):
        def __init__(self, lazy: bool) -> None:
            super().__init__()
            attention = nn.Module()
            attention.W_k = nn.LazyLinear(4, bias=False) if lazy else nn.Linear(3, 4, bias=False)
            attention.W_q = nn.LazyLinear(4, bias=False) if lazy else nn.Linear(5, 4, bias=False)
            attention.w_v = nn.Linear(4, 1, bias=False)
            if lazy:
                self.attn = attention
            else:
                self.attention = attention
            self.dense = nn.Linear(4, 2)

    mine, ref = Decoder(lazy=True), Decoder(lazy=False)
    binding = T.copy_weights(mine, ref)
    assert binding.pairs["attn.W_k.weight"] == "attention.W_k.weight" and mine.attn.W_k.weight.shape == (4, 3)
    assert all(torch.equal(a, b) for a, b in zip(mine.state_dict().values(), ref.state_dict().values()))


def test_a_method_where_the_contract_stores_a_value_is_read_by_calling_it_and_a_method_submodule_is_kept() -> None:
    """`def attention_weights(self)` without @property (seen in learners' code) is read by calling it, so that its
    values are graded (the slip costs its own test: signatures.attribute_tests); one that cannot be called without
    arguments fails the tests that read the weights with what to write; a `def dropout(self, X)` (functional
    dropout) is the student's to call."""
    class Module(nn.Module):
        def attention_weights(self) -> list:
            return [1]

        def dropout(self, X: torch.Tensor) -> torch.Tensor:
            return X

    class NeedsArguments(nn.Module):
        def attention_weights(self, step: int) -> list:
            return [step]

    assert T.attribute(Module(), "attention_weights", "decoder") == [1]
    weights = T.attribute(NeedsArguments(), "attention_weights", "decoder")
    assert isinstance(weights, T.Missing) and "put @property above `def attention_weights(self)`" in weights.reason
    assert callable(T.attribute(Module(), "dropout", "PositionalEncoding"))



def test_a_stored_value_under_a_name_with_one_typing_slip_is_read_there() -> None:
    """Helper-75's D3 and helper-78's F8: `self.attention_weight` (or `attetion_weights`) failed every test and part
    that reads the weights (40% of a correct NWKernelRegression). `attribute` reads the one instance attribute
    spelled so (testing.stored_spelling: one letter added, dropped, changed or two swapped, case and underscores
    aside); two such names, a short contract name (`P`) or another word are no slips."""
    class Module(nn.Module):
        def __init__(self, **stored: Any) -> None:
            super().__init__()
            for key, value in stored.items():
                setattr(self, key, value)

    weights = torch.ones(2, 3)
    for name in ("attention_weight", "attetion_weights", "Attention_Weigths", "attentionweights"):
        assert torch.equal(T.attribute(Module(**{name: weights}), "attention_weights", "m"), weights), name
    for stored in ({"attn": weights}, {"attention_weight": weights, "attention_weigths": weights}, {"p": weights}):
        assert isinstance(T.attribute(Module(**stored), "attention_weights", "m"), T.Missing), stored
    assert isinstance(T.attribute(Module(p=weights), "P", "m"), T.Missing)
    assert T.stored_spelling("attention_weights", ["attention_weight", "dropout"]) == "attention_weight"
    assert T.stored_spelling("P", ["p", "pe"]) is None


def test_a_layer_of_the_wrong_size_under_names_of_its_own_fails_in_the_contract_s_words() -> None:
    """Helper-78's F6: an FFN whose dense2 maps back to the input size kept 0.92 of 2 under the contract's names (the
    catalogue's `ffn_output_size_is_input` named it) and 0.23 as `nn.Sequential` layers: the binding failed with "your
    module has a parameter or buffer 'ffn.3.weight' ... that matches none of the course's", words no catalogue entry
    fails with. Where what is left pairs one to one in registration order, of the same kind and rank, the first pair
    whose shapes differ is said with the contract's name, the student's after the `where` mark that a failure's
    signature leaves out (symptoms.WHERE_MARK); where it does not pair so, the old words stay."""
    from autograder.selfcheck import symptoms

    reference = {"dense1.weight": torch.zeros(8, 4), "dense1.bias": torch.zeros(8),
                 "dense2.weight": torch.zeros(6, 8), "dense2.bias": torch.zeros(6)}
    sequential = {"ffn.0.weight": torch.zeros(8, 4), "ffn.0.bias": torch.zeros(8),
                  "ffn.2.weight": torch.zeros(4, 8), "ffn.2.bias": torch.zeros(4)}
    with pytest.raises(AssertionError) as failed:
        T.bind(sequential, reference)
    said = str(failed.value)
    assert said.startswith("parameter 'dense2.weight' has shape (4, 8), expected (6, 8)" + symptoms.WHERE_MARK), said
    assert "your `ffn.2.weight` in its place, by registration order" in said
    assert symptoms.facts(said) == symptoms.facts("parameter 'dense2.weight' has shape (4, 8), expected (6, 8)")
    no_bias = {"ffn.0.weight": torch.zeros(8, 4), "ffn.0.bias": torch.zeros(8), "ffn.2.weight": torch.zeros(4, 8),
               "ffn.2.scale": torch.zeros(4)}  # another kind of entry: no pairing in order
    with pytest.raises(AssertionError, match="that matches none of the course's"):
        T.bind(no_bias, reference)

def test_what_a_binding_reads_is_bounded_by_the_contract_s_state() -> None:
    """A module that claims thousands of entries (a state_dict of its own) is refused before any matching:
    the grader's work per binding stays proportional to the contract's state."""
    flood = {f"junk{i}.weight": torch.zeros(1) for i in range(2000)}
    with pytest.raises(AssertionError, match=r"your module's state holds 2000 entries, far more than the contract's 3"):
        T.bind(flood, Reference().state_dict())


def test_a_decoder_block_s_attentions_bind_by_what_their_names_say_not_by_their_order() -> None:
    """`cross_attn` registered before `self_attn` (a correct block under its own names, found by a review) binds
    to the contract's attention2 and attention1: registration order decides only where the names say nothing."""
    def attention(sizes: int) -> nn.Module:
        module = nn.Module()
        module.W_q, module.W_k = nn.Linear(sizes, sizes, bias=False), nn.Linear(sizes, sizes, bias=False)
        return module

    class Block(nn.Module):
        def __init__(self, contract: bool) -> None:
            super().__init__()
            if contract:
                self.attention1, self.attention2 = attention(4), attention(4)
            else:
                self.cross_attn, self.self_attn = attention(4), attention(4)

    binding = T.copy_weights(Block(contract=False), Block(contract=True))
    assert binding.pairs["self_attn.W_q.weight"] == "attention1.W_q.weight"
    assert binding.pairs["cross_attn.W_k.weight"] == "attention2.W_k.weight"


def test_a_decoder_s_embedding_and_output_layer_bind_by_what_their_names_say() -> None:
    """Both are (vocab, d): `out` registered before `emb` (a correct decoder under its own names, found by a
    review) was bound to the contract's `embedding` and `emb` to its `dense`, and every comparison failed."""
    class Decoder(nn.Module):
        def __init__(self, contract: bool) -> None:
            super().__init__()
            if contract:
                self.embedding, self.dense = nn.Embedding(7, 4), nn.Linear(4, 7)
            else:
                self.out, self.emb = nn.Linear(4, 7), nn.Embedding(7, 4)

    reference, mine = Decoder(contract=True), Decoder(contract=False)
    binding = T.copy_weights(mine, reference)
    assert binding.pairs["out.weight"] == "dense.weight" and binding.pairs["emb.weight"] == "embedding.weight"
    assert torch.equal(mine.emb.weight, reference.embedding.weight)


def test_a_table_under_another_name_is_not_bound_and_a_non_persistent_one_is_found() -> None:
    """`pe`, a buffer (1, max_len, d) of the student's own PositionalEncoding inside a decoder, matched none of
    the course's entries (the course keeps `P` out of the binding): every comparison of the decoder failed.
    Kept out of `state_dict` (`persistent=False`), a renamed table was not found at all."""
    class Encoding(nn.Module):
        def __init__(self, name: str, persistent: bool = True) -> None:
            super().__init__()
            self.register_buffer(name, torch.arange(5000 * 4.0).reshape(1, 5000, 4), persistent=persistent)

    class Decoder(nn.Module):
        def __init__(self, table: str, persistent: bool = True) -> None:
            super().__init__()
            self.embedding, self.pos_encoding = nn.Embedding(7, 4), Encoding(table, persistent)

    reference = Decoder("P", persistent=False)
    reference.pos_encoding.P = reference.pos_encoding.P[:, :1000]  # another max_len than the student's
    binding = T.copy_weights(Decoder("pe"), reference)
    assert binding.pairs == {"embedding.weight": "embedding.weight"}
    hidden = Encoding("pe", persistent=False)
    assert torch.equal(T.stored_table(hidden, "P", (1, 5000, 4), "P"), hidden.pe)


def test_a_correct_encoding_with_its_table_as_a_non_persistent_buffer_pe_loses_only_the_naming_test(
        zygote: Zygote, tmp_path: Path) -> None:
    """The course's own storage (`register_buffer(..., persistent=False)`) under another name: found in the
    child's buffers (0.73 of 6 before: every test of the table said it had no `P`)."""
    from kit_helpers import reference_source

    source = reference_source("05_positional_encoding")
    renamed = source.replace('register_buffer("P", P, persistent=False)', 'register_buffer("pe", P, persistent=False)')
    renamed = renamed.replace("self.P[", "self.pe[")
    assert '"pe", P' in renamed and "self.P" not in renamed
    path = tmp_path / "pe_non_persistent.py"
    path.write_text(renamed)
    result = session.grade_file(zygote, "05_positional_encoding", path)
    assert naming_share_only(result, "PositionalEncoding") == []


class Block(nn.Module):
    """The contract's EncoderBlock's layout in small: a layer, then two AddNorms' LayerNorms around another."""

    def __init__(self) -> None:
        super().__init__()
        self.attention = nn.Linear(4, 4, bias=False)
        self.addnorm1, self.ffn, self.addnorm2 = nn.LayerNorm(4), nn.Linear(4, 4, bias=False), nn.LayerNorm(4)


def test_one_submodule_used_where_the_contract_has_two_binds_as_the_first_and_costs_the_naming_test() -> None:
    """Helper-69's F17: an EncoderBlock with one `addnorm` for both sublayers had nothing for the course's
    `addnorm2`, so no binding, and every comparison failed with "nothing matches" (0 of 4, nothing named). A
    course submodule that nothing holds as a whole, beside a bound twin of the same entries and shapes
    (testing._shared_submodules), is the student's one used for both: it gets the twin's values, the
    comparisons say what that changes, and the naming test says it once. A missing entry that is not a whole
    twin (a layer without its bias, a submodule of its own kind) still has no binding."""
    class Shared(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.attention, self.addnorm, self.ffn = nn.Linear(4, 4, bias=False), nn.LayerNorm(4), nn.Linear(4, 4, bias=False)

    ref = Block()
    with torch.no_grad():
        for p in ref.parameters():
            p.normal_()
    mine = Shared()
    binding = T.copy_weights(mine, ref)
    assert binding.shared == [("addnorm2", "addnorm1")]
    assert torch.equal(mine.addnorm.weight, ref.addnorm1.weight)
    with pytest.raises(AssertionError, match=r"has no `addnorm2`: the contract's module has its own `addnorm2` beside "
                                             r"`addnorm1`") as raised:
        T.assert_contract_names(mine, ref, "EncoderBlock")
    assert "your names differ" not in str(raised.value)  # the one submodule is said once, as such

    class NoFFN(nn.Module):  # the course's ffn has a twin of its shapes (attention), but attention is bound
        def __init__(self) -> None:
            super().__init__()
            self.attention, self.addnorm1, self.addnorm2 = nn.Linear(4, 4, bias=False), nn.LayerNorm(4), nn.LayerNorm(4)

    assert T.bind(T.state_dict(NoFFN()), ref.state_dict()).shared == [("ffn", "attention")]

    class Unbiased(nn.Module):  # a LayerNorm without its bias: part of a submodule, not a whole one
        def __init__(self) -> None:
            super().__init__()
            self.attention, self.addnorm1, self.ffn = nn.Linear(4, 4, bias=False), nn.LayerNorm(4), nn.Linear(4, 4, bias=False)
            self.addnorm2 = nn.LayerNorm(4, bias=False)

    with pytest.raises(AssertionError, match=r"nothing that matches the course's parameters \['addnorm2.bias'\]"):
        T.bind(T.state_dict(Unbiased()), ref.state_dict())


def test_an_encoder_block_with_one_add_norm_for_both_sublayers_is_graded_and_named(tmp_path: Path) -> None:
    """F17 graded (in-process, the block alone: the binding runs in the grader on every path): 0 of 4 before; now
    the comparisons run, fail where the two AddNorms differ, and name the catalogue's `encblock_addnorm1_twice`
    (the same outputs), which keeps its floor."""
    from test_signatures import changed
    source = changed("06_transformer", "        self.addnorm2 = AddNorm(norm_shape, dropout)\n\n    def forward(self, X: "
                     "torch.Tensor, valid_lens: Optional[torch.Tensor]) -> torch.Tensor:\n", "\n    def forward(self, X: "
                     "torch.Tensor, valid_lens: Optional[torch.Tensor]) -> torch.Tensor:\n")
    source = source.replace("        self.addnorm1 = AddNorm(norm_shape, dropout)\n        self.ffn = PositionWiseFFN("
                            "ffn_num_input, ffn_num_hiddens, num_hiddens)\n", "        self.addnorm = AddNorm(norm_shape, "
                            "dropout)\n        self.ffn = PositionWiseFFN(ffn_num_input, ffn_num_hiddens, num_hiddens)\n", 1)
    source = source.replace("        Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))\n        return "
                            "self.addnorm2(Y, self.ffn(Y))", "        Y = self.addnorm(X, self.attention(X, X, X, "
                            "valid_lens))\n        return self.addnorm(Y, self.ffn(Y))", 1)
    assert "self.addnorm1" not in source.split("class EncoderBlock")[1].split("\nclass ")[0]
    path = tmp_path / "06_transformer.py"
    path.write_text(source)
    result = session.run_in_process("06_transformer", path, components=["EncoderBlock"])
    comp = next(c for c in result.components if c.name == "EncoderBlock")
    assert [d.family for d in comp.misconceptions] == ["encblock_addnorm1_twice"]
    assert 0.25 * comp.points < comp.score < 0.75 * comp.points, comp.score
    assert not [t for t in comp.tests if "nothing that matches" in t.output]


def test_names_swapped_between_two_layers_bind_by_structure_and_a_wrong_size_is_still_its_shape() -> None:
    """Helper-70: a learner's `W_q = nn.Linear(key_size, h)` applied to the keys and `W_k = nn.Linear(query_size, h)`
    to the queries (right maths, labels swapped) failed every test on "parameter 'W_q.weight' has shape (4, 2),
    expected (4, 3)": 0 of 4. Entries under a contract name of another shape bind by structure where that binds
    every one of them and holds every course entry; the naming test says what was bound to what. Where it does
    not (a layer built with the wrong size), the shape is the error, as before. (With key_size == query_size the
    names bind as written and the comparisons fail: no test here tries the other binding on behaviour.)"""
    class Swapped(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.W_k = nn.Linear(3, 4, bias=False)  # the queries' size
            self.W_q = nn.Linear(2, 4, bias=False)  # the keys' size
            self.w_v = nn.Linear(4, 1, bias=False)

    mine, ref = Swapped(), Reference(key_size=2, query_size=3)
    binding = T.copy_weights(mine, ref)
    assert binding.pairs == {"W_k.weight": "W_q.weight", "W_q.weight": "W_k.weight", "w_v.weight": "w_v.weight"}
    assert torch.equal(mine.W_q.weight, ref.W_k.weight)

    class WrongSize(Swapped):
        def __init__(self) -> None:
            super().__init__()
            self.w_v = nn.Linear(5, 1, bias=False)

    with pytest.raises(AssertionError, match=r"parameter 'w_v.weight' has shape \(1, 5\), expected \(1, 4\)"):
        T.copy_weights(WrongSize(), ref)


def test_a_layer_binds_as_a_whole_to_a_layer_of_the_same_entries_whatever_comes_between() -> None:
    """Helper-70: a correct EncoderBlock written with LayerNorms `norm1`, `norm2` registered before its `feed_forward`
    (no AddNorm) got the course's `ffn.dense2.bias`, of the same shape, in `norm2.bias` (entries bound one by one in
    registration order): 0 of 4. A layer whose entries' kinds and shapes are one of the course's layers' binds to
    it as a whole (testing._layers), so norms take norms and the FFN its layers."""
    class Inline(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.attention = nn.Linear(4, 4, bias=False)
            self.norm1, self.norm2 = nn.LayerNorm(4), nn.LayerNorm(4)
            self.feed_forward = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))

    class Reference(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.attention = nn.Linear(4, 4, bias=False)
            self.addnorm1 = nn.LayerNorm(4)
            self.ffn = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
            self.addnorm2 = nn.LayerNorm(4)

    binding = T.bind(T.state_dict(Inline()), Reference().state_dict())
    assert binding.pairs == {"attention.weight": "attention.weight", "norm1.weight": "addnorm1.weight",
                             "norm1.bias": "addnorm1.bias", "norm2.weight": "addnorm2.weight", "norm2.bias": "addnorm2.bias",
                             "feed_forward.0.weight": "ffn.0.weight", "feed_forward.0.bias": "ffn.0.bias",
                             "feed_forward.2.weight": "ffn.2.weight", "feed_forward.2.bias": "ffn.2.bias"}


def states(*keys: str, d: int = 4) -> dict[str, torch.Tensor]:
    """A state dict of the given entries in this order, each of the shape its kind has in the 06 blocks at width
    d: a LayerNorm's scale and shift (d,), an attention projection or an FFN layer's weight (d, d), its bias (d,)."""
    return {k: torch.zeros((d, d) if k.rsplit(".", 1)[-1] == "weight" and not _is_norm(k) else (d,)) for k in keys}


def _is_norm(key: str) -> bool:
    return any("norm" in part or part.startswith("ln") for part in key.split(".")[:-1])


def norm(prefix: str) -> tuple[str, str]:
    return f"{prefix}.ln.weight", f"{prefix}.ln.bias"


ENCODER_BLOCK = states("attention.W_q.weight", *norm("addnorm1"), "ffn.dense1.weight", "ffn.dense1.bias",
                       *norm("addnorm2"))
DECODER_BLOCK = states("attention1.W_q.weight", *norm("addnorm1"), "attention2.W_q.weight", *norm("addnorm2"),
                       "ffn.dense1.weight", "ffn.dense1.bias", *norm("addnorm3"))


def test_a_layer_norm_s_scale_and_shift_under_their_own_names_bind_to_its_weight_and_bias() -> None:
    """Helper-72's h1: an AddNorm with a hand-written LayerNorm (`self.gamma`, `self.beta`, the AddNorm's own
    parameters), numerically nn.LayerNorm, matched none of the course's `ln.weight`, `ln.bias` (0 of 2): the
    structure step compared leaf names. A leaf named as a scale (gamma, g, a_2, alpha, scale) is a `weight`, as a
    shift (beta, b, b_2, shift) a `bias`; inside a block the hand-written norms bind as whole layers, so a shift
    never takes the FFN's bias of the same shape."""
    binding = T.bind(states("gamma", "beta"), states("ln.weight", "ln.bias"))
    assert binding.pairs == {"gamma": "ln.weight", "beta": "ln.bias"}
    assert binding.describe() == "your `gamma` as the contract's `ln.weight`, your `beta` as the contract's `ln.bias`"
    assert T.bind(states("a_2", "b_2"), states("ln.weight", "ln.bias")).pairs == {"a_2": "ln.weight", "b_2": "ln.bias"}
    # an FFN of bare parameters (hidden size d): `b_2` is a bias, not the first of the course's (d,) biases
    ffn = {"W_1": torch.zeros(4, 4), "b_1": torch.zeros(4), "W_2": torch.zeros(4, 4), "b_2": torch.zeros(4)}
    expected = {"W_1": "dense1.weight", "b_1": "dense1.bias", "W_2": "dense2.weight", "b_2": "dense2.bias"}
    for registered in (ffn, dict(reversed(ffn.items()))):  # entries, too, bind in the order of their numbers
        assert T.bind(registered, states("dense1.weight", "dense1.bias", "dense2.weight", "dense2.bias")).pairs == expected
    mine = states("attention.W_q.weight", "norm1.gamma", "norm1.beta", "norm2.gamma", "norm2.beta",
                  "feed_forward.0.weight", "feed_forward.0.bias")
    assert T.bind(mine, ENCODER_BLOCK).pairs == {
        "attention.W_q.weight": "attention.W_q.weight", "norm1.gamma": "addnorm1.ln.weight",
        "norm1.beta": "addnorm1.ln.bias", "norm2.gamma": "addnorm2.ln.weight", "norm2.beta": "addnorm2.ln.bias",
        "feed_forward.0.weight": "ffn.dense1.weight", "feed_forward.0.bias": "ffn.dense1.bias"}


def test_what_is_left_on_both_sides_pairs_by_shape_when_that_pairs_all_of_it() -> None:
    """Helper-72's h3: a correct NWKernelRegression whose one parameter is `bandwidth` (1,), not the contract's
    `w` (1,), had no binding: 0 of 6. As a last structure step, the student's entries and the course's left over
    pair by shape in registration order where that pairs every one of them; the naming test reports the pair.
    Where the shapes do not pair everything, nothing is guessed."""
    binding = T.bind({"bandwidth": torch.zeros(1)}, {"w": torch.zeros(1)})
    assert binding.pairs == {"bandwidth": "w"} and binding.renamed == [("bandwidth", "w")]
    assert "your `bandwidth` as the contract's `w`" in binding.describe()
    assert T.bind({"sigma": torch.zeros(())}, {"w": torch.zeros(1)}).pairs == {"sigma": "w"}  # a 0-d one too
    with pytest.raises(AssertionError, match=r"'bandwidth' of shape \(2,\) that matches none"):
        T.bind({"bandwidth": torch.zeros(2)}, {"w": torch.zeros(1)})
    with pytest.raises(AssertionError, match=r"'bandwidth' of shape \(1,\) that matches none"):
        T.bind({"bandwidth": torch.zeros(1), "offset": torch.zeros(1)}, {"w": torch.zeros(1)})


@pytest.mark.parametrize("order", [("norm2", "norm1"), ("ln_2", "ln_1"), ("layer_norm2", "layer_norm1")])
def test_numbers_in_the_names_say_which_add_norm_whatever_the_registration_order(order: tuple[str, str]) -> None:
    """Helper-72's r1: a correct EncoderBlock registering `norm2` before `norm1` got the course's addnorm1 in its
    norm2 (the first layer of the same layout in registration order): 0 of 4. A trailing number in the student's
    names agrees with the contract's."""
    mine = states("attention.W_q.weight", "ffn.dense1.weight", "ffn.dense1.bias", *norm(order[0]), *norm(order[1]))
    pairs = T.bind(mine, ENCODER_BLOCK).pairs
    assert pairs[f"{order[0]}.ln.weight"] == "addnorm2.ln.weight" and pairs[f"{order[1]}.ln.bias"] == "addnorm1.ln.bias"
    blocks = {f"blks.{i}.{k}": v for i in range(2) for k, v in ENCODER_BLOCK.items()}
    mine_blocks = {f"blks.{i}.{k}": v for i in range(2) for k, v in mine.items()}
    pairs = T.bind(mine_blocks, blocks).pairs
    assert [pairs[f"blks.{i}.{order[j]}.ln.weight"] for i in range(2) for j in range(2)] == [
        "blks.0.addnorm2.ln.weight", "blks.0.addnorm1.ln.weight", "blks.1.addnorm2.ln.weight", "blks.1.addnorm1.ln.weight"]


def test_only_the_order_of_the_numbers_counts() -> None:
    """Numbers from 0 (`norm0`, `norm1`; a ModuleList's `sublayer.0`, `sublayer.1`), in either registration order,
    and blocks numbered from 1 (`layer1`, `layer2` for the contract's `blks.0`, `blks.1`) bind in the order of their
    numbers: the first block's layers to blks.0's."""
    for names in (("norm0", "norm1"), ("sublayer.0.norm", "sublayer.1.norm")):
        for registered in (names, names[::-1]):
            mine = states("attention.W_q.weight", *norm(registered[0]), "ffn.dense1.weight", "ffn.dense1.bias",
                          *norm(registered[1]))
            pairs = T.bind(mine, ENCODER_BLOCK).pairs
            assert [pairs[f"{name}.ln.weight"] for name in names] == ["addnorm1.ln.weight", "addnorm2.ln.weight"]
    blocks = {f"blks.{i}.{k}": v for i in range(2) for k, v in ENCODER_BLOCK.items()}
    mine_blocks = {f"layer{i + 1}.{k}": v for i in range(2) for k, v in ENCODER_BLOCK.items()}
    assert all(v == f"blks.{int(k[5]) - 1}{k[6:]}" for k, v in T.bind(mine_blocks, blocks).pairs.items())


def test_sublayer_words_say_which_add_norm_whatever_the_registration_order() -> None:
    """Helper-72's r2: `ffn_norm` registered before `attn_norm` in a correct EncoderBlock: 0 of 4. The contract's
    addnorm1 follows the attention and addnorm2 the FFN (docs/course-api.md), so words in the student's names
    (attn/attention/self/mha, ffn/ff/feed/forward/mlp) say which is which."""
    for first, second in (("ffn_norm", "attn_norm"), ("norm_feed_forward", "norm_self_attention"), ("mlp_ln", "mha_ln"),
                          ("ff_norm", "attention_norm")):
        mine = states("attention.W_q.weight", "ffn.dense1.weight", "ffn.dense1.bias", *norm(first), *norm(second))
        pairs = T.bind(mine, ENCODER_BLOCK).pairs
        assert pairs[f"{first}.ln.weight"] == "addnorm2.ln.weight" and pairs[f"{second}.ln.weight"] == "addnorm1.ln.weight"


def test_a_decoder_block_built_in_reverse_binds_by_what_its_names_say() -> None:
    """Helper-72's r4: a correct DecoderBlock building its cross attention before its self attention and its
    AddNorms as norm3, norm2, norm1: 0 of 6. In a DecoderBlock addnorm1 follows the self attention, addnorm2 the
    cross attention and addnorm3 the FFN; numbers and words in the names say which is which."""
    mine = states("cross_attn.W_q.weight", "self_attn.W_q.weight", *norm("norm3"), *norm("norm2"), *norm("norm1"),
                  "ffn.dense1.weight", "ffn.dense1.bias")
    pairs = T.bind(mine, DECODER_BLOCK).pairs
    assert [pairs[k] for k in ("cross_attn.W_q.weight", "self_attn.W_q.weight", "norm3.ln.weight", "norm2.ln.weight",
                               "norm1.ln.bias")] == ["attention2.W_q.weight", "attention1.W_q.weight", "addnorm3.ln.weight",
                                                     "addnorm2.ln.weight", "addnorm1.ln.bias"]
    mine = states("self_attn.W_q.weight", "cross_attn.W_q.weight", *norm("ffn_norm"), *norm("cross_norm"),
                  *norm("self_norm"), "ffn.dense1.weight", "ffn.dense1.bias")
    pairs = T.bind(mine, DECODER_BLOCK).pairs
    assert [pairs[f"{k}.ln.weight"] for k in ("ffn_norm", "cross_norm", "self_norm")] == [
        "addnorm3.ln.weight", "addnorm2.ln.weight", "addnorm1.ln.weight"]


def test_a_module_holding_none_of_the_contract_s_entries_is_told_why_where_that_can_be_said() -> None:
    """helper-75's D1: a constructor spelled `__int__` never runs, and the feedback named the catalogue's plain-tensor
    `w`, because both failed with the same words. The failure now says which: a plain tensor under the contract's
    name, or no state at all (is the constructor called?: a Crash, which earns no floor); a module with state of its
    own is told neither."""
    class PlainTensor(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = torch.rand((1,), requires_grad=True)

    class NeverBuilt(nn.Module):
        def __int__(self) -> None:  # the learner's spelling
            super().__init__()
            self.w = nn.Parameter(torch.rand((1,)))

    class Other(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bandwidth = nn.Parameter(torch.rand((2,)))

    width = T.contract({"w": (1,)})
    with pytest.raises(AssertionError, match=r"your `w` is a plain tensor, not an nn.Parameter"):
        T.copy_weights(PlainTensor(), width)
    with pytest.raises(T.Crash, match=r"no parameters or buffers at all: does its constructor run\?.*`__int__`"):
        T.copy_weights(NeverBuilt(), width)  # computes nothing: no floor, as a call that raises earns none
    with pytest.raises(AssertionError) as info:
        T.copy_weights(Other(), width)
    assert "plain tensor" not in str(info.value) and "constructor" not in str(info.value)
    assert not isinstance(info.value, T.Crash)
    T.assert_holds(Other(), ["w"], ["bandwidth"], "unsaid")  # nothing to say: returns


class Unsaid(nn.Module):
    """Queries registered first, both projections (4, 3), names that say nothing: binding by structure guesses."""

    def __init__(self) -> None:
        super().__init__()
        self.W1, self.W2 = nn.Linear(3, 4, bias=False), nn.Linear(3, 4, bias=False)
        self.v = nn.Linear(4, 1, bias=False)

    def scores(self, queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        return self.v(torch.tanh(self.W1(queries)[:, None] + self.W2(keys)[None])).squeeze(-1)


def reference_scores(ref: Reference, queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    return ref.w_v(torch.tanh(ref.W_q(queries)[:, None] + ref.W_k(keys)[None])).squeeze(-1)


def test_a_guessed_binding_is_tried_the_other_way_and_kept_where_the_behaviour_confirms_it() -> None:
    """Helper-79's A6, the mechanism: where names do not tell two same-shaped layers apart, the binding takes
    registration order (the course's W_k first); an example that fails so runs again with the other binding
    (`with_candidate_bindings`) and passes where that one agrees with the course's."""
    runs = []

    def example() -> None:
        torch.manual_seed(0)
        mine, ref = Unsaid(), Reference()
        binding = T.copy_weights(mine, ref)
        runs.append(binding.pairs["W1.weight"])
        queries, keys = torch.randn(2, 3), torch.randn(5, 3)
        T.check(torch.allclose(mine.scores(queries, keys), reference_scores(ref, queries, keys)), "scores differ")

    with pytest.raises(AssertionError, match="scores differ"):
        example()  # outside the mechanism: the first guess alone
    runs.clear()
    T.with_candidate_bindings(example)
    assert runs == ["W_k.weight", "W_q.weight"]  # W1 is the query projection: the second binding is kept


def test_no_binding_is_tried_twice_where_nothing_was_guessed_and_the_first_failure_is_kept() -> None:
    """A failure without a guess runs once; where every binding fails, the first run's failure is raised; after
    MAX_FRUITLESS such examples in one test, its examples try only the first binding (a buggy module's failing
    examples, which hypothesis reruns as it shrinks, cost one run each again)."""
    runs: list[str] = []

    def unguessed() -> None:
        runs.append("run")
        T.copy_weights(Reference(), Reference())  # the contract's names: nothing to guess
        raise AssertionError("wrong")

    T.begin_test("test_binding::unguessed")
    with pytest.raises(AssertionError, match="wrong"):
        T.with_candidate_bindings(unguessed)
    assert runs == ["run"]

    def failing_every_way() -> None:
        runs.append(T.copy_weights(Unsaid(), Reference()).pairs["W1.weight"])
        raise AssertionError(f"wrong under {runs[-1]}")

    for example in range(T.MAX_FRUITLESS + 1):
        runs.clear()
        with pytest.raises(AssertionError, match=r"wrong under W_k\.weight"):
            T.with_candidate_bindings(failing_every_way)
        assert runs == (["W_k.weight", "W_q.weight"] if example < T.MAX_FRUITLESS else ["W_k.weight"])
    T.begin_test("test_binding::next")  # a new test tries again
    runs.clear()
    with pytest.raises(AssertionError):
        T.with_candidate_bindings(failing_every_way)
    assert len(runs) == 2
