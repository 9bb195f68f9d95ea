"""Every CSV file the kit writes (grades.csv, the Canvas import, the class report's tables) goes
through `write_csv`, so that no cell a student controls becomes a formula in a spreadsheet.

A spreadsheet program evaluates a cell that starts with `=`, `+`, `-` or `@` (and, in some
programs, a tab or carriage return before one of them) as a formula: a student name, a file name
or an exception message such as `=HYPERLINK("http://...", "click")` would run in a TA's
spreadsheet. Such a text cell is written with a leading apostrophe, the OWASP recommendation that
every spreadsheet shows as plain text. Numbers (Python numbers, or text that is exactly a decimal
number such as "-2.5", a late penalty) are left alone so that they stay numbers.
"""
from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

#: The first characters that make a spreadsheet read a cell as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def safe_cell(value: Any) -> Any:
    """The cell as written: text that a spreadsheet would run as a formula gets a leading apostrophe."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def write_csv(path: Path, header: Sequence[Any], rows: Iterable[Sequence[Any]]) -> Path:
    """Write a header and rows (UTF-8, csv module quoting), every cell through `safe_cell`."""
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow([safe_cell(c) for c in header])
        w.writerows([safe_cell(c) for c in row] for row in rows)
    return path
