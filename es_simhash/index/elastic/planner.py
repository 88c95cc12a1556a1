"""The lookup planner: a batch of lookups as one search (split when it comes back full, down to single documents read to
the end), or one search per document for an index with segments only; hits mapped back to their queries exactly as
the embedded index would answer."""

from __future__ import annotations

import logging
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterator, Sequence

import numpy as np
from es_simhash.index.elastic.codec import Hits
from es_simhash.index.elastic.handle import IndexHandle
from es_simhash.index.elastic.schema import LOOKUP_FIELDS

from es_simhash.fingerprint.model import SKETCH_BIT, hex64, is_sentence
from es_simhash.index.base import Lookup, LookupResult
from es_simhash.lookup.candidates import MIN_SHARED_SKETCH, sentence_candidate, sharing_sketch
from es_simhash.lookup import hamming

log = logging.getLogger("es_simhash.index.elastic")



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


class PerDocumentLookups(IndexHandle):
    """One search per document (indexes with segments; a crowded document of a batch), read to the end with
    ``search_after`` when its bucket is crowded."""

    def _lookup_each(self, queries: Sequence[Lookup], max_distance: int, exclude: Sequence[str]) -> list[LookupResult]:
        """One search per query in one ``_msearch``; more requests only for lookups that hit a crowded bucket."""
        sentences = [self._sentence_terms(q.fingerprint) for q in queries]
        responses = self._msearch([self._body(q, s, exclude) for q, s in zip(queries, sentences)])
        hits_of = [r["hits"]["hits"] for r in responses]
        crowded = [i for i, h in enumerate(hits_of) if len(h) >= self.page_size]
        truncated: set[int] = set()
        if crowded:
            # A full first page: some bucket is shared by many documents. Boilerplate sentences (document
            # frequency above max_sentence_df) are left out of the query, then the rest is read to the end.
            with_sentences = [i for i in crowded if sentences[i]]
            dfs = self._msearch([self._df_body(sentences[i], exclude) for i in with_sentences])
            for i, resp in zip(with_sentences, dfs):
                df = {b["key"]: b["doc_count"] for b in resp["aggregations"]["held"]["df"]["buckets"]}
                self._boilerplate.update({h: df[h] for h in sentences[i] if df.get(h, 0) > self.max_sentence_df})
                sentences[i] = [h for h in sentences[i] if h not in self._boilerplate]
            truncated = self._page_through(queries, sentences, exclude, crowded, hits_of)
        return [
            self._rank(q, s, hits, max_distance, i in truncated)
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
        lk = self.lookup_keys
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
            query["bool"]["must_not"] = self._terms("ids", list(exclude))
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
        return {"size": 0, "aggs": {"held": self._df_agg(sentences, exclude)}}

    def _page_through(
        self, queries: Sequence[Lookup], sentences: list[list[str]], exclude: Sequence[str], crowded: list[int],
        hits_of: list[list],
    ) -> set[int]:
        truncated: set[int] = set()
        for i in crowded:
            hits_of[i] = []
        open_ = {i: None for i in crowded}  # lookup -> search_after
        while open_:
            order = list(open_)
            pages = self._msearch([self._body(queries[i], sentences[i], exclude, open_[i], paged=True) for i in order])
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
                        queries[i].id, self.max_candidates, self.index, len(hits_of[i]),
                    )
                elif len(page) == self.page_size:
                    open_[i] = page[-1]["sort"]
        return truncated

    def _rank(
        self,
        q: Lookup,
        sentences: list[str],
        hits: list[dict[str, Any]],
        max_distance: int,
        truncated: bool,
    ) -> LookupResult:
        """Keep what the embedded index would return: same content; a shared lookup key within ``max_distance``
        (exact Hamming re-rank, vectorised); or a shared sentence that is not boilerplate."""
        fp = q.fingerprint
        # document frequency of the query's sentences: counted in the hits (every stored document holding one of
        # them matched the query), or known for the boilerplate ones left out of it
        df = Counter(x for h in hits for x in h["_source"].get("sentences") or () if x in sentences)
        for x, n in df.items():
            if n > self.max_sentence_df:
                self._boilerplate[x] = n
        sentence_df = {h: self._boilerplate.get(hex64(h)) or df.get(hex64(h), 0) for h in fp.hashes}
        cols = Hits(hits)
        existing = next((cols.doc(j) for j, doc_id in enumerate(cols.ids) if doc_id == q.id), None)
        others = np.array([j for j, doc_id in enumerate(cols.ids) if doc_id != q.id], dtype=np.intp)
        if not len(others):
            return LookupResult(existing, [], truncated, sentence_df)
        srcs = [cols.srcs[j] for j in others.tolist()]
        sims = np.array(cols.simhash, dtype=np.uint64)[others]
        keep = np.zeros(len(others), dtype=bool)
        if fp.n_features:
            lk = self.lookup_keys
            shares_key = lk.share_a_key(sims, np.full(len(sims), fp.simhash, dtype=np.uint64))
            shares_key &= np.array([s.get("n_features") != 0 for s in srcs])
            keep |= shares_key & (hamming.distances(fp.simhash, sims) <= max_distance)
        if fp.n_chars:
            content = hex64(fp.content_hash)
            keep |= np.array([s.get("content_hash") == content for s in srcs])
        good = {x for x in sentences if df[x] <= self.max_sentence_df}
        if good:
            long_ = {x for x in good if is_sentence(int(x, 16))}
            sketch = good - long_
            keep |= np.array([sentence_candidate(long_, sketch, s.get("sentences") or ()) for s in srcs])
        return LookupResult(existing, [cols.doc(j) for j in others[keep].tolist()], truncated, sentence_df)



