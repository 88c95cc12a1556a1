"""The embedded index as :mod:`es_simhash.clustering` sees it: fetch, conflicts, remove, scans
(:class:`MemoryMaintenance`)."""

from __future__ import annotations

from typing import Collection, Iterator, Sequence

from es_simhash.index.base import arrival_key, with_version
from es_simhash.records import StoredDoc
from es_simhash.index.memory.store import MemoryStore


class MemoryMaintenance:
    """The reads and deletes maintenance asks of a backend (:class:`~es_simhash.index.base.MaintainedIndex`) over a
    :class:`~es_simhash.index.memory.store.MemoryStore`: ``MemoryMaintenance(store)``. A document's version is its
    write number (``store.versions``)."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    def fetch(self, ids: Collection[str]) -> dict[str, StoredDoc]:
        """The stored documents with these ids, each with its version (missing ids are left out)."""
        store = self.store
        out = {}
        for i in ids:
            doc = store.get(i)
            if doc is not None:
                out[i] = with_version(doc, store.versions[i])
        return out

    def pointing_at(self, ids: Collection[str]) -> list[StoredDoc]:
        """Stored documents whose cluster or ``duplicate_of`` is one of ``ids`` (a scan of all documents)."""
        wanted = set(ids)
        versions = self.store.versions
        return [with_version(d, versions[d.id]) for d in self.store.live_docs()
                if d.cluster in wanted or d.duplicate_of in wanted]

    def conflicts(self, docs: Sequence[StoredDoc]) -> list[str]:
        """The ids of ``docs`` whose stored version is not ``doc.version`` (``None``: not stored)."""
        versions, row_of = self.store.versions, self.store.row_of
        return [d.id for d in docs if d.version != versions.get(d.id) and not (
            d.version is None and d.id not in row_of)]

    def remove(self, docs: Sequence[StoredDoc]) -> list[str]:
        """Delete the documents whose stored version is still ``doc.version`` (or that are gone already); returns
        the ids of the others."""
        store = self.store
        conflicts = [d.id for d in docs if d.id in store.row_of and d.version != store.versions[d.id]]
        skip = set(conflicts)
        dead = []
        for d in docs:
            row = store.row_of.get(d.id)
            if row is None or d.id in skip:
                continue
            del store.row_of[d.id]
            del store.versions[d.id]
            dead.append(row)
        if dead:
            store.kill(dead)
        return conflicts

    def scan(self, page: int = 1000, after: str | None = None, since: int | None = None
             ) -> Iterator[list[StoredDoc]]:
        """All stored documents in id order, ``page`` at a time, from the first id after ``after`` (with ``since``:
        those that arrived then or later)."""
        docs = self.store.docs
        ids = sorted(i for i, row in self.store.row_of.items()
                     if (after is None or i > after) and (since is None or docs[row].arrival >= since))
        for start in range(0, len(ids), page):
            yield list(self.fetch(ids[start:start + page]).values())

    def first_holders(self, hashes: Collection[int], limit: int) -> dict[int, list[StoredDoc]]:
        """For each hash, the first ``limit`` live documents holding it, in arrival order."""
        store = self.store
        sentences, docs, alive = store.python_sentences(), store.docs, store.alive
        out: dict[int, list[StoredDoc]] = {}
        for h in set(hashes):
            held = [docs[r] for r in sentences.get(h, ()) if alive[r]]
            out[h] = sorted(held, key=arrival_key)[:limit]
        return out

    def written_since(self, mark: int) -> list[StoredDoc]:
        """The documents stored by writes after ``mark`` (a write number)."""
        store = self.store
        return [with_version(store.docs[store.row_of[i]], v) for i, v in store.versions.items() if v > mark]
