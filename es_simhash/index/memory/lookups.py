"""Lookups in the embedded index: :class:`MemoryLookups`."""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING, Sequence

from es_simhash.fingerprint.model import Fingerprint, is_sentence
from es_simhash.index.base import Lookup, LookupResult
from es_simhash.index.memory import native as _native
from es_simhash.index.memory.runs import run_pairs, scrambled
from es_simhash.index.memory.store import MemoryStore
from es_simhash.lookup.candidates import CandidateContract, sharing_at_least

if TYPE_CHECKING:
    import numpy as np


class MemoryLookups:
    """Lookups over a :class:`~es_simhash.index.memory.store.MemoryStore`: ``MemoryLookups(store)``. The SimHash
    channel (runs and tail, natively or with numpy), the sentence channel and the content channel, answers
    re-ranked by exact Hamming distance (see :mod:`es_simhash.index.memory`), each bringing what a lookup's
    :class:`~es_simhash.lookup.candidates.CandidateContract` asks for.

    :meth:`key_pairs` (numpy) is the reference of the native SimHash channel and :meth:`sentence_rows` (a dict of
    lists) that of the native sentence postings: ``native=False`` looks up through them."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    def lookup(self, queries: Sequence[Lookup], contract: CandidateContract, exclude: Sequence[str] = (),
               before: Sequence[int] | None = None, *, native: bool, tail_rows: int) -> list[LookupResult]:
        """Candidates for a batch of queries under ``contract``: key pairs for all of them at once, then the content
        and sentence channels per query. ``exclude``: ids left out of every answer (as if they were not stored).

        ``before``: for each query, how many documents it sees: query ``i`` is answered from the first
        ``before[i]`` documents added (candidates and sentence document frequencies alike), the documents added
        after them left out. Only on a store where no document was replaced or removed (a replaced row would be
        dead before ``before`` too): ``ValueError`` otherwise.

        ``native``: through the native core when it is installed (same answers; the native sentence postings bring
        rows holding one long sentence, so a contract asking for more is answered by the reference).
        ``tail_rows``: a longer tail is sorted into a run first (:meth:`MemoryStore.sync`)."""
        import numpy as np
        store = self.store
        if before is not None and store.any_dead:
            raise ValueError("lookup(before=...) needs an index where no document was replaced or removed")
        store.sync(tail_rows)  # (first: a tail sorted into a run while rows are hidden would leave them out of it)
        hidden = np.array([r for r in (store.row_of.get(i) for i in exclude) if r is not None], dtype=np.intp)
        if len(hidden):  # looked up as if they were not stored: dead for the duration
            was_dead = store.any_dead
            store.kill(hidden)
            try:
                return self._answer(queries, contract, before, native)
            finally:
                store.alive[hidden] = True
                store.any_dead = was_dead
        return self._answer(queries, contract, before, native)

    def _answer(self, queries: Sequence[Lookup], contract: CandidateContract, before: Sequence[int] | None,
                native: bool) -> list[LookupResult]:
        store = self.store
        fps = [q.fingerprint for q in queries]
        rows_of = self.simhash_rows(fps, contract.max_distance, native)
        n = len(store.docs)
        ends = [n] * len(queries) if before is None else before
        docs, alive, any_dead, row_of = store.docs, store.alive, store.any_dead, store.row_of
        content, sentence_rows = store.content, self.sentence_rows
        doc_at, own_row, result = docs.__getitem__, row_of.get, LookupResult
        sentences = store.sentence_store(native and contract.shared_sentences == 1, contract.shared_sketch)
        # the native sentence channel: for every query at once, its rows (or None) and its document frequencies
        natively = None if isinstance(sentences, dict) or not fps else sentences.lookup(
            [fp.hashes for fp in fps], n, None if before is None else list(before),
            alive if any_dead else None, store.max_sentence_df)
        out: list[LookupResult] = []
        append = out.append
        for i, (q, fp, rows, end) in enumerate(zip(queries, fps, rows_of, ends)):
            if rows and rows[-1] >= end:  # (rows are in ascending order)
                rows = rows[:bisect_left(rows, end)]
            extra = None
            if fp.n_chars:
                row = content.get(fp.content_hash)  # (the first row with that content)
                if row is not None and row < end and any_dead and not alive[row]:  # the first live one before end
                    row = next((r for r in store.content_more.get(fp.content_hash, ()) if r < end and alive[r]),
                               None)
                if row is not None and row < end:
                    extra = {row}
            if natively is not None:
                found, sentence_df = natively[i]
                if found is not None:
                    if extra is None:
                        extra = set(found)
                    else:
                        extra.update(found)
            else:
                sentence_df = {}
                if fp.hashes:
                    extra = sentence_rows(fp.hashes, end, sentence_df, extra, contract)
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

    # -- the SimHash channel ---------------------------------------------------------------------------------
    def simhash_rows(self, fps: Sequence[Fingerprint], max_distance: int, native: bool) -> list[list[int]]:
        """For each fingerprint, the rows sharing a lookup key with it within ``max_distance`` bits, ascending."""
        import numpy as np
        store = self.store
        n_q = len(fps)
        if n_q == 1 and not store.runs:  # one query, tail only (the engine's in-batch index): no pair bookkeeping
            return [self.tail_scan(fps[0], max_distance) if fps[0].n_features else []]
        with_keys = np.flatnonzero(np.fromiter((fp.n_features > 0 for fp in fps), dtype=bool, count=n_q))
        q_sims = np.fromiter((fps[i].simhash for i in with_keys.tolist()), dtype=np.uint64, count=len(with_keys))
        if native and _native.NATIVE_LOOKUP is not None and len(store.docs):
            return self.native_rows(q_sims, with_keys, n_q, max_distance)
        pq, pr = self.key_pairs(q_sims, with_keys, max_distance) if len(with_keys) and len(store.docs) else (
            np.zeros(0, np.intp), np.zeros(0, np.intp))
        bounds = np.searchsorted(pq, np.arange(n_q + 1)).tolist()
        pr_list = pr.tolist()
        return [pr_list[bounds[i]:bounds[i + 1]] for i in range(n_q)]

    def key_pairs(self, q_sims: np.ndarray, q_rows: np.ndarray, max_distance: int) -> tuple[np.ndarray, np.ndarray]:
        """(query number, row) pairs, each row sharing a lookup key with the query and within ``max_distance``
        bits of it; unique, sorted by query then row. ``q_rows``: the numbers of the queries (with features)."""
        import numpy as np

        from es_simhash.lookup import hamming
        store = self.store
        lk = store.lookup_keys
        qs: list[np.ndarray] = []
        rs: list[np.ndarray] = []
        if store.runs:
            qkeys = scrambled(lk.keys(q_sims))
            for run in store.runs:
                q, r = run_pairs(run, qkeys)
                qs.append(q)
                rs.append(r)
        n = len(store.docs)
        simhash = store.simhash
        if n > store.run_rows:  # the tail: brute force, then the key test for pairs farther than k
            tail = np.arange(store.run_rows, n)
            tail = tail[store.has_keys[tail]]
            if len(tail):
                d = hamming.popcount(q_sims[:, None] ^ simhash[tail][None, :])
                qi, ti = np.nonzero(d <= max_distance)
                if max_distance > lk.k and len(qi):
                    far = d[qi, ti] > lk.k
                    if far.any():
                        share = lk.share_a_key(q_sims[qi[far]], simhash[tail[ti[far]]])
                        keep = np.ones(len(qi), dtype=bool)
                        keep[np.flatnonzero(far)[~share]] = False
                        qi, ti = qi[keep], ti[keep]
                qs.append(qi)
                rs.append(tail[ti])
        if not qs:
            return np.zeros(0, np.intp), np.zeros(0, np.intp)
        q = np.concatenate(qs) if len(qs) > 1 else qs[0]
        r = (np.concatenate(rs) if len(rs) > 1 else rs[0]).astype(np.intp)
        keep = hamming.popcount(simhash[r] ^ q_sims[q]) <= max_distance
        if store.any_dead:
            keep &= store.alive[r]
        pair = np.sort(q_rows[q[keep]].astype(np.int64) * n + r[keep])  # a pair sharing several keys repeats
        if len(pair) > 1:
            pair = pair[np.concatenate(([True], pair[1:] != pair[:-1]))]
        return pair // n, pair % n

    def native_rows(self, q_sims: np.ndarray, q_rows: np.ndarray, n_q: int, max_distance: int) -> list[list[int]]:
        """What :meth:`key_pairs` gives, per query (``n_q`` lists of rows, ascending), from the native core."""
        import numpy as np
        store = self.store
        lk = store.lookup_keys
        n = len(store.docs)
        return _native.NATIVE_LOOKUP(
            [(run.keys, run.rows, run.offsets, run.bits) for run in store.runs],
            store.simhash, store.alive if store.any_dead else None, store.has_keys, store.run_rows, n,
            lk.masks, lk.k, lk.blocks, lk.tables, q_sims, q_rows.astype(np.int64, copy=False), n_q, max_distance)

    def tail_scan(self, fp: Fingerprint, max_distance: int) -> list[int]:
        """Rows of the tail (all rows: there are no runs) sharing a key with ``fp`` within ``max_distance``."""
        import numpy as np

        from es_simhash.lookup import hamming
        store = self.store
        n = len(store.docs)
        x = store.simhash[:n] ^ np.uint64(fp.simhash)
        near = hamming.popcount(x) <= max_distance
        near &= store.has_keys[:n]
        if store.any_dead:
            near &= store.alive[:n]
        rows = np.flatnonzero(near)
        if max_distance > store.lookup_keys.k and len(rows):
            masks = store.lookup_keys.masks
            rows = rows[((x[rows][:, None] & masks[None, :]) == 0).any(axis=1)]
        return rows.tolist()

    # -- the sentence channel --------------------------------------------------------------------------------
    def sentence_rows(self, hashes: Sequence[int], end: int, sentence_df: dict[int, int],
                      extra: set[int] | None, contract: CandidateContract) -> set[int] | None:
        """The sentence channel of a lookup among rows ``[0, end)``: ``extra`` (rows found so far, or None) with the
        rows holding ``contract.shared_sentences`` of the long-sentence ``hashes``, or ``contract.shared_sketch`` of
        its sketch and fuzzy hashes, that are not boilerplate; ``sentence_df`` gets the document frequency of every
        hash."""
        import numpy as np
        store = self.store
        sentences, alive, any_dead, cap = store.python_sentences(), store.alive, store.any_dead, store.max_sentence_df
        sketch_rows: list[int] = []
        sentence_rows: list[int] | None = [] if contract.shared_sentences > 1 else None
        for h in hashes:
            bucket = sentences.get(h) or []
            if bucket and bucket[-1] >= end:  # (buckets are in ascending row order)
                bucket = bucket[:bisect_left(bucket, end)]
            # document frequency = live documents holding the hash (replaced documents leave dead rows)
            df = (int(np.count_nonzero(alive[bucket])) if any_dead else len(bucket)) if bucket else 0
            sentence_df[h] = df
            if df and df <= cap:
                if not is_sentence(h):  # sketch or fuzzy: candidates hold contract.shared_sketch of them
                    sketch_rows += bucket
                elif sentence_rows is not None:  # candidates hold contract.shared_sentences of them
                    sentence_rows += bucket
                elif extra is None:
                    extra = set(bucket)
                else:
                    extra.update(bucket)
        shared = sharing_at_least(sketch_rows, contract.shared_sketch) if sketch_rows else None
        if sentence_rows:
            shared = [*(shared or ()), *sharing_at_least(sentence_rows, contract.shared_sentences)]
        if shared:
            if extra is None:
                extra = set(shared)
            else:
                extra.update(shared)
        return extra
