"""Measure the diagnosis on the catalogue, and generate its symptom signatures.

    python -m autograder.catalogue.evaluate                     # all assignments: the measurement
    python -m autograder.catalogue.evaluate 02_attention_scoring --signatures   # regenerate signatures.json
    python -m autograder.catalogue.evaluate --update-docs       # docs/diagnosis-measured.md's table

Each catalogue entry is graded in-process (trusted code; a mistaken signature called by name as in
the sandbox: `signatures.adapted`). For mutants: does the feedback name the
mutant's own misconception (its family), does it name any other (a wrong diagnosis), and how many
failing tests carry no diagnosis at all; for correct alternatives: no diagnosis may ever appear.
"""
from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from autograder import config as config_mod
from autograder import generated_docs
from autograder.catalogue import diagnosis, index, zoo
from autograder.grading import scoring, signatures
from autograder.grading.submission import read_cells
from autograder.selfcheck.symptoms import SIGNATURE_TABLES

if TYPE_CHECKING:
    from autograder.grading.scoring import Result


@dataclass
class Tally:
    mutants: int = 0
    own: int = 0  # mutants whose feedback names their own family
    wrong: int = 0  # families named that the mutant does not have
    failing: int = 0  # failing tests of the mutants' own components
    unhinted: int = 0  # ... that carry no diagnosis
    correct: int = 0
    correct_diagnosed: int = 0  # correct alternatives with any diagnosis (must be 0)
    misses: list[str] = field(default_factory=list)

    def row(self, name: str) -> str:
        share = self.own / self.mutants if self.mutants else 1.0
        hintless = self.unhinted / self.failing if self.failing else 0.0
        return (f"| {name} | {self.mutants} | {self.own} ({share:.0%}) | {self.wrong} | "
                f"{self.unhinted} of {self.failing} ({hintless:.0%}) | {self.correct_diagnosed} of {self.correct} |")


def grade(entries: Iterable[index.Entry], workdir: Path) -> list[tuple[index.Entry, Result]]:
    from autograder.grading.session import run_in_process
    return [(e, run_in_process(e.assignment, zoo.compose(e, workdir))) for e in entries]


#: The catalogue's families of a parameter order mistake, by the kind of callable; the signature finding
#: names them ("signature: your AdditiveAttention.forward takes (keys, values, queries, valid_lens); the
#: contract is ..."), shown on the component's first failed test (signatures.attach).
ORDER_FAMILIES = {"constructor": "constructor-argument-order", "method": "forward-argument-order"}


def named_families(result: Result) -> set[str]:
    """The families the feedback names, with the signatures as they are now (what grading would name)."""
    named = set()
    found = signatures.mismatches(config_mod.default(), read_cells(result.submission))
    for comp in result.components:
        failed = [t for t in comp.tests if not t.passed]
        if failed:
            named |= {ORDER_FAMILIES[m.kind] for m in found.get(comp.name, []) if m.misplaced and m.kind in ORDER_FAMILIES}
        if signatures.misleading(found, comp.name):
            continue  # the grader names no misconception there (signatures.attach)
        passed = scoring.outputs_agreed(comp.tests)
        evidence = [set(t.replayed) | diagnosis.signature_candidates(comp.name, t.function, t.output) for t in failed]
        ruled_out = diagnosis.contradicted(comp.name, set().union(*evidence), passed) if evidence else set()
        concluded, _ = diagnosis.conclude_mistakes([e - ruled_out for e in evidence],
                                                   [set(t.replayed) - ruled_out for t in failed],
                                                   [t.replay_ran for t in failed])
        named |= {family for family in concluded if diagnosis.explain(comp.name, family)}
    return named


def measure(graded: list[tuple[index.Entry, Result]]) -> Tally:
    tally = Tally()
    for entry, result in graded:
        components = result.components
        named = named_families(result)
        if entry.kind == "correct":
            tally.correct += 1
            tally.correct_diagnosed += bool(named)
            continue
        if entry.kind != "mutant":
            continue
        own = diagnosis.family_of(entry)
        comp = next(c for c in components if c.name == entry.component)
        failing = [t for t in comp.tests if not t.passed]
        tally.mutants += 1
        tally.own += own in named
        tally.wrong += len(named - {own})
        tally.failing += len(failing)
        family = own if own in named else ""
        tally.unhinted += sum(not (family and (family in (set(t.replayed) | diagnosis.signature_candidates(
            comp.name, t.function, t.output)) or t.function == signatures.signature_test(comp.name))) for t in failing)
        if own not in named:
            tally.misses.append(entry.id)
    return tally


