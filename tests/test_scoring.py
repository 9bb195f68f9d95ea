"""autograder/grading/scoring.py and the diagnosis's say in it: shares add up exactly, passed
reference comparisons gate the credit of property and structure tests, and the floor on that gate
applies only when the diagnosis names one known realistic mistake (never for degenerate code)."""
from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.catalogue import diagnosis
from autograder.config import Scoring
from autograder.grading.scoring import ComponentScore, component_score, shares
from autograder.grading.session import name_misconceptions
from autograder.selfcheck import plugin

KINDS = ("reference", "dependence", "reads", "property", "structure")
COMP = "masked_softmax"


def outcome(kind: str, passed: bool, weight: float = 1.0, function: str = "",
            misconception: str = "", part: str = "") -> plugin.TestOutcome:
    return plugin.TestOutcome(nodeid=f"t::{function or kind}", name=function or kind, component=COMP, weight=weight,
                              public=False, kind=kind, function=function or f"test_{kind}", passed=passed,
                              misconception=misconception, part=part)


tests_lists = st.lists(st.builds(outcome, st.sampled_from(KINDS), st.booleans(),
                                 st.sampled_from([0.5, 1.0, 2.0, 3.0]),
                                 misconception=st.sampled_from(["", "fill-zero"])), min_size=1, max_size=12)
points = st.integers(1, 400).map(lambda n: n / 4)  # 0.25 .. 100 points


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(points, tests_lists, st.booleans(), st.sampled_from(["proportional", "none"]))
def test_shares_add_up_to_exactly_the_points_and_never_exceed_them(pts, tests, explained, gate):
    out = shares(pts, tests, Scoring(gate=gate), explained)
    assert round(sum(s.max_score for s in out) * 10_000) == round(pts * 10_000)
    assert all(0 <= s.score <= s.max_score for s in out)
    assert all(s.score == 0 for s in out if not s.outcome.passed and not (explained and s.outcome.misconception))
    assert all(s.score <= s.max_score / 2 + 1e-4 for s in out if not s.outcome.passed)  # the floor is 0.5
    capped = shares(pts, tests, Scoring(gate=gate), degenerate=True)
    assert sum(round(s.score * 10_000) for s in capped) <= int(round(pts * 10_000) * 0.1)
    if all(t.passed for t in tests):
        assert component_score(pts, tests, Scoring(gate=gate), explained) == pts


def test_property_tests_count_in_proportion_to_the_reference_comparisons_passed():
    tests = [outcome("reference", True), outcome("reference", False), outcome("property", True)]
    out = shares(7.0, tests, Scoring())  # weights 3, 3, 1: shares 3, 3, 1 points
    assert [s.max_score for s in out] == [3.0, 3.0, 1.0]
    assert [s.score for s in out] == [3.0, 0.0, 0.5]
    assert out[2].factor == 0.5 and not out[2].floored


def test_code_that_fails_every_comparison_earns_nothing_for_its_invariances_unless_explained():
    tests = [outcome("reference", False), outcome("property", True), outcome("structure", True)]
    assert component_score(5.0, tests, Scoring()) == 0.0  # wrong in no known way, or degenerate
    explained = shares(5.0, tests, Scoring(), explained=True)  # one known realistic mistake
    assert [s.score for s in explained] == [0.0, 0.5, 0.5]
    assert [s.floored for s in explained] == [False, True, True]
    assert component_score(5.0, tests, Scoring(floor=0.2), explained=True) == 0.4


def test_code_whose_outputs_depend_on_its_inputs_as_the_courses_keeps_its_invariances_at_the_dependence_gate():
    """An unknown mistake in the values (relu for tanh) of code that is not degenerate: its dependence test
    passed, so its properties count at `dependence_gate`; its failed comparisons earn nothing. Code that fails
    a dependence test (it ignores an input the course's reads) earns only its proportion, as before."""
    tests = [outcome("reference", False), outcome("dependence", True), outcome("property", True)]
    out = shares(5.0, tests, Scoring())  # weights 3, 1, 1: the proportion 1/4, the dependence gate 1/2
    assert [s.score for s in out] == [0.0, 1.0, 0.5] and out[2].factor == 0.5
    tests = [outcome("reference", False, weight=3.0), outcome("dependence", True), outcome("property", True)]
    out = shares(11.0, tests, Scoring())  # weights 9, 1, 1: the proportion 1/10, the dependence gate 1/2
    assert [s.score for s in out] == [0.0, 1.0, 0.5] and out[2].factor == 0.5
    assert shares(11.0, tests, Scoring(dependence_gate=0.0))[2].factor == 0.1
    ignores = [outcome("reference", False, weight=3.0), outcome("dependence", False), outcome("property", True)]
    assert component_score(11.0, ignores, Scoring()) == 0.0
    capped = shares(11.0, tests, Scoring(), degenerate=True)  # a degenerate entry's replay still caps it
    assert round(sum(s.score for s in capped), 4) <= 1.1