class BatchedLookups(PerDocumentLookups):
    """A batch of lookups in one search, split in halves while the search comes back full (a single document
    whose own search is still full is looked up as :class:`PerDocumentLookups` does)."""

    def _clause_groups(self, queries: Sequence[Lookup]) -> Iterator[Sequence[Lookup]]:
        """``queries`` in consecutive groups whose sketch clauses hold at most ``max_sketch_clauses`` terms
        (Elasticsearch limits the clauses of one search: 1,024 or more, by heap size)."""
        start, used = 0, 0
        for i, q in enumerate(queries):
            n = len(q.fingerprint.sketch)
            if used + n > self.max_sketch_clauses and i > start:
                yield queries[start:i]
                start, used = i, 0
            used += n
        yield queries[start:]

    def _lookup_batched(self, queries: Sequence[Lookup], max_distance: int, exclude: Sequence[str]) -> list[LookupResult]:
        """One search for ``queries``. When it comes back full, the sentences it shows to be boilerplate are left
        out and the search is sent again; when it is still full (many documents share the batch's keys or
        sentences: near-duplicate clusters), each half is looked up on its own, down to single documents, which are
        read to the end one search at a time."""
        found = self._batch_search(queries, exclude)
        if not isinstance(found, bool):
            return self._match_batch(queries, *found, max_distance)
        if found:  # the full page showed boilerplate sentences: again without them
            return self._lookup_batched(queries, max_distance, exclude)
        if len(queries) == 1:
            self.crowded_batches += 1
            return self._lookup_each(queries, max_distance, exclude)
        self.split_batches += 1
        mid = len(queries) // 2
        return (self._lookup_batched(queries[:mid], max_distance, exclude)
                + self._lookup_batched(queries[mid:], max_distance, exclude))

    def _batch_search(self, queries: Sequence[Lookup], exclude: Sequence[str]
                      ) -> tuple[list[dict[str, Any]], dict[str, int]] | bool:
        """The hits of one search for all ``queries`` and the document frequencies of their sketch hashes (hex ->
        count; absent: 0); or, when it returned a full page, whether that page showed boilerplate sentences (so the
        search is worth sending again without them).

        With sketch hashes, two searches on one point in time (so both see the same documents): first their
        document frequencies are counted (:meth:`_count_bodies`), then the candidates are searched, asking through
        the sketch only for the hashes some document holds and that are not boilerplate (a short text's shingles
        are mostly held by no other document: left out, they cost the search nothing and change no answer)."""
        sketch_terms = sorted({x for q in queries for x in self._sentence_terms(q.fingerprint, sentences=False)})
        if not sketch_terms:
            return self._retrying(lambda: self._candidate_search(queries, exclude, None, {}), "lookup")

        def pinned() -> tuple[list[dict[str, Any]], dict[str, int]] | bool:
            with self._point_in_time() as pit:
                sketch_df = self._counted(self._msearch_once(self._count_bodies(sketch_terms, exclude), pit))
                self._boilerplate.update({x: n for x, n in sketch_df.items() if n > self.max_sentence_df})
                return self._candidate_search(queries, exclude, pit, sketch_df)

        return self._retrying(pinned, "lookup")

    def _candidate_search(self, queries: Sequence[Lookup], exclude: Sequence[str], pit: str | None,
                          sketch_df: dict[str, int]) -> tuple[list[dict[str, Any]], dict[str, int]] | bool:
        """One search for the candidates of all ``queries`` (on the point in time ``pit``), the sketch hashes'
        document frequencies ``sketch_df`` already counted; for a full page, whether it showed boilerplate."""
        lk = self.lookup_keys
        fps = [q.fingerprint for q in queries]
        should: list[dict[str, Any]] = self._terms("ids", [q.id for q in queries])
        contents = sorted({hex64(fp.content_hash) for fp in fps if fp.n_chars})
        if contents:
            should += self._terms("content_hash", contents)
        with_keys = [fp.simhash for fp in fps if fp.n_features]
        if with_keys:
            terms = sorted({t for row in lk.terms(hamming.as_uint64(with_keys)) for t in row})
            should += self._terms("lookup_keys", terms)
        # long-sentence hashes: every stored document holding one is a candidate (and counting them in the hits
        # gives each hash's document frequency)
        sentences = sorted({x for fp in fps for x in self._sentence_terms(fp, sketch=False)})
        if sentences:
            should += self._terms("sentences", sentences)
        # shingle-sketch hashes: only a document holding MIN_SHARED_SKETCH of one query's is a candidate (one
        # shared common shingle would bring thousands), so one clause per query, over its hashes held by some
        # document (boilerplate ones are already left out)
        sketches = [[x for x in self._sentence_terms(fp, sentences=False) if sketch_df.get(x)] for fp in fps]
        should += [{"bool": {"should": [{"term": {"sentences": x}} for x in terms],
                             "minimum_should_match": MIN_SHARED_SKETCH}}
                   for terms in dict.fromkeys(map(tuple, sketches)) if len(terms) >= MIN_SHARED_SKETCH]
        query: dict[str, Any] = {"bool": {"should": should, "minimum_should_match": 1}}
        if exclude:
            query["bool"]["must_not"] = self._terms("ids", list(exclude))
        body: dict[str, Any] = {"size": self.batch_page, "_source": False, "stored_fields": "_none_",
                                "docvalue_fields": LOOKUP_FIELDS, "query": {"bool": {"filter": query}},
                                "track_total_hits": False}
        hits = self._msearch_once([body], pit)[0]["hits"]["hits"]
        if len(hits) >= self.batch_page:
            return self._learn_boilerplate(hits, sentences)
        return hits, sketch_df

    def _learn_boilerplate(self, hits: list[dict[str, Any]], sentences: Sequence[str]) -> bool:
        """From a full page: the batch's sentence hashes held by more than ``max_sentence_df`` of its hits are
        boilerplate (their document frequency is at least that), so later searches leave them out. Whether it
        found any."""
        wanted = set(sentences)
        counts = Counter(x for h in hits for x in h["_source"].get("sentences") or () if x in wanted)
        learned = {x: n for x, n in counts.items() if n > self.max_sentence_df}
        self._boilerplate.update(learned)
        return bool(learned)

    def _match_batch(self, queries: Sequence[Lookup], hits: list[dict[str, Any]], sketch_df: dict[str, int],
                     max_distance: int) -> list[LookupResult]:
        """Map the hits of one batched search back to the queries that would have found them one by one."""
        lk = self.lookup_keys
        cap = self.max_sentence_df
        cols = Hits(hits)
        pairs: list[set[int]] = [set() for _ in queries]  # query -> hit numbers
        # lookup keys: (table, key) of every query with features against those of every hit with features
        q_rows = [i for i, q in enumerate(queries) if q.fingerprint.n_features]
        h_rows = [j for j, s in enumerate(cols.srcs) if s.get("n_features")]
        if q_rows and h_rows:
            q_sims = hamming.as_uint64([queries[i].fingerprint.simhash for i in q_rows])
            h_sims = np.array(cols.simhash, dtype=np.uint64)[h_rows]
            qi, hj = shared_keys(lk.keys(q_sims), lk.keys(h_sims))
            near = hamming.popcount(q_sims[qi] ^ h_sims[hj]) <= max_distance
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
            df = self._boilerplate.get(x) or (sketch_df.get(x, 0) if h >= SKETCH_BIT else len(by_sentence.get(h, ())))
            df_of[h] = df
            if df > cap:
                self._boilerplate[x] = df
        by_id = {doc_id: j for j, doc_id in enumerate(cols.ids)}
        out = []
        for q, found in zip(queries, pairs):
            fp = q.fingerprint
            if fp.n_chars:
                found.update(by_content.get(fp.content_hash, ()))
            sentence_df: dict[int, int] = {}
            sketch_hits: list[int] = []
            for h in fp.hashes:
                df = sentence_df[h] = df_of[h]
                if df and df <= cap:
                    if is_sentence(h):
                        found.update(by_sentence[h])
                    else:  # (sketch: the hits hold only some of the documents with this hash, those sharing two;
                        # fuzzy: all of them, found through the sentence clause)
                        sketch_hits += by_sentence.get(h, ())
            found.update(sharing_sketch(sketch_hits))
            own = by_id.get(q.id)
            found.discard(own)  # type: ignore[arg-type]
            existing = cols.doc(own) if own is not None else None
            out.append(LookupResult(existing, [cols.doc(j) for j in sorted(found)], False, sentence_df))
        return out



