"""What the deduplication did, as one self-contained HTML page (``es-simhash report``).

Two sources give the same :class:`ReportData`:

* :func:`from_index` — an es-simhash Elasticsearch index, through aggregations only (``terms``, ``filter``,
  ``auto_date_histogram``, ``histogram``-like ``terms``, ``missing``, ``top_hits``; no scripts);
* :func:`from_dedup_report` — the JSON Lines file of ``es-simhash dedup --report``, optionally joined with the
  original crawl input by id for titles, urls and crawl times (the report file carries none of them).

:func:`render_html` draws the charts with matplotlib (the ``report`` extra: ``pip install 'es-simhash[report]'``)
as PNGs embedded as ``data:`` URIs, and escapes every crawled string (titles and urls are hostile input); only
``http``/``https`` urls become links, and a Content-Security-Policy forbids scripts and remote loads.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from es_simhash.errors import ReportError

if TYPE_CHECKING:
    from es_simhash.engine.engine import DefaultRule

__all__ = [
    "ClusterRow",
    "TimeBucket",
    "ReportData",
    "ReportError",
    "from_index",
    "from_dedup_report",
    "render_html",
    "write_report",
]

DUPLICATE_REASONS = ("exact", "simhash", "sentences")
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


@dataclass
class ClusterRow:
    cluster: str
    size: int
    title: str | None = None
    url: str | None = None
    copies: list[str] = field(default_factory=list)
    """Urls (or ids, when a copy has no url) of some of the cluster's duplicates."""


@dataclass
class TimeBucket:
    start: datetime
    documents: int
    duplicates: int

    @property
    def rate(self) -> float:
        return self.duplicates / self.documents if self.documents else 0.0


@dataclass
class ReportData:
    source: str
    documents: int = 0
    duplicates: int = 0
    clusters_with_duplicates: int = 0
    size_distribution: dict[int, int] = field(default_factory=dict)
    """Cluster size (at least 2) -> number of clusters of that size."""
    top_clusters: list[ClusterRow] = field(default_factory=list)
    timeline: list[TimeBucket] = field(default_factory=list)
    timeline_interval: str = ""
    without_time: int = 0
    without_time_duplicates: int = 0
    distances: dict[int, dict[str, int]] = field(default_factory=dict)
    """Hamming distance of each duplicate to the document it duplicates -> {reason: count}."""
    reasons: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    generated_at: str = field(
        default_factory=lambda: datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))

    @property
    def canonical(self) -> int:
        return self.documents - self.duplicates

    @property
    def duplicate_rate(self) -> float:
        return self.duplicates / self.documents if self.documents else 0.0

    @property
    def largest_cluster(self) -> int:
        return max(self.size_distribution, default=1)

    def distance_totals(self) -> dict[int, int]:
        return {d: sum(r.values()) for d, r in sorted(self.distances.items())}