def test_a_stored_table_counts_on_its_own_once_the_outputs_are_computed_from_it():
    """PositionalEncoding's right table beside a slip in forward (`P[:, T]` for `P[:, :T]`): its `reads` test
    passed (forward adds rows of its own table, and depends on X as the course's does), so the table's tests earn
    their share whatever the outputs' comparisons; other properties stay gated. A right table beside a forward that
    does not add it (the reads test failed) earns nothing for it, nor does a component without a reads test."""
    tests = [outcome("reference", False, weight=2.0, function="test_forward"),
             outcome("reference", True, function="test_table_values", part="table"),
             outcome("property", True, function="test_table_pairs", part="table"),
             outcome("reads", True), outcome("property", True)]  # weights 6, 3, 1, 1, 1: shares in twelfths
    out = shares(12.0, tests, Scoring())
    assert [s.score for s in out] == [0.0, 3.0, 1.0, 0.0, 0.0]
    unused = [dataclasses.replace(t, passed=False) if t.kind == "reads" else t for t in tests]
    assert component_score(12.0, unused, Scoring()) == 0.0
    assert component_score(12.0, [t for t in tests if t.kind != "reads"], Scoring()) == 0.0
    degenerate = shares(12.0, tests, Scoring(), degenerate=True)  # a degenerate entry's replay still caps it
    assert round(sum(s.score for s in degenerate), 4) <= 1.2


def test_one_named_mistake_costs_at_most_half_of_each_test_it_breaks():
    """The floor on failures: a test the named mistake breaks keeps the floor's share of its own; a failure
    the mistake does not explain (a second, unknown mistake) earns nothing, nor does any failure of code
    no single realistic mistake explains."""
    tests = [outcome("reference", False, misconception="fill-zero"), outcome("reference", False),
             outcome("property", True)]  # weights 3, 3, 1: shares 3, 3, 1 points
    explained = shares(7.0, tests, Scoring(), explained=True)
    assert [s.score for s in explained] == [1.5, 0.0, 0.5]
    assert [s.floored for s in explained] == [True, False, True]
    assert [s.score for s in shares(7.0, tests, Scoring())] == [0.0, 0.0, 0.0]
    assert shares(7.0, tests, Scoring(floor=0.2), explained=True)[0].score == 0.6
    assert shares(7.0, tests, Scoring(gate="none"), explained=True)[0].score == 0.0


def test_degenerate_code_earns_at_most_its_share_whatever_its_tests_pass():
    # right stored attention weights (a reference test of their own) beside constant outputs
    tests = [outcome("reference", True, function="test_weights"), outcome("reference", False), outcome("property", True)]
    assert component_score(7.0, tests, Scoring()) == 3.5  # 3 + 0 + 1 * 0.5
    capped = shares(7.0, tests, Scoring(), degenerate=True)
    assert round(sum(s.score for s in capped), 4) <= 0.7 and all(s.capped for s in capped if s.score)
    assert component_score(7.0, tests, Scoring(degenerate_share=0.0), degenerate=True) == 0.0
    assert component_score(7.0, tests[1:], Scoring(), degenerate=True) == 0.0  # under the cap: as it was


def test_the_floor_never_lowers_a_gate_above_it():
    tests = [outcome("reference", True)] * 3 + [outcome("reference", False), outcome("property", True)]
    out = shares(13.0, tests, Scoring(), explained=True)
    assert out[-1].factor == 0.75 and not out[-1].floored


def test_gate_none_counts_every_passed_test_in_full():
    tests = [outcome("reference", False), outcome("property", True)]
    assert component_score(4.0, tests, Scoring(gate="none")) == 1.0


def test_course_overrides_of_a_tests_weight_and_kind():
    tests = [outcome("reference", True, function="test_a"), outcome("property", True, function="test_b"),
             outcome("reference", False, function="test_c")]
    policy = Scoring(tests={f"{COMP}::test_a": 0.0}, kinds_of={f"{COMP}::test_b": "reference"})
    out = shares(4.0, tests, policy)  # weights 0, 3, 3
    assert [s.max_score for s in out] == [0.0, 2.0, 2.0]
    assert [s.score for s in out] == [0.0, 2.0, 0.0]