class LookupPlanner(BatchedLookups):
    """Lookups for :class:`ElasticIndex`: batched with permutation-table keys, per document with segments."""

    def lookup(self, queries: Sequence[Lookup], max_distance: int, exclude: Sequence[str] = ()) -> list[LookupResult]:
        """Candidates for a batch of queries.

        With permutation-table keys: **one search for the whole batch** (short texts: after a search counting
        their sketch hashes' holders, on the same point in time), a ``bool``/``should`` over the batch's
        ids, content hashes, lookup keys and (non-boilerplate) sentence hashes, fetching doc values only; hits
        are mapped back to their queries here (a key both share, exact Hamming distance with numpy; same content;
        a shared long sentence, or two shared sketch hashes, that are not boilerplate). When that search is full (documents sharing keys or sentences
        with many stored ones), the batch is split in halves until each part's search fits; a single document whose
        own search is still full is read to the end with ``search_after``. An index with segments (made by an earlier release) is always looked up one search
        per document, as before.

        ``exclude``: ids whose stored versions are left out of the answers (the engine passes the batch it is
        still writing, whose documents it holds in memory: so the answer does not depend on whether that write
        is visible yet)."""
        if not queries:
            return []
        if self.lookup_keys.is_segments:
            return self._lookup_each(queries, max_distance, exclude)
        groups = list(self._clause_groups(queries))
        if len(groups) == 1:
            return self._lookup_batched(queries, max_distance, exclude)
        # several searches: sent at once (Elasticsearch runs each on its own search thread, one per core)
        with ThreadPoolExecutor(min(len(groups), 4), thread_name_prefix="lookup") as pool:
            parts = list(pool.map(lambda g: self._lookup_batched(g, max_distance, exclude), groups))
        return [r for part in parts for r in part]

