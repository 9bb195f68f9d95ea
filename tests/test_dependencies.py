"""The dependency rule, the better of two gradings (grading/dependencies.py `plan` and `settle`,
grading/session.py `BestOf`): a component built on a dependency the submission defines but that
fails a test of its own is graded with the course's version and with the student's, and keeps the
better score; the feedback says which version counted and why, and the grading that does not count
leaves nothing (outcomes, printed output) in the result."""
from __future__ import annotations

import datetime as dt
import inspect
import json
import re
from pathlib import Path

import pytest

from autograder import config
from autograder.grading import dependencies, session
from autograder.grading.dependencies import DependencyUse
from autograder.grading.results import format_result, graded_with, results_json
from autograder.grading.scoring import ComponentScore, Result
from autograder.integrations.nbgrader_bridge import component_feedback
from autograder.sandbox.bwrap import bwrap_available
from kit_helpers import reference_source

needs_bwrap = pytest.mark.skipif(not bwrap_available(), reason="bubblewrap is not usable here")

PE_FUNCTIONAL_DROPOUT = '''
class PositionalEncoding(nn.Module):
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout_p = dropout  # a float, applied with F.dropout: 05 accepts it, 06's contract test does not
        positions = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1)
        frequencies = torch.pow(10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        P = torch.zeros((1, max_len, num_hiddens))
        P[0, :, 0::2] = torch.sin(positions / frequencies)
        P[0, :, 1::2] = torch.cos(positions / frequencies[: num_hiddens // 2])
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        return F.dropout(X + self.P[:, : X.shape[1], :].to(X.device), self.dropout_p, self.training)
'''


def transformer_on_own_dropout() -> str:
    """The course's 06 whose decoder applies its own PositionalEncoding's functional dropout
    (`pos_encoding.dropout_p`, which the course's PositionalEncoding does not have)."""
    source = reference_source("06_transformer")
    own = "F.dropout(self.embedding(X) * math.sqrt(self.num_hiddens) + positions, self.pos_encoding.dropout_p, self.training)"
    source = source.replace("self.pos_encoding.dropout(self.embedding(X) * math.sqrt(self.num_hiddens) + positions)", own)
    assert own in source
    source = "\n".join(line for line in source.splitlines() if not line.startswith("from solutions"))
    return ("import torch.nn.functional as F\nfrom attention_support import *\n" + source + "\n"
            + PE_FUNCTIONAL_DROPOUT)


def decoder_on_own_attention() -> str:
    """The course's 03 decoder and 02 AdditiveAttention, both with the attribute `attn_weights` (the contract says
    `attention_weights`; an abbreviation, no typing slip, which the tests would read: testing.stored_spelling): the
    decoder reads its own attention's name."""
    from solutions import attention_scoring, bahdanau
    parts = [inspect.getsource(attention_scoring.AdditiveAttention).replace("self.attention_weights", "self.attn_weights"),
             inspect.getsource(bahdanau.Seq2SeqAttentionDecoder).replace(".attention.attention_weights",
                                                                          ".attention.attn_weights")]
    assert all("attn_weights)" in p or "attn_weights " in p for p in parts)
    return "from typing import Any, Optional\nimport torch\nfrom torch import nn\nfrom attention_support import *\n\n" + \
        "\n\n".join(parts)


def component(result: Result, name: str) -> ComponentScore:
    return next(c for c in result.components if c.name == name)


def use(comp: ComponentScore, name: str) -> DependencyUse:
    return next(u for u in comp.dependencies if u.name == name)


# ------------------------------------------------------------------ the rule itself (no sandbox)

def test_plan_replaces_a_failing_dependency_and_the_second_plan_keeps_the_students() -> None:
    course = config.default()
    a = course.assignment("02_attention_scoring")
    outcomes = {"sequence_mask": (4, 4), "masked_softmax": (9, 12)}.get
    first = dependencies.plan(course, a, "AdditiveAttention", {"sequence_mask", "masked_softmax"}, outcomes)
    own = dependencies.plan(course, a, "AdditiveAttention", {"sequence_mask", "masked_softmax"}, outcomes, own=True)
    assert [(u.name, u.student, u.reason) for u in first] == [
        ("sequence_mask", True, "passes its 4 tests"), ("masked_softmax", False, "yours fails 3 of its 12 tests")]
    assert [(u.name, u.student, u.reason) for u in own] == [
        ("sequence_mask", True, "passes its 4 tests"), ("masked_softmax", True, "fails 3 of its 12 tests")]
    undefined = dependencies.plan(course, a, "AdditiveAttention", set(), outcomes, own=True)
    assert [(u.student, u.defined) for u in undefined] == [(False, False), (False, False)]


