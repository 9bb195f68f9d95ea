"""The report's figures (matplotlib, Agg, no pyplot state): PNG bytes, written next to the page
and embedded in it."""
from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from autograder.report.similarity import Similarity
from autograder.report.stats import Distribution, StudentRow, TestStat

WIDTH = 7.2  # inches at DPI: 720 px, the page's figure width
DPI = 100
BAR = "#4c72b0"
MEAN = "#c44e52"
MEDIAN = "#55a868"


def _figure(height: float, width: float = WIDTH) -> Any:
    """A figure with fixed margins (inches): constrained layout would cost more than the drawing."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(fig)  # a renderer to measure labels with (labels)
    fig.subplots_adjust(left=0.75 / width, right=1 - 0.2 / width, bottom=0.55 / height, top=1 - 0.35 / height)
    return fig


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def _histogram(ax: Any, dist: Distribution, bins: int, title: str, legend: bool = True) -> None:
    import numpy as np
    top = dist.max_score if dist.max_score > 0 else max(dist.values or [1.0])
    edges = np.linspace(0, top, bins + 1)
    ax.hist(np.clip(dist.values, 0, top), bins=edges, color=BAR, edgecolor="white")
    if dist.values:
        ax.axvline(dist.mean, color=MEAN, linestyle="--", linewidth=1.5, label=f"mean {dist.mean:.2f}")
        ax.axvline(dist.median, color=MEDIAN, linestyle=":", linewidth=1.8, label=f"median {dist.median:.2f}")
        if legend:
            ax.legend(fontsize=8, frameon=False, loc="upper center")
    ax.set_xlim(0, top)
    ax.set_title(title, fontsize=10)
    ax.set_ylabel("submissions", fontsize=9)
    ax.tick_params(labelsize=8)
    ax.yaxis.get_major_locator().set_params(integer=True)


def score_histogram(dist: Distribution) -> bytes:
    """The assignment's total scores."""
    fig = _figure(2.8)
    ax = fig.subplots()
    _histogram(ax, dist, 20, f"{dist.name}: total score (out of {dist.max_score:g}), {dist.n} submissions")
    ax.set_xlabel("points", fontsize=9)
    return _png(fig)


def component_histograms(dists: Sequence[Distribution]) -> bytes:
    """One small histogram per component."""
    cols = min(3, max(1, len(dists)))
    rows = (len(dists) + cols - 1) // cols
    fig = _figure(2.0 * rows + 0.2)
    axes = fig.subplots(rows, cols, squeeze=False)
    fig.subplots_adjust(bottom=0.35 / (2.0 * rows + 0.2), hspace=0.55, wspace=0.35)
    for ax, dist in zip(axes.flat, dists):
        _histogram(ax, dist, 10, f"{dist.name} (out of {dist.max_score:g})", legend=False)
    for ax in list(axes.flat)[len(dists):]:
        ax.set_visible(False)
    return _png(fig)


def item_analysis(tests: Sequence[TestStat], label: int = 5) -> bytes:
    """Each test: pass rate against discrimination, sized by the points the class lost on it; the
    `label` costliest numbered as in the tests table."""
    fig = _figure(3.4)
    ax = fig.subplots()
    components = list(dict.fromkeys(t.component for t in tests))
    colors = [f"C{i % 10}" for i in range(len(components))]
    most = max([t.points_lost for t in tests] + [1e-9])
    for comp, color in zip(components, colors):
        mine = [t for t in tests if t.component == comp]
        ax.scatter([t.pass_rate for t in mine], [t.discrimination if t.discrimination is not None else 0.0
                                                 for t in mine],
                   s=[20 + 200 * t.points_lost / most for t in mine], color=color, alpha=0.7,
                   edgecolors="white", label=comp)
    ax.axhline(0.2, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-1.05, 1.05)
    labels(ax, [(t.pass_rate, t.discrimination or 0.0) for t in tests[:label]],
           [f"#{rank}" for rank in range(1, min(label, len(tests)) + 1)])
    ax.set_xlabel("pass rate", fontsize=9)
    ax.set_ylabel("discrimination (point-biserial)", fontsize=9)
    ax.set_title("tests: pass rate and discrimination (size: points lost; undefined plotted at 0)", fontsize=10)
    ax.tick_params(labelsize=8)
    ax.legend(fontsize=7, frameon=False, loc="lower left", ncol=min(3, max(1, len(components))))
    return _png(fig)


#: Where a label may go around its point, in points, nearest first: right, up, left, down, the
#: diagonals, then the same further out (with a line back to the point).
_OFFSETS = [(dx * r, dy * r) for r in (5, 14, 24, 36) for dx, dy in
            ((1, 0.6), (0, 1), (-1, 0.6), (0, -1.4), (1, -1.4), (-1, -1.4), (1, 1.6), (-1, 1.6))]


