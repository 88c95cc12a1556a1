"""The embedded index as :mod:`es_simhash.clustering` sees it: fetch, conditional replace and remove, scans."""

from __future__ import annotations

from dataclasses import replace
from typing import Collection, Iterator, Sequence

from es_simhash.index.base import StoredDoc, arrival_key
from es_simhash.index.memory.store import MemoryStore


class MemoryMaintenance(MemoryStore):
    """What maintenance asks of a backend (:class:`~es_simhash.index.base.MaintainedIndex`), in memory."""

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

    def scan(self, page: int = 1000, after: str | None = None, since: int | None = None
             ) -> Iterator[list[StoredDoc]]:
        """All stored documents in id order, ``page`` at a time, from the first id after ``after`` (with ``since``:
        those that arrived then or later)."""
        docs = self._docs
        ids = sorted(i for i, row in self._row_of.items()
                     if (after is None or i > after) and (since is None or docs[row].arrival >= since))
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
