"""autograder/catalogue/diagnosis.py: the feedback names the student's actual mistake, never a wrong
one, and never a hint for a crash, a stub or a missing name (issue #13's walkthrough)."""
from __future__ import annotations

import re

from pathlib import Path

import pytest
import torch

from autograder.catalogue import diagnosis, zoo
from autograder.grading.results import results_json
from autograder.grading import session
from autograder.grading.scoring import ComponentScore
from autograder.grading.session import Result, run_in_process
from autograder.selfcheck import plugin
from autograder.selfcheck.symptoms import DIAGNOSIS_MARK

A = "02_attention_scoring"


def graded(entry_name: str, tmp_path: Path) -> tuple[zoo.Entry, Result]:
    entry = next(e for e in zoo.entries() if e.name == entry_name)
    return entry, run_in_process(entry.assignment, zoo.compose(entry, tmp_path))


def component(result: Result, name: str):  # -> ComponentScore
    return next(c for c in result.components if c.name == name)


@pytest.mark.parametrize("name", ["sm_off_by_one", "add_no_tanh", "dot_no_scale", "ms_fill_zero"])
def test_the_walkthrough_mistakes_are_named(name: str, tmp_path: Path) -> None:
    entry, result = graded(name, tmp_path)
    comp = component(result, entry.component)
    assert [d.family for d in comp.misconceptions] == [diagnosis.family_of(entry)]
    failed = [t for t in comp.tests if not t.passed]
    assert any("diagnosis: your" in t.output and entry.fix in t.output for t in failed)
    assert not any("hint:" in t.output for t in failed)  # no fixed hint naming another mistake
    others = [d for c in result.components if c.name != entry.component for d in c.misconceptions]
    assert others == []


def test_results_files_record_misconceptions_by_stable_id(tmp_path: Path) -> None:
    entry, result = graded("ms_fill_zero", tmp_path)
    recorded = results_json(result)["extra_data"]["components"][entry.component]["misconceptions"]
    assert recorded == [{"id": diagnosis.family_of(entry), "summary": entry.bug, "fix": entry.fix}]


@pytest.mark.parametrize("name", ["ms_masked_fill_inf", "add_loop_over_queries", "dot_einsum_mT"])
def test_correct_alternatives_are_never_diagnosed(name: str, tmp_path: Path) -> None:
    _, result = graded(name, tmp_path)
    assert result.score == result.max_score
    assert all(not c.misconceptions for c in result.components)


def test_stubs_and_crashes_get_their_own_message_and_no_diagnosis(tmp_path: Path) -> None:
    from solutions import attention_scoring
    import inspect
    source = inspect.getsource(attention_scoring)
    crash = source.replace("torch.softmax(X.reshape(shape), dim=-1)", "nn.Functional.softmax(X.reshape(shape), dim=-1)")
    stub = source.replace('    if valid_lens is None:\n        return torch.softmax(X, dim=-1)\n',
                          "    raise NotImplementedError()\n", 1)
    assert crash != source and stub != source
    for text, expected in ((crash, "AttributeError"), (stub, "NotImplementedError")):
        path = tmp_path / "submission.py"
        path.write_text(text)
        result = run_in_process(A, path)
        comp = component(result, "masked_softmax")
        failed = [t for t in comp.tests if not t.passed]
        assert failed and all(expected in t.output for t in failed), [t.output[:120] for t in failed]
        assert not comp.misconceptions and not any("diagnosis:" in t.output or "hint:" in t.output for t in failed)


def test_a_copy_of_a_reference_output_is_traced_back_to_its_call() -> None:
    """Suites compare with copies of the reference's output (T.as_plain clones): the recorder finds the
    call by value, so the catalogue's variants can be replayed on it."""
    recorder = diagnosis.Recorder()
    softmax = recorder.function("masked_softmax", lambda X, lens: torch.softmax(X, -1))
    first = softmax(torch.zeros(2, 3), None)
    second = softmax(torch.arange(6.0).reshape(2, 3), None)
    assert recorder.lookup(second.clone()).args[0].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert recorder.lookup(first.clone()).args[0].tolist() == [[0.0] * 3] * 2
    assert recorder.lookup(second.clone() + 1) is None


def test_a_floored_test_says_why_it_counts_half(tmp_path: Path) -> None:
    """fill-with-0 fails every comparison of masked_softmax; the diagnosis names it, so its passed
    property tests count the floor, and the results file says so."""
    entry, result = graded("ms_fill_zero", tmp_path)
    tests = [t for t in results_json(result)["tests"] if t["name"].startswith(f"{entry.component}: ")]
    floored = [t for t in tests if "its failures are one known mistake (see the diagnosis)" in t["output"]]
    assert floored and all(t["output"].startswith("counts 50% of its share") and 0 < t["score"] < t["max_score"]
                           for t in floored)


