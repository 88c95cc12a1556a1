"""The small interface between the dedup engine and a storage backend.

A backend stores :class:`StoredDoc` records and answers one question in bulk: which stored documents could be
near duplicates of these fingerprints, under the decision rule's
:class:`~es_simhash.lookup.candidates.CandidateContract`? It answers with the documents that

* have the same id (so re-running an ingest is idempotent),
* have the same content hash (exact duplicates),
* share one of the lookup keys (:mod:`es_simhash.lookup.keys`: permutation tables, or the four 16-bit segments
  of an index with segments only) *and* are within the contract's ``max_distance`` bits (exact Hamming
  re-rank), or
* share the contract's ``shared_sentences`` long-sentence hashes (one, by default), or its ``shared_sketch``
  shingle-sketch and fuzzy hashes (two, by default), leaving out boilerplate hashes (found in more than
  ``max_sentence_df`` documents).

That test is one function both backends and the engine share: :func:`es_simhash.lookup.candidates.found_by_lookup`.
A backend never reads the rule: it serves the contract it is given, or raises
:class:`~es_simhash.errors.UnservableContract` (:func:`~es_simhash.lookup.candidates.served`), never answering
with other candidates.

Deciding which candidate (if any) makes a document a duplicate is the engine's job, not the backend's.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Collection, Iterator, Mapping, Protocol, Sequence, runtime_checkable

from es_simhash.records import StoredDoc
from es_simhash.fingerprint.model import Fingerprint
from es_simhash.lookup.candidates import CandidateContract
from es_simhash.lookup.keys import LookupKeys

__all__ = [
    "Lookup", "LookupResult", "FingerprintIndex", "MaintainedIndex", "PartitionedIndex", "arrival_key",
    "precedence_key", "with_version", "written_state"
]

def without_payload(doc: StoredDoc) -> StoredDoc:
    """``doc`` without its record and text (the fingerprint and the cluster are all a lookup needs): what the
    embedded index keeps, and what the engine's in-batch candidates are."""
    if doc.fields is None and doc.text is None:
        return doc
    if type(doc) is StoredDoc:  # (the constructor is cheaper than dataclasses.replace)
        return StoredDoc(doc.id, doc.fingerprint, doc.cluster, doc.duplicate_of, doc.distance, doc.reason,
                         arrival=doc.arrival, final=doc.final)
    return replace(doc, fields=None, text=None)


def with_version(doc: StoredDoc, version: Any) -> StoredDoc:
    """``doc`` with the backend's ``version`` of it (what :meth:`MaintainedIndex.fetch` hands out)."""
    if type(doc) is StoredDoc:  # (the constructor is cheaper than dataclasses.replace: a recheck fetches every doc)
        return StoredDoc(doc.id, doc.fingerprint, doc.cluster, doc.duplicate_of, doc.distance, doc.reason,
                         doc.fields, doc.text, doc.arrival, version, doc.final)
    return replace(doc, version=version)


def written_state(doc: StoredDoc) -> tuple[int, str, str | None]:
    """``(arrival, cluster, duplicate_of)``: what tells a writer's own write of a document from a later rewrite
    (a merge, a re-point, a re-index with other content) by another writer."""
    return doc.arrival, doc.cluster, doc.duplicate_of


def arrival_key(doc: StoredDoc) -> tuple[int, str]:
    """The order of documents for the cluster rules: by arrival, then by id (so every process sorts alike). A
    duplicate always comes after the document it duplicates, and a cluster's canonical before its members."""
    return doc.arrival, doc.id


def precedence_key(doc: StoredDoc) -> tuple[int, str]:
    """The order in which an embedded run with the recheck (``es-simhash dedup``, ``evaluate``) and the end of an
    ``index`` run into a new index take their decisions, a function of the document alone: by content hash, then by
    id. The content hash is a hash of the text, so the order is as good as random with respect to what the texts
    are (no kind of text, long or short, original or copy, is always decided first), and exact copies (one content
    hash) come together. Whatever order the records came in, they are decided in this one."""
    return doc.fingerprint.content_hash, doc.id


@dataclass(slots=True)
class Lookup:
    id: str
    fingerprint: Fingerprint


@dataclass(slots=True)
class LookupResult:
    existing: StoredDoc | None
    """The stored document with the same id, if any."""
    candidates: list[StoredDoc]
    """Possible near duplicates (never the document itself)."""
    truncated: bool = False
    """True when a bucket held more candidates than the backend would return (a warning is logged)."""
    sentence_df: dict[int, int] = field(default_factory=dict)
    """For each of the query's sentence hashes, how many stored documents hold it (0 when none)."""


