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

from es_simhash.errors import ReportError
from es_simhash.results.report.data import ClusterRow, ReportData, TimeBucket, from_dedup_report, from_index
from es_simhash.results.report.page import render_html, write_report

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
