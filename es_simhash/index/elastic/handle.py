"""One Elasticsearch index as the backend holds it: client, name, limits, counters and the requests every
part sends (retried searches, split ``terms`` clauses, sentence terms less known boilerplate)."""

from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from es_simhash.index.elastic.admin import read_lookup_keys, validate_index_name
from es_simhash.index.elastic.codec import from_docvalues
from es_simhash.index.elastic.errors import elastic_errors, raise_item_error, retrying
from es_simhash.index.elastic.schema import MSEARCH_FILTER

from es_simhash.fingerprint.model import Fingerprint, hex64
from es_simhash.lookup.keys import LookupKeys

log = logging.getLogger("es_simhash.index.elastic")


class IndexHandle:
    """The state and the shared requests of one Elasticsearch index (see :class:`ElasticIndex`)."""

    max_terms_count = 65_536
    """Most values in one ``terms`` clause (the index setting ``index.max_terms_count``; its default)."""
    max_mark_age = 10.0
    """Seconds for which ``visible_mark`` reuses the checkpoint of this handle's latest refresh; an older one would
    make settling read every document written since (other writers may write many), so it refreshes again."""
    max_sketch_clauses = 4_000
    """Most sketch-hash clauses in one batched search (the batch is looked up in several searches beyond that):
    Elasticsearch allows at least 1,024 clauses per search, more with a bigger heap (8,192 with 512 MB)."""

    def __init__(
        self,
        client,
        index: str,
        *,
        page_size: int = 500,
        batch_page: int = 10_000,
        max_candidates: int = 20_000,
        max_sentence_df: int = 50,
        chunk_size: int = 500,
        max_retries: int = 8,
        retry_for: float = 300.0,
        url: str = "",
        lookup_keys: LookupKeys | None = None,
    ) -> None:
        self.client = client
        self.index = validate_index_name(index)
        self.page_size = page_size
        self.batch_page = batch_page
        self.max_candidates = max_candidates
        self.max_sentence_df = max_sentence_df
        self.chunk_size = chunk_size
        self.max_retries = max_retries
        self.url = url
        self.retry_for = retry_for
        self.truncated_lookups = 0
        self.crowded_batches = 0
        """Documents whose own lookup search was full, so they were read to the end one page at a time."""
        self.split_batches = 0
        """Batched searches that came back full and were split in two."""
        self.searches = 0
        """Searches sent by lookups (each search of an ``_msearch`` counts)."""
        self.hits_read = 0
        """Hits those searches brought to the client (before the exact re-rank)."""
        self._lookup_keys = lookup_keys
        self._counting = threading.Lock()
        self._boilerplate: dict[str, int] = {}
        """Sentence hashes seen in more than ``max_sentence_df`` documents, with that count: left out of later
        lookups (a sentence's document frequency only grows while documents are added)."""
        self._visible: int | None = None
        """The highest checkpoint read before a refresh this handle made and saw finish (:meth:`_refresh`): every
        operation up to it is visible to any search sent since."""
        self._visible_at = 0.0
        """When (``time.monotonic``) a refresh last raised :attr:`_visible`."""

    @property
    def lookup_keys(self) -> LookupKeys:
        """The keys recorded in the index's mapping (segments for an index made before lookup keys existed;
        the default keys for an index that does not exist yet)."""
        if self._lookup_keys is None:
            self._lookup_keys = read_lookup_keys(self.client, self.index, self.url)
        return self._lookup_keys

    def __len__(self) -> int:
        with elastic_errors(self.url):
            self.client.indices.refresh(index=self.index)
            return int(self.client.count(index=self.index)["count"])

    def _checkpoint(self) -> int:
        """The lowest global checkpoint of the index's shards: every operation up to it has been processed by every
        copy (with several shards, the lowest over them)."""
        stats = self.client.indices.stats(index=self.index, level="shards", metric="docs",
                                          filter_path="indices.*.shards.*.seq_no.global_checkpoint")
        marks = [copy["seq_no"]["global_checkpoint"] for index in stats.get("indices", {}).values()
                 for copies in index["shards"].values() for copy in copies]
        return min(marks) if marks else -1

    def _refresh(self) -> None:
        """Refresh the index, and remember the checkpoint read just before (:meth:`_checkpoint`): once the refresh
        has finished, every document with a ``_seq_no`` up to it is visible (``visible_mark`` then costs no
        request)."""
        mark = self._checkpoint()
        self.client.indices.refresh(index=self.index)
        with self._counting:
            if self._visible is None or mark >= self._visible:
                self._visible, self._visible_at = mark, time.monotonic()

    def _sentence_terms(self, fp: Fingerprint, sentences: bool = True, sketch: bool = True) -> list[str]:
        """The fingerprint's sentence hashes as stored (long-sentence and fuzzy hashes, sketch hashes or both), less
        the known boilerplate ones."""
        wanted = map(hex64, (fp.sentences + fp.fuzzy if sentences else ()) + (fp.sketch if sketch else ()))
        return [x for x in wanted if x not in self._boilerplate]

    def _terms(self, field: str, values: list[str]) -> list[dict[str, Any]]:
        """``terms`` clauses over ``values`` (``ids`` clauses for the field ``"ids"``), split so none holds more than
        ``max_terms_count`` (Elasticsearch's ``index.max_terms_count``, 65,536 by default, which a big batch's keys
        can exceed)."""
        step = self.max_terms_count
        chunks = [values[i:i + step] for i in range(0, len(values), step)]
        if field == "ids":
            return [{"ids": {"values": c}} for c in chunks]
        return [{"terms": {field: c}} for c in chunks]

    @staticmethod
    def _held_agg(hashes: list[str]) -> dict[str, Any]:
        """A ``terms`` aggregation counting, among the documents it runs over, those holding each of ``hashes``.
        (``map``: no global ordinals, which would be rebuilt after every refresh.)"""
        return {"terms": {"field": "sentences", "include": hashes, "size": len(hashes), "execution_hint": "map"}}

    def _df_agg(self, sentences: list[str], exclude: Sequence[str]) -> dict[str, Any]:
        """An aggregation counting the documents that hold each of ``sentences`` (their document frequency),
        leaving out ``exclude``."""
        query: dict[str, Any] = {"terms": {"sentences": sentences}}
        if exclude:
            query = {"bool": {"filter": query, "must_not": self._terms("ids", list(exclude))}}
        return {"filter": query, "aggs": {"df": self._held_agg(sentences)}}

    def _count_bodies(self, hashes: list[str], exclude: Sequence[str]) -> list[dict[str, Any]]:
        """Searches counting the documents that hold each of ``hashes`` (their document frequency), leaving out
        ``exclude`` (:meth:`_counted` reads them): a top-level ``filters`` aggregation over the whole index, one
        ``term`` filter per hash, which Elasticsearch counts filter by filter from each term's postings without
        reading any document (a ``terms`` aggregation reads every value of every holder); and the excluded
        documents' holdings, counted by a search of their own (an aggregation beside the first would make it visit
        every document), to be subtracted."""
        bodies = [{"size": 0, "track_total_hits": False,
                   "aggs": {"df": {"filters": {"filters": {x: {"term": {"sentences": x}} for x in hashes}}}}}]
        if exclude:
            bodies.append({"size": 0, "track_total_hits": False,
                           "query": {"bool": {"filter": {"bool": {"should": self._terms("ids", list(exclude))}}}},
                           "aggs": {"df": self._held_agg(hashes)}})
        return bodies

    @staticmethod
    def _counted(responses: list[dict[str, Any]]) -> dict[str, int]:
        """The document frequencies :meth:`_count_bodies` searches found (hex -> count; absent: 0)."""
        df = {x: b["doc_count"] for x, b in responses[0]["aggregations"]["df"]["buckets"].items() if b["doc_count"]}
        for resp in responses[1:]:
            for b in resp["aggregations"]["df"]["buckets"]:
                df[b["key"]] = df.get(b["key"], 0) - b["doc_count"]
        return {x: n for x, n in df.items() if n > 0}

    def _msearch(self, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The responses of ``bodies``, sent in one ``_msearch`` (retried on transient failures)."""
        return self._retrying(lambda: self._msearch_once(bodies), "lookup")

    @contextmanager
    def _point_in_time(self) -> Iterator[str]:
        """A point in time of the index, closed on leaving: searches on it see the same documents, though the index
        is refreshed between them. (A point in time whose node left fails its searches with a retryable error: the
        caller opens another.)"""
        pit = self.client.open_point_in_time(index=self.index, keep_alive="1m")["id"]
        try:
            yield pit
        finally:
            try:  # (briefly, once: the caller may be retrying after a timeout)
                self.client.options(request_timeout=10, max_retries=0).close_point_in_time(id=pit)
            except Exception as exc:  # (it expires after its keep-alive anyway)
                log.warning("closing a point in time of index %r failed (it expires within a minute): %s",
                            self.index, exc)

    def _msearch_once(self, bodies: list[dict[str, Any]], pit: str | None = None) -> list[dict[str, Any]]:
        """The responses of ``bodies`` sent in one ``_msearch`` (on the point in time ``pit``, when given); a failed
        search raises :class:`Transient` or :class:`ElasticError`."""
        if not bodies:
            return []
        searches: list[dict[str, Any]] = []
        for b in bodies:
            # no partial results: a shard that failed would leave candidates out silently
            searches += ([{"allow_partial_search_results": False}, {**b, "pit": {"id": pit}}] if pit else
                         [{"index": self.index, "allow_partial_search_results": False}, b])
        out = []
        for r in self.client.msearch(searches=searches, filter_path=MSEARCH_FILTER)["responses"]:
            if "error" in r:
                raise_item_error(r, "lookup", self.index)
            hits = r.get("hits", {}).get("hits", [])
            with self._counting:  # (lookups may run in several threads)
                self.searches += 1
                self.hits_read += len(hits)
            for h in hits:
                h["_source"] = from_docvalues(h.pop("fields", {}))
                h["_id"] = h["_source"]["doc_id"]
            out.append({"hits": {"hits": hits}, "aggregations": r.get("aggregations", {})})
        return out

    def _retrying(self, fn, what: str):
        """``fn()`` retried on transient failures for at most ``retry_for`` seconds (:func:`retrying`)."""
        return retrying(fn, what, self.url, self.retry_for)

