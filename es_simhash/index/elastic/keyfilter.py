"""Partition term filters: a lookup through an alias asks each older partition only for the terms it holds.

A batched lookup search asks for the batch's ids, content hashes, lookup keys and long-sentence hashes (about 30 terms
a document). Lucene seeks every one of them in the term dictionary of every partition searched, so over P partitions
a lookup costs about P times the seeks of one index, though a partition past the newest holds few of the batch's
terms (its documents are older; new documents go to the write index). For each such partition the handle keeps the
hashes of every term its documents hold in those fields (:class:`TermFilter`), and a lookup asks it only for the
batch's terms among them, the newest partition and every partition without a filter being asked for every term.
Still one request per batch: an ``_msearch`` holding a search of the alias (every term, the filtered partitions left
out by a ``must_not`` on ``_index``, which each shard answers from its name without reading a document) and a
search of each filtered partition holding some of the terms, for those only (a single-shard search, queried and
fetched in one round). A batch with short texts' sketch hashes searches on a point in time, which names no
partition: there it is one search with a clause per filtered partition on ``_index``, and each text's sketch clause
(``minimum_should_match``) leaves out the partitions holding fewer than that many of its hashes; the count of those
hashes' document frequencies before it (a ``filters`` aggregation, a filter per hash) leaves out of each hash's filter
the partitions holding it in no document up to their marks, and counts their documents above the marks by a search
of their own.

**Exact, not approximate.** A filter holds the terms of every document of its partition whose ``_seq_no`` is at or
below its ``mark``: made by reading the whole partition, its mark the partition's visible checkpoint then
(:meth:`~es_simhash.index.elastic.handle.IndexHandle.visible_mark`: every document up to it is visible). The
search asks each filtered partition also for every document above the filter's mark (a ``range`` on ``_seq_no``: a
page re-indexed with other content there, a member re-pointed; in the search of the alias), so it finds every
document an unfiltered search finds (and those few more, which the exact matching after it sets aside as it does any
hit); once it has returned all its matches, the terms of those documents are taken in and the mark moves to the partition's visible mark
of that search (:meth:`PartitionFilters.absorb`). Terms of a document rewritten since stay in the filter: a term
asked for in vain, never a candidate lost. Terms are kept as 64-bit codes (:func:`term_codes`: a hex hash as its value, a
lookup key as its table and key, an id by an 8-byte BLAKE2b digest; a collision asks for a term in vain). Only single-shard partitions are filtered (the shipped template's): sequence numbers are per shard,
and a partition's mark is the lowest of its shards', so a shard ahead of another would return its documents above
that mark in every search. A search that comes back full has the filters take in every document above their
marks first (read in ``_seq_no`` order: :meth:`PartitionFilters.catch_up`) and is sent again. With a dedup window
(``--window``) lookups are not routed: what a windowed search covers is read as it is sent.

**Memory and disk**: about 10 bytes per distinct term of a partition (8 for the code, 1-2 for the bit set; about
25-45 terms a document: 250-450 MB for 1M documents). Filters are made newest partition first while the filters
made take less than :attr:`PartitionFilters.max_bytes` (1 GiB by default: the last one made may pass it); older
partitions are searched for every term. A filter made is kept on disk (``ES_SIMHASH_CACHE``, by default
``~/.cache/es-simhash/partition-filters``, one file per partition, named by the index's UUID, which no other index
ever has), so the next run on this machine reads it instead of the partition and asks for what was written above
its mark; deleting the folder costs a read of each partition. The first filter a process saves removes the files
no run has read or written for 30 days.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np

from es_simhash.index.elastic.codec import from_docvalues
from es_simhash.index.elastic.schema import written_above
from es_simhash.settings import cache_root

if TYPE_CHECKING:
    from es_simhash.index.elastic.handle import IndexHandle
    from es_simhash.lookup.keys import LookupKeys

log = logging.getLogger("es_simhash.index.elastic")

__all__ = ["FILTERED_FIELDS", "TermFilter", "Routing", "PartitionFilters", "term_codes"]

FILTERED_FIELDS = ("doc_id", "content_hash", "lookup_keys", "sentences")
"""The fields whose terms a filter holds: those the routed clauses of a lookup search ask (``doc_id`` holds the
``_id`` the ``ids`` clause asks for; ``lookup_keys``, indexed without doc values, are made again from ``simhash``)."""
READ_FIELDS = ("doc_id", "content_hash", "sentences", "simhash")
FORMAT = 1
"""Bumped when the codes or the cache files change (then every filter is made again)."""


def term_codes(kind: str, values: Sequence[str]) -> np.ndarray:
    """Each term's 64-bit code (``int64``), the same in every process: ``"hex"`` (a 16-digit hex hash: its value),
    ``"key"`` (a lookup key ``"13:0a1b2c3d"``: its table and key), ``"id"`` (an 8-byte BLAKE2b digest)."""
    if not len(values):
        return np.empty(0, np.int64)
    if kind == "hex":
        return np.frombuffer(bytes.fromhex("".join(values)), dtype=">i8").astype(np.int64)
    if kind == "key":
        return np.fromiter(((int(t, 16) << 32) | int(k, 16) for t, k in (v.split(":") for v in values)),
                           dtype=np.int64, count=len(values))
    return np.frombuffer(b"".join(hashlib.blake2b(v.encode("utf-8"), digest_size=8).digest() for v in values),
                         dtype=">i8").astype(np.int64)


def key_codes(keys: LookupKeys, simhashes: np.ndarray) -> np.ndarray:
    """The codes of every lookup key of ``simhashes`` (as :func:`term_codes` ``"key"`` codes their terms)."""
    k = keys.keys(simhashes).astype(np.int64)
    return ((np.arange(k.shape[1], dtype=np.int64) << 32) | k).ravel()


def _codes(keys: LookupKeys, srcs: Sequence[dict[str, Any]]) -> np.ndarray:
    """The sorted unique codes of every term some of these documents hold (doc values as lookups read them into
    ``_source``: ``doc_id``, ``content_hash``, ``sentences``; their lookup keys made from ``simhash``)."""
    parts = [term_codes("id", [s["doc_id"] for s in srcs if s.get("doc_id")]),
             term_codes("hex", [s["content_hash"] for s in srcs if s.get("content_hash")]),
             term_codes("hex", [x for s in srcs for x in s.get("sentences") or ()])]
    if not keys.is_segments:  # (every key a document may hold: those with features hold them)
        sims = [s["simhash"] for s in srcs if s.get("simhash")]
        if sims:
            parts.append(key_codes(keys, term_codes("hex", sims).view(np.uint64)))
    return np.unique(np.concatenate(parts))


_MIX = np.uint64(0x9E3779B97F4A7C15)


class TermFilter:
    """The terms one partition's documents hold (:data:`FILTERED_FIELDS`), as sorted unique codes
    (:func:`term_codes`), for every document whose ``_seq_no`` is at most ``mark``; ``uuid``: the partition's.
    Membership is asked of a bit set first (one bit per slot, about 8 slots a code: a code it does not hold is
    told apart there 7 times in 8), then of the codes themselves. The codes, the bit set and its shift are one
    value replaced whole by :meth:`add`, so a lookup thread asking meanwhile reads the old one or the new one."""

    def __init__(self, name: str, uuid: str, mark: int, codes: np.ndarray) -> None:
        self.name, self.uuid, self.mark = name, uuid, mark
        self._state = _indexed(codes)

    @property
    def codes(self) -> np.ndarray:
        return self._state[0]

    def has(self, codes: np.ndarray) -> np.ndarray:
        """For each code, whether the partition may hold its term: every one it holds (a code shared by chance
        lets one more through)."""
        held, bits, shift = self._state  # (read once: add replaces it whole)
        out = np.zeros(len(codes), dtype=bool)
        if not len(codes) or not len(held):
            return out
        slots = _slots(codes, shift)
        maybe = np.flatnonzero((bits[slots >> 3] >> (slots & 7).astype(np.uint8)) & 1)
        if len(maybe):
            at = np.searchsorted(held, codes[maybe])
            at[at == len(held)] = 0
            out[maybe] = held[at] == codes[maybe]
        return out

    def add(self, codes: np.ndarray, mark: int) -> None:
        """Hold ``codes`` too (the terms of documents written up to ``mark``), and move the mark there."""
        if len(codes):
            held, bits, shift = self._state
            merged = np.union1d(held, codes)
            if 8 * len(merged) >= 2 * (len(bits) << 3):
                self._state = _indexed(merged)
            else:
                bits = bits.copy()
                _mark_slots(bits, codes, shift)
                self._state = (merged, bits, shift)
        self.mark = max(self.mark, mark)

    @property
    def nbytes(self) -> int:
        return int(self._state[0].nbytes + self._state[1].nbytes)


def _slots(codes: np.ndarray, shift: np.uint64) -> np.ndarray:
    return ((codes.view(np.uint64) * _MIX) >> shift).astype(np.int64)


def _mark_slots(bits: np.ndarray, codes: np.ndarray, shift: np.uint64) -> None:
    slots = _slots(codes, shift)
    np.bitwise_or.at(bits, slots >> 3, np.left_shift(1, slots & 7).astype(np.uint8))


def _indexed(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.uint64]:
    """``(codes, bit set, shift)``: the bit set sized to about 8 slots a code."""
    width = max(16, int(8 * len(codes)).bit_length())
    shift = np.uint64(64 - width)
    bits = np.zeros(1 << (width - 3), dtype=np.uint8)
    _mark_slots(bits, codes, shift)
    return codes, bits, shift


@dataclass
class Routing:
    """The filters one lookup search routes its terms by: ``since``, each filter's mark then (the documents above it
    are asked for whole, by ``_seq_no``); ``upto``, each partition's visible mark then."""

    filters: dict[str, TermFilter]
    since: dict[str, int]
    upto: dict[str, int]