def text_box(note: Any, renderer: Any) -> Any:
    """The box of an annotation's text (an Annotation's own box also covers its line to the point)."""
    from matplotlib.text import Text
    note.update_positions(renderer)  # where the offset puts the text (otherwise done when drawn)
    return Text.get_window_extent(note, renderer)


def labels(ax: Any, points: Sequence[tuple[float, float]], texts: Sequence[str], fontsize: float = 8) -> list[Any]:
    """Label each point without two labels overlapping (a deterministic repel, no adjustText): each
    label, in order, takes the first place around its point (_OFFSETS) where its box meets no label
    placed before it and stays inside the axes; a label moved away is joined to its point by a line.
    Returns the annotations (the box of a label's text: `text_box`)."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    inside = ax.get_window_extent(renderer)
    placed: list[Any] = []
    out: list[Any] = []
    for (x, y), text in zip(points, texts):
        note = None
        for dx, dy in _OFFSETS:
            far = abs(dx) > 5 or abs(dy) > 8
            candidate = ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", fontsize=fontsize,
                                    ha="left" if dx > 0 else "right" if dx < 0 else "center",
                                    va="bottom" if dy > 0 else "top",
                                    arrowprops={"arrowstyle": "-", "color": "grey", "linewidth": 0.6} if far else None)
            box = text_box(candidate, renderer)
            if not any(box.overlaps(other) for other in placed) and inside.contains(box.x0, box.y0) \
                    and inside.contains(box.x1, box.y1):
                note = candidate
                break
            candidate.remove()
        if note is None:  # nowhere free nearby: the last place, further out than the rest
            note = ax.annotate(text, (x, y), xytext=(40, 12 * (len(out) + 1)), textcoords="offset points",
                               fontsize=fontsize, arrowprops={"arrowstyle": "-", "color": "grey", "linewidth": 0.6})
        placed.append(text_box(note, renderer))
        out.append(note)
    return out


def similarity_histogram(sim: Similarity) -> bytes:
    """Scores of the pairs copydetect scored; the pairs shown side by side are the rightmost."""
    import numpy as np
    fig = _figure(2.6)
    ax = fig.subplots()
    scores = [p.score for p in sim.pairs]
    ax.hist(scores, bins=np.linspace(0, 1, 41), color=BAR, edgecolor="white")
    if len(scores) > 200:
        ax.set_yscale("log")
    if sim.top:
        ax.axvline(min(p.score for p in sim.top), color=MEAN, linestyle="--", linewidth=1.2,
                   label=f"the {len(sim.top)} pairs shown")
        ax.legend(fontsize=8, frameon=False, loc="upper left")
    ax.set_xlim(0, 1)
    ax.set_xlabel("similarity score (copydetect, mean of the two shares)", fontsize=9)
    ax.set_ylabel("pairs", fontsize=9)
    if len(scores) <= 200:
        ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_title(f"similarity of the {len(scores)} pairs with code in common", fontsize=10)
    ax.tick_params(labelsize=8)
    return _png(fig)


def overview(classes: Sequence[tuple[str, list[float]]]) -> bytes:
    """Box plots of the share of points per assignment."""
    fig = _figure(2.8)
    ax = fig.subplots()
    ax.boxplot([[100 * v for v in values] or [0.0] for _, values in classes], showmeans=True)
    ax.set_xticks(range(1, len(classes) + 1), [name for name, _ in classes], fontsize=8, rotation=15)
    ax.set_ylabel("% of the points", fontsize=9)
    ax.set_ylim(-3, 103)
    ax.set_title("scores per assignment (box: quartiles, triangle: mean)", fontsize=10)
    ax.tick_params(labelsize=8)
    return _png(fig)


def risk_histogram(rows: Sequence[StudentRow], threshold: float) -> bytes:
    """Students' mean share of the points over the assignments, with the at-risk threshold."""
    import numpy as np
    fig = _figure(2.6)
    ax = fig.subplots()
    ax.hist([100 * r.mean_fraction for r in rows], bins=np.linspace(0, 100, 21), color=BAR, edgecolor="white")
    ax.axvline(100 * threshold, color=MEAN, linestyle="--", linewidth=1.2, label=f"at risk below {100 * threshold:g}%")
    ax.legend(fontsize=8, frameon=False, loc="upper left")
    ax.set_xlim(0, 100)
    ax.set_xlabel("mean % of the points over the assignments", fontsize=9)
    ax.set_ylabel("students", fontsize=9)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_title(f"{len(rows)} students", fontsize=10)
    ax.tick_params(labelsize=8)
    return _png(fig)
