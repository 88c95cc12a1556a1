"""The rows of the embedded index and how they are added: :class:`MemoryStore`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from es_simhash.defaults import MAX_SENTENCE_DF
from es_simhash.fingerprint.model import FUZZY_MARK, SKETCH_BIT
from es_simhash.index.base import without_payload
from es_simhash.records import StoredDoc
from es_simhash.index.memory import native as _native
from es_simhash.index.memory.runs import Run, merge_runs, new_run
from es_simhash.lookup.candidates import DEFAULT_CONTRACT
from es_simhash.lookup.keys import DEFAULT, LookupKeys

if TYPE_CHECKING:
    import numpy as np

_FIRST_CAPACITY = 1024
"""Rows the numpy columns hold when first made (they double as rows are added)."""


def post(sentences: dict[int, list[int]], start: int, hashes: Sequence[Sequence[int]]) -> None:
    """Append rows ``start, start + 1, ...`` (holding ``hashes[0], hashes[1], ...``) to the dict-of-lists postings
    (what ``SentencePostings.add`` does natively)."""
    for row, hs in enumerate(hashes, start):
        for h in hs:
            sentences.setdefault(h, []).append(row)


class MemoryStore:
    """The rows of the embedded index (see :mod:`es_simhash.index.memory`): ``MemoryStore(max_sentence_df,
    lookup_keys)``, kept up to date by :meth:`add`.

    A row is one stored document; a replaced or removed document keeps its row, no longer alive. The lookups
    (:class:`~es_simhash.index.memory.lookups.MemoryLookups`), the maintenance
    (:class:`~es_simhash.index.memory.maintenance.MemoryMaintenance`) and the file format
    (:mod:`~es_simhash.index.memory.files`) read and write these attributes:

    * ``docs``: every row's document (fingerprint and cluster, no payload), live or not; ``row_of``: the row of
      each live id; ``versions``: each live id's write number, ``writes`` the last one;
    * ``alive``, ``simhash``, ``has_keys``: numpy columns over the rows (``has_keys`` is False for an empty
      fingerprint), made on first use and longer than the rows; ``any_dead``: some row is not alive;
    * ``runs``: rows ``[0, run_rows)`` sorted by key (:mod:`~es_simhash.index.memory.runs`), the rows after them
      the unsorted tail;
    * ``postings`` (native ``SentencePostings``) or ``sentences`` (a dict of lists, the reference): sentence hash
      -> rows holding it, ascending; either is built from the rows when first needed and kept up to date once
      built (:meth:`sentence_store`); ``postings_shared``: the shared sketch and fuzzy hashes the native postings
      ask of a candidate (fixed when they are built);
    * ``content``: content hash -> the first row holding it (live or not); ``content_more``: the later ones.
    """

    def __init__(self, max_sentence_df: int = MAX_SENTENCE_DF, lookup_keys: LookupKeys = DEFAULT) -> None:
        self.max_sentence_df = max_sentence_df
        self.lookup_keys = lookup_keys
        self.row_of: dict[str, int] = {}
        self.docs: list[StoredDoc] = []
        # (``alive``, ``simhash``, ``has_keys``: made on first use, see __getattr__)
        self.any_dead = False  # no row replaced yet: every row is alive, so liveness checks can be skipped
        self.runs: list[Run] = []
        self.run_rows = 0
        self.sentences: dict[int, list[int]] | None = None
        self.postings: Any = None  # es_simhash_native.SentencePostings
        self.postings_shared = DEFAULT_CONTRACT.shared_sketch
        self.content: dict[int, int] = {}
        self.content_more: dict[int, list[int]] = {}
        self.versions: dict[str, int] = {}
        self.writes = 0

    _COLUMNS = frozenset({"alive", "simhash", "has_keys"})
    alive: np.ndarray
    simhash: np.ndarray
    has_keys: np.ndarray

    def __getattr__(self, name: str) -> Any:
        # The numpy columns, made on first use: a new index imports no numpy (the command makes one before it
        # fingerprints its first texts).
        if name not in MemoryStore._COLUMNS:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        import numpy as np

        columns = self.__dict__  # (setdefault: two threads making them at once end up with the same arrays)
        columns.setdefault("alive", np.zeros(_FIRST_CAPACITY, dtype=bool))
        columns.setdefault("simhash", np.zeros(_FIRST_CAPACITY, dtype=np.uint64))
        columns.setdefault("has_keys", np.zeros(_FIRST_CAPACITY, dtype=bool))
        return columns[name]

    def __getstate__(self) -> dict[str, Any]:
        """Pickle (and copy) without the native postings: they are built again from the rows when needed."""
        state = self.__dict__.copy()
        state["postings"] = None
        return state

    def __len__(self) -> int:
        return len(self.row_of)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self.row_of

    def get(self, doc_id: str) -> StoredDoc | None:
        row = self.row_of.get(doc_id)
        return None if row is None else self.docs[row]

    def live_docs(self) -> list[StoredDoc]:
        """All live documents, in insertion order."""
        import numpy as np
        alive = self.alive
        return [self.docs[i] for i in np.flatnonzero(alive[: len(self.docs)]).tolist()]

    # -- writes --------------------------------------------------------------------------------------------
    def add(self, docs: Sequence[StoredDoc], native: bool) -> None:
        """Store ``docs`` (without payload) in new rows; a stored id's old row is no longer alive. ``native``: the
        sentence postings to build if none is built yet (see :meth:`sentence_store`)."""
        start = len(self.docs)
        sims: list[int] = []
        has_keys: list[bool] = []
        dead: list[int] = []
        self.sentence_store(native)  # (built from the rows so far the first time)
        row_of, stored, content, versions = self.row_of, self.docs, self.content, self.versions
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
            self.writes += 1
            versions[doc.id] = self.writes
            row_of[doc.id] = row
            sims.append(fp.simhash)
            has_keys.append(fp.n_features > 0)
            hashes.append(fp.hashes)
            if fp.n_chars:
                if fp.content_hash not in content:
                    content[fp.content_hash] = row
                else:
                    self.content_more.setdefault(fp.content_hash, []).append(row)
        self.append_rows(start, sims, has_keys, dead)
        if self.postings is not None:
            self.postings.add(start, hashes)
        if self.sentences is not None:
            post(self.sentences, start, hashes)

    def sentence_store(self, native: bool, shared_sketch: int | None = None):
        """The native postings when ``native`` and the module is installed, else the dict of lists; built from the
        stored rows when first needed (``native`` can change between calls). The native postings bring the rows
        holding ``shared_sketch`` of a query's sketch and fuzzy hashes (a lookup's
        :attr:`~es_simhash.lookup.candidates.CandidateContract.shared_sketch`; None: as they were built), a count
        fixed when they are built: asked for another, they are built again for it."""
        if native and _native.NATIVE_POSTINGS is not None:
            if self.postings is None or shared_sketch not in (None, self.postings_shared):
                if shared_sketch is not None:
                    self.postings_shared = shared_sketch
                self.postings = _native.NATIVE_POSTINGS(SKETCH_BIT, self.postings_shared, FUZZY_MARK)
                self.postings.add(0, [d.fingerprint.hashes for d in self.docs])
            return self.postings
        return self.python_sentences()

    def python_sentences(self) -> dict[int, list[int]]:
        """The dict of lists (the reference), built from the stored rows the first time."""
        if self.sentences is None:
            self.sentences = {}
            post(self.sentences, 0, [d.fingerprint.hashes for d in self.docs])
        return self.sentences

    def append_rows(self, start: int, sims, has_keys, dead) -> None:
        """Store the SimHash/has-keys columns of rows ``start..`` and mark the rows ``dead`` no longer alive."""
        import numpy as np
        stop = start + len(sims)
        if stop > len(self.simhash):
            size = max(stop, 2 * len(self.simhash))
            self.simhash = np.resize(self.simhash, size)
            self.alive = np.resize(self.alive, size)
            self.has_keys = np.resize(self.has_keys, size)
        if stop - start == 1:  # one row (the engine's in-batch index): plain item assignments are cheaper
            self.simhash[start] = sims[0]
            self.has_keys[start] = has_keys[0]
            self.alive[start] = True
        else:
            self.simhash[start:stop] = np.asarray(sims, dtype=np.uint64)
            self.has_keys[start:stop] = has_keys
            self.alive[start:stop] = True
        if len(dead):
            self.kill(dead)

    def kill(self, rows: Sequence[int] | np.ndarray) -> None:
        """Mark ``rows`` no longer alive (they stay in the runs and the content map)."""
        import numpy as np
        self.alive[np.asarray(rows, dtype=np.intp)] = False
        self.any_dead = True

    def sync(self, tail_rows: int) -> None:
        """Sort a tail longer than ``tail_rows`` into a run, then merge runs of similar size."""
        import numpy as np
        n = len(self.docs)
        if n - self.run_rows <= tail_rows:
            return
        rows = np.arange(self.run_rows, n)
        rows = rows[self.has_keys[rows] & self.alive[rows]]
        self.run_rows = n
        if not len(rows):
            return
        self.runs.append(new_run(self.lookup_keys, rows, self.simhash[rows]))
        while len(self.runs) > 1 and self.runs[-2].size <= 2 * self.runs[-1].size:
            b = self.runs.pop()
            self.runs[-1] = merge_runs(self.lookup_keys.n_tables, self.runs[-1], b)

    def rebuild(self) -> None:
        """One run over all live rows with keys, no tail."""
        import numpy as np
        n = len(self.docs)
        rows = np.flatnonzero(self.alive[:n] & self.has_keys[:n])
        self.runs = [new_run(self.lookup_keys, rows, self.simhash[rows])] if len(rows) else []
        self.run_rows = n
