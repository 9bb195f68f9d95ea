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
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, height), dpi=DPI)
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
    for rank, t in enumerate(tests[:label], start=1):
        ax.annotate(f"#{rank}", (t.pass_rate, t.discrimination or 0.0), fontsize=8, xytext=(4, 4),
                    textcoords="offset points")
    ax.axhline(0.2, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-1.05, 1.05)
    ax.set_xlabel("pass rate", fontsize=9)
    ax.set_ylabel("discrimination (point-biserial)", fontsize=9)
    ax.set_title("tests: pass rate and discrimination (size: points lost; undefined plotted at 0)", fontsize=10)
    ax.tick_params(labelsize=8)
    ax.legend(fontsize=7, frameon=False, loc="lower left", ncol=min(3, max(1, len(components))))
    return _png(fig)


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
