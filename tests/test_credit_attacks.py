"""White-box attacks on the credit rules (helper-60, session 42), kept as bounded fixtures.

Each file in tests/hostile/credit/ redefines components of one assignment (its docstring says the attack
and what the grader must do) and is composed after the course's reference code of that assignment, as
the zoo composes its entries. Graded in-process (where the student's code runs changes no score: the
scoring and the diagnosis are the same code), the attacked components may keep at most the degenerate
share (course.yml `scoring.degenerate_share`, 10%) of their points:
- credit for anything but what a component returns (property and structure tests, stored attention
  weights, the positional-encoding table) is in proportion to the comparisons of its outputs passed
  (scoring.shares);
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
    "bahdanau_right_weights_ones_logits": ("03_bahdanau", ["Seq2SeqAttentionDecoder"]),
    "kernel_regression_ones": ("01_kernel_regression", ["nadaraya_watson", "NWKernelRegression"]),
    "mha_zeros_forged_no_bias": ("04_multihead", ["MultiHeadAttention"]),
    "encblock_one_crash_forged_typo": ("06_transformer", ["EncoderBlock"]),
    "encblock_constant_forged_typo": ("06_transformer", ["EncoderBlock"]),
    "decoder_zeros_forged_shared_block": ("06_transformer", ["TransformerDecoder"]),
    "mha_zeros_until_weights_change": ("04_multihead", ["MultiHeadAttention"]),
    "encblock_skip_until_weights_change": ("06_transformer", ["EncoderBlock"]),
}

#: Attacks the grader does not stop yet: attack file -> why (a strict xfail, so that a fix makes it fail until
#: it leaves this list).
KNOWN = {
    name: ("the property tests run the student's module with its own initial weights and the reference comparisons "
           "with the course's loaded: code that tells the two apart (its parameters changed since construction) "
           "passes both, and with every comparison passed the gate pays the property tests in full. The fix: run "
           "the property tests on a module holding loaded weights too (a copy_weights per example; it changes what "
           "they meet, so the zoo and signatures.json are regenerated)")
    for name in ("mha_zeros_until_weights_change", "encblock_skip_until_weights_change")
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