def test_a_marker_weight_scales_a_tests_share():
    tests = [outcome("reference", True, weight=2.0), outcome("reference", False)]
    assert [s.max_score for s in shares(9.0, tests, Scoring())] == [6.0, 3.0]


# --- what the diagnosis decides (grading/session.name_misconceptions) ---------------------------

def diagnosed(*evidence: tuple[str, ...]) -> ComponentScore:
    tests = [outcome("property", True)]
    for i, found in enumerate(evidence):
        failed = outcome("reference", False, function=f"test_ref_{i}")
        failed.candidates = found
        tests.append(failed)
    comp = ComponentScore(COMP, 4.0, 0.0, tests)
    name_misconceptions(comp)
    return comp


def test_one_realistic_mistake_explaining_every_failure_is_named_and_floored():
    comp = diagnosed(("ms_fill_zero", "ms_zeros"), ("ms_fill_zero",))
    assert [d.family for d in comp.misconceptions] == ["ms_fill_zero"]
    assert comp.explained and not comp.degenerate


def test_code_a_degenerate_version_reproduces_is_named_degenerate_and_not_floored():
    comp = diagnosed(("degenerate:ms_zeros",), ("degenerate:ms_zeros",))
    assert comp.degenerate and not comp.explained
    [named] = comp.misconceptions
    assert named.degenerate and "compute the output from the inputs" in named.said()[1]


def test_a_degenerate_match_does_not_hide_the_one_mistake_that_explains_the_rest():
    # uniform weights also reproduce a fill-with-0 masked_softmax on equal scores
    comp = diagnosed(("ms_fill_zero", "degenerate:ms_uniform_valid"), ("ms_fill_zero",),
                     ("degenerate:ms_uniform_valid",))
    assert [d.family for d in comp.misconceptions] == ["ms_fill_zero"]
    assert comp.explained and not comp.degenerate


@pytest.mark.parametrize("evidence", [
    (),
    (("ms_fill_zero",), ("ms_detached",), ("ms_float32_buffer",)),  # three mistakes: no pair explains them
    (("ms_fill_zero", "ms_detached"), ("ms_float32_buffer",)),  # two pairs would: which is not known
    (("degenerate:ms_zeros",), ()),
])
def test_no_named_realistic_mistake_means_no_floor(evidence):
    comp = diagnosed(*evidence)
    assert not comp.explained and not [d for d in comp.misconceptions if not d.degenerate]


def test_two_mistakes_that_together_explain_the_failures_are_both_named_each_where_it_shows():
    """Real code makes two mistakes at once (corpus: chenkehan_pe's base 1000 and `X += P`): neither
    explains every failure, together they do (diagnosis.conclude_pair). Each is named on the failures it
    explains, and each costs at most `1 - floor` of what it touches, as one named mistake does."""
    comp = diagnosed(("ms_fill_zero",), ("ms_detached",), ("ms_fill_zero", "mask-off-by-one"))
    assert [d.family for d in comp.misconceptions] == ["ms_detached", "ms_fill_zero"]
    assert comp.explained and not comp.degenerate
    failed = [t for t in comp.tests if not t.passed]
    assert [t.misconception for t in failed] == ["ms_fill_zero", "ms_detached", "ms_fill_zero"]
    assert all(t.output.count("diagnosis:") == 1 for t in failed)
    policy = Scoring()
    assert [s.factor for s in shares(comp.points, comp.tests, policy, explained=True)] == [policy.floor] * 4


def test_a_failure_text_match_alone_does_not_name_a_mistake_against_degenerate_behaviour():
    # code that returns zeros: the reference comparison is reproduced only by degenerate versions,
    # and a training test fails with the same text as a w.item() mistake (signatures, not replay)
    evidence = [{"degenerate:nwk_zeros", "degenerate:nwk_mean_of_values"}, {"nwk_w_item"}]
    replayed = [{"degenerate:nwk_zeros", "degenerate:nwk_mean_of_values"}, set()]
    assert diagnosis.conclude_component(evidence, replayed) == (None, True)
    # ... but a replay of the mistake itself reproducing a failure is behaviour, and it is named
    assert diagnosis.conclude_component(evidence, [replayed[0], {"nwk_w_item"}]) == ("nwk_w_item", False)


def test_a_mistake_degenerate_versions_reproduce_more_often_does_not_name_degenerate_code():
    # the catalogue's sequence_mask returning zeros: on rows kept whole, an inverted mask also writes zeros
    # (and so does writing value everywhere: two degenerate versions, so no single one is named)
    zeros, inverted = {"degenerate:sm_zeros", "degenerate:sm_all_value"}, "sm_inverted_mask"
    evidence = [zeros, zeros, zeros | {inverted}, set(), zeros | {inverted}, zeros, zeros]
    assert diagnosis.conclude_component(evidence, evidence) == (None, True)