@runtime_checkable
class FingerprintIndex(Protocol):
    """What the dedup engine needs from a backend (memory, Elasticsearch, ...): everything it calls, and what the
    backend can do (:attr:`overlapping_writes`, :attr:`shared_writers`; a backend that shares writers is a
    :class:`MaintainedIndex`). A third backend is written from this protocol and :class:`MaintainedIndex` alone."""

    max_sentence_df: int
    """Sentences held by more documents than this are boilerplate: they bring no candidates."""

    overlapping_writes: bool
    """The engine may look up batch N+1 while batch N is written in another thread: lookups then leave batch N's
    stored versions out (``exclude``) and the engine holds batch N in memory instead (Elasticsearch: True)."""

    shared_writers: bool
    """Other processes may write into this index at the same time: the engine writes each batch conditionally and
    settles it after its write, through the :class:`MaintainedIndex` methods (Elasticsearch: True)."""

    @property
    def lookup_keys(self) -> LookupKeys:
        """Which keys bring SimHash candidates (the engine's in-batch index uses the same, so both agree)."""
        ...

    def lookup(self, queries: Sequence[Lookup], contract: CandidateContract | int, exclude: Sequence[str] = ()
               ) -> list[LookupResult]:
        """Candidates for each query under ``contract`` (the rule's
        :attr:`~es_simhash.decide.rule.DecisionRule.candidate_contract`; an int: the default contract with that
        ``max_distance``), in query order; :class:`~es_simhash.errors.UnservableContract` when the backend cannot
        serve it (:func:`~es_simhash.lookup.candidates.served`). ``exclude``: ids whose stored versions are left
        out of every answer (as if they were not stored): the batch being written in another thread
        (:attr:`overlapping_writes`), and the documents an interrupted run wrote of the batch a resumed run decides
        again."""
        ...

    def add(self, docs: Sequence[StoredDoc]) -> dict[str, str]:
        """Store documents (replacing any with the same id); they are visible to the next ``lookup``.

        Returns ``{id: reason}`` for documents the backend refused (the caller dead-letters them)."""
        ...

    def require_settings(self, config: Mapping[str, Any]) -> None:
        """Fingerprints made with ``config`` (:attr:`Fingerprinter.config
        <es_simhash.fingerprint.Fingerprinter.config>`) are about to be looked up or added: the engine calls this
        before each batch and each check, and the backend raises when its documents were fingerprinted otherwise
        (:func:`~es_simhash.fingerprint.config.settings_difference` says how)."""
        ...

    def __len__(self) -> int: ...


@runtime_checkable
class MaintainedIndex(FingerprintIndex, Protocol):
    """What index maintenance (:mod:`es_simhash.clustering`: settling concurrent writes, updates, deletes,
    repair) needs besides lookups: whole stored documents with their versions, and conditional writes.

    Every method returns documents as stored, with :attr:`StoredDoc.version` set; writes are visible to the next
    read or lookup when they return."""

    def fetch(self, ids: Collection[str], whole: bool = True) -> dict[str, StoredDoc]:
        """The stored documents with these ids (missing ones are left out). Without ``whole`` a backend may leave
        out what only a rewrite needs (the text, the record): such documents are never passed to :meth:`replace`."""
        ...

    def pointing_at(self, ids: Collection[str]) -> list[StoredDoc]:
        """The stored documents whose ``cluster`` or ``duplicate_of`` is one of ``ids``."""
        ...

    def add_conditional(self, docs: Sequence[StoredDoc]) -> tuple[dict[str, str], list[str]]:
        """:meth:`~FingerprintIndex.add` each document only over its stored version ``doc.version`` (only if no
        document has its id when ``None``). Returns ``(refused, conflicts)``: the ids refused for good with their
        reasons, as :meth:`~FingerprintIndex.add` returns them, and the ids not written because the stored document
        is another version (the caller fetches them and writes again over what it found)."""
        ...

    def replace(self, docs: Sequence[StoredDoc]) -> list[str]:
        """Store each document in place of its stored version, only if that is still ``doc.version`` (a document
        with ``version`` ``None`` must not exist yet). Returns the ids that were not written because the stored
        document changed (or appeared) in the meantime: the caller fetches them again and decides again."""
        ...

    def remove(self, docs: Sequence[StoredDoc]) -> list[str]:
        """Delete each document if it is still ``doc.version``; returns the ids that changed in the meantime
        (a document already gone counts as removed)."""
        ...

    def scan(self, page: int = 1000, after: str | None = None, since: int | None = None
             ) -> Iterator[list[StoredDoc]]:
        """All stored documents in pages, in id order, starting after the id ``after``; with ``since``, only those
        that arrived then or later (:attr:`StoredDoc.arrival`: what a run decided, when ``since`` is its start)."""
        ...

    def visible_mark(self) -> Any:
        """A mark of what is visible now: every document written (or rewritten) later, and no other one written
        before, is in :meth:`written_since` of it (a superset is allowed)."""
        ...

    def written_since(self, mark: Any) -> list[StoredDoc]:
        """The stored documents written or rewritten since ``mark`` (a :meth:`visible_mark`), or a superset."""
        ...

    def first_holders(self, hashes: Collection[int], limit: int) -> dict[int, list[StoredDoc]]:
        """For each of ``hashes`` (sentence or sketch hashes), the first ``limit`` stored documents holding it in
        arrival order (:func:`arrival_key`): what settling needs to know which of a document's hashes were
        boilerplate when it arrived (held by more than ``max_sentence_df`` documents that arrived before it)."""
        ...


@runtime_checkable
class PartitionedIndex(MaintainedIndex, Protocol):
    """A maintained index stored in partitions (an alias over time-partitioned indexes): what dropping one needs
    (:func:`~es_simhash.clustering.drop_partition`)."""

    def partition_documents(self, partition: str) -> list[StoredDoc]:
        """The documents of ``partition`` as stored (without text or record), whether it is read or was taken out
        by :meth:`detach_partition` and not yet deleted."""
        ...

    def detach_partition(self, partition: str) -> list[StoredDoc]:
        """Take ``partition`` out of what the index reads (lookups, fetches and scans no longer see its documents)
        and return its documents as they were stored (without text or record). A partition taken out before and
        not yet deleted (a drop interrupted) gives its documents again. Refuses the partition written into."""
        ...

    def delete_partition(self, partition: str) -> None:
        """Delete ``partition`` (taken out by :meth:`detach_partition`) and its documents for good."""
        ...

    def vanished_partitions(self) -> list[str]:
        """The partitions last recorded (:meth:`record_partitions`) that someone else deleted since."""
        ...

    def record_partitions(self) -> None:
        """Record the partitions there are now, for :meth:`vanished_partitions` to compare with."""
        ...

    def dangling_targets(self) -> set[str]:
        """The ids a stored document's ``cluster`` or ``duplicate_of`` names and no stored document holds."""
        ...