class PartitionFilters:
    """The :class:`TermFilter` of each partition a batched lookup may route (every partition behind the alias but
    the newest, single-shard, within :attr:`max_bytes`), read from the cache folder or made, and kept up to date,
    on demand (:meth:`route`). Thread-safe (lookups of one batch may run in several threads)."""

    max_bytes = 1 << 30
    """Memory the filters may take: the newest partitions get one first; older ones are searched for every term."""
    page = 5_000
    """Documents per page when a partition is read."""
    keep_days = 30
    """A filter file no run has read or written for this many days is removed (its partition is likely gone)."""
    save_after = 5_000
    """Documents taken in (:meth:`absorb`) after which a partition's filter is written to the cache again."""

    def __init__(self, handle: IndexHandle, enabled: bool = True, folder: str | os.PathLike[str] | None = None
                 ) -> None:
        self.handle = handle
        self.enabled = enabled
        """Whether lookups through an alias route their terms by partition (``False``: every partition is asked for
        every term)."""
        self.folder = Path(folder) if folder is not None else cache_root() / "partition-filters"
        """Where filters are kept between runs (``None`` given: ``ES_SIMHASH_CACHE``'s ``partition-filters``)."""
        self._filters: dict[str, TermFilter] = {}
        self._unfiltered: set[str] = set()
        """Partitions never filtered: several shards, or past the memory bound."""
        self._unsaved: dict[str, int] = {}
        self._pruned = False
        self._lock = threading.Lock()
        self.built = 0
        """Partitions read whole to make their filter."""
        self.loaded = 0
        """Filters read from the cache folder."""
        self.build_seconds = 0.0
        """Time spent reading partitions whole."""
        self.absorbed = 0
        """Documents above their partition filter's mark whose terms were taken in (returned by a routed search,
        or read by :meth:`catch_up`)."""
        self.catch_ups = 0
        """Full routed searches after which the filters read the documents above their marks."""

    def of(self, partition: str) -> TermFilter | None:
        """The filter of ``partition`` made so far, if any."""
        return self._filters.get(partition)

    @property
    def nbytes(self) -> int:
        """Memory the filters take now."""
        return sum(f.nbytes for f in self._filters.values())

    def route(self) -> Routing | None:
        """The filters a lookup searching now may route its terms by (``None`` for an index, an alias over one
        partition, or when disabled), each partition's filter made first when it has none."""
        if not self.enabled or self.handle.window is not None or not self.handle.is_alias():
            return None  # (a window: what a search covers is read as it is sent; marks move for what it covers only)
        mark = self.handle.visible_mark()
        if not isinstance(mark, dict) or len(mark) < 2:
            return None
        wanted = sorted(mark)[:-1]  # (the newest: the write index)
        with self._lock:
            for gone in set(self._filters) - set(mark):
                del self._filters[gone]
            uuids = self.handle.partition_uuids
            for name in wanted:  # a partition made again under its name: another index
                f, uuid = self._filters.get(name), uuids.get(name)
                if f is not None and uuid and uuid != f.uuid:
                    del self._filters[name]
            used = self.nbytes
            for name in reversed(wanted):  # newest first, within the memory bound
                if name in self._filters or name in self._unfiltered:
                    continue
                if used >= self.max_bytes:
                    self._unfiltered.add(name)
                    continue
                made = self._build(name, mark[name])
                if made is not None:
                    self._filters[name] = made
                    used += made.nbytes
            filters = {n: self._filters[n] for n in wanted if n in self._filters}
            if not filters:
                return None
            return Routing(filters, {n: f.mark for n, f in filters.items()}, {n: mark[n] for n in filters})

    def absorb(self, routing: Routing, hits: Sequence[dict[str, Any]]) -> None:
        """After a routed search that returned every match (``hits``: with ``_index``, ``_seq_no`` and the doc
        values of :data:`READ_FIELDS` in ``_source``): the terms of the documents each filtered partition returned
        above its filter's mark, and the mark moved to the partition's visible mark of the search (every document
        up to it was visible, so each above the old mark was returned)."""
        keys = self.handle.lookup_keys
        fresh: dict[str, list[dict[str, Any]]] = {}
        for h in hits:
            name = h.get("_index")
            if name in routing.since and h.get("_seq_no", -1) > routing.since[name]:
                fresh.setdefault(name, []).append(h["_source"])
        with self._lock:
            for name, f in routing.filters.items():
                if self._filters.get(name) is not f:
                    continue  # (dropped or made again meanwhile)
                srcs = fresh.get(name, [])
                f.add(_codes(keys, srcs) if srcs else np.empty(0, np.int64), routing.upto[name])
                self.absorbed += len(srcs)
                if srcs:
                    self._unsaved[name] = self._unsaved.get(name, 0) + len(srcs)
                    if self._unsaved[name] >= self.save_after:
                        self._save(f)

    def catch_up(self, routing: Routing) -> int:
        """Take in the terms of every document above each routed filter's mark (read a page at a time, in
        ``_seq_no`` order) and move the marks to the partitions' visible marks of ``routing``: when a routed search
        came back full, so that the documents above the marks do not fill every search. Returns the documents
        read."""
        read = 0
        with self._lock:
            for name, f in routing.filters.items():
                if self._filters.get(name) is not f:
                    continue
                codes, n = self._read(name, written_above(routing.since[name]), "_seq_no")
                read += n
                before = f.mark
                f.add(codes, routing.upto[name])
                if n or f.mark > before:
                    self._save(f)
        self.absorbed += read
        self.catch_ups += 1 if read else 0
        return read

    def _build(self, name: str, mark: int) -> TermFilter | None:
        """The filter of partition ``name`` holding every document visible up to ``mark``: read from the cache
        folder (then brought up to ``mark`` by the search: the documents above its own mark are asked for whole),
        or made by reading the partition; ``None`` for a partition of several shards (remembered) or one gone
        meanwhile."""
        client = self.handle.client
        try:
            got = self.handle.retrying(lambda: client.indices.get_settings(
                index=name, name="index.number_of_shards,index.uuid", flat_settings=True),
                "reading a partition's settings")
        except Exception as exc:  # (gone meanwhile: searched, if at all, for every term)
            log.info("no term filter for partition %r: %s", name, exc)
            return None
        settings = got.get(name, {}).get("settings", {})
        uuid = str(settings.get("index.uuid", ""))
        if int(settings.get("index.number_of_shards", 0) or 0) != 1 or not uuid:
            self._unfiltered.add(name)
            return None
        cached = self._load(name, uuid)
        if cached is not None:
            self.loaded += 1
            return cached
        t0 = time.perf_counter()
        try:
            made = TermFilter(name, uuid, mark, self._read(name, {"match_all": {}}, "doc_id")[0])
        except Exception as exc:  # (dropped while read, or failing: searched for every term)
            log.info("no term filter for partition %r: %s", name, exc)
            self._unfiltered.add(name)
            return None
        self.built += 1
        self.build_seconds += time.perf_counter() - t0
        log.debug("term filter of partition %r: %d terms, %.1f s", name, len(made.codes), time.perf_counter() - t0)
        self._save(made)
        return made

    def _path(self, uuid: str) -> Path:
        return self.folder / f"{uuid}.npz"

    def _load(self, name: str, uuid: str) -> TermFilter | None:
        """The filter kept in the cache folder for the index with this UUID, if any (and readable)."""
        path = self._path(uuid)
        if not path.exists():
            return None
        try:
            os.utime(path)  # (in use: kept by the pruning of :meth:`_save`)
            with np.load(path) as data:
                if int(data["format"]) != FORMAT or str(data["keys"]) != repr(self.handle.lookup_keys):
                    return None
                return TermFilter(name, uuid, int(data["mark"]), np.asarray(data["codes"], dtype=np.int64))
        except Exception as exc:  # (a file cut short or unreadable: made again)
            log.info("partition filter %s unreadable, made again: %s", path, exc)
            return None

    def _save(self, f: TermFilter) -> None:
        """Keep ``f`` in the cache folder (written beside and renamed over: a reader never sees half a file); the
        first time in a process, files unused for :attr:`keep_days` (of partitions deleted since) are removed."""
        self._unsaved.pop(f.name, None)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            if not self._pruned:
                self._pruned = True
                old = time.time() - self.keep_days * 86400
                for stale in self.folder.glob("*.npz"):
                    if stale.stat().st_mtime < old:
                        stale.unlink(missing_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=f".{f.uuid}.", suffix=".npz")
            try:
                with os.fdopen(fd, "wb") as out:
                    np.savez(out, format=FORMAT, keys=repr(self.handle.lookup_keys), mark=f.mark, codes=f.codes)
                os.replace(tmp, self._path(f.uuid))
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:  # (a read-only home: the filter lives as long as the process)
            log.info("partition filter of %r not kept in %s: %s", f.name, self.folder, exc)

    def _read(self, name: str, query: dict[str, Any], order: str) -> tuple[np.ndarray, int]:
        """The sorted unique codes of the terms held by the documents of partition ``name`` matching ``query`` (read
        in ``order``: :meth:`_pages`), and how many documents they are."""
        parts, n = [], 0
        for srcs in self._pages(name, query, order):
            parts.append(_codes(self.handle.lookup_keys, srcs))
            n += len(srcs)
        return (np.unique(np.concatenate(parts)) if parts else np.empty(0, np.int64)), n

    def _pages(self, name: str, query: dict[str, Any], order: str) -> Iterator[list[dict[str, Any]]]:
        """The doc values of :data:`READ_FIELDS` of the documents of partition ``name`` matching ``query``, a page at
        a time in ``order`` (a field unique within the partition)."""
        client = self.handle.client
        cursor: list[Any] | None = None
        while True:
            body: dict[str, Any] = {"size": self.page, "query": query, "sort": [{order: "asc"}],
                                    "_source": False, "docvalue_fields": list(READ_FIELDS),
                                    "track_total_hits": False}
            if cursor is not None:
                body["search_after"] = cursor
            hits = self.handle.retrying(lambda: client.search(
                index=name, body=body, filter_path="hits.hits.fields,hits.hits.sort"),
                "reading a partition's terms").get("hits", {}).get("hits", [])
            if not hits:
                return
            yield [from_docvalues(h.get("fields", {})) for h in hits]
            if len(hits) < self.page:
                return
            cursor = hits[-1]["sort"]
