"""What a report shows (:class:`ReportData`), from an Elasticsearch index (aggregations only) or from the JSON
Lines report of ``es-simhash dedup`` joined with its input."""

from __future__ import annotations

import io
import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Iterable, Sequence

from es_simhash.errors import ReportError

DUPLICATE_REASONS = ("exact", "simhash", "sentences")


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
    ids: int = 0
    """Distinct document ids of a ``dedup --report`` file (0 for an index)."""
    joined: int | None = None
    """How many of them were found in the crawl input joined in (``None``: no input)."""
    inputs: list[str] = field(default_factory=list)
    """The crawl input joined in."""
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

    def join_warning(self, check: str = "that the crawl input is the one the dedup run read, with the same id "
                                         "field") -> str | None:
        """One line when a crawl input was joined in and some of the report's ids are not in it (``None``
        otherwise): how many were found; when none, that nothing was joined and what to ``check``."""
        if self.joined is None or self.joined >= self.ids:
            return None
        where = ", ".join(self.inputs)
        if not self.joined:
            return (f"none of the report's {self.ids:,} ids is in {where}: no titles, urls or crawl times were "
                    f"joined in; check {check}")
        return (f"only {self.joined:,} of the report's {self.ids:,} ids are in {where}: titles, urls and crawl "
                "times are shown for those")

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


def _interval(span: timedelta, max_buckets: int = 40) -> tuple[str, timedelta]:
    """The smallest of the fixed intervals giving at most ``max_buckets`` buckets over ``span``."""
    return next(((n, s) for n, s in _INTERVALS if span / s < max_buckets), _INTERVALS[-1])


def bucket_times(times: list[tuple[datetime, bool]]) -> tuple[list[TimeBucket], str]:
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
    read, same ``--id-field``), titles, urls and crawl times are joined in by document id (how many ids were
    found: :attr:`ReportData.joined`; :meth:`ReportData.join_warning` says when some were not)."""
    rows = list(_read_jsonl(path))
    meta: dict[str, tuple[Any, Any, Any]] = {}
    if inputs:
        meta = _input_fields(inputs, {r["id"] for r in rows}, text_field, id_field)
    data = ReportData(source=f"dedup report {path}" + (f" joined with {', '.join(inputs)}" if inputs else ""))
    data.ids = len({r["id"] for r in rows})
    if inputs:
        data.joined, data.inputs = len(meta), list(inputs)
        if data.join_warning() is not None:
            data.notes.append(f"{data.join_warning()}.")
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
        data.timeline, data.timeline_interval = bucket_times(times)
    else:
        data.notes.append("No crawl input was joined in: titles, urls and crawl times are not shown.")
    return data


def _input_fields(inputs: Sequence[str], wanted: set[str], text_field: str | None,
                  id_field: str | None) -> dict[str, tuple[Any, Any, Any]]:
    """id -> (title, url, crawl time) from the crawl input, read with the same rules as ``dedup``/``index``."""
    from es_simhash.files.sources import check_inputs, RecordReader
    from es_simhash.errors import InputError
    from es_simhash.records import record_meta
    from es_simhash.records import Document

    try:
        check_inputs(inputs)
    except InputError as exc:
        raise ReportError(str(exc)) from None
    out: dict[str, tuple[Any, Any, Any]] = {}
    for item in RecordReader(text_field, id_field).read(list(inputs)):
        if isinstance(item, Document) and item.id in wanted and item.id not in out:
            out[item.id] = record_meta(item.fields)
    return out


_INTERVALS = [("1h", timedelta(hours=1)), ("3h", timedelta(hours=3)), ("12h", timedelta(hours=12)),
              ("1d", timedelta(days=1)), ("7d", timedelta(days=7)), ("30d", timedelta(days=30)),
              ("365d", timedelta(days=365))]
