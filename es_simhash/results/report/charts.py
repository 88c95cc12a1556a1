"""The report's charts, drawn with matplotlib (the ``report`` extra) as PNG bytes."""

from __future__ import annotations

import base64
import io
import math
from datetime import timedelta

from es_simhash.errors import ReportError
from es_simhash.results.report.data import DUPLICATE_REASONS, ReportData

REASON_COLORS = {
    "canonical": "#9aa5b1",
    "no-features": "#cbd2d9",
    "exact": "#c0392b",
    "simhash": "#e67e22",
    "sentences": "#8e44ad",
}


_ACCENT = "#e67e22"


_INK = "#1f2933"


_MUTED = "#52606d"


# -- rendering --------------------------------------------------------------------------------------------
def pyplot():
    try:
        import matplotlib
    except ImportError:
        raise ReportError(
            "the HTML report draws its charts with matplotlib: pip install 'es-simhash[report]'") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({
        "font.size": 10, "axes.titlesize": 11, "axes.edgecolor": "#9aa5b1", "axes.labelcolor": _INK,
        "xtick.color": _MUTED, "ytick.color": _MUTED, "axes.spines.top": False, "axes.spines.right": False,
        "axes.grid": True, "grid.color": "#e4e7eb", "grid.linewidth": 0.8, "axes.axisbelow": True,
        "svg.fonttype": "none",
    })
    return plt


def png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", facecolor="white")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def label_bars(ax, bars, values) -> None:
    for b, v in zip(bars, values):
        if v:
            ax.annotate(f"{v:,}", (b.get_x() + b.get_width() / 2, b.get_height()), ha="center", va="bottom",
                        fontsize=8, color=_MUTED, xytext=(0, 2), textcoords="offset points")


def chart_sizes(plt, data: ReportData) -> str:
    fig, ax = plt.subplots(figsize=(7.2, 2.9))
    sizes = sorted(data.size_distribution)
    if len(sizes) <= 30:
        xs = [str(s) for s in sizes]
        ys = [data.size_distribution[s] for s in sizes]
    else:  # many distinct sizes: power-of-two bins
        bins: dict[str, int] = {}
        for s in sizes:
            lo = 2 ** int(math.log2(s))
            key = f"{lo}-{2 * lo - 1}" if lo > 1 else "2-3"
            bins[key] = bins.get(key, 0) + data.size_distribution[s]
        xs, ys = list(bins), list(bins.values())
    pos = list(range(len(xs)))
    bars = ax.bar(pos, ys, color=_ACCENT, width=0.6)
    ax.set_xticks(pos, xs)
    pad = max(8 - len(xs), 0) / 2  # a few sizes stay bars (centred), not walls
    ax.set_xlim(-0.6 - pad, len(xs) - 0.4 + pad)
    label_bars(ax, bars, ys)
    if ys and max(ys) / max(min(ys), 1) > 200:
        ax.set_yscale("log")
    ax.set_xlabel("documents in the cluster (canonical + duplicates)")
    ax.set_ylabel("clusters")
    ax.grid(axis="x", visible=False)
    ax.margins(y=0.15)
    return png(fig)


def chart_timeline(plt, data: ReportData) -> str:
    import matplotlib.dates as mdates

    fig, ax = plt.subplots(figsize=(9.4, 3.0))
    tl = data.timeline
    xs = [b.start for b in tl]
    step = (xs[1] - xs[0]) if len(xs) > 1 else timedelta(days=1)
    width = step.total_seconds() / 86400 * 0.8
    ax.bar(xs, [b.documents - b.duplicates for b in tl],
           width=width, color="#cbd2d9", label="kept (canonical)", align="edge")
    ax.bar(xs, [b.duplicates for b in tl], width=width, bottom=[b.documents - b.duplicates for b in tl],
           color=_ACCENT, label="duplicates", align="edge")
    ax.set_ylabel("documents crawled")
    ax2 = ax.twinx()
    ax2.plot([x + step * 0.4 for x in xs], [100 * b.rate for b in tl], color="#c0392b", marker="o",
             markersize=3, linewidth=1.6, label="duplicate rate")
    ax2.set_ylabel("duplicate rate (%)", color="#c0392b")
    ax2.tick_params(axis="y", colors="#c0392b")
    ax2.set_ylim(0, max(5.0, max((100 * b.rate for b in tl), default=0) * 1.25))
    ax2.grid(False)
    ax2.spines["right"].set_visible(True)
    loc = mdates.AutoDateLocator(maxticks=8)
    ax.xaxis.set_major_locator(loc)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(loc))
    ax.grid(axis="x", visible=False)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, loc="upper left", fontsize=8, frameon=False, ncol=3, bbox_to_anchor=(0, 1.13))
    return png(fig)


def chart_distances(plt, data: ReportData) -> str:
    fig, ax = plt.subplots(figsize=(7.2, 2.9))
    dmax = max(data.distances, default=0)
    xs = list(range(0, max(dmax, 3) + 1))
    reasons = [r for r in DUPLICATE_REASONS if any(r in v for v in data.distances.values())]
    reasons += sorted({r for v in data.distances.values() for r in v} - set(reasons))
    bottom = [0] * len(xs)
    for r in reasons:
        ys = [data.distances.get(x, {}).get(r, 0) for x in xs]
        ax.bar(xs, ys, bottom=bottom, color=REASON_COLORS.get(r, "#7b8794"), label=r, width=0.7)
        bottom = [b + y for b, y in zip(bottom, ys)]
    for x, total in zip(xs, bottom):
        if total:
            ax.annotate(f"{total:,}", (x, total), ha="center", va="bottom", fontsize=8, color=_MUTED,
                        xytext=(0, 2), textcoords="offset points")
    ax.set_xticks(xs)
    ax.set_xlabel("Hamming distance to the document it duplicates (bits of 64)")
    ax.set_ylabel("duplicates")
    ax.grid(axis="x", visible=False)
    ax.margins(y=0.15)
    if reasons:
        ax.legend(fontsize=8, frameon=False, title="reason", title_fontsize=8)
    return png(fig)


def chart_reasons(plt, data: ReportData) -> str:
    items = sorted(data.reasons.items(), key=lambda kv: kv[1])
    fig, ax = plt.subplots(figsize=(7.2, 0.45 * max(len(items), 2) + 0.6))
    names = [k for k, _ in items]
    vals = [v for _, v in items]
    bars = ax.barh(names, vals, color=[REASON_COLORS.get(k, "#7b8794") for k in names], height=0.6)
    total = sum(vals) or 1
    for b, v in zip(bars, vals):
        ax.annotate(f"{v:,} ({100 * v / total:.1f}%)", (b.get_width(), b.get_y() + b.get_height() / 2),
                    va="center", fontsize=8, color=_MUTED, xytext=(3, 0), textcoords="offset points")
    ax.set_xlabel("documents")
    ax.grid(axis="y", visible=False)
    ax.margins(x=0.2)
    return png(fig)
