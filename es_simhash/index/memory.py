"""The embedded backend: an in-memory index of lookup keys (no server), with save/load.

Every stored fingerprint has the keys of :mod:`es_simhash.keys` (by default 20 permutation-table keys of 32
bits). Rows live in *runs*: for each table a run holds its rows' keys sorted (``uint32``) with the row numbers
in the same order, and a direct-address directory over the keys' top bits (about one row per slot), so a batch
of lookups is a few vectorised gathers per run for all tables at once. New rows wait in a small unsorted *tail* that lookups scan by brute force (a numpy popcount over at most ``tail_rows`` SimHashes);
when the tail grows past that it becomes a run, and runs of similar size are merged (as in a log-structured
merge tree), so there are O(log n) runs and each row is re-sorted O(log n) times in all.

A second channel maps sentence hashes to rows (a candidate holds one of the query's long-sentence hashes, or
``MIN_SHARED_SKETCH`` of its shingle-sketch hashes) and a third content hashes to the first row holding them.
Candidates are re-ranked by exact Hamming distance over a numpy array of all SimHashes. Replaced documents stay
in the runs until the next merge that covers them, but are dropped from every answer.

When the native core is installed (``native/``, module ``es_simhash_native``, function ``memory_lookup``), a batch's
SimHash channel (the runs' key probes, the tail scan, the distance and liveness tests) runs there, on the index's
own numpy buffers and without the GIL; :meth:`MemoryIndex._key_pairs` (numpy) is the reference and the fallback.
Both give each query the same rows, ascending (``tests/test_memory_native.py``). The sentence channel's postings
(hash -> rows) live there too (``es_simhash_native.SentencePostings``: one call per ``add``, one per lookup batch);
:meth:`MemoryIndex._sentence_rows` over a dict of lists is the reference, with the same rows and document
frequencies (``tests/test_sentence_postings.py``). ``ES_SIMHASH_MEMORY_NATIVE=0`` turns both off.
"""

from __future__ import annotations

import json
import os
from bisect import bisect_left
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Collection, Iterator, Sequence

from es_simhash.fingerprint.model import SKETCH_BIT, Fingerprint
from es_simhash.lookup.keys import DEFAULT, MAX_KEY_BITS, SEGMENTS, LookupKeys
from es_simhash.index.base import Lookup, LookupResult, StoredDoc, arrival_key, without_payload
from es_simhash.lookup.candidates import MIN_SHARED_SKETCH, sharing_sketch
from es_simhash.errors import IndexFileError

if TYPE_CHECKING:
    import numpy as np

__all__ = ["MemoryIndex", "IndexFileError"]

_FORMAT = "es-simhash-memory-index/2"
_FORMAT_V1 = "es-simhash-memory-index/1"  # before lookup keys: the four 16-bit segments


def _native_lookup():
    """``es_simhash_native.memory_lookup`` when the native core is installed (and not turned off), else ``None``."""
    from es_simhash import _native, settings

    return getattr(_native.installed(), "memory_lookup", None) if settings.memory_native() else None


_NATIVE_LOOKUP = _native_lookup()


def _native_postings():
    """``es_simhash_native.SentencePostings`` when the native core is installed (and not turned off), else ``None``."""
    from es_simhash import _native

    return getattr(_native.installed(), "SentencePostings", None) if _native_lookup() is not None else None


_NATIVE_POSTINGS = _native_postings()


def _post(sentences: dict[int, list[int]], start: int, hashes: Sequence[Sequence[int]]) -> None:
    """Append rows ``start, start + 1, ...`` (holding ``hashes[0], hashes[1], ...``) to the dict-of-lists postings
    (what ``SentencePostings.add`` does natively)."""
    for row, hs in enumerate(hashes, start):
        for h in hs:
            sentences.setdefault(h, []).append(row)


@dataclass(slots=True)
class _Run:
    """Rows sorted by each table's (scrambled) key, tables one after another: ``keys`` (uint32) ascending within a table,
    ``rows`` (int32) in the same order, and a direct-address directory over the keys' top ``bits`` bits:
    the entries of table ``t`` whose key starts with ``b`` are ``offsets[t * 2**bits + b]`` up to the next offset.
    A lookup is then a gather of offsets and an equality test over the few entries between them, no search."""

    keys: np.ndarray
    rows: np.ndarray
    offsets: np.ndarray
    bits: int
    size: int


_SCRAMBLE = 0x9E3779B1  # odd: multiplying by it modulo 2**32 is a bijection on 32-bit keys
_UNSCRAMBLE = pow(0x9E3779B1, -1, 2**32)


