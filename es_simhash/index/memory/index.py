"""The embedded backend, one class: :class:`MemoryIndex`."""

from __future__ import annotations

import os
from typing import Any, Collection, Iterator, Mapping, Sequence, TypeVar

from es_simhash.defaults import MAX_SENTENCE_DF
from es_simhash.errors import (IndexFileError, IndexFileNotFound, NoFingerprintSettings, NotAnIndexFile,
                               OldFingerprints, OtherFingerprintSettings, SavedIndexError, UnreadableIndexFile)
from es_simhash.fingerprint.config import settings_difference
from es_simhash.index.base import Lookup, LookupResult, with_version
from es_simhash.records import StoredDoc
from es_simhash.index.memory import files
from es_simhash.index.memory import native as _native
from es_simhash.index.memory.lookups import MemoryLookups
from es_simhash.index.memory.maintenance import MemoryMaintenance
from es_simhash.index.memory.store import MemoryStore
from es_simhash.lookup.candidates import CandidateContract, served
from es_simhash.lookup.keys import DEFAULT, LookupKeys

M = TypeVar("M", bound="MemoryIndex")


class MemoryIndex:
    """In-memory :class:`~es_simhash.index.base.MaintainedIndex`: ``MemoryIndex(max_sentence_df=50,
    lookup_keys=DEFAULT, fingerprint_config=None)``.

    ``max_sentence_df``: a sentence hash held by more documents than this is boilerplate (site footers,
    disclaimers) and no longer brings candidates. ``lookup_keys``: which keys bring SimHash candidates
    (:data:`es_simhash.lookup.keys.DEFAULT`: 20 permutation tables for k = 3). ``fingerprint_config``: the
    fingerprint settings of the documents it holds (:attr:`Fingerprinter.config
    <es_simhash.fingerprint.Fingerprinter.config>`; None: those of the first engine that uses it,
    :meth:`require_settings`), saved with it; fingerprints made with other settings are refused.

    It owns its rows, ``store`` (:class:`~es_simhash.index.memory.store.MemoryStore`), and hands each method to
    the collaborator named in it: the store (writes and reads by id), ``_lookups``
    (:class:`~es_simhash.index.memory.lookups.MemoryLookups`), ``_maintenance``
    (:class:`~es_simhash.index.memory.maintenance.MemoryMaintenance`) or the file format
    (:mod:`~es_simhash.index.memory.files`, :meth:`save` and :meth:`load`).
    """

    shared_writers = False
    """Only this process writes into it: batches need no settling after their write (:mod:`es_simhash.clustering`)."""
    overlapping_writes = False
    """A write is done when ``add`` returns: nothing to overlap with the next lookup."""
    tail_rows = 4096
    """Rows scanned by brute force before they are sorted into a run."""
    native = _native.NATIVE_LOOKUP is not None
    """Batched SimHash lookups and sentence postings in the native core (same answers as numpy; set False for the
    numpy reference)."""

    def __init__(self, max_sentence_df: int = MAX_SENTENCE_DF, lookup_keys: LookupKeys = DEFAULT,
                 fingerprint_config: Mapping[str, Any] | None = None) -> None:
        self.store = MemoryStore(max_sentence_df, lookup_keys)
        self._lookups = MemoryLookups(self.store)
        self._maintenance = MemoryMaintenance(self.store)
        self.fingerprint_config: dict[str, Any] | None = None if fingerprint_config is None else dict(fingerprint_config)
        """The fingerprint settings of the documents it holds (None: not known yet; :meth:`require_settings`)."""
        self.path: str | None = None
        """The file it was loaded from (what its errors name), if any."""

    @property
    def max_sentence_df(self) -> int:
        """Sentence hashes held by more documents than this bring no candidates (the store's setting)."""
        return self.store.max_sentence_df

    @max_sentence_df.setter
    def max_sentence_df(self, value: int) -> None:
        self.store.max_sentence_df = value

    @property
    def lookup_keys(self) -> LookupKeys:
        """Which keys bring SimHash candidates (the store's setting)."""
        return self.store.lookup_keys

    # -- reads by id ----------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.store)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self.store

    def get(self, doc_id: str) -> StoredDoc | None:
        """The stored document with this id (no version), or None."""
        return self.store.get(doc_id)

    def docs(self) -> list[StoredDoc]:
        """All live documents, in insertion order."""
        return self.store.live_docs()

    def fingerprint_versions(self) -> set[int]:
        """The fingerprint versions of the stored documents."""
        return {d.fingerprint.version for d in self.store.live_docs()}

    def clear(self) -> None:
        """Remove every document (the settings, :attr:`fingerprint_config` and :attr:`path` stay)."""
        self.store = MemoryStore(self.store.max_sentence_df, self.store.lookup_keys)
        self._lookups = MemoryLookups(self.store)
        self._maintenance = MemoryMaintenance(self.store)

    # -- writes and lookups ---------------------------------------------------------------------------------
    def require_settings(self, config: Mapping[str, Any]) -> None:
        """Fingerprints made with ``config`` (:attr:`Fingerprinter.config
        <es_simhash.fingerprint.Fingerprinter.config>`) are about to be looked up or added (the engine calls this
        before each batch and each check): the first settings an index is given are its own (kept in
        :attr:`fingerprint_config`, saved with it); other ones raise
        :class:`~es_simhash.errors.OtherFingerprintSettings`, naming each setting that differs with both values
        (:func:`~es_simhash.fingerprint.config.settings_difference`, the comparison an Elasticsearch index makes):
        fingerprints made with another IDF table or option are not comparable."""
        if self.fingerprint_config is None:
            self.fingerprint_config = dict(config)
            return
        diff = settings_difference(self.fingerprint_config, config)
        if not diff:
            return
        name = self.path or "the index"
        how = ("build it again from its input: its fingerprints are of another version"
               if self.fingerprint_config.get("fingerprint_version") != config.get("fingerprint_version")
               else "fingerprint with the IDF table and options it was built with, or build a new index")
        raise OtherFingerprintSettings(f"{name} holds fingerprints made with other settings: {diff}: {how}",
                                       self.path, dict(self.fingerprint_config), dict(config))

    def add(self, docs: Sequence[StoredDoc]) -> dict[str, str]:
        """Store the documents (fingerprints, no payloads), replacing those with the same ids; nothing is refused
        (``{}``)."""
        self.store.add(docs, self.native)
        return {}

    def lookup(self, queries: Sequence[Lookup], contract: CandidateContract | int, exclude: Sequence[str] = (),
               before: Sequence[int] | None = None) -> list[LookupResult]:
        """Candidates for each query under ``contract`` (:meth:`MemoryLookups.lookup`; an int: the default contract
        with that ``max_distance``; :class:`~es_simhash.errors.UnservableContract` for one no index serves);
        ``before``: query ``i`` sees only the first ``before[i]`` documents added (the engine decides a batch's
        documents against its earlier ones this way)."""
        return self._lookups.lookup(queries, served(contract, "the embedded index"), exclude, before,
                                    native=self.native, tail_rows=self.tail_rows)

    # -- maintenance (:class:`~es_simhash.index.base.MaintainedIndex`) --------------------------------------
    def fetch(self, ids: Collection[str], whole: bool = True) -> dict[str, StoredDoc]:
        """The stored documents with these ids, each with its version (missing ids are left out; ``whole`` makes
        no difference here: the index keeps no texts)."""
        return self._maintenance.fetch(ids)

    def pointing_at(self, ids: Collection[str]) -> list[StoredDoc]:
        """Stored documents whose cluster or ``duplicate_of`` is one of ``ids`` (a scan of all documents)."""
        return self._maintenance.pointing_at(ids)

    def replace(self, docs: Sequence[StoredDoc]) -> list[str]:
        """Store the documents whose stored version is still ``doc.version``; returns the ids of the others."""
        return self.add_conditional(docs)[1]

    def add_conditional(self, docs: Sequence[StoredDoc]) -> tuple[dict[str, str], list[str]]:
        """Store the documents whose stored version is still ``doc.version`` (absent when ``None``): ``({},
        conflicts)``, the ids of the others (nothing is ever refused here)."""
        conflicts = self._maintenance.conflicts(docs)
        skip = set(conflicts)
        self.add([with_version(d, None) for d in docs if d.id not in skip])
        return {}, conflicts

    def remove(self, docs: Sequence[StoredDoc]) -> list[str]:
        """Delete the documents whose stored version is still ``doc.version`` (or that are gone already)."""
        return self._maintenance.remove(docs)

    def scan(self, page: int = 1000, after: str | None = None, since: int | None = None
             ) -> Iterator[list[StoredDoc]]:
        """All stored documents in id order, ``page`` at a time, from the first id after ``after`` (with ``since``:
        those that arrived then or later)."""
        return self._maintenance.scan(page, after, since)

    def first_holders(self, hashes: Collection[int], limit: int) -> dict[int, list[StoredDoc]]:
        """For each hash, the first ``limit`` live documents holding it, in arrival order."""
        return self._maintenance.first_holders(hashes, limit)

    def visible_mark(self) -> int:
        """Writes so far (every write is visible at once here)."""
        return self.store.writes

    def written_since(self, mark: int) -> list[StoredDoc]:
        """The documents stored by writes after ``mark``."""
        return self._maintenance.written_since(mark)

    # -- files ----------------------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the index to the file ``path`` (:func:`~es_simhash.index.memory.files.save`: ``.npz``, written
        atomically), with the fingerprint settings of its documents (:attr:`fingerprint_config`)."""
        files.save(self.store, path, self.fingerprint_config)

    @classmethod
    def load(cls: type[M], path: str | os.PathLike[str]) -> M:
        """Read a file written by :meth:`save`, into a new index of this class with the file's settings. A file in
        :data:`~es_simhash.index.memory.files.FORMAT_V1` has the four 16-bit segments as its lookup keys; a file
        that records no fingerprint settings takes those of the first engine that uses it (:meth:`open` refuses
        it). Raises :class:`~es_simhash.errors.IndexFileError` for a file that is not an es-simhash memory index,
        :class:`~es_simhash.errors.UnreadableIndexFile` for a damaged one."""
        saved = files.read(path)
        index = cls(max_sentence_df=saved.max_sentence_df, lookup_keys=saved.lookup_keys,
                    fingerprint_config=saved.fingerprint)
        index.path = os.fspath(path)
        files.restore(index.store, saved, index.native)
        return index

    @classmethod
    def open(cls: type[M], path: str | os.PathLike[str] | None = None, lookup_keys: LookupKeys | None = None,
             fingerprint_config: Mapping[str, Any] | None = None) -> M:
        """A new index with ``lookup_keys`` (None: the default), or (``path``) the one saved there, which keeps its
        own lookup keys and must hold fingerprints of the current version made with ``fingerprint_config`` (the
        settings of the run that will use it, :attr:`Fingerprinter.config
        <es_simhash.fingerprint.Fingerprinter.config>`; None: checked on first use, :meth:`require_settings`):
        what ``es-simhash dedup --load-index`` opens. A saved index with documents but no record of their
        settings is refused: nothing says its fingerprints are comparable. Raises
        :class:`~es_simhash.errors.IndexFileNotFound`, :class:`~es_simhash.errors.NotAnIndexFile`,
        :class:`~es_simhash.errors.UnreadableIndexFile`, :class:`~es_simhash.errors.OldFingerprints`,
        :class:`~es_simhash.errors.NoFingerprintSettings` or :class:`~es_simhash.errors.OtherFingerprintSettings`
        (all :class:`~es_simhash.errors.SavedIndexError`)."""
        from es_simhash.fingerprint.model import FINGERPRINT_VERSION

        if path is None:
            return cls(lookup_keys=DEFAULT if lookup_keys is None else lookup_keys,
                       fingerprint_config=fingerprint_config)
        name = os.fspath(path)
        try:
            index = cls.load(path)
        except FileNotFoundError:
            hint = f" (there is {name}.npz: give that name)" if os.path.isfile(f"{name}.npz") else ""
            raise IndexFileNotFound(f"index file not found: {name}{hint}", name) from None
        except SavedIndexError:
            raise
        except IndexFileError:
            raise NotAnIndexFile(f"{name} is not an es-simhash index file", name) from None
        except (ValueError, OSError, KeyError) as exc:
            raise UnreadableIndexFile(f"cannot load index {name}: {exc}", name) from None
        old = sorted(index.fingerprint_versions() - {FINGERPRINT_VERSION})
        if old:
            raise OldFingerprints(f"{name} holds fingerprints of version {', '.join(map(str, old))}, not "
                                  f"{FINGERPRINT_VERSION}: they would never match new ones; build it again from its "
                                  "input", name, old)
        if index.fingerprint_config is None and len(index):
            raise NoFingerprintSettings(f"{name} does not record the fingerprint settings (IDF table, options) its "
                                        "documents were made with, so nothing says they are comparable with new "
                                        "ones: build it again from its input", name)
        if fingerprint_config is not None:
            index.require_settings(fingerprint_config)
        return index
