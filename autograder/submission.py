"""Read a submission (.py or .ipynb) into labelled code cells, without running anything."""
from __future__ import annotations

import json
from pathlib import Path

MAX_SUBMISSION_BYTES = 20 * 1024 * 1024


class SubmissionError(Exception):
    """The file cannot be read as a submission (not found, too large, not a notebook)."""


def read_cells(path: Path | str) -> list[tuple[str, str]]:
    """[(label, source)]: a .py file is one cell; a notebook's code cells in order, as the student ran them."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise SubmissionError(f"cannot read {path}: {exc.strerror}") from None
    if size > MAX_SUBMISSION_BYTES:
        raise SubmissionError(f"{path.name} is {size} bytes, over the {MAX_SUBMISSION_BYTES} byte limit")
    text = path.read_bytes().decode("utf-8", errors="replace")
    if path.suffix == ".ipynb":
        try:
            notebook = json.loads(text)
            cells = notebook["cells"]
        except (ValueError, KeyError, TypeError):
            raise SubmissionError(f"{path.name} is not a readable Jupyter notebook") from None
        out = []
        for i, cell in enumerate(cells if isinstance(cells, list) else []):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else str(source)
            out.append((f"cell {i + 1}", source))
        return out
    if path.suffix == ".py":
        return [(path.name, text)]
    raise SubmissionError(f"{path.name}: expected a .py or .ipynb file")