@pytest.mark.parametrize("own_score, keeps_own", [(4.0, True), (1.5, False), (None, False)])
def test_settle_keeps_the_students_own_only_when_it_scores_strictly_more(own_score, keeps_own) -> None:
    first = [DependencyUse("sequence_mask", True, "passes its 4 tests", True),
             DependencyUse("masked_softmax", False, "yours fails 3 of its 12 tests", True)]
    own = [first[0], DependencyUse("masked_softmax", True, "fails 3 of its 12 tests", True)]
    uses, better = dependencies.settle(first, 1.5, [(own, own_score)], "AdditiveAttention", 4)
    assert better is keeps_own
    assert uses[0] == first[0]  # the same in both gradings: nothing to compare
    shown = dependencies.describe(uses)
    if keeps_own:
        assert uses[1].student
        assert shown.endswith("your masked_softmax (fails 3 of its 12 tests, but AdditiveAttention scores 4 of 4 "
                              "with yours, 1.5 with the course's)"), shown
    else:
        assert not uses[1].student
        mine = "no more" if own_score is None else "1.5"
        assert shown.endswith(f"the course's masked_softmax (yours fails 3 of its 12 tests, and AdditiveAttention "
                              f"scores 1.5 of 4 with the course's, {mine} with yours)"), shown


def test_describe_names_every_dependency_and_puts_the_undefined_together() -> None:
    uses = [DependencyUse("sequence_mask", False, "from attention_support", False, defined=False),
            DependencyUse("AddNorm", True, "passes its 9 tests", True),
            DependencyUse("masked_softmax", False, "from attention_support", False, defined=False),
            DependencyUse("PositionWiseFFN", True, "passes its 9 tests", True)]
    assert dependencies.describe(uses) == ("the course's sequence_mask, masked_softmax (from attention_support); "
                                           "your AddNorm (passes its 9 tests); your PositionWiseFFN (passes its 9 tests)")


# ------------------------------------------------------------------ when the second grading runs (in process)

