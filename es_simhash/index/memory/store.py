"""The rows of the embedded index and how they are added."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from es_simhash.fingerprint.model import FUZZY_MARK, SKETCH_BIT
from es_simhash.index.base import StoredDoc, without_payload
from es_simhash.index.memory import native as _native
from es_simhash.index.memory.runs import Run, merge_runs, new_run
from es_simhash.lookup.candidates import MIN_SHARED_SKETCH
from es_simhash.lookup.keys import DEFAULT, LookupKeys

if TYPE_CHECKING:
    import numpy as np


def post(sentences: dict[int, list[int]], start: int, hashes: Sequence[Sequence[int]]) -> None:
    """Append rows ``start, start + 1, ...`` (holding ``hashes[0], hashes[1], ...``) to the dict-of-lists postings
    (what ``SentencePostings.add`` does natively)."""
    for row, hs in enumerate(hashes, start):
        for h in hs:
            sentences.setdefault(h, []).append(row)


class MemoryStore:
    """The rows of the embedded index: documents, their numpy columns, the runs and the tail, the sentence and content
    channels, kept up to date by :meth:`add` (see :class:`MemoryIndex`)."""

    tail_rows = 4096  # rows scanned by brute force before they are sorted into a run
    native = _native.NATIVE_LOOKUP is not None
    """Batched SimHash lookups and sentence postings in the native core (same answers as numpy; set False for the
    numpy reference)."""

    def __init__(self, max_sentence_df: int = 50, lookup_keys: LookupKeys = DEFAULT) -> None:
        self.max_sentence_df = max_sentence_df
        self.lookup_keys = lookup_keys
        self._row_of: dict[str, int] = {}
        self._docs: list[StoredDoc] = []
        # (``_alive``, ``_simhash``, ``_has_keys``: numpy columns made on first use, see __getattr__)
        self._any_dead = False  # no row replaced yet: every row is alive, so liveness checks can be skipped
        self._runs: list[Run] = []
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
        if name not in MemoryStore._COLUMNS:
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
            hashes.append(fp.hashes)
            if fp.n_chars:
                if fp.content_hash not in content:
                    content[fp.content_hash] = row
                else:
                    self._content_more.setdefault(fp.content_hash, []).append(row)
        self._append_rows(start, sims, has_keys, dead)
        if self._postings is not None:
            self._postings.add(start, hashes)
        if self._sentences is not None:
            post(self._sentences, start, hashes)
        return {}

    def _sentence_store(self):
        """The native postings when this index looks up natively (``native`` and the module installed), else the
        dict of lists; built from the stored rows when first needed (``native`` can change between calls)."""
        if self.native and _native.NATIVE_POSTINGS is not None:
            if self._postings is None:
                self._postings = _native.NATIVE_POSTINGS(SKETCH_BIT, MIN_SHARED_SKETCH, FUZZY_MARK)
                self._postings.add(0, [d.fingerprint.hashes for d in self._docs])
            return self._postings
        return self._python_sentences()

    def _python_sentences(self) -> dict[int, list[int]]:
        """The dict of lists (the reference), built from the stored rows the first time."""
        if self._sentences is None:
            self._sentences = {}
            post(self._sentences, 0, [d.fingerprint.hashes for d in self._docs])
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
        self._runs.append(new_run(self.lookup_keys, rows, self._simhash[rows]))
        while len(self._runs) > 1 and self._runs[-2].size <= 2 * self._runs[-1].size:
            b = self._runs.pop()
            self._runs[-1] = merge_runs(self.lookup_keys.n_tables, self._runs[-1], b)

    def _rebuild(self) -> None:
        """One run over all live rows with keys (after a load)."""
        import numpy as np
        n = len(self._docs)
        rows = np.flatnonzero(self._alive[:n] & self._has_keys[:n])
        self._runs = [new_run(self.lookup_keys, rows, self._simhash[rows])] if len(rows) else []
        self._run_rows = n