def test_only_the_reported_failure_is_diagnosed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hypothesis meets a failure many times while it searches and shrinks, then replays the smallest
    example once for the report: the diagnosis (replays of the catalogue's mistakes) runs for that
    replay alone, and its verdict is the reported failure's. A comparison outside hypothesis is
    diagnosed every time."""
    from hypothesis import given, settings, strategies as st

    from autograder.selfcheck import testing
    calls: list[int] = []
    runs: list[int] = []
    monkeypatch.setattr(testing, "DIAGNOSE",
                        lambda actual, *rest: calls.append(actual.numel()) or testing.Reproduced(frozenset({"x"})))

    @settings(max_examples=30, derandomize=True, database=None)
    @given(n=st.integers(1, 50))
    def compared(n: int) -> None:
        runs.append(n)
        expected = torch.zeros(n)
        testing.assert_close(expected + (n >= 3), expected, what="output")

    with pytest.raises(testing.Mismatch) as failure:
        compared()
    assert len(runs) > 3 and calls == [3], (runs, calls)  # shrunk to n = 3, diagnosed once, there
    assert failure.value.candidates == frozenset({"x"})
    with pytest.raises(testing.Mismatch):
        testing.assert_close(torch.ones(2), torch.zeros(2), what="output")
    assert calls == [3, 2]


def test_a_family_is_told_in_the_words_of_the_member_that_reproduced_the_failures() -> None:
    """A family's members are different ways of one mistake, each with its own words: the diagnosis uses
    the words of the member whose replays or signatures reproduced the most failures, and of every member
    that did as many (found by a review: a decoder wrong on whole sequences was told the book's mistake,
    wrong step by step, because both members of `positions-ignore-cache` got the first one's words)."""
    family = "positions-ignore-cache"
    members = sorted((e for e in zoo.entries("06_transformer") if e.kind == "mutant" and diagnosis.family_of(e) == family),
                     key=lambda e: e.name)
    first, second = members[0], next(e for e in members if e.name == "dec_offset_only_for_one_token")
    assert first.name == "dec_book_positions_p0" and first.bug != second.bug
    told = diagnosis.explain("TransformerDecoder", family, [{second.id}, {second.id}, {first.id}])
    assert told is not None and told.ways == ((second.bug, second.fix),) and told.family == family
    assert told.entries == tuple(e.id for e in members)  # the family, as before: the results record its id
    both = diagnosis.explain("TransformerDecoder", family, [{second.id}, {first.id}])
    assert both is not None and both.ways == ((first.bug, first.fix), (second.bug, second.fix))
    summary, fix = both.said()
    assert summary == f"{first.bug}, or like one that {second.bug}" and fix == f"{first.fix}; or: {second.fix}"


def test_the_second_member_of_a_family_is_told_its_own_mistake_when_graded(tmp_path: Path) -> None:
    """Through a grading: the member that is not first by name, found by its failures' signatures alone."""
    entry = next(e for e in zoo.entries("06_transformer") if e.name == "dec_offset_only_for_one_token")
    verdict = zoo.judge(entry, tmp_path)
    assert verdict.named == [diagnosis.family_of(entry)] and verdict.told == [entry.bug]


def test_a_crash_has_the_same_signature_in_the_sandbox_as_in_the_grading_process() -> None:
    """signatures.json is measured in-process; the sandbox inserts the student's traceback before the test's
    own lines, and an older text named its wrapper ("raised StudentError: your code raised ..."): neither is a
    fact."""
    from autograder.selfcheck import symptoms
    head = ("AdditiveAttention(key_size=6, query_size=5, num_hiddens=8)(queries, keys, values, valid_lens) raised "
            "{error}: mat1 and mat2 shapes cannot be multiplied (6x5 and 6x8)")
    tail = "\n  input Case(B=1, Q=1, K=1, query_size=1, key_size=2, value_size=1, valid_lens=None, dtype=float64, seed=0)"
    in_process = head.format(error="RuntimeError") + tail
    sandboxed = (head.format(error="StudentError: your code raised RuntimeError") + "\n  where (your code):" +
                 "\n    mine.py, line 96, in forward: queries, keys = self.W_k(queries), self.W_q(keys)"
                 "\n      shapes: queries (2, 3, 5), keys (2, 4, 6)" + tail)
    assert symptoms.text_hash(sandboxed) == symptoms.text_hash(in_process)
    assert symptoms.text_hash(sandboxed) != symptoms.text_hash(head.format(error="RuntimeError"))  # the input counts


def test_a_crashing_mistake_is_graded_alike_in_the_sandbox_and_in_process(zygote, tmp_path: Path) -> None:
    """Found by a review: W_q and W_k swapped (a shape crash on most inputs) scored 2.0 of 4 with its
    diagnosis in-process, where the catalogue is measured, and 0 with none in the sandbox, where classes
    are graded: the sandbox's crash text did not match the catalogue's signatures."""
    from autograder.grading.session import grade_file
    entry = next(e for e in zoo.entries("02_attention_scoring") if e.name == "add_qk_swapped")
    path = zoo.compose(entry, tmp_path)
    graded = [next(c for c in r.components if c.name == "AdditiveAttention") for r in (
        run_in_process("02_attention_scoring", path, components=["AdditiveAttention"]),
        grade_file(zygote, "02_attention_scoring", str(path)))]
    assert [(c.score, [m.family for m in c.misconceptions]) for c in graded] == [(graded[0].score, ["add_qk_swapped"])] * 2
    # and it reads alike: the student's own error by its class (it read "raised StudentError: your code raised
    # RuntimeError" in the sandbox, helper-54), which the sandbox follows with where it happened in their code
    crash_site = re.compile(r"\n  where \(your code\):(\n    .*)+")
    in_process, sandboxed = ([crash_site.sub("", t.output) for t in c.tests] for c in graded)
    assert in_process == sandboxed
    assert any("raised RuntimeError: mat1 and mat2" in t for t in sandboxed)
    assert any(crash_site.search(t.output) for t in graded[1].tests)


@pytest.mark.parametrize("assignment_id,name,component_name", [
    ("04_multihead", "mha_no_W_o", "MultiHeadAttention"),
    ("03_bahdanau", "dec_hidden_detached", "Seq2SeqAttentionDecoder"),
])
def test_a_mistake_meets_the_same_reference_weights_in_the_sandbox_and_in_process(
        zygote, tmp_path: Path, assignment_id: str, name: str, component_name: str) -> None:
    """Found by the benchmark (session 37): the course's modules drew their random weights from the grading
    process's stream, which in-process grading shares with the student's code (its modules' own weights) and
    a sandboxed grading does not. Each path was deterministic, but they compared against other weights, so
    the failure texts differed, and the catalogue's signatures, measured in-process, never matched a
    sandboxed grading's: a forgotten W_o scored 3.0 of 4 with its diagnosis in-process and 2.31 with none in
    the sandbox, where classes are graded. Each course module is now built from a stream of its own
    (diagnosis.Recorder.construct): the same texts, scores and diagnosis on both paths."""
    from autograder.grading.session import grade_file
    entry = next(e for e in zoo.entries(assignment_id) if e.name == name)
    path = zoo.compose(entry, tmp_path)
    graded = [next(c for c in r.components if c.name == component_name) for r in (
        run_in_process(assignment_id, path), grade_file(zygote, assignment_id, str(path)))]
    texts = [[(t.nodeid, t.passed, t.output) for t in c.tests] for c in graded]
    assert texts[0] == texts[1]
    assert [(c.score, [m.family for m in c.misconceptions]) for c in graded] == \
        [(graded[0].score, [diagnosis.family_of(entry)])] * 2


_RIGHT_WEIGHTS_ZERO_OUTPUT = '''

class DotProductAttention(nn.Module):
    """Stores the right attention weights and returns zeros."""

    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(queries.shape[-1])
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.zeros(*queries.shape[:2], values.shape[-1], dtype=values.dtype)
'''


def test_degenerate_code_earns_at_most_its_share_whatever_it_passes(tmp_path: Path) -> None:
    """Found by a review: attention that stores the right weights and returns zeros passed the
    reference tests of its weights (a side output, outside the gate) and kept 0.78 of 4. It is degenerate
    (capped at 10%) and, since session 42, its weights' tests earn in proportion to its outputs' agreement
    with the course's: nothing (tests/test_credit_attacks.py holds the ones version, which no catalogue
    entry reproduces)."""
    path = tmp_path / "weights_only.py"
    path.write_text(zoo.reference_source("02_attention_scoring") + _RIGHT_WEIGHTS_ZERO_OUTPUT)
    result = run_in_process("02_attention_scoring", path, components=["DotProductAttention"])
    dot = next(c for c in result.components if c.name == "DotProductAttention")
    assert dot.degenerate and dot.score <= 0.1 * dot.points, dot.score
    tests = [t for t in results_json(result)["tests"] if t["name"].startswith("DotProductAttention")]
    assert round(sum(t["score"] for t in tests), 4) == dot.score
    assert all("all its tests together earn at most 10% of its points" in t["output"] for t in tests if t["score"] > 0)


BOOK_MASK = "decblock_book_train_only_mask"


def test_a_mistake_made_with_the_code_s_own_initial_weights_is_named_in_its_property_tests_too(tmp_path: Path) -> None:
    """Helper-52's D1: property tests ran the student's module with its own initial weights (d2l 1.0's lazy layers
    draw theirs at the first call), so the same mistake failed them with other values than the catalogue's. The
    book's train-only causal mask, with its FFN's initial weights moved, kept the diagnosis on the reference
    comparisons only (2.12 of 6 against 3.00); its property tests then matched the mistake where it failed them
    (symptoms.where_hash) and counted the floor as the catalogue's own version does. Since helper-63 the hidden
    suite's property tests load the course's weights as the comparisons do, so the moved weights change none of
    their texts; the public suite's causal check still runs the module's own weights, fails with other values,
    and is explained at the same place."""
    entry = next(e for e in zoo.entries() if e.name == BOOK_MASK)
    plain = component(run_in_process(entry.assignment, zoo.compose(entry, tmp_path / "plain")), entry.component)
    source = zoo.compose(entry, tmp_path / "moved").read_text()
    built = "        self.addnorm3 = AddNorm(norm_shape, dropout)\n"
    at = source.rindex(built) + len(built)  # the mistaken block, defined after the reference's
    (tmp_path / "moved" / "own.py").write_text(
        source[:at] + "        with torch.no_grad():\n            for p in self.ffn.parameters():\n"
                      "                p.add_(0.05 * torch.randn(p.shape))\n" + source[at:])
    moved = component(run_in_process(entry.assignment, tmp_path / "moved" / "own.py"), entry.component)
    failed = {t.name: t for t in plain.tests if not t.passed}
    own = {t.name: t for t in moved.tests if not t.passed}
    assert set(own) == set(failed)

    def differs(name: str) -> bool:
        return own[name].output.split(DIAGNOSIS_MARK)[0] != failed[name].output.split(DIAGNOSIS_MARK)[0]
    hidden = [n for n, t in own.items() if t.function == "test_decoder_block_causal"]
    public = [n for n, t in own.items() if t.function == "test_decoder_block_causal_in_eval"]
    assert hidden and not any(differs(n) for n in hidden), "the hidden property tests load the course's weights"
    assert public and all(differs(n) for n in public), "the public check runs the moved weights: other values"
    assert [d.family for d in moved.misconceptions] == [diagnosis.family_of(entry)]
    assert all(t.misconception for t in own.values()), [n for n, t in own.items() if not t.misconception]
    assert moved.score == plain.score


def test_two_mistakes_at_once_are_both_named_and_cost_more_than_either(tmp_path: Path) -> None:
    """The catalogue's base 1000 and in-place `X += P` in one PositionalEncoding (a learner's code, corpus:
    chenkehan_pe, made both): neither explains every failure, together they do (diagnosis.conclude_pair).
    Each failure names the one that explains it, and the component keeps some credit, less than either
    mistake alone leaves (before: no diagnosis and 0)."""
    entries = {e.name: e for e in zoo.entries("05_positional_encoding")}
    alone = {name: component(run_in_process("05_positional_encoding", zoo.compose(entries[name], tmp_path / name)),
                             "PositionalEncoding") for name in ("pe_base_1000", "pe_in_place_add")}
    source = zoo.compose(entries["pe_base_1000"], tmp_path / "both").read_text()
    assert source.count("X = X + self.P") == 1
    (tmp_path / "both.py").write_text(source.replace("X = X + self.P", "X += self.P"))
    both = component(run_in_process("05_positional_encoding", tmp_path / "both.py"), "PositionalEncoding")
    assert sorted(d.family for d in both.misconceptions) == ["pe_base_1000", "pe_in_place_add"]
    said = {t.function: t.misconception for t in both.tests if not t.passed and t.misconception}
    assert said["test_input_unchanged"] == "pe_in_place_add" and said["test_table_closed_form"] == "pe_base_1000"
    assert 0 < both.score < min(c.score for c in alone.values())


def test_a_second_mistake_is_not_named_after_one_its_test_cannot_tell_it_from(tmp_path: Path) -> None:
    """Positions from 1 and dropout on X before P is added, in one PositionalEncoding: with no P entry 0, the
    dropout test saw no zero and said "zeroed none", dropout never applied's text, and the pair named it (a
    wrong fix: the code does apply dropout). The test now says "never applied" only of untouched X + P, so
    the dropout failure is the second, unnamed mistake, and the positions are named alone."""
    entries = {e.name: e for e in zoo.entries("05_positional_encoding")}
    source = zoo.compose(entries["pe_positions_from_one"], tmp_path / "pos1").read_text()
    added = "        X = X + self.P[:, :X.shape[1], :].to(X.device)\n        return self.dropout(X)"
    assert source.count(added) == 1
    (tmp_path / "both.py").write_text(source.replace(
        added, "        return self.dropout(X) + self.P[:, :X.shape[1], :].to(X.device)"))
    both = component(run_in_process("05_positional_encoding", tmp_path / "both.py"), "PositionalEncoding")
    assert [d.family for d in both.misconceptions] == ["pe_positions_from_one"]
    dropout = next(t for t in both.tests if t.function == "test_dropout_in_training_only")
    assert not dropout.passed and not dropout.misconception and "zeroed none" not in dropout.output


def test_a_failure_s_place_alone_names_no_mistake(monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure that a catalogue mistake makes at the same place with other values is evidence for a mistake
    named on other evidence, never on its own: property failures whose places match, and nothing replayed or
    matched by text, name nothing and floor nothing."""
    entry = next(e for e in zoo.entries() if e.name == BOOK_MASK)
    monkeypatch.setattr(session, "where_entries", lambda component, function, text: {entry.id})
    tests = [plugin.TestOutcome(f"t{i}", f"t{i}", entry.component, 1.0, False, kind="property", function=f"test_{i}",
                         output="outputs at steps 0..0 after changing step 1: 0.5 vs 0.25") for i in range(3)]
    comp = ComponentScore(entry.component, 6.0, 0.0, tests)
    session.name_misconceptions(comp)
    assert comp.misconceptions == [] and not any(t.misconception or t.candidates for t in tests)


def test_a_mistake_that_would_have_failed_a_test_the_code_passed_is_ruled_out(tmp_path: Path) -> None:
    """diagnosis.contradicted. Detached attention weights fail only the gradient test; a softmax over the
    queries fails it too, with the same text (at one query the weights are all 1 and the gradient 0), but it
    fails every comparison of the outputs as well. Code that passes those comparisons is not that mistake:
    the catalogue's detached-weights entries were named by nobody (two families for one failure), and are."""
    families = {"detached-attention-weights", "softmax-over-queries"}
    assert diagnosis.contradicted("DotProductAttention", families, {"test_dot_matches_reference"}) == \
        {"softmax-over-queries"}
    assert diagnosis.contradicted("DotProductAttention", families, set()) == set()
    assert diagnosis.contradicted("DotProductAttention", {"degenerate:uniform"}, {"test_dot_matches_reference"}) == set()
    for name in ("dot_detached_weights", "add_detached_weights"):
        entry, result = graded(name, tmp_path / name)
        assert [d.family for d in component(result, entry.component).misconceptions] == ["detached-attention-weights"]


def test_a_call_is_replayed_as_code_without_the_inputs_it_leaves_out_is_called() -> None:
    """diagnosis.without_inputs: each left-out input at the reference's default (None without one); a call
    that passed none of them is left as it was (None)."""
    lens = torch.tensor([1, 2])
    call = diagnosis.Call("DotProductAttention", (torch.zeros(2, 1, 3), torch.zeros(2, 2, 3), torch.zeros(2, 2, 3), lens),
                          {}, ())
    from solutions.attention_scoring import AdditiveAttention, DotProductAttention, sequence_mask
    plain = diagnosis.without_inputs(call, DotProductAttention, frozenset({"valid_lens"}))
    assert plain is not None and plain.args[3] is None and plain.args[:3] == call.args[:3]
    as_keyword = diagnosis.Call("AdditiveAttention", call.args[:3], {"valid_lens": lens}, ())
    plain = diagnosis.without_inputs(as_keyword, AdditiveAttention, frozenset({"valid_lens"}))
    assert plain is not None and plain.kwargs == {"valid_lens": None}
    assert diagnosis.without_inputs(diagnosis.Call("DotProductAttention", call.args[:3], {}, ()), DotProductAttention,
                                    frozenset({"valid_lens"})) is None
    mask = diagnosis.Call("sequence_mask", (torch.zeros(2, 3), lens, -1.0), {}, ())
    plain = diagnosis.without_inputs(mask, sequence_mask, frozenset({"value"}))
    assert plain is not None and plain.args[2] == 0
