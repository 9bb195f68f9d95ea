"""The feedback page's filters on hostile student markdown: linear time, bounded input, math still drawn.

A review found `offline_math` quadratic (its regexes rescanned the rest of the text from every unclosed
`\\(` or `<pre>`: a 384 KB markdown cell took 178 s of `nbgrader generate_feedback`) and no bound on a
cell or a notebook's markdown (100,000 empty cells: 65 s, 1.7 GB).
"""
from __future__ import annotations

import random
import re
import time
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest
from traitlets.config.loader import PyFileConfigLoader

from autograder.integrations import feedback
from autograder.integrations.feedback import FeedbackExporter, offline_math, to_mathml

ROOT = Path(__file__).resolve().parents[1]

# The former implementation (regexes), the reference for what is converted.
_PROTECTED = re.compile(r"(<(pre|code|script|style|math)\b.*?</\2>|<[^>]+>)", re.S | re.I)
_MATH = re.compile(r"\$\$(?P<d1>.+?)\$\$|\\\[(?P<d2>.+?)\\\]|\\\((?P<i2>.+?)\\\)|(?<![\\$])\$(?P<i1>[^$\s](?:[^$]*?[^$\s])?)\$(?!\d)",
                   re.S)


def _former(rendered: str) -> str:
    import html
    if "$" not in rendered and "\\(" not in rendered and "\\[" not in rendered:
        return rendered
    out = []
    for i, part in enumerate(_PROTECTED.split(rendered)):
        if part is None:
            continue
        if i % 3 == 0:
            out.append(_MATH.sub(lambda m: to_mathml(html.unescape(next(g for g in m.groups() if g is not None)),
                                                     display=bool(m["d1"] or m["d2"])), part))
        elif i % 3 == 1:
            out.append(part)
    return "".join(out)


PIECES = ["$", "$$", "\\(", "\\)", "\\[", "\\]", "\\", "<pre>", "</pre>", "<PRE>", "<code>", "</Code>", "<b>",
          "</b>", "<", ">", "<>", "x", "y ", " ", "1", "\n", "&lt;", "<math>", "</math>", "<style>", "</style>"]


def test_offline_math_converts_what_the_former_regexes_converted() -> None:
    rng = random.Random(14)
    for _ in range(3000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 14)))
        assert offline_math(text) == _former(text), text
    for text in ["$x$", "$$\\mathbf q$$ and \\(a\\) and \\[b\\]", "\\$5 and $3$4", "<code>$x$</code> $y$",
                 "<pre>\\(a\\)</pre>\\(b\\)", "a $ b $ c", "$x$2", "$$$x$$"]:
        assert offline_math(text) == _former(text), text


def _seconds(function: Callable[[str], object], text: str) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        function(text)
        best = min(best, time.perf_counter() - start)
    return best


HOSTILE = {"unclosed inline math": "\\(a ", "unclosed pre": "<pre>x", "unclosed display": "\\[ ",
           "dollars": "$ ", "double dollars": "$$ ", "lone less-than": "< $", "unclosed code": "<CODE>$"}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_offline_math_time_is_linear_in_hostile_markdown(name: str) -> None:
    """4x the input costs about 4x (a quadratic scan costs 16x; the ratio allowed is 10)."""
    unit = HOSTILE[name]
    small = unit * (20_000 // len(unit)) + "$x$"
    large = unit * (80_000 // len(unit)) + "$x$"
    t_small, t_large = _seconds(offline_math, small), _seconds(offline_math, large)
    assert t_large <= 10 * max(t_small, 1e-3), (name, t_small, t_large)


def _exporter() -> FeedbackExporter:
    from nbgrader.converters.generate_feedback import GenerateFeedback

    converter = GenerateFeedback(config=PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config())
    exporter = converter.exporter_class(parent=converter, config=converter.config)  # as GenerateFeedback.start
    assert isinstance(exporter, FeedbackExporter)
    return exporter


def test_feedback_page_of_a_hostile_notebook_is_bounded_and_keeps_its_math() -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("Scores: $\\mathbf q^\\top \\mathbf k$"),
                nbformat.v4.new_markdown_cell("\\(a <pre>" * (feedback.MAX_CELL_MARKDOWN // 4)),
                nbformat.v4.new_markdown_cell("planted", metadata={feedback.PLAIN: "<b>mine</b>"})]
    nb.cells += [nbformat.v4.new_markdown_cell("") for _ in range(feedback.MAX_MARKDOWN_CELLS + 500)]
    nb.cells.append(nbformat.v4.new_code_cell("x = 1"))
    start = time.perf_counter()
    resources = {"nbgrader": {"notebook": "02_attention_scoring", "score": 0.0, "max_score": 14.0,
                              "late_penalty": 0.0}}  # what nbgrader's GetGrades puts there
    page, _ = _exporter().from_notebook_node(nb, resources=resources)
    assert time.perf_counter() - start < 120
    assert "<math" in page and "𝐪" in page  # the first cell's formula, drawn
    assert "shown as plain text" in page and "&lt;pre&gt;" in page  # the hostile cell, escaped, with its note
    assert "<b>mine</b>" not in page and "&lt;b&gt;mine" not in page  # a student's own key means nothing
    assert "further markdown cells are not shown" in page
    assert page.count("course-plain-note") == 2
    assert len(nb.cells) == feedback.MAX_MARKDOWN_CELLS + 504  # the caller's notebook is unchanged