def test_a_mistake_that_explains_few_of_many_failures_is_not_named():
    # the catalogue's random attention weights: one gradient test fails with detached weights' text,
    # twenty-four failures nothing explains; and a learner's three mistakes, one of them known
    evidence = [{"detached-attention-weights"}] + [set()] * 24
    assert diagnosis.conclude_component(evidence, [set()] * 25) == (None, False)
    assert diagnosis.conclude_component([{"no-scale"}, set(), set()], [{"no-scale"}, set(), set()]) == (None, False)
    # one unknown failure beside one known is still named: at least half of the failures
    assert diagnosis.conclude_component([{"no-scale"}, set()], [{"no-scale"}, set()]) == ("no-scale", False)
    # only failures the catalogue's variants were replayed on count: a failed self-consistency test (step
    # by step against the whole sequence) or a crash had no course's value to replay against (the book's
    # DecoderBlock, masking causally only in training, in a learner's d2l 1.0 code)
    book = [set(), set(), set(), {"causal-mask-missing"}, set(), {"causal-mask-missing"}, {"causal-mask-missing"}]
    compared = [False, False, False, True, False, True, True]
    assert diagnosis.conclude_component(book, [set()] * 7, compared) == ("causal-mask-missing", False)
    assert diagnosis.conclude_component(book, [set()] * 7) == (None, False)


def test_side_outputs_earn_in_proportion_to_the_outputs_unless_a_named_mistake_explains_them():
    """Helper-60 (session 42): right attention weights (or table) beside outputs that are all wrong earned the
    weights' share in full. A comparison of a stored side output (part in scoring.STORED) is now gated like a
    property test; where the diagnosis names the one mistake that explains the outputs, it is judged on its own."""
    weights = dataclasses.replace(outcome("reference", True, function="test_x"), part="attention_weights")
    table = dataclasses.replace(outcome("reference", True, function="test_t"), part="table")
    tests = [weights, table, outcome("reference", False, function="test_out", misconception="fill-zero")]
    assert [s.score for s in shares(9.0, tests, Scoring())] == [0.0, 0.0, 0.0]
    assert [s.score for s in shares(9.0, tests, Scoring(), explained=True)] == [3.0, 3.0, 1.5]
    half = [dataclasses.replace(tests[2], passed=True), outcome("reference", False), weights]
    assert [s.score for s in shares(9.0, half, Scoring())] == [3.0, 0.0, 1.5]  # the outputs' gate: 1 of 2


def test_a_mistake_seen_only_in_texts_or_crashes_earns_no_floor():
    """Helper-60 (session 42): a crash's text or a structure check's can be written without computing
    anything (a typo's AttributeError on every call; zeros crashing under the course's weights beside a
    mutant's bias-less structure). The gate's floor needs the mistake seen in numbers (`seen`), and a
    failure where the code raised earns no floor; nor does any failure where nothing was computed (no comparison
    of the outputs passed, the mistake not seen in them: helper-79's A5, an FFN with a catalogued mistake's shapes
    whose forward raises kept the floor on its binding failures)."""
    crashed = dataclasses.replace(outcome("reference", False, misconception="typo"), crashed=True)
    tests = [crashed, outcome("structure", False, misconception="typo"), outcome("property", True)]
    assert [s.score for s in shares(7.0, tests, Scoring(), explained=True, seen=False)] == [0.0, 0.0, 0.0]
    assert [s.score for s in shares(7.0, tests, Scoring(), explained=True, seen=True)] == [0.0, 0.7, 0.7]
    assert [s.score for s in shares(7.0, tests, Scoring(), explained=True)] == [0.0, 0.7, 0.7]  # seen defaults to explained


def test_the_text_report_says_how_much_a_discounted_passed_test_counts():
    """A passed test the gate (or the degenerate cap) discounts showed a bare [PASS] in `course grade`'s text
    report, as if it counted in full (helper-56); the results JSON said so, the text did not."""
    from autograder.grading.results import format_result
    from autograder.grading.scoring import Result
    tests = [outcome("reference", True, function="test_a"), outcome("reference", False, function="test_b"),
             outcome("property", True)]
    comp = ComponentScore(COMP, 7.0, component_score(7.0, tests, Scoring()), tests)
    text = format_result(Result("02_attention_scoring", "s.py", [comp]))
    assert "[PASS] test_a" in text and "[FAIL] test_b" in text and "[PASS, counts 50%] property" in text, text
    assert "counts" not in format_result(Result("02_attention_scoring", "s.py", [comp]), counts_only=True)
