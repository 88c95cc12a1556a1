"""A dry run is the run without the writes (:class:`DryRun`): maintenance runs its one code path over an index
whose writes are kept in this process and read back from there, so it reports what the real run would change,
with the same counts, and the index is left as it was."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Collection, Iterator, Mapping, Sequence

from es_simhash.index.base import Lookup, LookupResult, MaintainedIndex
from es_simhash.lookup.candidates import CandidateContract
from es_simhash.records import StoredDoc


class DryRun:
    """A :class:`~es_simhash.index.base.MaintainedIndex` over ``index`` whose writes go to memory: every read
    answers as the index would after them, and nothing reaches ``index``. Maintenance rewrites the cluster fields of
    documents and deletes them; their fingerprints, and so which documents a lookup finds, never change, so a lookup
    is the index's own with the written versions put in place of what it found (a deleted document left out)."""

    overlapping_writes = False
    shared_writers = True

    def __init__(self, index: MaintainedIndex) -> None:
        self.base = index
        self.max_sentence_df = index.max_sentence_df
        self._written: dict[str, StoredDoc | None] = {}  # id -> as written (None: removed)
        self._version = 0

    @property
    def lookup_keys(self):
        return self.base.lookup_keys

    def __len__(self) -> int:
        return len(self.base) - sum(1 for d in self._written.values() if d is None)

    def require_settings(self, config: Mapping[str, Any]) -> None:
        self.base.require_settings(config)

    # -- reads: the index's answer, with this run's writes put in place ------------------------------------------
    def _now(self, doc: StoredDoc) -> StoredDoc | None:
        return self._written[doc.id] if doc.id in self._written else doc

    def _docs(self, docs: Sequence[StoredDoc]) -> list[StoredDoc]:
        return [d for d in map(self._now, docs) if d is not None]

    def lookup(self, queries: Sequence[Lookup], contract: CandidateContract | int, exclude: Sequence[str] = ()
               ) -> list[LookupResult]:
        out = []
        for res in self.base.lookup(queries, contract, exclude):
            existing = self._now(res.existing) if res.existing is not None else None
            out.append(LookupResult(existing, self._docs(res.candidates), res.truncated, res.sentence_df))
        return out

    def fetch(self, ids: Collection[str], whole: bool = True) -> dict[str, StoredDoc]:
        found = self.base.fetch(ids, whole)
        for i in ids:
            if i in self._written:
                doc = self._written[i]
                if doc is None:
                    found.pop(i, None)
                else:
                    found[i] = doc
        return found

    def pointing_at(self, ids: Collection[str]) -> list[StoredDoc]:
        wanted = set(ids)
        out = {d.id: d for d in self._docs(self.base.pointing_at(ids))}
        for i, d in self._written.items():
            out.pop(i, None)
            if d is not None and (d.cluster in wanted or d.duplicate_of in wanted):
                out[i] = d
        return sorted(out.values(), key=lambda d: d.id)

    def scan(self, page: int = 1000, after: str | None = None, since: int | None = None) -> Iterator[list[StoredDoc]]:
        for docs in self.base.scan(page, after, since):
            yield self._docs(docs)

    def first_holders(self, hashes: Collection[int], limit: int) -> dict[int, list[StoredDoc]]:
        return {h: self._docs(docs) for h, docs in self.base.first_holders(hashes, limit).items()}

    def visible_mark(self) -> Any:
        return self.base.visible_mark()

    def written_since(self, mark: Any) -> list[StoredDoc]:
        out = {d.id: d for d in self._docs(self.base.written_since(mark))}
        out.update((i, d) for i, d in self._written.items() if d is not None)
        return list(out.values())

    # -- writes: kept here ------------------------------------------------------------------------------------------
    def _keep(self, docs: Sequence[StoredDoc]) -> None:
        for d in docs:
            self._version += 1
            self._written[d.id] = replace(d, version=("dry-run", self._version))

    def replace(self, docs: Sequence[StoredDoc]) -> list[str]:
        self._keep(docs)
        return []

    def add(self, docs: Sequence[StoredDoc]) -> dict[str, str]:
        self._keep(docs)
        return {}

    def add_conditional(self, docs: Sequence[StoredDoc]) -> tuple[dict[str, str], list[str]]:
        self._keep(docs)
        return {}, []

    def remove(self, docs: Sequence[StoredDoc]) -> list[str]:
        for d in docs:
            self._written[d.id] = None
        return []