def _scrambled(keys: np.ndarray) -> np.ndarray:
    """Keys multiplied by an odd constant modulo 2**32: equal exactly when the keys are, and with well-spread top
    bits even for narrow keys (the 16-bit segments), which the directory needs."""
    import numpy as np

    return keys * np.uint32(_SCRAMBLE)


def _directory_bits(size: int) -> int:
    """At most about one row per directory slot on average (2**bits >= size)."""
    return min(max(1, size.bit_length() - 0), MAX_KEY_BITS)


def _make_run(n_tables: int, keys: np.ndarray, rows: np.ndarray) -> _Run:
    """A run from ``keys`` (``(n_tables, size)`` uint32) of ``rows`` (``(n_tables, size)``, the same row numbers
    in every table)."""
    import numpy as np
    size = keys.shape[1]
    keys = _scrambled(keys)
    order = np.argsort(keys, axis=1, kind="stable")
    keys = np.take_along_axis(keys, order, axis=1)
    rows = np.take_along_axis(rows, order, axis=1).astype(np.int32)
    bits = _directory_bits(size)
    slots = np.int64(1) << bits
    where = (keys >> np.uint32(MAX_KEY_BITS - bits)).astype(np.int64) + (np.arange(n_tables, dtype=np.int64) * slots)[:, None]
    offsets = np.zeros(n_tables * slots + 1, dtype=np.int32 if keys.size < 2**31 else np.int64)
    np.cumsum(np.bincount(where.ravel(), minlength=n_tables * slots), out=offsets[1:])
    return _Run(keys.ravel(), rows.ravel(), offsets, bits, size)


def _new_run(lookup_keys: LookupKeys, rows: np.ndarray, sims: np.ndarray) -> _Run:
    import numpy as np
    keys = np.ascontiguousarray(lookup_keys.keys(sims).T)
    return _make_run(lookup_keys.n_tables, keys, np.broadcast_to(rows, keys.shape))


def _merge_runs(n_tables: int, a: _Run, b: _Run) -> _Run:
    import numpy as np
    keys = np.concatenate((a.keys.reshape(n_tables, -1), b.keys.reshape(n_tables, -1)), axis=1)
    rows = np.concatenate((a.rows.reshape(n_tables, -1), b.rows.reshape(n_tables, -1)), axis=1)
    return _make_run(n_tables, keys * np.uint32(_UNSCRAMBLE), rows)


