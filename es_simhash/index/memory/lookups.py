"""Lookups in the embedded index."""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING, Sequence

from es_simhash.fingerprint.model import Fingerprint, is_sentence
from es_simhash.index.base import Lookup, LookupResult
from es_simhash.index.memory import native as _native
from es_simhash.index.memory.runs import run_pairs, scrambled
from es_simhash.index.memory.store import MemoryStore
from es_simhash.lookup.candidates import sharing_sketch

if TYPE_CHECKING:
    import numpy as np


class MemoryLookups(MemoryStore):
    """Lookups in the embedded index: the SimHash channel (runs and tail, natively or with numpy), the sentence
    channel and the content channel, answers re-ranked by exact Hamming distance (see :class:`MemoryIndex`)."""


    def _key_pairs(self, q_sims: np.ndarray, q_rows: np.ndarray, max_distance: int) -> tuple[np.ndarray, np.ndarray]:
        """(query number, row) pairs, each row sharing a lookup key with the query and within ``max_distance``
        bits of it; unique, sorted by query then row. ``q_rows``: the numbers of the queries (with features)."""
        import numpy as np

        from es_simhash.lookup import hamming
        lk = self.lookup_keys
        qs: list[np.ndarray] = []
        rs: list[np.ndarray] = []
        if self._runs:
            qkeys = scrambled(lk.keys(q_sims))
            for run in self._runs:
                q, r = run_pairs(run, qkeys)
                qs.append(q)
                rs.append(r)
        n = len(self._docs)
        if n > self._run_rows:  # the tail: brute force, then the key test for pairs farther than k
            tail = np.arange(self._run_rows, n)
            tail = tail[self._has_keys[tail]]
            if len(tail):
                d = hamming.popcount(q_sims[:, None] ^ self._simhash[tail][None, :])
                qi, ti = np.nonzero(d <= max_distance)
                if max_distance > lk.k and len(qi):
                    far = d[qi, ti] > lk.k
                    if far.any():
                        share = lk.share_a_key(q_sims[qi[far]], self._simhash[tail[ti[far]]])
                        keep = np.ones(len(qi), dtype=bool)
                        keep[np.flatnonzero(far)[~share]] = False
                        qi, ti = qi[keep], ti[keep]
                qs.append(qi)
                rs.append(tail[ti])
        if not qs:
            return np.zeros(0, np.intp), np.zeros(0, np.intp)
        q = np.concatenate(qs) if len(qs) > 1 else qs[0]
        r = (np.concatenate(rs) if len(rs) > 1 else rs[0]).astype(np.intp)
        keep = hamming.popcount(self._simhash[r] ^ q_sims[q]) <= max_distance
        if self._any_dead:
            keep &= self._alive[r]
        pair = np.sort(q_rows[q[keep]].astype(np.int64) * n + r[keep])  # a pair sharing several keys repeats
        if len(pair) > 1:
            pair = pair[np.concatenate(([True], pair[1:] != pair[:-1]))]
        return pair // n, pair % n

    def _native_rows(self, q_sims: np.ndarray, q_rows: np.ndarray, n_q: int, max_distance: int) -> list[list[int]]:
        """What :meth:`_key_pairs` gives, per query (``n_q`` lists of rows, ascending), from the native core."""
        import numpy as np
        lk = self.lookup_keys
        n = len(self._docs)
        return _native.NATIVE_LOOKUP(
            [(run.keys, run.rows, run.offsets, run.bits) for run in self._runs],
            self._simhash, self._alive if self._any_dead else None, self._has_keys, self._run_rows, n,
            lk.masks, lk.k, lk.blocks, lk.tables, q_sims, q_rows.astype(np.int64, copy=False), n_q, max_distance)

    def _tail_rows(self, fp: Fingerprint, max_distance: int) -> list[int]:
        """Rows of the tail (all rows: there are no runs) sharing a key with ``fp`` within ``max_distance``."""
        import numpy as np

        from es_simhash.lookup import hamming
        n = len(self._docs)
        x = self._simhash[:n] ^ np.uint64(fp.simhash)
        near = hamming.popcount(x) <= max_distance
        near &= self._has_keys[:n]
        if self._any_dead:
            near &= self._alive[:n]
        rows = np.flatnonzero(near)
        if max_distance > self.lookup_keys.k and len(rows):
            masks = self.lookup_keys.masks
            rows = rows[((x[rows][:, None] & masks[None, :]) == 0).any(axis=1)]
        return rows.tolist()

    def lookup(self, queries: Sequence[Lookup], max_distance: int, exclude: Sequence[str] = (),
               before: Sequence[int] | None = None) -> list[LookupResult]:
        """Candidates for a batch of queries: key pairs for all of them at once, then the content and sentence
        channels per query. ``exclude``: ids left out of every answer (as if they were not stored).

        ``before``: for each query, how many documents it sees: query ``i`` is answered from the first
        ``before[i]`` documents added (candidates and sentence document frequencies alike), the documents added
        after them left out. The engine decides each document of a batch against the batch's earlier ones this
        way, all in one lookup. Only on an index where no document was replaced or removed (a replaced row would
        be dead before ``before`` too): ``ValueError`` otherwise."""
        import numpy as np
        if before is not None and self._any_dead:
            raise ValueError("lookup(before=...) needs an index where no document was replaced or removed")
        hidden = np.array([r for r in (self._row_of.get(i) for i in exclude) if r is not None], dtype=np.intp)
        if len(hidden):  # looked up as if they were not stored: dead for the duration
            was_dead = self._any_dead
            self._alive[hidden] = False
            self._any_dead = True
            try:
                return self._lookup(queries, max_distance, before)
            finally:
                self._alive[hidden] = True
                self._any_dead = was_dead
        return self._lookup(queries, max_distance, before)

    def _simhash_rows(self, fps: Sequence[Fingerprint], max_distance: int) -> list[list[int]]:
        """For each fingerprint, the rows sharing a lookup key with it within ``max_distance`` bits."""
        import numpy as np
        n_q = len(fps)
        if n_q == 1 and not self._runs:  # one query, tail only (the engine's in-batch index): no pair bookkeeping
            return [self._tail_rows(fps[0], max_distance) if fps[0].n_features else []]
        with_keys = np.flatnonzero(np.fromiter((fp.n_features > 0 for fp in fps), dtype=bool, count=n_q))
        q_sims = np.fromiter((fps[i].simhash for i in with_keys.tolist()), dtype=np.uint64, count=len(with_keys))
        if self.native and _native.NATIVE_LOOKUP is not None and len(self._docs):
            return self._native_rows(q_sims, with_keys, n_q, max_distance)
        pq, pr = self._key_pairs(q_sims, with_keys, max_distance) if len(with_keys) and len(self._docs) else (
            np.zeros(0, np.intp), np.zeros(0, np.intp))
        bounds = np.searchsorted(pq, np.arange(n_q + 1)).tolist()
        pr_list = pr.tolist()
        return [pr_list[bounds[i]:bounds[i + 1]] for i in range(n_q)]

    def _lookup(self, queries: Sequence[Lookup], max_distance: int,
                before: Sequence[int] | None = None) -> list[LookupResult]:
        self._sync()
        fps = [q.fingerprint for q in queries]
        rows_of = self._simhash_rows(fps, max_distance)
        n = len(self._docs)
        ends = [n] * len(queries) if before is None else before
        docs, alive, any_dead, row_of = self._docs, self._alive, self._any_dead, self._row_of
        content, sentence_rows = self._content, self._sentence_rows
        doc_at, own_row, result = docs.__getitem__, row_of.get, LookupResult
        store = self._sentence_store()
        # the native sentence channel: for every query at once, its rows (or None) and its document frequencies
        native = None if isinstance(store, dict) or not fps else store.lookup(
            [fp.hashes for fp in fps], n, None if before is None else list(before),
            alive if any_dead else None, self.max_sentence_df)
        out: list[LookupResult] = []
        append = out.append
        for i, (q, fp, rows, end) in enumerate(zip(queries, fps, rows_of, ends)):
            if rows and rows[-1] >= end:  # (rows are in ascending order)
                rows = rows[:bisect_left(rows, end)]
            extra = None
            if fp.n_chars:
                row = content.get(fp.content_hash)  # (the first row with that content)
                if row is not None and row < end and any_dead and not alive[row]:  # the first live one before end
                    row = next((r for r in self._content_more.get(fp.content_hash, ()) if r < end and alive[r]),
                               None)
                if row is not None and row < end:
                    extra = {row}
            if native is not None:
                found, sentence_df = native[i]
                if found is not None:
                    if extra is None:
                        extra = set(found)
                    else:
                        extra.update(found)
            else:
                sentence_df = {}
                if fp.hashes:
                    extra = sentence_rows(fp.hashes, end, sentence_df, extra)
            if extra is not None:
                extra.update(rows)
                rows = sorted(extra)
            own = own_row(q.id, -1)
            if any_dead or extra is not None:
                candidates = [docs[r] for r in rows if r != own and alive[r]]
            elif own >= 0:
                candidates = [docs[r] for r in rows if r != own]
            else:
                candidates = list(map(doc_at, rows)) if rows else []
            append(result(docs[own] if 0 <= own < end and alive[own] else None, candidates, False, sentence_df))
        return out

    def _sentence_rows(self, hashes: Sequence[int], end: int, sentence_df: dict[int, int],
                       extra: set[int] | None) -> set[int] | None:
        """The sentence channel of a lookup among rows ``[0, end)``: ``extra`` (rows found so far, or None) with the
        rows holding one of the long-sentence ``hashes``, or ``MIN_SHARED_SKETCH`` of its sketch and fuzzy hashes, that are
        not boilerplate; ``sentence_df`` gets the document frequency of every hash."""
        import numpy as np
        sentences, alive, any_dead, cap = self._python_sentences(), self._alive, self._any_dead, self.max_sentence_df
        sketch_rows: list[int] = []
        for h in hashes:
            bucket = sentences.get(h) or []
            if bucket and bucket[-1] >= end:  # (buckets are in ascending row order)
                bucket = bucket[:bisect_left(bucket, end)]
            # document frequency = live documents holding the hash (replaced documents leave dead rows)
            df = (int(np.count_nonzero(alive[bucket])) if any_dead else len(bucket)) if bucket else 0
            sentence_df[h] = df
            if df and df <= cap:
                if not is_sentence(h):  # sketch or fuzzy: candidates hold MIN_SHARED_SKETCH of them
                    sketch_rows += bucket
                elif extra is None:
                    extra = set(bucket)
                else:
                    extra.update(bucket)
        shared = sharing_sketch(sketch_rows) if sketch_rows else None
        if shared:
            if extra is None:
                extra = set(shared)
            else:
                extra.update(shared)
        return extra
