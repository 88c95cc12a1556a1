"""Search-time duplicate filtering and cluster inspection on an es-simhash index.

* :func:`search` — full-text search returning one hit per duplicate cluster (``collapse`` on ``dup_cluster``),
  with the size of each cluster;
* :func:`filter_duplicates` — for hits from *any* query: drop hits that are near duplicates of a better-ranked
  hit (same cluster, or SimHash within ``k``);
* :func:`top_clusters` — the largest duplicate clusters with a sample title and url.

User text only ever reaches the engine (Elasticsearch or OpenSearch) inside a ``multi_match`` clause (never
``query_string``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from es_simhash.lookup import hamming
from es_simhash.fingerprint.fold import fold_text
from es_simhash.index.elastic import elastic_errors, validate_index_name

__all__ = ["Hit", "ClusterSummary", "search", "filter_duplicates", "top_clusters", "MAX_QUERY_CHARS", "query_chars"]

MAX_QUERY_CHARS = 1000
"""Longer queries are cut: every word (every CJK character) becomes a clause in each of the two fields searched, and
the engine refuses more than ``indices.query.bool.max_clause_count`` of them (:func:`query_chars`)."""


def query_chars(client, url: str = "") -> int:
    """The most characters of a query :func:`search` sends: :data:`MAX_QUERY_CHARS`, or fewer where the engine has a
    fixed bound on a search's clauses (OpenSearch: 1,024 by default, so 504 characters of Chinese, two clauses
    each; ``url``: the cluster as messages name it)."""
    with elastic_errors(url):
        bound = client.max_clause_count()
    return MAX_QUERY_CHARS if bound is None else min(MAX_QUERY_CHARS, max(16, (bound - 16) // 2))


_HIT_FIELDS = ["doc_id", "title", "url", "dup_cluster", "dup_of", "dup_distance", "dup_reason", "simhash", "is_canonical"]


@dataclass
class Hit:
    id: str
    score: float | None
    title: str | None
    url: str | None
    cluster: str
    cluster_size: int = 1
    duplicate_of: str | None = None
    distance: int | None = None
    reason: str | None = None
    source: dict[str, Any] = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The hit as ``es-simhash search --json`` prints it (one JSON object a line)."""
        return {"id": self.id, "score": self.score, "title": self.title, "url": self.url, "cluster": self.cluster,
                "cluster_size": self.cluster_size, "duplicate_of": self.duplicate_of}


@dataclass
class ClusterSummary:
    cluster: str
    size: int
    title: str | None
    url: str | None

    def to_dict(self) -> dict[str, Any]:
        """The cluster as ``es-simhash clusters --json`` prints it."""
        return {"cluster": self.cluster, "size": self.size, "title": self.title, "url": self.url}


def _hit(h: dict[str, Any]) -> Hit:
    src = h.get("_source", {})
    return Hit(
        id=h["_id"],
        score=h.get("_score"),
        title=src.get("title"),
        url=src.get("url"),
        cluster=src.get("dup_cluster", h["_id"]),
        duplicate_of=src.get("dup_of"),
        distance=src.get("dup_distance"),
        reason=src.get("dup_reason"),
        source=src,
    )


def search(client, index: str, query: str, size: int = 10, collapse: bool = True, url: str = "",
           max_chars: int | None = None) -> list[Hit]:
    """Full-text search over ``title`` and ``content``, in either script: the query and the indexed text are both
    folded to one script (:func:`es_simhash.fingerprint.fold.fold_text`; the fields ``title_folded`` and
    ``content_folded``), so a query in Traditional characters finds Simplified copies and the other way round.

    With ``collapse`` (the default) each duplicate cluster appears once, represented by its best-scoring
    document, and ``cluster_size`` says how many indexed documents the cluster holds. The query is cut to
    ``max_chars`` characters (default: :func:`query_chars`, which asks the engine).
    """
    validate_index_name(index)
    if max_chars is None:
        max_chars = query_chars(client, url)
    query = fold_text(query[:max_chars])
    body: dict[str, Any] = {
        "size": size,
        "_source": _HIT_FIELDS,
        "query": {"multi_match": {"query": query, "fields": ["title_folded^2", "content_folded"]}},
    }
    if collapse:
        body["collapse"] = {"field": "dup_cluster"}
    with elastic_errors(url):
        resp = client.search(index=index, **body)
        hits = [_hit(h) for h in resp["hits"]["hits"]]
        clusters = sorted({h.cluster for h in hits})
        if clusters:
            agg = client.search(
                index=index,
                size=0,
                query={"terms": {"dup_cluster": clusters}},
                aggs={"sizes": {"terms": {"field": "dup_cluster", "size": len(clusters)}}},
            )
            sizes = {b["key"]: b["doc_count"] for b in agg["aggregations"]["sizes"]["buckets"]}
            for h in hits:
                h.cluster_size = sizes.get(h.cluster, 1)
    return hits


def filter_duplicates(hits: Sequence[dict[str, Any]], k: int = 3) -> list[dict[str, Any]]:
    """Keep the first (best-ranked) hit of each group of near duplicates among ``hits``.

    ``hits`` are raw Elasticsearch hits (``{"_id", "_source": {...}}``) from any query on an es-simhash index;
    a hit is dropped when an earlier kept hit is in the same ``dup_cluster`` or within Hamming distance ``k``
    (hits without a ``simhash`` are compared by cluster only). Order is preserved.
    """
    kept: list[dict[str, Any]] = []
    kept_sims: list[int] = []
    clusters: set[str] = set()
    for h in hits:
        src = h.get("_source", {})
        cluster = src.get("dup_cluster")
        if cluster is not None and cluster in clusters:
            continue
        sim_hex = src.get("simhash")
        empty = src.get("n_features") == 0
        if sim_hex is not None and not empty and kept_sims:
            sim = int(sim_hex, 16)
            if (hamming.distances(sim, np.array(kept_sims, dtype=np.uint64)) <= k).any():
                continue
        kept.append(h)
        if cluster is not None:
            clusters.add(cluster)
        if sim_hex is not None and not empty:
            kept_sims.append(int(sim_hex, 16))
    return kept


def top_clusters(client, index: str, top: int = 10, min_size: int = 2, url: str = "") -> list[ClusterSummary]:
    """The ``top`` largest duplicate clusters (at least ``min_size`` documents), with their canonical
    document's title and url."""
    validate_index_name(index)
    with elastic_errors(url):
        resp = client.search(
            index=index,
            size=0,
            aggs={
                "clusters": {
                    "terms": {"field": "dup_cluster", "size": top, "min_doc_count": min_size},
                    "aggs": {
                        "sample": {
                            "top_hits": {
                                "size": 1,
                                "_source": ["title", "url", "doc_id"],
                                "sort": [{"is_canonical": "desc"}, {"doc_id": "asc"}],
                            }
                        }
                    },
                }
            },
        )
    out = []
    for b in resp["aggregations"]["clusters"]["buckets"]:
        sample = b["sample"]["hits"]["hits"]
        src = sample[0]["_source"] if sample else {}
        out.append(ClusterSummary(b["key"], b["doc_count"], src.get("title"), src.get("url")))
    return out