Table = dict[str, dict[str, list[str]]]


def signature_table(graded: list[tuple[index.Entry, Result]],
                    digest: Callable[[str], str] = diagnosis.text_hash) -> Table:
    """{"<component>::<test function>": {digest of the failure text: [entry ids]}} from mutants' failures
    (`digest`: text_hash, or where_hash for the table without measured values)."""
    table: dict[str, dict[str, set[str]]] = {}
    for entry, result in graded:
        if entry.kind != "mutant":
            continue
        for comp in result.components:
            if comp.name != entry.component:
                continue
            for test in comp.tests:
                if test.function == signatures.signature_test(comp.name):
                    continue  # a signature mistake is said by its own finding (signatures.attach), once
                if not test.passed and test.output:
                    key = f"{comp.name}::{test.function}"
                    table.setdefault(key, {}).setdefault(digest(test.output), set()).add(entry.id)
    return {k: {h: sorted(f) for h, f in sorted(v.items())} for k, v in sorted(table.items())}


def write_signatures(graded: list[tuple[index.Entry, Result]], assignments: list[str]) -> None:
    """Replace the signatures of `assignments`' components in signatures.json (both tables: `tests`, the
    failure texts' hashes, and `where`, those hashes without measured values), keep the others."""
    import fcntl
    course = config_mod.default()
    mine = {c.name for a in assignments for c in course.assignment(a).components}
    with open(diagnosis.SIGNATURES.with_suffix(".lock"), "w") as lock:  # runs for several assignments at once
        fcntl.flock(lock, fcntl.LOCK_EX)
        tables = {}
        for name, digest in SIGNATURE_TABLES.items():
            current = diagnosis.signature_tables().get(name, {})
            kept = {k: v for k, v in current.items() if k.split("::")[0] not in mine}
            kept.update(signature_table(graded, digest))
            tables[name] = dict(sorted(kept.items()))
        diagnosis.SIGNATURES.write_text(json.dumps({"version": 3, **tables}, indent=1) + "\n")
        diagnosis.signature_tables.cache_clear()


def update_docs(rows: list[str]) -> None:
    """Write the measurement into its page of the documentation site."""
    header = ["| assignment | mutants | feedback names its own misconception | wrong diagnoses | "
              "failing tests with no diagnosis | correct alternatives diagnosed |", "|---|---|---|---|---|---|"]
    generated_docs.write_between_markers(generated_docs.DIAGNOSIS_MEASURED, "diagnosis-table", "\n".join(header + rows))


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*")
    parser.add_argument("--signatures", action="store_true", help="regenerate signatures.json for these assignments")
    parser.add_argument("--update-docs", action="store_true",
                        help="write the measurement into docs/diagnosis-measured.md")
    ns = parser.parse_args(argv)
    course = config_mod.default()
    ids = ns.assignments or [a.id for a in course.assignments]
    workdir = Path(tempfile.mkdtemp())
    rows, total = [], Tally()
    for assignment_id in ids:
        graded = grade([e for e in index.entries(assignment_id) if e.kind in ("mutant", "correct")], workdir)
        if ns.signatures:  # measured below with the new signatures, from the same grading
            write_signatures(graded, [assignment_id])
        tally = measure(graded)
        rows.append(tally.row(f"`{assignment_id}`"))
        print(rows[-1], flush=True)
        for miss in tally.misses:
            print(f"    not named: {miss}")
        for name in ("mutants", "own", "wrong", "failing", "unhinted", "correct", "correct_diagnosed"):
            setattr(total, name, getattr(total, name) + getattr(tally, name))
    rows.append(total.row("all"))
    print(rows[-1])
    if ns.update_docs:
        update_docs(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