def _run_pairs(run: _Run, qkeys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(query number, row) for every entry of ``run`` whose key equals one of the query's keys in that table.
    ``qkeys``: the queries' keys, scrambled as the run stores them."""
    import numpy as np
    n_q, n_tables = qkeys.shape
    slots = np.int64(1) << run.bits
    where = (qkeys >> np.uint32(MAX_KEY_BITS - run.bits)).astype(np.int64) + np.arange(n_tables, dtype=np.int64) * slots
    lo = run.offsets[where].ravel()
    counts = run.offsets[where + 1].ravel() - lo
    nonzero = np.flatnonzero(counts)
    counts = counts[nonzero]
    pos = _expand(lo[nonzero], counts)
    flat = np.repeat(nonzero, counts)  # query * n_tables + table
    match = run.keys[pos] == qkeys.ravel()[flat]
    return flat[match] // n_tables, run.rows[pos[match]]


def _expand(lo: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``concatenate([arange(l, l + c) for l, c in zip(lo, counts)])`` without a Python loop."""
    import numpy as np
    total = int(counts.sum())
    ends = np.cumsum(counts)
    return np.repeat(lo - ends + counts, counts) + np.arange(total)


class MemoryIndex:
    """In-memory :class:`~es_simhash.index.base.SegmentIndex`.

    ``max_sentence_df``: a sentence hash held by more documents than this is boilerplate (site footers,
    disclaimers) and no longer brings candidates. ``lookup_keys``: which keys bring SimHash candidates
    (:data:`es_simhash.keys.DEFAULT`: 20 permutation tables for k = 3).
    """

    tail_rows = 4096  # rows scanned by brute force before they are sorted into a run
    native = _NATIVE_LOOKUP is not None
    """Batched SimHash lookups in the native core (same answers as numpy; set False for the numpy reference)."""
    shared_writers = False
    """Only this process writes into it: batches need no settling after their write (:mod:`es_simhash.cluster`)."""
    overlapping_writes = False
    """A write is done when ``add`` returns: nothing to overlap with the next lookup."""

    def __init__(self, max_sentence_df: int = 50, lookup_keys: LookupKeys = DEFAULT) -> None:
        self.max_sentence_df = max_sentence_df
        self.lookup_keys = lookup_keys
        self._row_of: dict[str, int] = {}
        self._docs: list[StoredDoc] = []
        # (``_alive``, ``_simhash``, ``_has_keys``: numpy columns made on first use, see __getattr__)
        self._any_dead = False  # no row replaced yet: every row is alive, so liveness checks can be skipped
        self._runs: list[_Run] = []
        self._run_rows = 0  # rows [0, _run_rows) are in runs; rows from there on are the tail
        # sentence hash -> rows holding it, ascending: in the native core (``_postings``) when this index looks up
        # natively, else a dict of lists (the reference); either is built from the stored rows when first needed
        # and kept up to date once built
        self._sentences: dict[int, list[int]] | None = None
        self._postings: Any = None  # es_simhash_native.SentencePostings
        self._content: dict[int, int] = {}  # content hash -> the first row holding it (live or not)
        self._content_more: dict[int, list[int]] = {}  # content hash -> the rows after the first, ascending
        self._versions: dict[str, int] = {}
        self._writes = 0

    _COLUMNS = frozenset({"_alive", "_simhash", "_has_keys"})
    _alive: np.ndarray
    _simhash: np.ndarray
    _has_keys: np.ndarray

    def __getattr__(self, name: str) -> Any:
        # The numpy columns of the rows, made on first use (a new index imports no numpy: the command makes one
        # before it fingerprints its first texts): ``_alive``, ``_simhash`` and ``_has_keys`` (False for empty
        # fingerprints: they have no keys).
        if name not in MemoryIndex._COLUMNS:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        import numpy as np

        columns = self.__dict__  # (setdefault: two threads making them at once end up with the same arrays)
        columns.setdefault("_alive", np.zeros(1024, dtype=bool))
        columns.setdefault("_simhash", np.zeros(1024, dtype=np.uint64))
        columns.setdefault("_has_keys", np.zeros(1024, dtype=bool))
        return columns[name]

    def __len__(self) -> int:
        return len(self._row_of)

    def __getstate__(self) -> dict[str, Any]:
        """Pickle (and copy) without the native postings: they are built again from the rows when needed."""
        state = self.__dict__.copy()
        state["_postings"] = None
        return state

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._row_of

    def get(self, doc_id: str) -> StoredDoc | None:
        row = self._row_of.get(doc_id)
        return None if row is None else self._docs[row]

    def fingerprint_versions(self) -> set[int]:
        """The fingerprint versions of the stored documents."""
        return {d.fingerprint.version for d in self.docs()}

    def docs(self) -> list[StoredDoc]:
        """All live documents, in insertion order."""
        import numpy as np
        alive = self._alive
        return [self._docs[i] for i in np.flatnonzero(alive[: len(self._docs)]).tolist()]

    # -- writes --------------------------------------------------------------------------------------------
    def add(self, docs: Sequence[StoredDoc]) -> dict[str, str]:
        start = len(self._docs)
        sims: list[int] = []
        has_keys: list[bool] = []
        dead: list[int] = []
        self._sentence_store()  # (built from the rows so far the first time)
        row_of, stored, content = self._row_of, self._docs, self._content
        hashes: list[tuple[int, ...]] = []
        for doc in docs:
            if doc.fields is not None or doc.text is not None:  # keep fingerprints, not payloads, in memory
                doc = without_payload(doc)
            old = row_of.get(doc.id)
            if old is not None:  # replace: the old row stays in the runs and the content map, no longer alive
                dead.append(old)
            row = len(stored)
            fp = doc.fingerprint
            stored.append(doc)
            self._writes += 1
            self._versions[doc.id] = self._writes
            row_of[doc.id] = row
            sims.append(fp.simhash)
            has_keys.append(fp.n_features > 0)
            hashes.append(fp.sentences)
            if fp.n_chars:
                if fp.content_hash not in content:
                    content[fp.content_hash] = row
                else:
                    self._content_more.setdefault(fp.content_hash, []).append(row)
        self._append_rows(start, sims, has_keys, dead)
        if self._postings is not None:
            self._postings.add(start, hashes)
        if self._sentences is not None:
            _post(self._sentences, start, hashes)
        return {}

    def _sentence_store(self):
        """The native postings when this index looks up natively (``native`` and the module installed), else the
        dict of lists; built from the stored rows when first needed (``native`` can change between calls)."""
        if self.native and _NATIVE_POSTINGS is not None:
            if self._postings is None:
                self._postings = _NATIVE_POSTINGS(SKETCH_BIT, MIN_SHARED_SKETCH)
                self._postings.add(0, [d.fingerprint.sentences for d in self._docs])
            return self._postings
        return self._python_sentences()

    def _python_sentences(self) -> dict[int, list[int]]:
        """The dict of lists (the reference), built from the stored rows the first time."""
        if self._sentences is None:
            self._sentences = {}
            _post(self._sentences, 0, [d.fingerprint.sentences for d in self._docs])
        return self._sentences

    def _append_rows(self, start: int, sims, has_keys, dead) -> None:
        """Store the SimHash/has-keys columns of rows ``start..`` and mark the replaced rows dead."""
        import numpy as np
        stop = start + len(sims)
        if stop > len(self._simhash):
            size = max(stop, 2 * len(self._simhash))
            self._simhash = np.resize(self._simhash, size)
            self._alive = np.resize(self._alive, size)
            self._has_keys = np.resize(self._has_keys, size)
        if stop - start == 1:  # one row (the engine's in-batch index): plain item assignments are cheaper
            self._simhash[start] = sims[0]
            self._has_keys[start] = has_keys[0]
            self._alive[start] = True
        else:
            self._simhash[start:stop] = np.asarray(sims, dtype=np.uint64)
            self._has_keys[start:stop] = has_keys
            self._alive[start:stop] = True
        if len(dead):
            self._alive[np.asarray(dead, dtype=np.intp)] = False
            self._any_dead = True

    def _sync(self) -> None:
        """Sort a tail that outgrew ``tail_rows`` into a run, then merge runs of similar size."""
        import numpy as np
        n = len(self._docs)
        if n - self._run_rows <= self.tail_rows:
            return
        rows = np.arange(self._run_rows, n)
        rows = rows[self._has_keys[rows] & self._alive[rows]]
        self._run_rows = n
        if not len(rows):
            return
        self._runs.append(_new_run(self.lookup_keys, rows, self._simhash[rows]))
        while len(self._runs) > 1 and self._runs[-2].size <= 2 * self._runs[-1].size:
            b = self._runs.pop()
            self._runs[-1] = _merge_runs(self.lookup_keys.n_tables, self._runs[-1], b)

    def _rebuild(self) -> None:
        """One run over all live rows with keys (after a load)."""
        import numpy as np
        n = len(self._docs)
        rows = np.flatnonzero(self._alive[:n] & self._has_keys[:n])
        self._runs = [_new_run(self.lookup_keys, rows, self._simhash[rows])] if len(rows) else []
        self._run_rows = n

    # -- reads ---------------------------------------------------------------------------------------------
    def _key_pairs(self, q_sims: np.ndarray, q_rows: np.ndarray, max_distance: int) -> tuple[np.ndarray, np.ndarray]:
        """(query number, row) pairs, each row sharing a lookup key with the query and within ``max_distance``
        bits of it; unique, sorted by query then row. ``q_rows``: the numbers of the queries (with features)."""
        import numpy as np

        from es_simhash.lookup import hamming
        lk = self.lookup_keys
        qs: list[np.ndarray] = []
        rs: list[np.ndarray] = []
        if self._runs:
            qkeys = _scrambled(lk.keys(q_sims))
            for run in self._runs:
                q, r = _run_pairs(run, qkeys)
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
        return _NATIVE_LOOKUP(
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
        if self.native and _NATIVE_LOOKUP is not None and len(self._docs):
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
            [fp.sentences for fp in fps], n, None if before is None else list(before),
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
                if fp.sentences:
                    extra = sentence_rows(fp.sentences, end, sentence_df, extra)
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
        rows holding one of the long-sentence ``hashes``, or ``MIN_SHARED_SKETCH`` of its sketch hashes, that are
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
                if h >= SKETCH_BIT:  # a sketch hash: candidates hold MIN_SHARED_SKETCH of the query's
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

    # -- maintenance (es_simhash.cluster) ---------------------------------------------------------------
    def fetch(self, ids: Collection[str], whole: bool = True) -> dict[str, StoredDoc]:
        """The stored documents with these ids, each with its version (missing ids are left out; ``whole`` makes
        no difference here: the index keeps no texts)."""
        out = {}
        for i in ids:
            doc = self.get(i)
            if doc is not None:
                out[i] = replace(doc, version=self._versions[i])
        return out

    def pointing_at(self, ids: Collection[str]) -> list[StoredDoc]:
        """Stored documents whose cluster or ``duplicate_of`` is one of ``ids`` (a scan of all documents)."""
        wanted = set(ids)
        return [replace(d, version=self._versions[d.id]) for d in self.docs()
                if d.cluster in wanted or d.duplicate_of in wanted]

    def _conflicts(self, docs: Sequence[StoredDoc]) -> list[str]:
        return [d.id for d in docs if d.version != self._versions.get(d.id) and not (
            d.version is None and d.id not in self._row_of)]

    def replace(self, docs: Sequence[StoredDoc]) -> list[str]:
        """Store the documents whose stored version is still ``doc.version``; returns the ids of the others."""
        return self.add_conditional(docs)[1]

    def add_conditional(self, docs: Sequence[StoredDoc]) -> tuple[dict[str, str], list[str]]:
        """Store the documents whose stored version is still ``doc.version`` (absent when ``None``): ``({},
        conflicts)``, the ids of the others (nothing is ever refused here)."""
        conflicts = self._conflicts(docs)
        skip = set(conflicts)
        self.add([replace(d, version=None) for d in docs if d.id not in skip])
        return {}, conflicts

    def remove(self, docs: Sequence[StoredDoc]) -> list[str]:
        """Delete the documents whose stored version is still ``doc.version`` (or that are gone already)."""
        import numpy as np
        conflicts = [d.id for d in docs if d.id in self._row_of and d.version != self._versions[d.id]]
        skip = set(conflicts)
        dead = []
        for d in docs:
            row = self._row_of.get(d.id)
            if row is None or d.id in skip:
                continue
            del self._row_of[d.id]
            del self._versions[d.id]
            dead.append(row)  # (it stays in the content map, no longer alive)
        if dead:
            self._alive[np.asarray(dead, dtype=np.intp)] = False
            self._any_dead = True
        return conflicts

    def scan(self, page: int = 1000, after: str | None = None) -> Iterator[list[StoredDoc]]:
        """All stored documents in id order, ``page`` at a time, from the first id after ``after``."""
        ids = sorted(i for i in self._row_of if after is None or i > after)
        for start in range(0, len(ids), page):
            yield list(self.fetch(ids[start:start + page]).values())

    def first_holders(self, hashes: Collection[int], limit: int) -> dict[int, list[StoredDoc]]:
        """For each hash, the first ``limit`` live documents holding it, in arrival order."""
        sentences, docs, alive = self._python_sentences(), self._docs, self._alive
        out: dict[int, list[StoredDoc]] = {}
        for h in set(hashes):
            held = [docs[r] for r in sentences.get(h, ()) if alive[r]]
            out[h] = sorted(held, key=arrival_key)[:limit]
        return out

    def visible_mark(self) -> int:
        """Writes so far (every write is visible at once here)."""
        return self._writes

    def written_since(self, mark: int) -> list[StoredDoc]:
        """The documents stored by writes after ``mark``."""
        return [replace(self._docs[self._row_of[i]], version=v) for i, v in self._versions.items() if v > mark]

    # -- persistence ---------------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the index to one ``.npz`` file (numpy arrays + JSON; no pickle); ``.npz`` is added to a name
        without it. The file is written beside its path and put in place at the end, so a failed save leaves an
        earlier file as it was (:func:`~es_simhash.outputs.atomic_write`)."""
        from es_simhash.files.outputs import atomic_write

        name = os.fspath(path)
        if not name.endswith(".npz") and name != os.devnull:
            name += ".npz"
        with atomic_write(name, binary=True) as fh:
            self._save(fh)

    def _save(self, fh: Any) -> None:
        import numpy as np

        docs = self.docs()
        fps = [d.fingerprint for d in docs]
        sentence_counts = np.array([len(f.sentences) for f in fps], dtype=np.int64)
        meta = {
            "format": _FORMAT,
            "max_sentence_df": self.max_sentence_df,
            "lookup": self.lookup_keys.to_meta(),
            "docs": [[d.id, d.cluster, d.duplicate_of, d.distance, d.reason, d.arrival] for d in docs],
        }
        np.savez_compressed(
            fh,
            meta=np.frombuffer(json.dumps(meta, ensure_ascii=False).encode("utf-8"), dtype=np.uint8),
            simhash=np.array([f.simhash for f in fps], dtype=np.uint64),
            content_hash=np.array([f.content_hash for f in fps], dtype=np.uint64),
            n_features=np.array([f.n_features for f in fps], dtype=np.int64),
            n_chars=np.array([f.n_chars for f in fps], dtype=np.int64),
            short=np.array([f.short for f in fps], dtype=bool),
            version=np.array([f.version for f in fps], dtype=np.int64),
            word_bag=np.array([f.word_bag for f in fps], dtype=np.uint64),
            sentence_counts=sentence_counts,
            sentences=np.array([h for f in fps for h in f.sentences], dtype=np.uint64),
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "MemoryIndex":
        """Read a file written by :meth:`save`. A file from a release before lookup keys keeps its four 16-bit
        segments (:data:`es_simhash.keys.SEGMENTS`), so it answers as it did. Raises :class:`IndexFileError`
        for a file that is not an es-simhash memory index."""
        import numpy as np
        try:
            with np.load(path, allow_pickle=False) as z:
                meta = json.loads(z["meta"].tobytes().decode("utf-8"))
                fmt = meta.get("format") if isinstance(meta, dict) else None
                if fmt not in (_FORMAT, _FORMAT_V1):
                    raise IndexFileError(f"{path}: not an es-simhash memory index ({fmt!r})")
                arrays = {k: z[k] for k in ("simhash", "content_hash", "n_features", "n_chars", "short", "version")}
                arrays["word_bag"] = (z["word_bag"] if "word_bag" in z.files
                                      else np.zeros(len(arrays["simhash"]), np.uint64))
                counts = z["sentence_counts"]
                flat = z["sentences"]
        except (IndexFileError, FileNotFoundError):
            raise
        except (OSError, ValueError, KeyError, UnicodeDecodeError) as exc:  # not .npz, no meta, not JSON
            raise IndexFileError(f"{path}: not an es-simhash memory index ({type(exc).__name__}: {exc})") from None
        keys = LookupKeys.from_meta(meta.get("lookup")) if fmt == _FORMAT else SEGMENTS
        index = cls(max_sentence_df=meta["max_sentence_df"], lookup_keys=keys)
        ends = np.cumsum(counts).tolist()
        flat_py = flat.tolist()
        cols = [arrays[k].tolist()
                for k in ("simhash", "content_hash", "n_features", "n_chars", "short", "version", "word_bag")]
        docs = []
        start = 0
        for (doc_id, cluster, dup_of, distance, reason, *arrival), sim, ch, nf, nc, short, ver, wb, end in zip(
            meta["docs"], *cols, ends
        ):
            fp = Fingerprint(sim, ch, tuple(flat_py[start:end]), nf, nc, short, ver, wb)
            start = end
            docs.append(StoredDoc(doc_id, fp, cluster, dup_of, distance, reason, arrival=arrival[0] if arrival else 0))
        ids = [d.id for d in docs]
        if len(set(ids)) != len(ids):  # not written by save() (ids repeat): replay the adds to get replacements right
            index.add(docs)
            return index
        # A saved index holds live documents with distinct ids, so replaying add() would only append: build the
        # same state column-wise instead.
        n = len(docs)
        index._docs = docs
        index._row_of = dict(zip(ids, range(n)))
        index._versions = dict(zip(ids, range(1, n + 1)))
        index._writes = n
        index._append_rows(0, arrays["simhash"].astype(np.uint64), arrays["n_features"] > 0, ())
        # content hash -> first row holding it (rows with content only), as add() would have kept it
        has_content = np.flatnonzero(arrays["n_chars"] != 0)
        hashes, first = np.unique(arrays["content_hash"].astype(np.uint64)[has_content], return_index=True)
        index._content = dict(zip(hashes.tolist(), has_content[first].tolist()))
        later = np.ones(len(has_content), dtype=bool)
        later[first] = False
        for row in has_content[later].tolist():  # (copies of a content: few)
            index._content_more.setdefault(int(arrays["content_hash"][row]), []).append(row)
        # sentence hash -> rows in row order (a stable sort by hash keeps rows ascending within a hash); native
        # postings are built from the rows when first needed
        if flat.size and not (index.native and _NATIVE_POSTINGS is not None):
            sentence_rows = np.repeat(np.arange(n), counts)
            order = np.argsort(flat, kind="stable")
            keys_, starts = np.unique(flat[order], return_index=True)
            row_lists = np.split(sentence_rows[order], starts[1:])
            index._sentences = {k: r.tolist() for k, r in zip(keys_.tolist(), row_lists)}
        index._rebuild()
        return index