# -- from an Elasticsearch index ---------------------------------------------------------------------------
def from_index(client, index: str, *, top: int = 20, max_clusters: int = 10_000, url: str = "") -> ReportData:
    """Aggregate the report from an es-simhash index (two searches, aggregations only)."""
    from es_simhash.index.elastic import elastic_errors, validate_index_name

    validate_index_name(index)
    dup = {"term": {"is_canonical": False}}
    with elastic_errors(url):
        client.indices.refresh(index=index)
        resp = client.search(
            index=index,
            size=0,
            track_total_hits=True,
            aggs={
                "duplicates": {"filter": dup},
                "reasons": {"terms": {"field": "dup_reason", "size": 20}},
                "distances": {
                    "filter": dup,
                    "aggs": {"d": {"terms": {"field": "dup_distance", "size": 65},
                                   "aggs": {"r": {"terms": {"field": "dup_reason", "size": 20}}}}},
                },
                "sizes": {"terms": {"field": "dup_cluster", "size": max_clusters, "min_doc_count": 2}},
                "first": {"min": {"field": "crawl_time"}},
                "last": {"max": {"field": "crawl_time"}},
                "no_time": {"missing": {"field": "crawl_time"}, "aggs": {"duplicates": {"filter": dup}}},
            },
        )
        top_resp = client.search(
            index=index,
            size=0,
            aggs={
                "clusters": {
                    "terms": {"field": "dup_cluster", "size": top, "min_doc_count": 2,
                              "order": [{"_count": "desc"}, {"_key": "asc"}]},
                    "aggs": {"docs": {"top_hits": {
                        "size": 4,
                        "_source": ["doc_id", "title", "url", "is_canonical"],
                        "sort": [{"is_canonical": "desc"}, {"doc_id": "asc"}],
                    }}},
                }
            },
        ) if top > 0 else None
    aggs = resp["aggregations"]
    data = ReportData(source=f"index {index!r}" + (f" at {url}" if url else ""))
    data.documents = int(resp["hits"]["total"]["value"])
    data.duplicates = int(aggs["duplicates"]["doc_count"])
    data.reasons = {b["key"]: b["doc_count"] for b in aggs["reasons"]["buckets"]}
    for b in aggs["distances"]["d"]["buckets"]:
        data.distances[int(b["key"])] = {r["key"]: r["doc_count"] for r in b["r"]["buckets"]}
    sizes = Counter(b["doc_count"] for b in aggs["sizes"]["buckets"])
    data.size_distribution = dict(sorted(sizes.items()))
    data.clusters_with_duplicates = sum(sizes.values())
    if len(aggs["sizes"]["buckets"]) >= max_clusters:
        data.notes.append(
            f"More than {max_clusters:,} clusters have duplicates: the size distribution shows the "
            f"{max_clusters:,} largest only.")
    lo, hi = aggs["first"].get("value"), aggs["last"].get("value")
    if lo is not None and hi is not None:
        # date_histogram with an interval chosen from the time span (auto_date_histogram is not in every
        # distribution); empty buckets are kept so gaps in the crawl show as gaps
        name, _ = _interval(timedelta(milliseconds=hi - lo))
        with elastic_errors(url):
            tl = client.search(index=index, size=0, aggs={"t": {
                "date_histogram": {"field": "crawl_time", "fixed_interval": name, "min_doc_count": 0},
                "aggs": {"duplicates": {"filter": dup}}}})["aggregations"]["t"]
        data.timeline = [
            TimeBucket(datetime.fromtimestamp(b["key"] / 1000, tz=timezone.utc), b["doc_count"],
                       b["duplicates"]["doc_count"])
            for b in tl["buckets"]
        ]
        data.timeline_interval = name
    data.without_time = int(aggs["no_time"]["doc_count"])
    data.without_time_duplicates = int(aggs["no_time"]["duplicates"]["doc_count"])
    if top_resp is not None:
        for b in top_resp["aggregations"]["clusters"]["buckets"]:
            hits = [h["_source"] for h in b["docs"]["hits"]["hits"]]
            head = next((h for h in hits if h.get("doc_id") == b["key"]), hits[0] if hits else {})
            copies = [h.get("url") or h.get("doc_id") for h in hits if h is not head]
            data.top_clusters.append(ClusterRow(b["key"], b["doc_count"], head.get("title"), head.get("url"),
                                                [c for c in copies if c][:3]))
    return data


# -- from an embedded `dedup --report` file ------------------------------------------------------------------
def _open_text(path: str):
    """A report file as UTF-8 text, gzip-compressed or not (recognised by its magic bytes, as crawl input is)."""
    import gzip

    fh = open(path, "rb")  # noqa: SIM115 - returned to the caller, who closes it
    try:
        magic = fh.read(2)
        fh.seek(0)
        raw = gzip.GzipFile(fileobj=fh, mode="rb") if magic == b"\x1f\x8b" else fh
        return io.TextIOWrapper(raw, encoding="utf-8")  # type: ignore[arg-type]
    except BaseException:
        fh.close()
        raise


def _read_jsonl(path: str) -> Iterable[dict[str, Any]]:
    import gzip
    import zlib

    n = 0
    try:
        with _open_text(path) as fh:
            for n, line in enumerate(fh, 1):  # noqa: B007 - n names the line of an error below
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError:
                    raise ReportError(f"{path}:{n} is not JSON: is it the report of a dedup run?") from None
                if not isinstance(row, dict) or "id" not in row or "cluster" not in row:
                    raise ReportError(f"{path}:{n} has no id/cluster: is it the report of a dedup run?")
                yield row
    except FileNotFoundError:
        raise ReportError(f"report file not found: {path}") from None
    except IsADirectoryError:
        raise ReportError(f"{path} is a directory, not the report of a dedup run") from None
    except UnicodeDecodeError:
        raise ReportError(f"{path}:{n + 1} is not UTF-8 text: is it the report of a dedup run?") from None
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise ReportError(f"{path} is a truncated or corrupt gzip file after line {n} ({exc})") from None


