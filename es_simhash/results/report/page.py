"""The report as one self-contained HTML page: cards, charts as ``data:`` URIs, tables of escaped crawl strings,
a Content-Security-Policy that forbids scripts and remote loads."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from es_simhash.results.report.charts import (
    REASON_COLORS,
    chart_distances,
    chart_reasons,
    chart_sizes,
    chart_timeline,
    pyplot,
)
from es_simhash.results.report.data import DUPLICATE_REASONS, ReportData

if TYPE_CHECKING:
    from es_simhash.decide.default import DefaultRule

__all__ = ["render_html", "write_report"]


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
    from es_simhash.decide.default import DefaultRule

    rule = rule or DefaultRule()
    plt = pyplot()
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
    add(f'<div class="row"><img alt="cluster size distribution" src="{chart_sizes(plt, data)}">'
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
    add(f'<img alt="duplicates over crawl time" src="{chart_timeline(plt, data)}">')
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
    add(f'<div class="row"><img alt="Hamming distance histogram" src="{chart_distances(plt, data)}">'
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
    add(f'<div class="row"><img alt="reasons" src="{chart_reasons(plt, data)}">'
        '<table><thead><tr><th>reason</th><th class="n">documents</th><th class="n">share</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div></section>")


def write_report(data: ReportData, path: str, title: str = "Duplicate report", rule: DefaultRule | None = None) -> int:
    """Render and write the page (``rule``: as :func:`render_html` takes it); returns its size in bytes."""
    from es_simhash.files.outputs import atomic_write

    page = render_html(data, title=title, rule=rule).encode("utf-8")
    with atomic_write(path, binary=True) as fh:
        fh.write(page)
    return len(page)
