"""The embedded backend: an in-memory segment index (no server), with save/load.

For each of the four 16-bit segments a table maps a segment value to the rows holding it, in CSR form: the rows
sorted by that segment's value plus 65,537 offsets, so a bucket is one array slice. Rows added since the last
rebuild wait in small per-table dicts (value -> rows) and are folded in by a rebuild (one stable radix argsort
per table) once they reach a quarter of the table, so a stream of adds costs O(log n) rebuilds in all. Both the
CSR tables and the pending dicts are brought up to date lazily, at the first lookup after an add.

A fifth table maps sentence hashes to rows and a sixth content hashes to the first row holding them. A lookup
gathers the rows of the four buckets and re-ranks them by exact Hamming distance over a numpy array of all
SimHashes, so even a bucket shared by thousands of boilerplate pages costs one vectorised pass, not a Python loop.
Replaced documents stay in the tables until the next rebuild but are dropped from every answer.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from typing import Sequence

import numpy as np

from .. import hamming
from ..fingerprint import N_SEGMENTS, SEGMENT_BITS, Fingerprint
from .base import Lookup, LookupResult, StoredDoc

__all__ = ["MemoryIndex"]

_FORMAT = "es-simhash-memory-index/1"
_N_VALUES = 1 << SEGMENT_BITS
_SHIFTS = tuple(SEGMENT_BITS * i for i in range(N_SEGMENTS))


class MemoryIndex:
    """In-memory :class:`~es_simhash.index.base.SegmentIndex`.

    ``max_sentence_df``: a sentence hash held by more documents than this is boilerplate (site footers,
    disclaimers) and no longer brings candidates.
    """

    _MIN_REBUILD = 4096  # pending rows that always fit in the dicts

    def __init__(self, max_sentence_df: int = 50) -> None:
        self.max_sentence_df = max_sentence_df
        self._row_of: dict[str, int] = {}
        self._docs: list[StoredDoc] = []
        self._alive = np.zeros(1024, dtype=bool)
        self._any_dead = False  # no row replaced yet: every row is alive, so liveness checks can be skipped
        self._simhash = np.zeros(1024, dtype=np.uint64)
        self._has_segments = np.zeros(1024, dtype=bool)  # False for empty fingerprints: they have no segments
        # CSR segment tables over rows [0, _csr_rows): rows sorted by segment value, and value -> start offset
        self._csr_rows = 0
        self._csr_order: list[np.ndarray] = [np.zeros(0, dtype=np.intp) for _ in range(N_SEGMENTS)]
        self._csr_offsets: list[list[int]] = [[0] * (_N_VALUES + 1) for _ in range(N_SEGMENTS)]
        # rows [_csr_rows, _indexed_rows): value -> rows dicts; rows from _indexed_rows on: not indexed yet
        self._pending: list[dict[int, list[int]]] = [{} for _ in range(N_SEGMENTS)]
        self._indexed_rows = 0
        self._sentences: dict[int, list[int]] = {}
        self._content: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._row_of)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._row_of

    def get(self, doc_id: str) -> StoredDoc | None:
        row = self._row_of.get(doc_id)
        return None if row is None else self._docs[row]

    def docs(self) -> list[StoredDoc]:
        """All live documents, in insertion order."""
        alive = self._alive
        return [self._docs[i] for i in np.flatnonzero(alive[: len(self._docs)]).tolist()]

    # -- writes --------------------------------------------------------------------------------------------
    def add(self, docs: Sequence[StoredDoc]) -> dict[str, str]:
        start = len(self._docs)
        sims: list[int] = []
        has_segments: list[bool] = []
        dead: list[int] = []
        row_of, stored, content, sentences = self._row_of, self._docs, self._content, self._sentences
        for doc in docs:
            if doc.fields is not None or doc.text is not None:  # keep fingerprints, not payloads, in memory
                doc = (StoredDoc(doc.id, doc.fingerprint, doc.cluster, doc.duplicate_of, doc.distance, doc.reason)
                       if type(doc) is StoredDoc else replace(doc, fields=None, text=None))
            old = row_of.get(doc.id)
            if old is not None:  # replace: the old row stays in the tables but is no longer alive
                dead.append(old)
                old_hash = stored[old].fingerprint.content_hash
                if content.get(old_hash) == old:
                    del content[old_hash]
            row = len(stored)
            fp = doc.fingerprint
            stored.append(doc)
            row_of[doc.id] = row
            sims.append(fp.simhash)
            has_segments.append(fp.n_features > 0)
            for h in fp.sentences:
                sentences.setdefault(h, []).append(row)
            if fp.n_chars and fp.content_hash not in content:
                content[fp.content_hash] = row
        self._append_rows(start, sims, has_segments, dead)
        return {}

    def _append_rows(self, start: int, sims, has_segments, dead) -> None:
        """Store the SimHash/has-segments columns of rows ``start..`` and mark the replaced rows dead."""
        stop = start + len(sims)
        if stop > len(self._simhash):
            size = max(stop, 2 * len(self._simhash))
            self._simhash = np.resize(self._simhash, size)
            self._alive = np.resize(self._alive, size)
            self._has_segments = np.resize(self._has_segments, size)
        if stop - start == 1:  # one row (the engine's in-batch index): plain item assignments are cheaper
            self._simhash[start] = sims[0]
            self._has_segments[start] = has_segments[0]
            self._alive[start] = True
        else:
            self._simhash[start:stop] = np.asarray(sims, dtype=np.uint64)
            self._has_segments[start:stop] = has_segments
            self._alive[start:stop] = True
        if len(dead):
            self._alive[np.asarray(dead, dtype=np.intp)] = False
            self._any_dead = True

    def _sync(self) -> None:
        """Bring the segment tables up to date with the rows added since the last lookup."""
        n = len(self._docs)
        if n == self._indexed_rows:
            return
        if n - self._csr_rows > max(self._MIN_REBUILD, self._csr_rows // 4):
            self._rebuild()
            return
        if n - self._indexed_rows <= 8:  # a few rows (the engine's in-batch index adds one at a time): no numpy
            rows_py = [r for r in range(self._indexed_rows, n) if self._has_segments[r]]
            sims_py = [self._docs[r].fingerprint.simhash for r in rows_py]  # == self._simhash[rows_py]
            values = [[(sim >> shift) & 0xFFFF for sim in sims_py] for shift in _SHIFTS]
        else:
            rows = np.arange(self._indexed_rows, n)
            rows = rows[self._has_segments[rows]]
            sims = self._simhash[rows]
            rows_py = rows.tolist()
            values = [((sims >> np.uint64(shift)) & np.uint64(0xFFFF)).tolist() for shift in _SHIFTS]
        for table, table_values in zip(self._pending, values):
            for value, row in zip(table_values, rows_py):
                bucket = table.get(value)
                if bucket is None:
                    table[value] = [row]
                else:
                    bucket.append(row)
        self._indexed_rows = n

    def _rebuild(self) -> None:
        """Rebuild the CSR tables over all live rows with segments; empties the pending dicts."""
        n = len(self._docs)
        rows = np.flatnonzero(self._alive[:n] & self._has_segments[:n])
        sims = self._simhash[rows]
        for i, shift in enumerate(_SHIFTS):
            values = ((sims >> np.uint64(shift)) & np.uint64(0xFFFF)).astype(np.uint16)
            order = np.argsort(values, kind="stable")  # radix sort for 16-bit keys
            self._csr_order[i] = rows[order]
            offsets = np.zeros(_N_VALUES + 1, dtype=np.intp)
            np.cumsum(np.bincount(values, minlength=_N_VALUES), out=offsets[1:])
            self._csr_offsets[i] = offsets.tolist()  # Python ints: indexing them is cheaper than numpy scalars
            self._pending[i] = {}
        self._csr_rows = self._indexed_rows = n

    # -- reads ---------------------------------------------------------------------------------------------
    def lookup(self, queries: Sequence[Lookup], max_distance: int) -> list[LookupResult]:
        self._sync()
        return [self._lookup_one(q, max_distance) for q in queries]

    def _lookup_one(self, q: Lookup, max_distance: int) -> LookupResult:
        fp = q.fingerprint
        own = self._row_of.get(q.id, -1)
        rows: set[int] = set()
        if fp.n_chars:
            row = self._content.get(fp.content_hash)
            if row is not None:
                rows.add(row)
        if fp.n_features:  # an empty fingerprint has no segments
            sim = fp.simhash
            parts = []
            for shift, order, offsets, pending in zip(_SHIFTS, self._csr_order, self._csr_offsets, self._pending):
                value = (sim >> shift) & 0xFFFF
                a, b = offsets[value], offsets[value + 1]
                if b > a:
                    parts.append(order[a:b])
                if pending:
                    bucket = pending.get(value)
                    if bucket:
                        parts.append(bucket)
            if parts:
                if sum(map(len, parts)) <= 16:  # the usual few rows: exact distances in Python beat numpy calls
                    docs = self._docs
                    for part in parts:
                        rows.update(r for r in (part if isinstance(part, list) else part.tolist())
                                    if (docs[r].fingerprint.simhash ^ sim).bit_count() <= max_distance)
                else:
                    cand = np.concatenate(parts) if len(parts) > 1 else np.asarray(parts[0])
                    near = cand[hamming.distances(sim, self._simhash[cand]) <= max_distance]
                    rows.update(near.tolist())
        alive, any_dead = self._alive, self._any_dead
        sentence_df: dict[int, int] = {}
        for h in fp.sentences:
            bucket = self._sentences.get(h)
            # document frequency = live documents holding the hash (replaced documents leave dead rows behind)
            df = (int(np.count_nonzero(alive[bucket])) if any_dead else len(bucket)) if bucket else 0
            sentence_df[h] = df
            if df and df <= self.max_sentence_df:
                rows.update(bucket)
        rows.discard(own)
        docs = self._docs
        candidates = [docs[r] for r in sorted(rows) if alive[r]] if any_dead else [docs[r] for r in sorted(rows)]
        return LookupResult(docs[own] if own >= 0 else None, candidates, sentence_df=sentence_df)

    # -- persistence ---------------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the index to one ``.npz`` file (numpy arrays + JSON; no pickle)."""
        docs = self.docs()
        fps = [d.fingerprint for d in docs]
        sentence_counts = np.array([len(f.sentences) for f in fps], dtype=np.int64)
        meta = {
            "format": _FORMAT,
            "max_sentence_df": self.max_sentence_df,
            "docs": [[d.id, d.cluster, d.duplicate_of, d.distance, d.reason] for d in docs],
        }
        np.savez_compressed(
            path,
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
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(z["meta"].tobytes().decode("utf-8"))
            if meta.get("format") != _FORMAT:
                raise ValueError(f"{path}: not an es-simhash memory index ({meta.get('format')!r})")
            arrays = {k: z[k] for k in ("simhash", "content_hash", "n_features", "n_chars", "short", "version")}
            arrays["word_bag"] = z["word_bag"] if "word_bag" in z.files else np.zeros(len(arrays["simhash"]), np.uint64)
            counts = z["sentence_counts"]
            flat = z["sentences"]
        index = cls(max_sentence_df=meta["max_sentence_df"])
        ends = np.cumsum(counts).tolist()
        flat_py = flat.tolist()
        cols = [arrays[k].tolist()
                for k in ("simhash", "content_hash", "n_features", "n_chars", "short", "version", "word_bag")]
        docs = []
        start = 0
        for (doc_id, cluster, dup_of, distance, reason), sim, ch, nf, nc, short, ver, wb, end in zip(
            meta["docs"], *cols, ends
        ):
            fp = Fingerprint(sim, ch, tuple(flat_py[start:end]), nf, nc, short, ver, wb)
            start = end
            docs.append(StoredDoc(doc_id, fp, cluster, dup_of, distance, reason))
        ids = [d.id for d in docs]
        if len(set(ids)) != len(ids):  # not written by save() (ids repeat): replay the adds to get replacements right
            index.add(docs)
            return index
        # A saved index holds live documents with distinct ids, so replaying add() would only append: build the
        # same state column-wise instead.
        n = len(docs)
        index._docs = docs
        index._row_of = dict(zip(ids, range(n)))
        index._append_rows(0, arrays["simhash"].astype(np.uint64), arrays["n_features"] > 0, ())
        # content hash -> first row holding it (rows with content only), as add() would have kept it
        has_content = np.flatnonzero(arrays["n_chars"] != 0)
        hashes, first = np.unique(arrays["content_hash"].astype(np.uint64)[has_content], return_index=True)
        index._content = dict(zip(hashes.tolist(), has_content[first].tolist()))
        # sentence hash -> rows in row order (a stable sort by hash keeps rows ascending within a hash)
        if flat.size:
            sentence_rows = np.repeat(np.arange(n), counts)
            order = np.argsort(flat, kind="stable")
            keys, starts = np.unique(flat[order], return_index=True)
            row_lists = np.split(sentence_rows[order], starts[1:])
            index._sentences = {k: r.tolist() for k, r in zip(keys.tolist(), row_lists)}
        index._rebuild()
        return index