def _parse_time(value: Any) -> datetime | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:  # epoch millis, like Elasticsearch's default date format
            return datetime.fromtimestamp(value / 1000, tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str):
        return None
    try:
        t = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


_INTERVALS = [("1h", timedelta(hours=1)), ("3h", timedelta(hours=3)), ("12h", timedelta(hours=12)),
              ("1d", timedelta(days=1)), ("7d", timedelta(days=7)), ("30d", timedelta(days=30)),
              ("365d", timedelta(days=365))]


def _interval(span: timedelta, max_buckets: int = 40) -> tuple[str, timedelta]:
    """The smallest of the fixed intervals giving at most ``max_buckets`` buckets over ``span``."""
    return next(((n, s) for n, s in _INTERVALS if span / s < max_buckets), _INTERVALS[-1])


def _bucket_times(times: list[tuple[datetime, bool]]) -> tuple[list[TimeBucket], str]:
    if not times:
        return [], ""
    lo = min(t for t, _ in times)
    hi = max(t for t, _ in times)
    name, step = _interval(hi - lo)
    epoch = datetime(1970, 1, 1, tzinfo=timezone.utc)
    docs: Counter[int] = Counter()
    dups: Counter[int] = Counter()
    for t, is_dup in times:
        k = int((t - epoch) // step)
        docs[k] += 1
        dups[k] += is_dup
    keys = range(min(docs), max(docs) + 1)
    return [TimeBucket(epoch + k * step, docs[k], dups[k]) for k in keys], name


def from_dedup_report(path: str, inputs: Sequence[str] = (), *, top: int = 20, text_field: str | None = None,
                      id_field: str | None = None) -> ReportData:
    """The report of an embedded run from its ``--report`` file; with ``inputs`` (the crawl files that run
    read, same ``--id-field``), titles, urls and crawl times are joined in by document id."""
    rows = list(_read_jsonl(path))
    meta: dict[str, tuple[Any, Any, Any]] = {}
    if inputs:
        meta = _input_fields(inputs, {r["id"] for r in rows}, text_field, id_field)
    data = ReportData(source=f"dedup report {path}" + (f" joined with {', '.join(inputs)}" if inputs else ""))
    members: dict[str, list[dict[str, Any]]] = defaultdict(list)
    times: list[tuple[datetime, bool]] = []
    for r in rows:
        data.documents += 1
        is_dup = bool(r.get("duplicate"))
        data.duplicates += is_dup
        reason = r.get("reason") or "canonical"
        data.reasons[reason] = data.reasons.get(reason, 0) + 1
        if is_dup and r.get("distance") is not None:
            per = data.distances.setdefault(int(r["distance"]), {})
            per[reason] = per.get(reason, 0) + 1
        members[r["cluster"]].append(r)
        if inputs:
            t = _parse_time(meta.get(r["id"], (None, None, None))[2])
            if t is None:
                data.without_time += 1
                data.without_time_duplicates += is_dup
            else:
                times.append((t, is_dup))
    data.reasons = dict(sorted(data.reasons.items(), key=lambda kv: (-kv[1], kv[0])))
    sizes = Counter(len(m) for m in members.values() if len(m) >= 2)
    data.size_distribution = dict(sorted(sizes.items()))
    data.clusters_with_duplicates = sum(sizes.values())
    big = sorted(((c, m) for c, m in members.items() if len(m) >= 2), key=lambda cm: (-len(cm[1]), cm[0]))
    for cluster, m in big[:top]:
        head = next((r for r in m if r["id"] == cluster), m[0])
        title, url, _ = meta.get(head["id"], (None, None, None))
        copies = [meta.get(r["id"], (None, None, None))[1] or r["id"] for r in m if r is not head][:3]
        data.top_clusters.append(ClusterRow(cluster, len(m), title, url, copies))
    if inputs:
        data.timeline, data.timeline_interval = _bucket_times(times)
    else:
        data.notes.append("No crawl input was joined in: titles, urls and crawl times are not shown.")
    return data


def _input_fields(inputs: Sequence[str], wanted: set[str], text_field: str | None,
                  id_field: str | None) -> dict[str, tuple[Any, Any, Any]]:
    """id -> (title, url, crawl time) from the crawl input, read with the same rules as ``dedup``/``index``."""
    from es_simhash.files.sources import InputError, Record, RecordReader, check_inputs, record_meta

    try:
        check_inputs(inputs)
    except InputError as exc:
        raise ReportError(str(exc)) from None
    out: dict[str, tuple[Any, Any, Any]] = {}
    for item in RecordReader(text_field, id_field).read(list(inputs)):
        if isinstance(item, Record) and item.id in wanted and item.id not in out:
            out[item.id] = record_meta(item.fields)
    return out


# -- rendering --------------------------------------------------------------------------------------------
def _pyplot():
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


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", facecolor="white")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _label_bars(ax, bars, values) -> None:
    for b, v in zip(bars, values):
        if v:
            ax.annotate(f"{v:,}", (b.get_x() + b.get_width() / 2, b.get_height()), ha="center", va="bottom",
                        fontsize=8, color=_MUTED, xytext=(0, 2), textcoords="offset points")


def _chart_sizes(plt, data: ReportData) -> str:
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
    _label_bars(ax, bars, ys)
    if ys and max(ys) / max(min(ys), 1) > 200:
        ax.set_yscale("log")
    ax.set_xlabel("documents in the cluster (canonical + duplicates)")
    ax.set_ylabel("clusters")
    ax.grid(axis="x", visible=False)
    ax.margins(y=0.15)
    return _png(fig)


def _chart_timeline(plt, data: ReportData) -> str:
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
    return _png(fig)


def _chart_distances(plt, data: ReportData) -> str:
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
    return _png(fig)


def _chart_reasons(plt, data: ReportData) -> str:
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
    return _png(fig)


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _link(url: str | None, text: str | None = None, limit: int = 80) -> str:
    """An escaped link for http(s) urls; anything else (javascript:, data:, garbage) is plain escaped text."""
    if not url:
        return _e(text) if text else '<span class="muted">—</span>'
    shown = text if text is not None else url
    shown = shown if len(shown) <= limit else shown[: limit - 1] + "…"
    if url.lower().startswith(("http://", "https://")):
        return f'<a href="{_e(url)}" rel="noopener noreferrer nofollow">{_e(shown)}</a>'
    return _e(shown)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


_CSS = """
:root { --ink:#1f2933; --muted:#52606d; --line:#e4e7eb; --accent:#e67e22; --bg:#f5f7fa; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "Noto Sans", "Noto Sans CJK SC", "PingFang SC",
  "Microsoft YaHei", sans-serif; }
main { max-width: 1080px; margin: 0 auto; padding: 28px 28px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 0 0 4px; }
.sub, .muted { color: var(--muted); }
.sub { margin: 0 0 20px; font-size: 14px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 12px; margin: 0 0 20px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
.card .v { font-size: 24px; font-weight: 650; }
.card .k { color: var(--muted); font-size: 13px; }
.card.hl .v { color: var(--accent); }
section { background:#fff; border:1px solid var(--line); border-radius: 8px; padding: 18px 20px; margin: 0 0 18px; }
section p.why { margin: 0 0 10px; color: var(--muted); font-size: 14px; }
.row { display: grid; grid-template-columns: minmax(0, 2fr) minmax(0, 1fr); gap: 18px; align-items: start; }
img { max-width: 100%; height: auto; display: block; }
table { border-collapse: collapse; width: 100%; font-size: 13.5px; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; font-size: 12.5px; text-transform: uppercase; letter-spacing: .03em; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.id { font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; font-size: 12.5px; white-space: nowrap; }
td.t { overflow-wrap: anywhere; }
td.copies { font-size: 12.5px; overflow-wrap: anywhere; }
a { color: #1f6fb2; text-decoration: none; } a:hover { text-decoration: underline; }
.note { background: #fff8e6; border: 1px solid #f5d9a8; border-radius: 6px; padding: 8px 12px; margin: 0 0 14px;
  font-size: 14px; }
.swatch { display:inline-block; width:10px; height:10px; border-radius:2px; margin-right:6px; vertical-align: -1px; }
footer { color: var(--muted); font-size: 12.5px; margin-top: 24px; }
"""


def render_html(data: ReportData, title: str = "Duplicate report", rule: DefaultRule | None = None) -> str:
    """The report as one HTML page (charts inline as PNG data URIs; no scripts, no remote resources). ``rule``:
    the rule the documents were decided with, whose limits the page states (default: ``DefaultRule()``)."""
    from es_simhash.engine.engine import DefaultRule

    rule = rule or DefaultRule()
    plt = _pyplot()
    parts: list[str] = []
    add = parts.append
    add("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
    add('<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; img-src data:; '
        'style-src \'unsafe-inline\'">')
    add('<meta name="viewport" content="width=device-width, initial-scale=1">')
    add(f"<title>{_e(title)} · es-simhash</title><style>{_CSS}</style></head><body><main>")
    add(f"<h1>{_e(title)}</h1>")
    add(f'<p class="sub">{_e(data.source)} · generated {_e(data.generated_at)} by es-simhash</p>')
    for note in data.notes:
        add(f'<div class="note">{_e(note)}</div>')

    cards = [
        ("documents", f"{data.documents:,}", False),
        ("kept (canonical)", f"{data.canonical:,}", False),
        ("duplicates", f"{data.duplicates:,}", True),
        ("duplicate rate", _pct(data.duplicate_rate), True),
        ("clusters with duplicates", f"{data.clusters_with_duplicates:,}", False),
        ("largest cluster", f"{data.largest_cluster:,} docs" if data.size_distribution else "—", False),
    ]
    add('<div class="cards">' + "".join(
        f'<div class="card{" hl" if hl else ""}"><div class="v">{v}</div><div class="k">{_e(k)}</div></div>'
        for k, v, hl in cards) + "</div>")

    if data.documents == 0:
        add('<section><p class="why">The source holds no documents yet: nothing to report.</p></section>')
    else:
        _section_sizes(add, plt, data)
        _section_top(add, data)
        _section_timeline(add, plt, data)
        _section_distances(add, plt, data, rule)
        _section_reasons(add, plt, data)
    add("<footer>A cluster is a canonical document and every document marked a duplicate of it "
        "(<code>dup_cluster</code> is the canonical document's id). Reasons: <b>exact</b> same normalised "
        f"content; <b>simhash</b> SimHash within the Hamming distance limit ({rule.k} bits for long texts, "
        f"{rule.short_k} for short ones); <b>sentences</b> a shared long sentence that is not boilerplate (within "
        f"{rule.sentence_k} bits), or half of a short text's shingle sketch; <b>no-features</b> empty or "
        "punctuation-only text.</footer>")
    add("</main></body></html>\n")
    return "".join(parts)


def _section_sizes(add, plt, data: ReportData) -> None:
    add('<section id="sizes"><h2>Cluster size distribution</h2>')
    if not data.size_distribution:
        add('<p class="why">No document was marked a duplicate: every cluster holds one document.</p></section>')
        return
    add('<p class="why">How many clusters hold 2, 3, … documents. Clusters of one (documents without any '
        'duplicate) are left out: there are '
        f'{max(data.canonical - data.clusters_with_duplicates, 0):,} of them.</p>')
    rows = "".join(f'<tr><td class="n">{s:,}</td><td class="n">{n:,}</td><td class="n">{s * n:,}</td></tr>'
                   for s, n in sorted(data.size_distribution.items()))
    add(f'<div class="row"><img alt="cluster size distribution" src="{_chart_sizes(plt, data)}">'
        '<table><thead><tr><th class="n">size</th><th class="n">clusters</th><th class="n">documents</th>'
        f"</tr></thead><tbody>{rows}</tbody></table></div></section>")


def _section_top(add, data: ReportData) -> None:
    add(f'<section id="top"><h2>Top {len(data.top_clusters)} clusters</h2>')
    if not data.top_clusters:
        add('<p class="why">No cluster has more than one document.</p></section>')
        return
    add('<p class="why">The largest clusters with their canonical document (the one the others duplicate) '
        "and where some of the copies were found.</p>")
    add('<table><thead><tr><th class="n">#</th><th class="n">size</th><th>cluster</th><th>canonical title</th>'
        "<th>copies (sample)</th></tr></thead><tbody>")
    for i, c in enumerate(data.top_clusters, 1):
        title = _link(c.url, c.title or c.url or None) if (c.title or c.url) else '<span class="muted">—</span>'
        url_line = f'<div class="muted" style="font-size:12px">{_link(c.url)}</div>' if c.url and c.title else ""
        copies = "<br>".join(_link(u, limit=60) for u in c.copies) or '<span class="muted">—</span>'
        add(f'<tr><td class="n">{i}</td><td class="n">{c.size:,}</td><td class="id">{_e(c.cluster)}</td>'
            f'<td class="t">{title}{url_line}</td><td class="copies">{copies}</td></tr>')
    add("</tbody></table></section>")


def _section_timeline(add, plt, data: ReportData) -> None:
    add('<section id="timeline"><h2>Duplicate rate over crawl time</h2>')
    if not data.timeline:
        add('<p class="why">No document has a crawl time (<code>crawl_time</code>, <code>timestamp</code>, '
            '<code>date</code>, …), so there is no timeline.</p></section>')
        return
    interval = f" per {_e(data.timeline_interval)}" if data.timeline_interval else ""
    add(f'<p class="why">Documents by crawl time{interval}: kept and duplicate documents (bars) and the share '
        "of duplicates (line). A document counts where it was crawled, so a rising rate means the crawler "
        "keeps bringing back copies.</p>")
    if data.without_time:
        add(f'<div class="note">{data.without_time:,} documents ({data.without_time_duplicates:,} duplicates) have '
            "no usable crawl time and are not in this chart.</div>")
    rows = "".join(
        f'<tr><td>{_e(b.start.strftime("%Y-%m-%d %H:%M"))}</td><td class="n">{b.documents:,}</td>'
        f'<td class="n">{b.duplicates:,}</td><td class="n">{_pct(b.rate)}</td></tr>'
        for b in data.timeline if b.documents)
    add(f'<img alt="duplicates over crawl time" src="{_chart_timeline(plt, data)}">')
    add('<details><summary class="muted">table</summary><table><thead><tr><th>from</th><th class="n">documents</th>'
        f'<th class="n">duplicates</th><th class="n">rate</th></tr></thead><tbody>{rows}</tbody></table>'
        "</details></section>")


def _section_distances(add, plt, data: ReportData, rule: DefaultRule) -> None:
    add('<section id="distances"><h2>Hamming distance histogram</h2>')
    if not data.distances:
        add('<p class="why">No duplicates, no distances.</p></section>')
        return
    add('<p class="why">Bits in which each duplicate\'s 64-bit SimHash differs from the document it duplicates. '
        f"Exact copies sit at 0; <i>simhash</i> duplicates stay within the limit (<code>k</code> = {rule.k} bits; "
        f"{rule.short_k} for short texts); <i>sentences</i> duplicates (a shared long sentence or shingle sketch) can be further apart."
        "</p>")
    reasons = sorted({r for v in data.distances.values() for r in v},
                     key=lambda r: (DUPLICATE_REASONS.index(r) if r in DUPLICATE_REASONS else 9, r))
    head = "".join(f'<th class="n">{_e(r)}</th>' for r in reasons)
    rows = "".join(
        f'<tr><td class="n">{d}</td><td class="n"><b>{sum(v.values()):,}</b></td>'
        + "".join(f'<td class="n">{v.get(r, 0):,}</td>' for r in reasons) + "</tr>"
        for d, v in sorted(data.distances.items()))
    add(f'<div class="row"><img alt="Hamming distance histogram" src="{_chart_distances(plt, data)}">'
        f'<table><thead><tr><th class="n">bits</th><th class="n">total</th>{head}</tr></thead>'
        f"<tbody>{rows}</tbody></table></div></section>")


def _section_reasons(add, plt, data: ReportData) -> None:
    add('<section id="reasons"><h2>Reasons</h2>')
    add('<p class="why">Why each document was kept (<i>canonical</i>, <i>no-features</i>) or marked a duplicate '
        "(<i>exact</i>, <i>simhash</i>, <i>sentences</i>).</p>")
    total = sum(data.reasons.values()) or 1
    rows = "".join(
        f'<tr><td><span class="swatch" style="background:{REASON_COLORS.get(k, "#7b8794")}"></span>{_e(k)}</td>'
        f'<td class="n">{v:,}</td><td class="n">{_pct(v / total)}</td></tr>'
        for k, v in sorted(data.reasons.items(), key=lambda kv: -kv[1]))
    add(f'<div class="row"><img alt="reasons" src="{_chart_reasons(plt, data)}">'
        '<table><thead><tr><th>reason</th><th class="n">documents</th><th class="n">share</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div></section>")


def write_report(data: ReportData, path: str, title: str = "Duplicate report", rule: DefaultRule | None = None) -> int:
    """Render and write the page (``rule``: as :func:`render_html` takes it); returns its size in bytes."""
    from es_simhash.files.outputs import atomic_write

    page = render_html(data, title=title, rule=rule).encode("utf-8")
    with atomic_write(path, binary=True) as fh:
        fh.write(page)
    return len(page)