def _count_regrades(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    graded: list[str] = []
    regrade = session.BestOf.regrade

    def counted(self: session.BestOf, name: str, *args: object) -> object:
        graded.append(name)
        return regrade(self, name, *args)

    monkeypatch.setattr(session.BestOf, "regrade", counted)
    return graded


def test_a_correct_submission_is_graded_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    graded = _count_regrades(monkeypatch)
    (tmp_path / "ok.py").write_text(reference_source("02_attention_scoring"))
    result = session.run_in_process("02_attention_scoring", tmp_path / "ok.py")
    assert result.score == result.max_score and graded == []


def test_nothing_to_gain_is_not_graded_again(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The course text's masked_softmax bug (fill 0): the attention classes get full marks with the
    course's masked_softmax, so they are not graded again with the student's."""
    graded = _count_regrades(monkeypatch)
    (tmp_path / "fill0.py").write_text(reference_source("02_attention_scoring").replace("value=fill", "value=0"))
    result = session.run_in_process("02_attention_scoring", tmp_path / "fill0.py")
    assert graded == []
    for name in ("AdditiveAttention", "DotProductAttention"):
        comp = component(result, name)
        assert comp.score == comp.points
        assert use(comp, "masked_softmax").reason.endswith(f"and {name} scores 4 of 4 with the course's, no more with yours")


def test_a_second_grading_stops_once_it_cannot_score_more(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The masked_softmax bug, and an AdditiveAttention that stores twice its weights: with the student's own
    masked_softmax it cannot beat the course's, so its second grading stops after the first failures."""
    reruns: list[str] = []
    again = session.SessionPlugin.again
    monkeypatch.setattr(session.SessionPlugin, "again", lambda self, item: reruns.append(item.nodeid) or again(self, item))
    source = reference_source("02_attention_scoring").replace("value=fill", "value=0")
    source = source.replace("return torch.bmm(self.dropout(self.attention_weights), values)  # (B, Q, v)",
                            "out = torch.bmm(self.dropout(self.attention_weights), values)  # (B, Q, v)\n"
                            "        self.attention_weights = 2 * self.attention_weights\n"
                            "        return out", 1)
    (tmp_path / "both.py").write_text(source)
    result = session.run_in_process("02_attention_scoring", tmp_path / "both.py")
    comp = component(result, "AdditiveAttention")
    assert 0 < len(reruns) < len(comp.tests)
    assert not use(comp, "masked_softmax").student
    assert use(comp, "masked_softmax").reason.endswith("no more with yours"), use(comp, "masked_softmax")


STUBS_02 = """
def sequence_mask(X, valid_len, value=0):
    raise NotImplementedError()


def masked_softmax(X, valid_lens):
    raise NotImplementedError()


class AdditiveAttention:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError()


class DotProductAttention:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError()
"""


@needs_bwrap
def test_unfinished_code_is_graded_once(zygote, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Every component a stub: its dependencies fail, but no version of them makes its own stub pass."""
    graded = _count_regrades(monkeypatch)
    (tmp_path / "stubs.py").write_text(STUBS_02)
    result = session.grade_file(zygote, "02_attention_scoring", tmp_path / "stubs.py")
    assert result.score == 0 and graded == []
    assert "the course's masked_softmax (yours fails" in format_result(result)


# ------------------------------------------------------------------ real learners' patterns (sandbox)

@needs_bwrap
def test_06_keeps_the_decoder_that_reads_its_own_positional_encodings_dropout(zygote, tmp_path: Path) -> None:
    """PositionalEncoding with functional dropout fails 05's unscored contract test "for 06"; the decoder
    applies `pos_encoding.dropout_p` itself. With the course's PositionalEncoding it crashes (0 of 6:
    18 of 24 before the rule kept the better); with its own it is correct."""
    (tmp_path / "06.py").write_text(transformer_on_own_dropout())
    result = session.grade_file(zygote, "06_transformer", tmp_path / "06.py")
    assert {c.name: c.score for c in result.components} == {c.name: c.points for c in result.components}
    decoder = component(result, "TransformerDecoder")
    pe = use(decoder, "PositionalEncoding")
    assert pe.student and pe.reason.startswith("fails 1 of its ") and pe.reason.endswith(
        "but TransformerDecoder scores 6 of 6 with yours, 0 with the course's"), pe
    encoder = component(result, "TransformerEncoder")  # full marks with the course's: nothing to compare
    assert not use(encoder, "PositionalEncoding").student
    text = format_result(result)
    assert "your PositionalEncoding (fails 1 of its" in text
    assert "the course's PositionalEncoding (yours fails 1 of its" in text
    assert "MultiHeadAttention (from attention_support)" in text  # an earlier assignment's, not defined here
    report = results_json(result)
    stored = report["extra_data"]["components"]["TransformerDecoder"]["dependencies"]
    assert {"name": "PositionalEncoding", "student": True, "reason": pe.reason, "defined": True} in stored
    # nbgrader's graded cell says the same as the results file and the text report
    line = f"graded with {dependencies.describe(decoder.dependencies)}"
    assert graded_with(stored) == line[len("graded with "):] and line in text
    assert line in component_feedback(report, "TransformerDecoder", [])


@needs_bwrap
def test_03_keeps_the_decoder_that_reads_its_own_attentions_attribute(zygote, tmp_path: Path) -> None:
    """AdditiveAttention stores `attn_weights` (it fails 02's tests that read `attention_weights`),
    and the decoder reads that name: with the course's AdditiveAttention it crashed (0.38 of 10)."""
    (tmp_path / "03.py").write_text(decoder_on_own_attention())
    result = session.grade_file(zygote, "03_bahdanau", tmp_path / "03.py")
    decoder = component(result, "Seq2SeqAttentionDecoder")
    assert decoder.score == 10
    attention = use(decoder, "AdditiveAttention")
    assert attention.student and not attention.same_assignment
    assert re.search(r"but Seq2SeqAttentionDecoder scores 10 of 10 with yours, 0(\.\d+)? with the course's\)$",
                     attention.describe()), attention
    assert "graded with the course's sequence_mask, masked_softmax (from attention_support); your AdditiveAttention (fails" \
        in format_result(result)


LEAKS_THEN_COMPUTES = '''
import math, sys
import torch
from torch import nn


def reference_in_job():
    """The course's masked_softmax, when the child was handed it (a local of the child's loop)."""
    frame = sys._getframe()
    while frame is not None:
        job = frame.f_locals.get("job")
        if isinstance(job, dict):
            for source in job.get("modules", {}).values():
                if "def masked_softmax" in source:
                    return source
        frame = frame.f_back
    return ""


def sequence_mask(X, valid_len, value=0):
    keep = torch.arange(X.shape[1], device=X.device).unsqueeze(0) < valid_len.unsqueeze(1)
    return X.masked_fill(~keep, value)


def masked_softmax(X, valid_lens):
    return torch.softmax(X, dim=-1)  # broken: ignores valid_lens


def own_masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    lens = valid_lens if valid_lens.dim() == 2 else valid_lens[:, None].expand(X.shape[:2])
    keep = torch.arange(X.shape[-1], device=X.device) < lens[..., None]
    return torch.softmax(X.masked_fill(~keep, -1e6), dim=-1)


class AdditiveAttention(nn.Module):
    """Prints and raises the course's code where it has it; computes correctly on its own otherwise."""
    def __init__(self, key_size, query_size, num_hiddens, dropout, **kwargs):
        super().__init__(**kwargs)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        leaked = reference_in_job()
        if leaked:
            print(leaked)
            raise ValueError(leaked[-1900:])
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        self.attention_weights = own_masked_softmax(self.w_v(features).squeeze(-1), valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class DotProductAttention(nn.Module):
    """Prints the course's code where it has it, and computes correctly with what it is given."""
    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        print(reference_in_job())
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(queries.shape[-1])
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''


@needs_bwrap
def test_the_better_grading_never_shows_the_course_code_the_other_held(zygote, tmp_path: Path) -> None:
    """Before the due date. AdditiveAttention's first grading (the course's masked_softmax) prints that
    code and fails; its second (its own) scores 4: the second counts, is shown in full, and nothing of
    the first (outcomes, printed code) reaches the student. DotProductAttention gets full marks with
    the course's masked_softmax: that grading counts, and its details are withheld."""
    from solutions import attention_scoring
    course = config.default()
    due = course.assignment("02_attention_scoring").due
    assert due is not None
    (tmp_path / "02.py").write_text(LEAKS_THEN_COMPUTES)
    result = session.grade_file(zygote, "02_attention_scoring", tmp_path / "02.py",
                                now=course.deadlines.local(due - dt.timedelta(days=1)))
    reference = {line.strip() for line in inspect.getsource(attention_scoring.masked_softmax).splitlines()
                 if len(line.strip()) >= 25}
    visible = json.dumps(results_json(result)) + format_result(result)
    assert reference and not [line for line in reference if line in visible]
    additive, dot = component(result, "AdditiveAttention"), component(result, "DotProductAttention")
    assert additive.score == 4 and not additive.withheld and use(additive, "masked_softmax").student
    assert "but AdditiveAttention scores 4 of 4 with yours, 0 with the course's" in use(additive, "masked_softmax").reason
    assert dot.score == 4 and dot.withheld and not use(dot, "masked_softmax").student
    assert "DotProductAttention was graded with the course's masked_softmax (yours fails" in dot.withheld


def test_a_dependency_the_course_s_class_cannot_be_called_as_stays_the_student_s_beside_a_replaced_one(
        tmp_path: Path) -> None:
    """Helper-69's F6: an EncoderBlock building the learner's own two-argument FFN (`PositionWiseFFN(d_model, d_ff)`,
    no output size, which fails its tests) beside an AddNorm without its residual: with the course's FFN and
    AddNorm the block's own call `PositionWiseFFN(ffn_num_input, ffn_num_hiddens)` raised "missing ffn_num_outputs"
    on every test, and with the learner's own both the AddNorm's mistake failed every comparison: 0 of 4 for a
    correct block. A dependency the submission's code calls in a way the course's cannot take
    (signatures.course_cannot_take) stays the student's, the others are still replaced, and the note says why."""
    source = reference_source("06_transformer")
    ffn = source[source.index("class PositionWiseFFN"):source.index("class AddNorm")]
    source = source.replace(ffn, "class PositionWiseFFN(nn.Module):\n    def __init__(self, d_model, d_ff):\n"
                            "        super().__init__()\n        self.dense1 = nn.Linear(d_model, d_ff)\n"
                            "        self.relu = nn.ReLU()\n        self.dense2 = nn.Linear(d_ff, d_model)\n\n"
                            "    def forward(self, X):\n        return self.dense2(self.relu(self.dense1(X)))\n\n\n")
    assert source.count("PositionWiseFFN(ffn_num_input, ffn_num_hiddens, num_hiddens)") == 2
    source = source.replace("PositionWiseFFN(ffn_num_input, ffn_num_hiddens, num_hiddens)",
                            "PositionWiseFFN(ffn_num_input, ffn_num_hiddens)")
    assert source.count("return self.ln(self.dropout(Y) + X)") == 1
    source = source.replace("return self.ln(self.dropout(Y) + X)", "return self.ln(self.dropout(Y))")  # no residual
    path = tmp_path / "06_transformer.py"
    path.write_text(source)
    result = session.run_in_process("06_transformer", path, components=["PositionWiseFFN", "AddNorm", "EncoderBlock"])
    block = component(result, "EncoderBlock")
    assert block.score == block.points, [t.output for t in block.tests if not t.passed][:1]
    assert not use(block, "AddNorm").student
    ffn_use = use(block, "PositionWiseFFN")
    assert ffn_use.student and ffn_use.reason.endswith(
        "but your code calls it as PositionWiseFFN(ffn_num_input, ffn_num_hiddens), which the course's PositionWiseFFN "
        "cannot take"), ffn_use.reason
    # the FFN itself: called by name in the places a call by position gives, its output size left out and said so
    ffn_score = component(result, "PositionWiseFFN")
    assert 0.25 * ffn_score.points < ffn_score.score < 0.5 * ffn_score.points


def test_a_helper_method_named_like_a_contract_function_is_the_student_s_beside_a_replaced_dependency() -> None:
    """Helper-70's l11: a correct MultiHeadAttention whose helper methods `transpose_qkv(self, X)` and
    `transpose_output(self, X)` only reshape (another meaning than the contract's functions of those names), beside
    its own masked_softmax that fails 02's tests on 2-D lengths. The first grading stood the course's
    `transpose_qkv(X, num_heads)` in for the method (0 of 6), the second kept the broken masked_softmax (1.23 of 6),
    and the combination that works (the course's masked_softmax, the class's own methods) was never tried. A
    third grading tries it: the course's function stands in for a student's method only where it does better."""
    path = Path(__file__).resolve().parent / "learners" / "mha_private_reshape_helpers.py"
    result = session.run_in_process("04_multihead", path, components=["transpose_qkv", "MultiHeadAttention"])
    mha = component(result, "MultiHeadAttention")
    assert mha.score == mha.points, [t.output for t in mha.tests if not t.passed][:1]
    helper = use(mha, "transpose_qkv")
    assert helper.student and helper.reason.startswith(
        "fails 10 of its 10 tests; your code calls it as its own method MultiHeadAttention.transpose_qkv, but "
        "MultiHeadAttention scores 6 of 6 with yours, 0 with the course's"), helper.reason
    assert not use(mha, "masked_softmax").student  # the failing function stays the course's in the grading kept


def test_settle_keeps_the_first_of_the_later_gradings_that_scores_strictly_more() -> None:
    first = [DependencyUse("masked_softmax", False, "yours fails 3 of its 12 tests", True),
             DependencyUse("transpose_qkv", False, "yours fails 2 of its 2 tests", True)]
    own = [DependencyUse("masked_softmax", True, "fails 3 of its 12 tests", True),
           DependencyUse("transpose_qkv", True, "fails 2 of its 2 tests", True)]
    mixed = [first[0], own[1]]
    uses, later = dependencies.settle(first, 1.0, [(own, 2.0), (mixed, 5.0)], "MultiHeadAttention", 6)
    assert later and uses[0] == first[0] and uses[1].student
    assert uses[1].reason.endswith("but MultiHeadAttention scores 5 of 6 with yours, 1 with the course's")
    uses, later = dependencies.settle(first, 1.0, [(own, 5.0), (mixed, 5.0)], "MultiHeadAttention", 6)
    assert later and [u.student for u in uses] == [True, True]  # a tie keeps the earlier
    uses, later = dependencies.settle(first, 5.0, [(own, None), (mixed, 5.0)], "MultiHeadAttention", 6)
    assert not later and uses[1].reason.endswith("scores 5 of 6 with the course's, no more with yours")


@needs_bwrap
def test_the_course_s_block_standing_in_answers_to_the_student_s_names_for_its_submodules(
        zygote, tmp_path: Path) -> None:
    """Helper-72's F1 (xdedm7/NLP_learning): the book's TransformerDecoder reads `blk.attention_1` of the learner's
    own DecoderBlock, which fails its tests (no causal mask here). With the course's block standing in, that read
    raised AttributeError on every test; with the learner's own block every comparison failed: 0 of 6. The
    course's class answers to the student's names for its submodules, matched by the class that builds them and
    their place (signatures.submodule_aliases): the decoder gets full marks on both paths."""
    source = reference_source("06_transformer")
    source = re.sub(r"\battention([12])\b", r"attention_\1", source)  # the block's and the decoder's reads
    causal = "X2 = self.attention_1(X, key_values, key_values, dec_valid_lens)"
    assert causal in source and "blk.attention_1.attention.attention_weights" in source
    source = source.replace(causal, "X2 = self.attention_1(X, key_values, key_values, None)")  # not causal
    path = tmp_path / "06_transformer.py"
    path.write_text(source)
    results = [session.grade_file(zygote, "06_transformer", path),
               session.run_in_process("06_transformer", path, components=["DecoderBlock", "TransformerDecoder"])]
    for result in results:
        decoder = component(result, "TransformerDecoder")
        assert decoder.score == decoder.points, [t.output for t in decoder.tests if not t.passed][:1]
        assert not use(decoder, "DecoderBlock").student
        assert component(result, "DecoderBlock").score < component(result, "DecoderBlock").points


@needs_bwrap
def test_the_course_s_class_stands_in_for_one_that_takes_no_dropout(zygote, tmp_path: Path) -> None:
    """helper-75's D7 (code-index id 19700238154): the learner's AddNorm takes no dropout and has a small mistake
    of its own (here: its own eps); its blocks call `AddNorm(norm_shape)`, which the course's AddNorm could not
    take, so the learner's AddNorm stayed in every block and each block inherited its mistake: a right
    EncoderBlock kept 0.53 of 4, a right DecoderBlock 0 of 6. A contract parameter the student's class leaves out
    now gets its neutral value in the course's class standing in (procedures.LEFT_OUT: no dropout), on both paths."""
    source = reference_source("06_transformer")
    own = ("    def __init__(self, normalized_shape: Any, dropout: float, **kwargs: object) -> None:\n"
           "        super().__init__(**kwargs)\n        self.dropout = nn.Dropout(dropout)\n"
           "        self.ln = nn.LayerNorm(normalized_shape)\n")
    assert own in source and source.count("AddNorm(norm_shape, dropout)") == 5
    source = source.replace(own, "    def __init__(self, normalized_shape: Any) -> None:\n        super().__init__()\n"
                                 "        self.dropout = nn.Dropout(0.0)\n"
                                 "        self.ln = nn.LayerNorm(normalized_shape, eps=1e-3)\n")
    path = tmp_path / "06_transformer.py"
    path.write_text(source.replace("AddNorm(norm_shape, dropout)", "AddNorm(norm_shape)"))
    results = [session.grade_file(zygote, "06_transformer", path),
               session.run_in_process("06_transformer", path, components=["AddNorm", "EncoderBlock"])]
    for result in results:
        assert component(result, "AddNorm").score < component(result, "AddNorm").points
        block = component(result, "EncoderBlock")
        assert block.score == block.points, [t.output for t in block.tests if not t.passed][:1]
        assert not use(block, "AddNorm").student


def test_a_dependency_graded_as_the_student_s_own_is_found_under_their_spelling(tmp_path: Path) -> None:
    """helper-75's D5: a TransformerDecoder's training test builds the student's TransformerEncoder, which the plan
    keeps as theirs ("passes its tests"); spelled `transformerencoder`, it was bound in its own grading only, so
    the decoder lost its training test to the encoder's name ("`TransformerEncoder` is not defined in your
    submission"). Every dependency graded as the student's is bound under the contract's name as the component is."""
    source = reference_source("06_transformer")
    renamed = re.sub(r"\bTransformerEncoder\b", "transformerencoder", source)
    scores = []
    for name, text in (("as_written", source), ("renamed", renamed)):
        path = tmp_path / f"{name}.py"
        path.write_text(text)
        result = session.run_in_process("06_transformer", path, components=["TransformerDecoder"])
        decoder = next(c for c in result.components if c.name == "TransformerDecoder")
        assert [t.output for t in decoder.tests if not t.passed] == [], name
        assert [u.student for u in decoder.dependencies if u.name == "TransformerEncoder"] == [True], name
        scores.append(decoder.score)
    assert scores[0] == scores[1] == 6.0
