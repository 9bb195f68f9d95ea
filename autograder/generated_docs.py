"""Pages of the documentation site (docs/) that the scripts measuring them write: each generated part sits
between `<!-- NAME:start -->` and `<!-- NAME:end -->` in its page, and only that part is replaced."""
from __future__ import annotations

from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"
#: The zoo's tables (`python -m autograder.catalogue.zoo --update-docs`).
ZOO_SCORES = DOCS / "zoo-scores.md"
#: The diagnosis measurement (`python -m autograder.catalogue.evaluate --update-docs`).
DIAGNOSIS_MEASURED = DOCS / "diagnosis-measured.md"


def write_between_markers(page: Path, name: str, markdown: str) -> None:
    """Replace the text between `page`'s `name` markers with `markdown`; the rest of the page is kept."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = page.read_text(encoding="utf-8")
    if start not in text or end not in text:
        raise SystemExit(f"{page} has no {start} ... {end} section")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    page.write_text(head + start + "\n" + markdown.rstrip("\n") + "\n" + end + tail, encoding="utf-8")
