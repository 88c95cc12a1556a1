"""The embedded backend: an in-memory segment index (no server), with save/load.

Four hash tables map each 16-bit segment value to the rows holding it; a fifth maps sentence hashes to rows
and a sixth content hashes to the first row holding them. A lookup gathers the rows of the four buckets and
re-ranks them by exact Hamming distance over a numpy array of all SimHashes, so even a bucket shared by
thousands of boilerplate pages costs one vectorised pass, not a Python loop.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from typing import Sequence

import numpy as np

from .. import hamming
from ..fingerprint import N_SEGMENTS, Fingerprint
from .base import Lookup, LookupResult, StoredDoc

__all__ = ["MemoryIndex"]

_FORMAT = "es-simhash-memory-index/1"


class MemoryIndex:
    """In-memory :class:`~es_simhash.index.base.SegmentIndex`.

    ``max_sentence_df``: a sentence hash held by more documents than this is boilerplate (site footers,
    disclaimers) and no longer brings candidates.
    """

    def __init__(self, max_sentence_df: int = 50) -> None:
        self.max_sentence_df = max_sentence_df
        self._row_of: dict[str, int] = {}
        self._docs: list[StoredDoc] = []
        self._alive = np.zeros(1024, dtype=bool)
        self._simhash = np.zeros(1024, dtype=np.uint64)
        self._segments: list[dict[int, list[int]]] = [{} for _ in range(N_SEGMENTS)]
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
        return [d for i, d in enumerate(self._docs) if self._alive[i]]

    # -- writes --------------------------------------------------------------------------------------------
    def add(self, docs: Sequence[StoredDoc]) -> dict[str, str]:
        for doc in docs:
            if doc.fields is not None or doc.text is not None:  # keep fingerprints, not payloads, in memory
                doc = replace(doc, fields=None, text=None)
            old = self._row_of.get(doc.id)
            if old is not None:  # replace: the old row stays in the buckets but is no longer alive
                self._alive[old] = False
                if self._content.get(self._docs[old].fingerprint.content_hash) == old:
                    del self._content[self._docs[old].fingerprint.content_hash]
            row = len(self._docs)
            if row == len(self._simhash):
                self._simhash = np.resize(self._simhash, 2 * row)
                self._alive = np.resize(self._alive, 2 * row)
            fp = doc.fingerprint
            self._docs.append(doc)
            self._row_of[doc.id] = row
            self._simhash[row] = fp.simhash
            self._alive[row] = True
            for table, seg in zip(self._segments, fp.segments):
                table.setdefault(seg, []).append(row)
            for h in fp.sentences:
                self._sentences.setdefault(h, []).append(row)
            if fp.n_chars and fp.content_hash not in self._content:
                self._content[fp.content_hash] = row
        return {}

    # -- reads ---------------------------------------------------------------------------------------------
    def lookup(self, queries: Sequence[Lookup], max_distance: int) -> list[LookupResult]:
        return [self._lookup_one(q, max_distance) for q in queries]

    def _lookup_one(self, q: Lookup, max_distance: int) -> LookupResult:
        fp = q.fingerprint
        own = self._row_of.get(q.id, -1)
        rows: set[int] = set()
        if fp.n_chars:
            row = self._content.get(fp.content_hash)
            if row is not None:
                rows.add(row)
        segs = fp.segments
        if segs:
            buckets = [b for b in (t.get(s) for t, s in zip(self._segments, segs)) if b]
            if buckets:
                cand = np.fromiter((r for b in buckets for r in b), dtype=np.intp)
                near = cand[hamming.distances(fp.simhash, self._simhash[cand]) <= max_distance]
                rows.update(near.tolist())
        sentence_df = {}
        for h in fp.sentences:
            bucket = self._sentences.get(h)
            sentence_df[h] = len(bucket) if bucket else 0
            if bucket and len(bucket) <= self.max_sentence_df:
                rows.update(bucket)
        rows.discard(own)
        alive = self._alive
        docs = self._docs
        candidates = [docs[r] for r in sorted(rows) if alive[r]]
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
            sentence_counts=sentence_counts,
            sentences=np.array([h for f in fps for h in f.sentences], dtype=np.uint64),
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "MemoryIndex":
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(z["meta"].tobytes().decode("utf-8"))
            if meta.get("format") != _FORMAT:
                raise ValueError(f"{path}: not an es-simhash memory index ({meta.get('format')!r})")
            ends = np.cumsum(z["sentence_counts"]).tolist()
            flat = z["sentences"].tolist()
            cols = [z[k].tolist() for k in ("simhash", "content_hash", "n_features", "n_chars", "short", "version")]
        index = cls(max_sentence_df=meta["max_sentence_df"])
        docs = []
        start = 0
        for (doc_id, cluster, dup_of, distance, reason), sim, ch, nf, nc, short, ver, end in zip(
            meta["docs"], *cols, ends
        ):
            fp = Fingerprint(sim, ch, tuple(flat[start:end]), nf, nc, short, ver)
            start = end
            docs.append(StoredDoc(doc_id, fp, cluster, dup_of, distance, reason))
        index.add(docs)
        return index
