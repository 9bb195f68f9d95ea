"""White-box attacks on the credit rules (helper-60, session 42), kept as bounded fixtures.

Each file in tests/hostile/credit/ redefines components of one assignment (its docstring says the attack
and what the grader must do) and is composed after the course's reference code of that assignment, as
the zoo composes its entries. Graded in-process (where the student's code runs changes no score: the
scoring and the diagnosis are the same code), the attacked components may keep at most the degenerate
share (course.yml `scoring.degenerate_share`, 10%) of their points:
- credit for anything but what a component returns (property and structure tests, stored attention
  weights, the positional-encoding table) is in proportion to the comparisons of its outputs passed
  (scoring.shares);
- the property tests run the module with the course's weights loaded, as the comparisons do (each suite's
  `loaded`), not with its own initial weights;
- the floor of one named mistake needs that mistake seen in numbers the code computed, not in a crash's
  text or a structure check's (Diagnosis.seen_in_values).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from autograder import config
from autograder.grading import session
from kit_helpers import reference_source

CREDIT = Path(__file__).resolve().parent / "hostile" / "credit"

#: attack file -> (assignment, the components it attacks)
CASES = {
    "pe_forward_ignores_x": ("05_positional_encoding", ["PositionalEncoding"]),
    "pe_mistaken_table_forward_raises": ("05_positional_encoding", ["PositionalEncoding"]),  # helper-64
    "pe_mistaken_table_zero_forward": ("05_positional_encoding", ["PositionalEncoding"]),  # helper-64
    "attention_right_weights_ones_output": ("02_attention_scoring", ["AdditiveAttention", "DotProductAttention"]),
    "dot_ones_weights_as_softmax_over_queries": ("02_attention_scoring", ["DotProductAttention"]),  # helper-70
    "masked_softmax_never_masks": ("02_attention_scoring", ["masked_softmax"]),  # helper-70
    "bahdanau_right_weights_ones_logits": ("03_bahdanau", ["Seq2SeqAttentionDecoder"]),
    "kernel_regression_ones": ("01_kernel_regression", ["nadaraya_watson", "NWKernelRegression"]),
    "mha_zeros_forged_no_bias": ("04_multihead", ["MultiHeadAttention"]),
    "encblock_one_crash_forged_typo": ("06_transformer", ["EncoderBlock"]),
    "encblock_constant_forged_typo": ("06_transformer", ["EncoderBlock"]),
    "decoder_zeros_forged_shared_block": ("06_transformer", ["TransformerDecoder"]),
    "mha_zeros_until_weights_change": ("04_multihead", ["MultiHeadAttention"]),
    "encblock_skip_until_weights_change": ("06_transformer", ["EncoderBlock"]),
    # helper-79 (session 51): the table read after forward rewrote it, by mode, built from the first input; a named
    # mistake's floor beside code that never computes (a 2-D table, an FFN and an MHA whose forward raises)
    "pe_launder_table": ("05_positional_encoding", ["PositionalEncoding"]),
    "pe_mode_table": ("05_positional_encoding", ["PositionalEncoding"]),
    "pe_input_built_table": ("05_positional_encoding", ["PositionalEncoding"]),
    "pe_2d_forward_raises": ("05_positional_encoding", ["PositionalEncoding"]),
    "ffn_never_computes": ("06_transformer", ["PositionWiseFFN"]),
    "mha_never_computes": ("04_multihead", ["MultiHeadAttention"]),
}

#: Attacks the grader does not stop yet: attack file -> why (a strict xfail, so that a fix makes it fail until
#: it leaves this list).
KNOWN = {
    name: ("the property tests now load the course's weights as the comparisons do (helper-63), so this module "
           "computes correctly in every test the grader runs and keeps full marks, as its own correct code does; "
           "its degenerate behaviour shows only with its own initial weights, which only the public suite's shape "
           "checks use. Stopping it needs a comparison on the module's own initial weights (the course's model "
           "loaded with them, T.bound_state), which no suite has")
    for name in ("mha_zeros_until_weights_change", "encblock_skip_until_weights_change")
} | {
    "pe_2d_forward_raises": ("a right table stored 2-D names the catalogue's pe_2d_table in the shape test's text, and "
                             "a named mistake's side outputs are judged on their own (scoring.shares `own`), so the "
                             "table keeps its tests beside a forward that raises (2.22 of 6). Requiring computed outputs "
                             "there (helper-79's A8) also took the table's credit from the realistic pe_batch_axis "
                             "(P sliced by the batch size: 37% -> 0), so it was reverted; stopping it needs the "
                             "mistake's explanation to come from values"),
}


def _case(name: str) -> object:
    return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=KNOWN[name])) if name in KNOWN else name


def test_every_attack_file_has_a_case() -> None:
    assert {p.stem for p in CREDIT.glob("*.py")} == set(CASES)


@pytest.mark.parametrize("name", [_case(n) for n in sorted(CASES)])
def test_an_attack_on_the_credit_rules_keeps_at_most_the_degenerate_share(name: str, tmp_path: Path) -> None:
    assignment, attacked = CASES[name]
    path = tmp_path / f"{name}.py"
    path.write_text(reference_source(assignment) + "\n\n" + (CREDIT / f"{name}.py").read_text())
    result = session.run_in_process(assignment, path, components=attacked)
    share = config.default().scoring.degenerate_share
    kept = {c.name: c.score for c in result.components if c.name in attacked}
    assert set(kept) == set(attacked)
    for comp in result.components:
        if comp.name in attacked:
            assert comp.score <= share * comp.points + 1e-9, (comp.name, comp.score, comp.points)


#: A MultiHeadAttention whose own initial W_o is zero (every output 0 with its own weights, so every invariance
#: holds trivially) and whose 2-D valid_lens handling is wrong (each batch item gets another item's lengths).
_OWN_ZERO_OUTPUT_2D_BUG = '''
import torch

_Course = MultiHeadAttention


class MultiHeadAttention(_Course):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        torch.nn.init.zeros_(self.W_o.weight)

    def forward(self, queries, keys, values, valid_lens=None):
        if valid_lens is not None and valid_lens.dim() == 2:
            valid_lens = valid_lens.flip(0)
        return super().forward(queries, keys, values, valid_lens)
'''


def test_property_tests_run_with_the_course_s_weights_loaded(tmp_path: Path) -> None:
    """The review's point behind the two KNOWN attacks (helper-63): with its own initial weights a module with a real
    bug may return zeros and satisfy every property trivially. The property tests now run it with the course's
    weights loaded, as the comparisons do (04's `loaded`), so the 2-D valid_lens bug fails the two 2-D property
    tests (before: both passed, 3.67 of 6; now 3.38), while a property the code has still passes."""
    path = tmp_path / "own_zero_output.py"
    path.write_text(reference_source("04_multihead") + "\n\n" + _OWN_ZERO_OUTPUT_2D_BUG)
    result = session.run_in_process("04_multihead", path, components=["MultiHeadAttention"])
    outcome = {t.function: t.passed for c in result.components if c.name == "MultiHeadAttention" for t in c.tests}
    assert not outcome["test_mha_2d_valid_lens_per_query"] and not outcome["test_mha_1d_and_2d_valid_lens_agree"]
    assert outcome["test_mha_permuting_queries_permutes_outputs"] and outcome["test_mha_each_batch_item_uses_its_own_valid_length"]


def test_a_side_output_never_computed_earns_no_floor_from_a_catalogued_mistake_s_shape(tmp_path: Path) -> None:
    """Helper-82's F8: nadaraya_watson computes y_hat and returns zeros as its weights, in the (keys, queries) shape of
    the catalogue's nw_weights_keys_by_queries. Its weights tests failed with that mistake's shape text, the diagnosis
    named it, and each failed test kept the floor: 2.84 of 4, against 1.89 for returning y_hat alone. A text can be
    written without computing: a side output's test (the weights' parts) earns the floor only where it failed on values
    the code computed or the mistake was seen in values elsewhere (scoring.shares): 2.21. Left: the whole tests about
    the weights (their shape, rows summing to one) still earn it on the text, as an output's own shape mistake does
    (an FFN built for the wrong output size keeps its floor where some comparison passed)."""
    source = reference_source("01_kernel_regression")
    old = "    return y_hat, attention_weights\n"
    assert source.count(old) == 1
    kept = []
    for name, new in [("zeros_keys_by_queries", "    return y_hat, torch.zeros(keys.shape[0], queries.shape[0], dtype=y_hat.dtype)\n"),
                      ("y_hat_alone", "    return y_hat\n")]:
        path = tmp_path / f"{name}.py"
        path.write_text(source.replace(old, new))
        result = session.run_in_process("01_kernel_regression", path, components=["nadaraya_watson"])
        kept.append(next(c.score for c in result.components if c.name == "nadaraya_watson"))
    assert kept[1] <= kept[0] < 2.3 and kept[1] < 2.0, kept
