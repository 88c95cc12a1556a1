"""The lookup planner: a batch of lookups as one search (split when it comes back full, down to single documents read
to the end), or one search per document for an index with segments only; hits mapped back to their queries exactly
as the embedded index would answer. Its parts: :class:`Boilerplate` (the hashes known to bring no candidates),
:class:`PerDocumentLookups`, :class:`BatchedLookups` and :class:`LookupPlanner`, which chooses between them."""

from __future__ import annotations

import logging
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from es_simhash.fingerprint.model import SKETCH_BIT, Fingerprint, hex64, is_sentence
from es_simhash.index.base import Lookup, LookupResult
from es_simhash.index.elastic.codec import Hits
from es_simhash.index.elastic.handle import IndexHandle
from es_simhash.index.elastic.keyfilter import PartitionFilters, Routing, TermFilter, key_codes, term_codes
from es_simhash.index.elastic.schema import LOOKUP_FIELDS, written_above
from es_simhash.lookup import hamming
from es_simhash.lookup.candidates import CandidateContract, sentence_candidate, sharing_at_least

log = logging.getLogger("es_simhash.index.elastic")


@dataclass(frozen=True)
class CandidateTerms:
    """The terms a batched lookup asks every stored document for, by field: ids, content hashes, lookup keys and
    long-sentence hashes (a document holding any one is brought); ``key_codes``: the keys' codes, in their order
    (:func:`~es_simhash.index.elastic.keyfilter.key_codes`, made with them), for partition filters."""

    ids: list[str]
    contents: list[str]
    keys: list[str]
    sentences: list[str]
    key_codes: np.ndarray | None = None

    def __bool__(self) -> bool:
        return bool(self.ids or self.contents or self.keys or self.sentences)

    def should(self, handle: IndexHandle) -> list[dict[str, Any]]:
        """The ``should`` clauses asking for them (``terms`` split to the engine's bound)."""
        should: list[dict[str, Any]] = handle.terms("ids", self.ids) if self.ids else []
        for field, values in (("content_hash", self.contents), ("lookup_keys", self.keys),
                              ("sentences", self.sentences)):
            if values:
                should += handle.terms(field, values)
        return should

    @cached_property
    def _coded(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each field's values (an object array) and their codes (:func:`term_codes`), made once for every
        partition."""
        keys = self.key_codes if self.key_codes is not None else term_codes("key", self.keys)
        return [(np.array(values, dtype=object), codes) for values, codes in (
            (self.ids, term_codes("id", self.ids)), (self.contents, term_codes("hex", self.contents)),
            (self.keys, keys), (self.sentences, term_codes("hex", self.sentences)))]

    def within(self, held: TermFilter) -> "CandidateTerms":
        """Those a partition holds (every one it holds: :meth:`TermFilter.has`)."""
        ids, contents, keys, sentences = (values[held.has(codes)].tolist() for values, codes in self._coded)
        return CandidateTerms(ids, contents, keys, sentences)


def shared_keys(qkeys: np.ndarray, hkeys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(query, hit) pairs that share a key in some table, from ``(n_queries, T)`` and ``(n_hits, T)`` key arrays
    (pairs may repeat when they share several keys)."""
    n_tables = qkeys.shape[1]
    table = np.arange(n_tables, dtype=np.uint64) << np.uint64(32)
    q_comp = (qkeys.astype(np.uint64) | table).ravel()
    order = np.argsort(q_comp, kind="stable")
    q_sorted = q_comp[order]
    h_comp = (hkeys.astype(np.uint64) | table).ravel()
    lo = np.searchsorted(q_sorted, h_comp, "left")
    found = np.flatnonzero(q_sorted[np.minimum(lo, len(q_sorted) - 1)] == h_comp)  # most hit keys match nothing
    lo = lo[found]
    counts = np.searchsorted(q_sorted, h_comp[found], "right") - lo
    total = int(counts.sum())
    pos = np.repeat(lo - np.cumsum(counts) + counts, counts) + np.arange(total)
    return order[pos] // n_tables, np.repeat(found, counts) // n_tables


def held_agg(hashes: list[str]) -> dict[str, Any]:
    """A ``terms`` aggregation counting, among the documents it runs over, those holding each of ``hashes``.
    (``map``: no global ordinals, which would be rebuilt after every refresh.)"""
    return {"terms": {"field": "sentences", "include": hashes, "size": len(hashes), "execution_hint": "map"}}


class Boilerplate:
    """The sentence and sketch hashes (hex, as stored) seen in more than ``max_sentence_df`` documents, with that
    count: they bring no candidates, so lookups leave them out of their searches. A hash's document frequency only
    grows while documents are added; after a delete the owner calls :meth:`clear` and they are learned again."""

    def __init__(self, max_sentence_df: int) -> None:
        self._max_sentence_df = max_sentence_df
        self.known: dict[str, int] = {}
        """hex -> the number of documents seen holding it (above ``max_sentence_df``)."""

    @property
    def max_sentence_df(self) -> int:
        return self._max_sentence_df

    @max_sentence_df.setter
    def max_sentence_df(self, value: int) -> None:
        """A new bound: the hashes known with a count no longer above it bring candidates again."""
        self._max_sentence_df = value
        for x in [x for x, n in self.known.items() if n <= value]:
            del self.known[x]  # (in place: one dict for the boilerplate's whole life)

    def learn(self, counts: Mapping[str, int]) -> bool:
        """Record the hashes of ``counts`` (hex -> document frequency) held by more than ``max_sentence_df``
        documents; whether there were any."""
        learned = {x: n for x, n in counts.items() if n > self.max_sentence_df}
        self.known.update(learned)
        return bool(learned)

    def terms(self, fp: Fingerprint, sentences: bool = True, sketch: bool = True) -> list[str]:
        """The fingerprint's sentence hashes as stored (long-sentence and fuzzy hashes, sketch hashes or both), less
        the known boilerplate ones."""
        wanted = map(hex64, (fp.sentences + fp.fuzzy if sentences else ()) + (fp.sketch if sketch else ()))
        return [x for x in wanted if x not in self.known]

    def clear(self) -> None:
        """Forget every known hash (document frequencies went down)."""
        self.known.clear()


class PerDocumentLookups:
    """One search per document (indexes with segments; a crowded document of a batch), all in one ``_msearch``,
    read to the end with ``search_after`` (``page_size`` hits a page, up to ``max_candidates``) when a document's
    bucket is crowded."""

    def __init__(self, handle: IndexHandle, boilerplate: Boilerplate, *, page_size: int = 500,
                 max_candidates: int = 20_000) -> None:
        self.handle = handle
        self.boilerplate = boilerplate
        self.page_size = page_size
        self.max_candidates = max_candidates
        self.truncated_lookups = 0
        """Lookups whose candidates were cut at ``max_candidates`` (a warning is logged for each)."""

    def lookup(self, queries: Sequence[Lookup], contract: CandidateContract, exclude: Sequence[str]
               ) -> list[LookupResult]:
        """One search per query in one ``_msearch``; more requests only for lookups that hit a crowded bucket."""
        boilerplate = self.boilerplate
        sentences = [boilerplate.terms(q.fingerprint) for q in queries]
        responses = self.handle.msearch([self._body(q, s, exclude) for q, s in zip(queries, sentences)])
        hits_of = [r["hits"]["hits"] for r in responses]
        crowded = [i for i, h in enumerate(hits_of) if len(h) >= self.page_size]
        truncated: set[int] = set()
        if crowded:
            # A full first page: some bucket is shared by many documents. Boilerplate sentences (document
            # frequency above max_sentence_df) are left out of the query, then the rest is read to the end.
            with_sentences = [i for i in crowded if sentences[i]]
            dfs = self.handle.msearch([self._df_body(sentences[i], exclude) for i in with_sentences])
            for i, resp in zip(with_sentences, dfs):
                df = {b["key"]: b["doc_count"] for b in resp["aggregations"]["held"]["df"]["buckets"]}
                boilerplate.learn({h: df[h] for h in sentences[i] if h in df})
                sentences[i] = [h for h in sentences[i] if h not in boilerplate.known]
            truncated = self._page_through(queries, sentences, exclude, crowded, hits_of)
        return [
            self._rank(q, s, hits, contract, i in truncated)
            for i, (q, s, hits) in enumerate(zip(queries, sentences, hits_of))
        ]

    def _body(
        self, q: Lookup, sentences: Sequence[str], exclude: Sequence[str] = (), search_after: list[Any] | None = None,
        paged: bool = False,
    ) -> dict[str, Any]:
        """One ``bool``/``should`` over id, content hash, the lookup keys (or the four segments) and the sentence
        hashes of one document.

        The first page is unsorted (sorting costs more than the search); only a crowded bucket is read again
        in ``doc_id`` order with ``search_after``."""
        fp = q.fingerprint
        lk = self.handle.lookup_keys
        should: list[dict[str, Any]] = [{"ids": {"values": [q.id]}}]
        if fp.n_chars:
            should.append({"term": {"content_hash": hex64(fp.content_hash)}})
        if fp.n_features:
            if lk.is_segments:
                should += [{"term": {f"seg{i}": key}} for i, key in enumerate(lk.segment_terms(fp.simhash))]
            else:
                should.append({"terms": {"lookup_keys": lk.terms(hamming.as_uint64([fp.simhash]))[0]}})
        if sentences:
            should.append({"terms": {"sentences": list(sentences)}})
        query: dict[str, Any] = {"bool": {"should": should, "minimum_should_match": 1}}
        if exclude:
            query["bool"]["must_not"] = self.handle.terms("ids", list(exclude))
        body: dict[str, Any] = {
            "size": self.page_size,
            "_source": False,
            "stored_fields": "_none_",
            "docvalue_fields": LOOKUP_FIELDS,
            "query": {"bool": {"filter": query}},
            "track_total_hits": False,
        }
        if paged:
            body["sort"] = [{"doc_id": "asc"}]
        if search_after is not None:
            body["search_after"] = search_after
        return body

    def _df_body(self, sentences: list[str], exclude: Sequence[str]) -> dict[str, Any]:
        """A search counting the documents that hold each of ``sentences`` (their document frequency), leaving out
        ``exclude``."""
        query: dict[str, Any] = {"terms": {"sentences": sentences}}
        if exclude:
            query = {"bool": {"filter": query, "must_not": self.handle.terms("ids", list(exclude))}}
        return {"size": 0, "aggs": {"held": {"filter": query, "aggs": {"df": held_agg(sentences)}}}}

    def _page_through(
        self, queries: Sequence[Lookup], sentences: list[list[str]], exclude: Sequence[str], crowded: list[int],
        hits_of: list[list],
    ) -> set[int]:
        """Read the hits of the ``crowded`` lookups again, in ``doc_id`` order a page at a time, into ``hits_of``;
        the lookups cut at ``max_candidates``."""
        truncated: set[int] = set()
        for i in crowded:
            hits_of[i] = []
        open_ = {i: None for i in crowded}  # lookup -> search_after
        while open_:
            order = list(open_)
            pages = self.handle.msearch([self._body(queries[i], sentences[i], exclude, open_[i], paged=True)
                                         for i in order])
            open_ = {}
            for i, resp in zip(order, pages):
                page = resp["hits"]["hits"]
                hits_of[i].extend(page)
                if len(hits_of[i]) >= self.max_candidates:
                    truncated.add(i)
                    self.truncated_lookups += 1
                    log.warning(
                        "document %r shares a bucket with more than %d documents in index %r: only the first %d "
                        "candidates were compared (raise max_candidates)",
                        queries[i].id, self.max_candidates, self.handle.index, len(hits_of[i]),
                    )
                elif len(page) == self.page_size:
                    open_[i] = page[-1]["sort"]
        return truncated

    def _rank(
        self,
        q: Lookup,
        sentences: list[str],
        hits: list[dict[str, Any]],
        contract: CandidateContract,
        truncated: bool,
    ) -> LookupResult:
        """Keep what the embedded index would return under ``contract``: same content; a shared lookup key within
        ``max_distance`` (exact Hamming re-rank, vectorised); or the shared sentence or sketch hashes it asks for,
        not boilerplate."""
        fp = q.fingerprint
        cap = self.boilerplate.max_sentence_df
        known = self.boilerplate.known
        # document frequency of the query's sentences: counted in the hits (every stored document holding one of
        # them matched the query), or known for the boilerplate ones left out of it
        df = Counter(x for h in hits for x in h["_source"].get("sentences") or () if x in sentences)
        self.boilerplate.learn(df)
        sentence_df = {h: known.get(hex64(h)) or df.get(hex64(h), 0) for h in fp.hashes}
        cols = Hits(hits)
        existing = next((cols.doc(j) for j, doc_id in enumerate(cols.ids) if doc_id == q.id), None)
        others = np.array([j for j, doc_id in enumerate(cols.ids) if doc_id != q.id], dtype=np.intp)
        if not len(others):
            return LookupResult(existing, [], truncated, sentence_df)
        srcs = [cols.srcs[j] for j in others.tolist()]
        sims = np.array(cols.simhash, dtype=np.uint64)[others]
        keep = np.zeros(len(others), dtype=bool)
        if fp.n_features:
            lk = self.handle.lookup_keys
            shares_key = lk.share_a_key(sims, np.full(len(sims), fp.simhash, dtype=np.uint64))
            shares_key &= np.array([s.get("n_features") != 0 for s in srcs])
            keep |= shares_key & (hamming.distances(fp.simhash, sims) <= contract.max_distance)
        if fp.n_chars:
            content = hex64(fp.content_hash)
            keep |= np.array([s.get("content_hash") == content for s in srcs])
        good = {x for x in sentences if df[x] <= cap}
        if good:
            long_ = {x for x in good if is_sentence(int(x, 16))}
            sketch = good - long_
            keep |= np.array([sentence_candidate(long_, sketch, s.get("sentences") or (), contract) for s in srcs])
        return LookupResult(existing, [cols.doc(j) for j in others[keep].tolist()], truncated, sentence_df)


class BatchedLookups:
    """A batch of lookups in one search (``batch_page`` hits at most; through partition filters, one ``_msearch``
    of a search per filtered partition holding some of its terms beside the search of the alias), split in halves
    while a search comes back full; a single document whose own search is still full is looked up by
    ``per_document``."""

    def __init__(self, handle: IndexHandle, boilerplate: Boilerplate, per_document: PerDocumentLookups, *,
                 batch_page: int = 10_000) -> None:
        self.handle = handle
        self.boilerplate = boilerplate
        self.per_document = per_document
        self.batch_page = batch_page
        self.crowded_batches = 0
        """Documents whose own lookup search was full, so they were read to the end one page at a time."""
        self.split_batches = 0
        """Batched searches that came back full and were split in two."""
        self.filters = PartitionFilters(handle)
        """The partitions' term filters (an alias's older partitions are asked only for the terms they hold)."""
        self.routed_searches = 0
        """Batched searches whose terms were routed by partition filters."""

    def lookup(self, queries: Sequence[Lookup], contract: CandidateContract, exclude: Sequence[str]
               ) -> list[LookupResult]:
        """One search for ``queries`` under ``contract``. When it comes back full, the sentences it shows to be
        boilerplate are left out and the search is sent again; when it is still full (many documents share the batch's keys or
        sentences: near-duplicate clusters), each half is looked up on its own, down to single documents, which are
        read to the end one search at a time."""
        found = self._batch_search(queries, contract, exclude)
        if not isinstance(found, bool):
            return self._match_batch(queries, *found, contract)
        if found:  # the full page showed boilerplate sentences: again without them
            return self.lookup(queries, contract, exclude)
        if len(queries) == 1:
            self.crowded_batches += 1
            return self.per_document.lookup(queries, contract, exclude)
        self.split_batches += 1
        mid = len(queries) // 2
        return (self.lookup(queries[:mid], contract, exclude)
                + self.lookup(queries[mid:], contract, exclude))

    def _batch_search(self, queries: Sequence[Lookup], contract: CandidateContract, exclude: Sequence[str]
                      ) -> tuple[list[dict[str, Any]], dict[str, int]] | bool:
        """The hits of one search for all ``queries`` and the document frequencies of their sketch hashes (hex ->
        count; absent: 0); or, when it returned a full page, whether that page showed boilerplate sentences (so the
        search is worth sending again without them).

        With sketch hashes, two searches on one point in time (so both see the same documents): first their
        document frequencies are counted (:meth:`_count_bodies`), then the candidates are searched, asking through
        the sketch only for the hashes some document holds and that are not boilerplate (a short text's shingles
        are mostly held by no other document: left out, they cost the search nothing and change no answer)."""
        handle, boilerplate = self.handle, self.boilerplate
        routing = self.filters.route()  # (before a point in time is opened: it may read a partition whole)
        sketch_terms = sorted({x for q in queries for x in boilerplate.terms(q.fingerprint, sentences=False)})
        if not sketch_terms:
            return handle.retrying(lambda: self._candidate_search(queries, contract, exclude, None, {}, routing),
                                   "lookup")

        def pinned() -> tuple[list[dict[str, Any]], dict[str, int]] | bool:
            with handle.point_in_time() as pit:
                bodies, apart = self._count_bodies(sketch_terms, exclude, routing)
                sketch_df = self._counted(handle.msearch_once(bodies, pit), apart)
                boilerplate.learn(sketch_df)
                return self._candidate_search(queries, contract, exclude, pit, sketch_df, routing)

        return handle.retrying(pinned, "lookup")

    def _count_bodies(self, hashes: list[str], exclude: Sequence[str], routing: Routing | None = None
                      ) -> tuple[list[dict[str, Any]], dict[str, set[str]]]:
        """Searches counting the documents that hold each of ``hashes`` (their document frequency), leaving out
        ``exclude`` (:meth:`_counted` reads them): a ``filters`` aggregation, one ``term`` filter per hash; and the
        excluded documents' holdings, counted by a search of their own (an aggregation beside the first would make
        it visit every document), to be subtracted.

        The one place the body depends on the engine (``client.engine``), because the two engines run a ``filters``
        aggregation differently. Elasticsearch counts a top-level one (no query) filter by filter from each term's
        postings, reading no document. OpenSearch (2 and 3) has no such path: it tests every document the search
        matches against every filter, so over the whole index the cost grows with the index times the hashes
        (3,000 hashes over 1,005,000 documents: 15.9 s of node CPU on OpenSearch 2.19.6, 17.7 s on 3.3.2). There
        the aggregation runs under a query matching the holders only (a ``terms`` query on the hashes), which
        changes no count (every document a filter matches is a holder): 0.07 s on 2.19.6 (under 0.3 s on 3.3.2),
        less than a ``terms`` aggregation over the holders (0.10 s on 2.19.6: it reads every value of every holder)
        or a count search per hash (0.39 s). Under that query Elasticsearch gains nothing (0.02-0.04 s, against
        0.02 s).

        Through partition filters (``routing``), each hash's filter leaves out (``must_not`` on ``_index``) the
        filtered partitions holding no document with it up to their marks (a shard outside rewrites it to nothing),
        and a search of the documents above those marks counts their hashes by partition: of those counts, a hash's
        in each partition its filter left out are added (returned: partition -> the hashes left out there). Each
        holder is counted once."""
        filters: dict[str, Any] = {x: {"term": {"sentences": x}} for x in hashes}
        apart: dict[str, set[str]] = {}  # partition -> the hashes its filter lacks
        above: list[dict[str, Any]] = []
        if routing is not None:
            lacking: dict[str, list[str]] = {}  # hash -> the partitions whose filter lacks it
            codes = term_codes("hex", hashes)
            for name in sorted(routing.filters):
                for i in np.flatnonzero(~routing.filters[name].has(codes)).tolist():
                    apart.setdefault(name, set()).add(hashes[i])
                    lacking.setdefault(hashes[i], []).append(name)
            for x, left_out in lacking.items():
                filters[x] = {"bool": {"filter": [filters[x]], "must_not": [{"terms": {"_index": left_out}}]}}
            if apart:
                above.append({"size": 0, "track_total_hits": False, "query": {"bool": {"should": [
                    written_above(routing.since[name], name) for name in sorted(apart)], "minimum_should_match": 1}},
                    "aggs": {"above": {"terms": {"field": "_index", "size": len(apart)},
                                       "aggs": {"df": held_agg(hashes)}}}})
        aggs = {"df": {"filters": {"filters": filters}}}
        count: dict[str, Any] = {"size": 0, "track_total_hits": False, "aggs": aggs}
        if self.handle.client.engine == "opensearch":
            count["query"] = {"bool": {"filter": {"bool": {"should": self.handle.terms("sentences", hashes)}}}}
        bodies = [count, *above]
        if exclude:
            bodies.append({"size": 0, "track_total_hits": False,
                           "query": {"bool": {"filter": {"bool": {"should": self.handle.terms("ids", list(exclude))}}}},
                           "aggs": {"df": held_agg(hashes)}})
        return bodies, apart

    @staticmethod
    def _counted(responses: list[dict[str, Any]], apart: Mapping[str, set[str]] | None = None) -> dict[str, int]:
        """The document frequencies :meth:`_count_bodies` searches found (hex -> count; absent: 0); ``apart``:
        the hashes each partition's filter left out, counted above its mark by the second search."""
        df = {x: b["doc_count"] for x, b in responses[0]["aggregations"]["df"]["buckets"].items() if b["doc_count"]}
        rest = responses[1:]
        if apart:
            for part in rest[0]["aggregations"]["above"]["buckets"]:
                left_out = apart.get(part["key"], set())
                for b in part["df"]["buckets"]:
                    if b["key"] in left_out:
                        df[b["key"]] = df.get(b["key"], 0) + b["doc_count"]
            rest = rest[1:]
        for resp in rest:
            for b in resp["aggregations"]["df"]["buckets"]:
                df[b["key"]] = df.get(b["key"], 0) - b["doc_count"]
        return {x: n for x, n in df.items() if n > 0}

    def _candidate_search(self, queries: Sequence[Lookup], contract: CandidateContract, exclude: Sequence[str],
                          pit: str | None, sketch_df: dict[str, int], routing: Routing | None = None
                          ) -> tuple[list[dict[str, Any]], dict[str, int]] | bool:
        """One search for the candidates of all ``queries`` (on the point in time ``pit``), the sketch hashes'
        document frequencies ``sketch_df`` already counted, its terms routed by partition filters (``routing``);
        for a full page, whether it showed boilerplate."""
        handle, boilerplate = self.handle, self.boilerplate
        lk = handle.lookup_keys
        fps = [q.fingerprint for q in queries]
        with_keys = [fp.simhash for fp in fps if fp.n_features]
        keys: list[str] = []
        codes = None
        if with_keys:  # (each key once, in the order of its code)
            sims = hamming.as_uint64(with_keys)
            flat = [t for row in lk.terms(sims) for t in row]
            codes, first = np.unique(key_codes(lk, sims), return_index=True)
            keys = [flat[i] for i in first.tolist()]
        terms = CandidateTerms(
            ids=[q.id for q in queries],
            contents=sorted({hex64(fp.content_hash) for fp in fps if fp.n_chars}),
            keys=keys, key_codes=codes,
            # long-sentence hashes: every stored document holding one is brought (the hits then keep those holding
            # contract.shared_sentences of a query's; counting them in the hits gives each hash's document
            # frequency)
            sentences=sorted({x for fp in fps for x in boilerplate.terms(fp, sketch=False)}))
        sentences = terms.sentences
        # shingle-sketch hashes: only a document holding contract.shared_sketch of one query's is a candidate (one
        # shared common shingle would bring thousands), so one clause per query, over its hashes held by some
        # document (boilerplate ones are already left out)
        least = contract.shared_sketch
        sketches = [[x for x in boilerplate.terms(fp, sentences=False) if sketch_df.get(x)] for fp in fps]
        groups = [g for g in dict.fromkeys(map(tuple, sketches)) if len(g) >= least]
        if routing is not None and pit is None and not groups:
            targets, queries_ = self._partition_searches(terms, routing, exclude)
        else:
            should, above = self._routed(terms, routing)
            should += self._sketch_clauses(groups, least, routing)
            query: dict[str, Any] = {"bool": {"should": should, "minimum_should_match": 1}}
            if exclude:
                query["bool"]["must_not"] = handle.terms("ids", list(exclude))
            if above:
                query = {"bool": {"should": [query, *above], "minimum_should_match": 1}}
            targets, queries_ = None, [query]
        body: dict[str, Any] = {"size": self.batch_page, "_source": False, "stored_fields": "_none_",
                                "docvalue_fields": LOOKUP_FIELDS, "track_total_hits": False}
        if routing is not None:
            body["seq_no_primary_term"] = True
        pages = [r["hits"]["hits"] for r in handle.msearch_once(
            [{**body, "query": {"bool": {"filter": q}}} for q in queries_], pit, targets)]
        if targets is not None and any(pages[1:]):  # (a partition named may have left the alias meanwhile, being
            # dropped: the alias would not have shown its documents)
            behind = set(handle.partitions())
            pages[1:] = [page if set(at) <= behind else [] for page, at in zip(pages[1:], targets[1:])]
        full = any(len(page) >= self.batch_page for page in pages)
        hits = [h for page in pages for h in page]
        if routing is not None:
            if len(pages[0]) >= self.batch_page and self.filters.catch_up(routing):
                return True  # (the documents above the filters' marks filled it: held now, so search again; only the
                # search of the alias, which asks for them, can be filled by them)
            if not full:
                self.filters.absorb(routing, hits)
            if exclude:  # (documents above a filter's mark came whatever their id)
                left_out = set(exclude)
                hits = [h for h in hits if h["_id"] not in left_out]
        if full:
            return self._learn_boilerplate(hits, sentences)
        return hits, sketch_df

    def _routed(self, terms: CandidateTerms, routing: Routing | None
                ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The ``should`` clauses asking for ``terms`` in one search: of every partition; or through an alias with
        partition filters (:mod:`~es_simhash.index.elastic.keyfilter`; a search on a point in time, which names no
        partition: :meth:`_partition_searches` otherwise), of each filtered partition only the terms it holds (a
        clause per partition with any, on its ``_index``) and of every other partition all of them. And the clauses
        asking each filtered partition for every document above its filter's mark (``_seq_no``), which an
        ``exclude`` must not leave out (the filter takes their terms in)."""
        if routing is None:
            return terms.should(self.handle), []
        names = sorted(routing.filters)
        should: list[dict[str, Any]] = []
        if terms:
            should.append({"bool": {"filter": [{"bool": {"should": terms.should(self.handle),
                                                         "minimum_should_match": 1}}],
                                    "must_not": [{"terms": {"_index": names}}]}})
        for name in names:
            held = terms.within(routing.filters[name])
            if held:
                should.append({"bool": {"filter": [{"term": {"_index": name}},
                                                   {"bool": {"should": held.should(self.handle),
                                                             "minimum_should_match": 1}}]}})
        above = [written_above(routing.since[name], name) for name in names]
        self.routed_searches += 1
        return should, above

    def _partition_searches(self, terms: CandidateTerms, routing: Routing, exclude: Sequence[str]
                            ) -> tuple[list[str | list[str]], list[dict[str, Any]]]:
        """The searches (targets and queries, sent in one ``_msearch``) asking for ``terms`` through partition
        filters: one of the alias, for every term of every partition but the filtered ones (the newest, those
        without a filter, one made meanwhile) and for every document above a filter's mark; and one of each
        filtered partition holding some of the terms, for those in its documents up to the mark (a single-shard
        search, which Elasticsearch and OpenSearch query and fetch in one round; each document comes once).
        ``exclude`` leaves its ids out of the term clauses only (the filters take in every document above their
        marks)."""
        handle = self.handle

        def asking(t: CandidateTerms) -> dict[str, Any]:
            q: dict[str, Any] = {"bool": {"should": t.should(handle), "minimum_should_match": 1}}
            if exclude:
                q["bool"]["must_not"] = handle.terms("ids", list(exclude))
            return q

        names = sorted(routing.filters)
        rest = asking(terms)
        rest["bool"]["must_not"] = [*rest["bool"].get("must_not", []), {"terms": {"_index": names}}]
        above = [written_above(routing.since[name], name) for name in names]
        targets: list[str | list[str]] = [handle.index]
        queries: list[dict[str, Any]] = [{"bool": {"should": [rest, *above], "minimum_should_match": 1}}]
        for name in names:
            held = terms.within(routing.filters[name])
            if held:  # (up to the mark only: a document above it comes once, from the search of the alias)
                q = asking(held)
                q["bool"]["must_not"] = [*q["bool"].get("must_not", []), written_above(routing.since[name])]
                targets.append([name])
                queries.append(q)
        self.routed_searches += 1
        return targets, queries

    @staticmethod
    def _sketch_clauses(groups: list[tuple[str, ...]], least: int, routing: Routing | None) -> list[dict[str, Any]]:
        """A clause per short text's sketch hashes (``least`` of them to be shared); with partition filters, each
        clause leaves out (``must_not`` on ``_index``) the filtered partitions holding fewer than ``least`` of its
        hashes (one clause more per text, whatever the partitions: the clause bound stays predictable)."""
        if routing is not None and groups:
            names = sorted(routing.filters)
            codes = term_codes("hex", [x for g in groups for x in g])
            owner = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
            held = {name: np.bincount(owner[routing.filters[name].has(codes)], minlength=len(groups)).tolist()
                    for name in names}
        clauses = []
        for i, g in enumerate(groups):
            clause: dict[str, Any] = {"bool": {"should": [{"term": {"sentences": x}} for x in g],
                                               "minimum_should_match": least}}
            if routing is not None:
                apart = [name for name in names if held[name][i] < least]
                if apart:
                    clause["bool"]["must_not"] = [{"terms": {"_index": apart}}]
            clauses.append(clause)
        return clauses

    def _learn_boilerplate(self, hits: list[dict[str, Any]], sentences: Sequence[str]) -> bool:
        """From a full page: the batch's sentence hashes held by more than ``max_sentence_df`` of its hits are
        boilerplate (their document frequency is at least that), so later searches leave them out. Whether it
        found any."""
        wanted = set(sentences)
        counts = Counter(x for h in hits for x in h["_source"].get("sentences") or () if x in wanted)
        return self.boilerplate.learn(counts)

    def _match_batch(self, queries: Sequence[Lookup], hits: list[dict[str, Any]], sketch_df: dict[str, int],
                     contract: CandidateContract) -> list[LookupResult]:
        """Map the hits of one batched search back to the queries that would have found them one by one under
        ``contract``."""
        lk = self.handle.lookup_keys
        cap = self.boilerplate.max_sentence_df
        known = self.boilerplate.known
        cols = Hits(hits)
        pairs: list[set[int]] = [set() for _ in queries]  # query -> hit numbers
        # lookup keys: (table, key) of every query with features against those of every hit with features
        q_rows = [i for i, q in enumerate(queries) if q.fingerprint.n_features]
        h_rows = [j for j, s in enumerate(cols.srcs) if s.get("n_features")]
        if q_rows and h_rows:
            q_sims = hamming.as_uint64([queries[i].fingerprint.simhash for i in q_rows])
            h_sims = np.array(cols.simhash, dtype=np.uint64)[h_rows]
            qi, hj = shared_keys(lk.keys(q_sims), lk.keys(h_sims))
            near = hamming.popcount(q_sims[qi] ^ h_sims[hj]) <= contract.max_distance
            for i, j in zip(qi[near].tolist(), hj[near].tolist()):
                pairs[q_rows[i]].add(h_rows[j])
        # same content, and sentences: every stored document holding one of the batch's long sentences matched,
        # so counting the hits gives each such hash's document frequency (the sketch hashes' came counted)
        wanted_content = {q.fingerprint.content_hash for q in queries if q.fingerprint.n_chars}
        by_content: dict[int, list[int]] = {}
        wanted = {h for q in queries for h in q.fingerprint.hashes}
        by_sentence: dict[int, list[int]] = {}
        for j, (content, sentences) in enumerate(zip(cols.content, cols.sentence_ints)):
            if content in wanted_content and cols.srcs[j].get("content_hash"):
                by_content.setdefault(content, []).append(j)
            for h in sentences:
                if h in wanted:
                    by_sentence.setdefault(h, []).append(j)
        df_of: dict[int, int] = {}
        for h in wanted:
            x = hex64(h)
            df = known.get(x) or (sketch_df.get(x, 0) if h >= SKETCH_BIT else len(by_sentence.get(h, ())))
            df_of[h] = df
            if df > cap:
                known[x] = df
        by_id = {doc_id: j for j, doc_id in enumerate(cols.ids)}
        out = []
        for q, found in zip(queries, pairs):
            fp = q.fingerprint
            if fp.n_chars:
                found.update(by_content.get(fp.content_hash, ()))
            sentence_df: dict[int, int] = {}
            sketch_hits: list[int] = []
            sentence_hits: list[int] = []
            for h in fp.hashes:
                df = sentence_df[h] = df_of[h]
                if df and df <= cap:
                    if is_sentence(h):
                        sentence_hits += by_sentence[h]
                    else:  # (sketch: the hits hold only some of the documents with this hash, those sharing
                        # contract.shared_sketch; fuzzy: all of them, found through the sentence clause)
                        sketch_hits += by_sentence.get(h, ())
            found.update(sharing_at_least(sentence_hits, contract.shared_sentences))
            found.update(sharing_at_least(sketch_hits, contract.shared_sketch))
            own = by_id.get(q.id)
            found.discard(own)  # type: ignore[arg-type]
            existing = cols.doc(own) if own is not None else None
            out.append(LookupResult(existing, [cols.doc(j) for j in sorted(found)], False, sentence_df))
        return out


class LookupPlanner:
    """Lookups over the index of ``handle``: batched with permutation-table keys (``batched``, in groups of at most
    :attr:`max_sketch_clauses` sketch terms), one search per document with segments (``per_document``)."""

    default_sketch_clauses = 4_000
    """Most sketch-hash clauses in one batched search where the engine scales its bound with the heap
    (Elasticsearch: at least 1,024 clauses per search, 8,192 with 512 MB)."""

    def __init__(self, handle: IndexHandle, boilerplate: Boilerplate, *, page_size: int = 500,
                 batch_page: int = 10_000, max_candidates: int = 20_000) -> None:
        self.handle = handle
        self._max_sketch_clauses: int | None = None
        self.per_document = PerDocumentLookups(handle, boilerplate, page_size=page_size,
                                               max_candidates=max_candidates)
        self.batched = BatchedLookups(handle, boilerplate, self.per_document, batch_page=batch_page)

    @property
    def max_sketch_clauses(self) -> int:
        """Most clauses the short texts' sketches add to one batched search (the batch is looked up in several
        searches beyond that): :attr:`default_sketch_clauses`, or below the engine's fixed bound on a search's
        clauses where it has one (OpenSearch: ``indices.query.bool.max_clause_count``, 1,024 by default), less
        the few clauses of ids, content hashes, keys and sentences."""
        if self._max_sketch_clauses is None:
            bound = self.handle.max_clause_count
            self._max_sketch_clauses = (self.default_sketch_clauses if bound is None
                                        else max(64, min(self.default_sketch_clauses, bound - 16)))
        return self._max_sketch_clauses

    @max_sketch_clauses.setter
    def max_sketch_clauses(self, value: int) -> None:
        self._max_sketch_clauses = value

    def lookup(self, queries: Sequence[Lookup], contract: CandidateContract, exclude: Sequence[str] = ()
               ) -> list[LookupResult]:
        """Candidates for a batch of queries under ``contract`` (:meth:`ElasticIndex.lookup`): one search per
        document with segments; with permutation-table keys, the batch in groups of clauses
        (:meth:`_clause_groups`), each group's searches sent at once."""
        if not queries:
            return []
        if self.handle.lookup_keys.is_segments:
            return self.per_document.lookup(queries, contract, exclude)
        groups = list(self._clause_groups(queries))
        if len(groups) == 1:
            return self.batched.lookup(queries, contract, exclude)
        # several searches: sent at once (Elasticsearch runs each on its own search thread, one per core)
        with ThreadPoolExecutor(min(len(groups), 4), thread_name_prefix="lookup") as pool:
            parts = list(pool.map(lambda g: self.batched.lookup(g, contract, exclude), groups))
        return [r for part in parts for r in part]

    def _clause_groups(self, queries: Sequence[Lookup]) -> Iterator[Sequence[Lookup]]:
        """``queries`` in consecutive groups whose sketch clauses (each short text's terms and the clause holding
        them; through an alias, the clause naming the partitions it leaves out too) number at most
        ``max_sketch_clauses``: the engine limits the clauses of one search."""
        start, used = 0, 0
        limit = self.max_sketch_clauses
        per_text = 2 if self.handle.is_alias() else 1  # (through an alias, a clause of the partitions left out)
        for i, q in enumerate(queries):
            n = len(q.fingerprint.sketch)
            n += per_text if n else 0
            if used + n > limit and i > start:
                yield queries[start:i]
                start, used = i, 0
            used += n
        yield queries[start:]
