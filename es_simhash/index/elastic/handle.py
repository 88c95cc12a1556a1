"""One Elasticsearch index (or an alias over partitions) as every part of
:class:`~es_simhash.index.elastic.index.ElasticIndex` reaches it: the client, the index's name and lookup keys, the
requests they all send (retried ``_msearch``, points in time, split ``terms`` clauses, refreshes, where stored
documents live) and what those requests count."""

from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterator, Sequence, TypeVar

from es_simhash.defaults import RETRY_FOR
from es_simhash.index.elastic.admin import (age_seconds, creation_times, is_alias_name, partitions,
                                            read_lookup_keys, validate_index_name, write_index)
from es_simhash.index.elastic.client import as_search_client
from es_simhash.index.elastic.codec import from_docvalues
from es_simhash.index.elastic.errors import READ_ONLY_BLOCKS, elastic_errors, raise_item_error, retrying
from es_simhash.index.elastic.schema import MSEARCH_FILTER
from es_simhash.lookup.keys import LookupKeys

if TYPE_CHECKING:
    from es_simhash.index.elastic.client import SearchClient

log = logging.getLogger("es_simhash.index.elastic")

T = TypeVar("T")


class IndexHandle:
    """The client and name of one Elasticsearch index, with the requests the lookups, the writes and the
    maintenance reads share. Thread-safe where lookups run in several threads (the search counters).

    The name may be an alias over partitions (:func:`~es_simhash.index.elastic.admin.ensure_partitioned`): every
    search, count, refresh and point in time goes through the alias and covers all its partitions; a stored
    document is written back or deleted in the partition that holds it (:meth:`locate`), and
    :meth:`visible_mark` is a checkpoint per partition (sequence numbers are per shard: those of two partitions
    cannot be compared)."""

    max_terms_count = 65_536
    """Most values in one ``terms`` clause (the index setting ``index.max_terms_count``; its default)."""
    max_mark_age = 10.0
    """Seconds for which :meth:`visible_mark` reuses the checkpoints of this handle's latest refresh of the whole
    index (behind an alias, a write's refresh of the partitions it wrote into keeps the others' marks); an older one
    would make settling read every document written since (other writers may write many), so it refreshes again."""

    def __init__(self, client: SearchClient, index: str, *, url: str = "", retry_for: float = RETRY_FOR,
                 lookup_keys: LookupKeys | None = None, window: int | str | None = None) -> None:
        if isinstance(window, int) and window < 1:
            raise ValueError(f"window must be at least 1 partition, not {window}")
        self.window_age = age_seconds(window) if isinstance(window, str) else None
        """A dedup window by age, in seconds (a ``window`` such as ``"30d"``), or ``None``."""
        self.client = as_search_client(client)
        self.index = validate_index_name(index)
        self.window = window
        """The dedup window: lookups search the newest this many partitions of the alias, or with an age
        (``"30d"``, ``"12h"``) the partitions written into in that time (:meth:`lookup_target`); ``None``: every
        partition."""
        self.url = url
        """The cluster's URL as messages show it (no credentials)."""
        self.retry_for = retry_for
        """Seconds for which a request failing transiently is retried (:meth:`retrying`)."""
        self.searches = 0
        """Searches sent by lookups (each search of an ``_msearch`` counts)."""
        self.hits_read = 0
        """Hits those searches brought to the client (before the exact re-rank)."""
        self._lookup_keys = lookup_keys
        self._counting = threading.Lock()
        self._alias: bool | None = None
        self._visible: int | dict[str, int] | None = None
        """The highest checkpoint read before a refresh this handle made and saw finish (:meth:`refresh`): every
        operation up to it is visible to any search sent since."""
        self._visible_at = 0.0
        """When (``time.monotonic``) a refresh last raised :attr:`_visible`."""
        self.partition_uuids: dict[str, str] = {}
        """Each partition's index UUID, as the latest :meth:`checkpoint` read them."""

    @cached_property
    def max_clause_count(self) -> int | None:
        """The engine's fixed bound on the clauses of one search, read once (OpenSearch's
        ``indices.query.bool.max_clause_count``); ``None`` where it scales with the heap (Elasticsearch)."""
        return self.retrying(self.client.max_clause_count, "reading the clause bound")

    @property
    def lookup_keys(self) -> LookupKeys:
        """The keys recorded in the index's mapping (the four segments for an index with none recorded; the default
        keys for an index that does not exist yet), read once."""
        if self._lookup_keys is None:
            self._lookup_keys = read_lookup_keys(self.client, self.index, self.url)
        return self._lookup_keys

    def is_alias(self) -> bool:
        """Whether the name is an alias (over partitions) rather than an index; read once it exists (a name that
        does not exist yet is no alias: the first write creates it)."""
        if self._alias is None:
            self._alias = is_alias_name(self.client, self.index)
            if self._alias is None:
                return False
        return self._alias

    def partitions(self) -> list[str]:
        """The concrete indexes behind the name, sorted, read now (another writer may have rolled the alias
        over): ``[index]`` for an index."""
        if not self.is_alias():
            return [self.index]
        return partitions(self.client, self.index)

    def write_index(self) -> str:
        """The index new documents go to, read now: the alias's write index (the index itself for an index)."""
        if not self.is_alias():
            return self.index
        return self.retrying(lambda: write_index(self.client, self.index), "reading the alias's write index")

    def lookup_target(self) -> str:
        """What a lookup searches, read now: the index, or the alias (every partition), or with a :attr:`window` the
        newest :attr:`window` partitions of the alias (in rollover order: by name), or with a window by age the
        write index and every partition whose next partition was made within that age (written into then; one
        settings request), comma-separated (one search still: the request names them all)."""
        if self.window is None or not self.is_alias():
            return self.index
        if self.window_age is None:
            return ",".join(self.partitions()[-int(self.window):])
        # (a partition is written into until the next one is made: in the window when that was within its age; the
        # settings request names every partition behind the alias)
        since = time.time() - self.window_age
        made = self.retrying(lambda: creation_times(self.client, self.index), "reading the partitions' ages")
        parts = sorted(made)
        return ",".join(p for p, then in zip(parts, parts[1:] + [None]) if then is None or made[then] >= since)

    def read_only_partitions(self) -> frozenset[str]:
        """The partitions behind the alias that refuse writes for good, read now (one settings request): those
        with ``index.blocks.write`` or ``index.blocks.read_only`` set (:data:`READ_ONLY_BLOCKS`), as a user or a
        lifecycle policy's warm phase sets them, but the write index (its block is a pause: writes are retried).
        Empty for an index."""
        if not self.is_alias():
            return frozenset()
        got = self.retrying(lambda: self.client.indices.get_settings(
            index=self.index, name="index.blocks.*", flat_settings=True), "reading the partitions' write blocks")
        blocked = frozenset(name for name, body in got.items()
                            if any(str(body.get("settings", {}).get(f"index.blocks.{b}", "")).lower() == "true"
                                   for b in READ_ONLY_BLOCKS))
        return blocked - {self.write_index()} if blocked else blocked

    def locate(self, ids: list[str]) -> dict[str, str]:
        """The partition holding each of ``ids`` that is stored, found by one search through the alias (``ids``
        clauses, no ``_source``); ``{}`` for an index (every document lives in it). Writes refresh the index,
        so a document any writer stored is found here. An id held by two partitions (which es-simhash never
        writes) is placed in the first in name order, and logged."""
        if not ids or not self.is_alias():
            return {}
        out: dict[str, str] = {}
        step = 5_000
        for start in range(0, len(ids), step):
            chunk = ids[start:start + step]
            body = {"query": {"ids": {"values": chunk}}, "size": 2 * len(chunk), "_source": False,
                    "track_total_hits": False, "sort": ["_doc"]}
            hits = self.retrying(lambda: self.client.search(index=self.index, body=body,
                                                            filter_path="hits.hits._id,hits.hits._index"),
                                 "locating documents").get("hits", {}).get("hits", [])
            for h in sorted(hits, key=lambda h: h["_index"]):
                if h["_id"] in out and out[h["_id"]] != h["_index"]:
                    log.warning("document %r is stored in both %r and %r behind alias %r", h["_id"],
                                out[h["_id"]], h["_index"], self.index)
                    continue
                out[h["_id"]] = h["_index"]
        return out

    def count(self) -> int:
        """The documents in the index, after a refresh."""
        with elastic_errors(self.url):
            self.client.indices.refresh(index=self.index)
            return int(self.client.count(index=self.index)["count"])

    def checkpoint(self, partitions: Sequence[str] | None = None) -> int | dict[str, int]:
        """The lowest global checkpoint of the index's shards: every operation up to it has been processed by every
        copy (with several shards, the lowest over them). For an alias: that of each partition, by name (of
        ``partitions`` only, when given)."""
        target = ",".join(partitions) if partitions else self.index
        stats = self.client.indices.stats(index=target, level="shards", metric="docs",
                                          filter_path="indices.*.shards.*.seq_no.global_checkpoint,indices.*.uuid")
        per: dict[str, int] = {}
        uuids = {name: str(index.get("uuid", "")) for name, index in stats.get("indices", {}).items()}
        self.partition_uuids = {**self.partition_uuids, **uuids} if partitions else uuids
        for name, index in stats.get("indices", {}).items():
            marks = [copy["seq_no"]["global_checkpoint"] for copies in index.get("shards", {}).values()
                     for copy in copies if "seq_no" in copy]
            per[name] = min(marks) if marks else -1
        if self.is_alias():
            return per
        return min(per.values()) if per else -1

    def refresh(self, partitions: Collection[str] | None = None) -> None:
        """Refresh the index, and remember the checkpoint read just before (:meth:`checkpoint`): once the refresh
        has finished, every document with a ``_seq_no`` up to it is visible (:meth:`visible_mark` then costs no
        request). ``partitions``: behind an alias, only these (those a write went to); the others keep the mark
        an earlier refresh read for them, which stays true (what was visible stays visible), and a refresh of
        every partition follows within :attr:`max_mark_age` (:meth:`visible_mark`). Without a mark for every
        partition yet, every partition is refreshed."""
        names = sorted(set(partitions)) if partitions is not None else None
        if names is not None and (not self.is_alias() or not isinstance(self._visible, dict)):
            names = None
        elif names == []:
            return
        before = dict(self.partition_uuids)
        mark = self.checkpoint(names)
        self.client.indices.refresh(index=",".join(names) if names else self.index)
        with self._counting:
            seen = self._visible
            if isinstance(mark, dict):  # (per partition: the highest seen of each, and the partitions new since; a
                # partition made again under its name, another index, starts over)
                if isinstance(seen, dict):
                    now = self.partition_uuids
                    mark = {name: m if before.get(name, now.get(name)) != now.get(name) else max(m, seen.get(name, m))
                            for name, m in mark.items()}
                    if names is not None:  # (the partitions not refreshed now keep their marks)
                        mark = {**seen, **mark}
                self._visible = mark
                if names is None:
                    self._visible_at = time.monotonic()
            elif seen is None or isinstance(seen, dict) or mark >= seen:
                self._visible, self._visible_at = mark, time.monotonic()

    def visible_mark(self) -> int | dict[str, int]:
        """The lowest global checkpoint of the index's shards read before the latest refresh this handle made and
        saw finish (for an alias: one per partition, by name): every document with a ``_seq_no`` up to it is
        visible, and ``written_since`` of it holds every later one. Each write refreshes, so a writer gets its mark without a request; a handle whose latest refresh
        is more than :attr:`max_mark_age` seconds old, or that has not refreshed yet, refreshes now. (The mark can
        be older than what is visible: ``written_since`` is then a superset.)"""
        if self._visible is None or time.monotonic() - self._visible_at > self.max_mark_age:
            self.retrying(self.refresh, "refresh")
        assert self._visible is not None
        return dict(self._visible) if isinstance(self._visible, dict) else self._visible

    def terms(self, field: str, values: list[str]) -> list[dict[str, Any]]:
        """``terms`` clauses over ``values`` (``ids`` clauses for the field ``"ids"``), split so none holds more than
        :attr:`max_terms_count` (Elasticsearch's ``index.max_terms_count``, which a big batch's keys can exceed)."""
        step = self.max_terms_count
        chunks = [values[i:i + step] for i in range(0, len(values), step)]
        if field == "ids":
            return [{"ids": {"values": c}} for c in chunks]
        return [{"terms": {field: c}} for c in chunks]

    def msearch(self, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The responses of ``bodies``, sent in one ``_msearch`` (retried on transient failures)."""
        return self.retrying(lambda: self.msearch_once(bodies), "lookup")

    @contextmanager
    def point_in_time(self) -> Iterator[str]:
        """A point in time of the index, closed on leaving: searches on it see the same documents, though the index
        is refreshed between them. (A point in time whose node left fails its searches with a retryable error: the
        caller opens another.)"""
        pit = self.client.open_point_in_time(index=self.lookup_target(), keep_alive="1m")["id"]
        try:
            yield pit
        finally:
            try:  # (briefly, once: the caller may be retrying after a timeout)
                self.client.options(request_timeout=10, max_retries=0).close_point_in_time(id=pit)
            except Exception as exc:  # (it expires after its keep-alive anyway)
                log.warning("closing a point in time of index %r failed (it expires within a minute): %s",
                            self.index, exc)

    def msearch_once(self, bodies: list[dict[str, Any]], pit: str | None = None,
                     targets: Sequence[str | list[str]] | None = None) -> list[dict[str, Any]]:
        """The responses of ``bodies`` sent in one ``_msearch`` (on the point in time ``pit``, when given; else
        each searching its partitions in ``targets``, or what lookups search: :meth:`lookup_target`), each hit's
        doc values read into its ``_source``; a failed search raises :class:`Transient` or :class:`ElasticError`.
        Every lookup search goes through it."""
        if not bodies:
            return []
        searches: list[dict[str, Any]] = []
        if targets is None:
            targets = [self.index if pit else self.lookup_target()] * len(bodies)
        for b, target in zip(bodies, targets):
            # no partial results: a shard that failed would leave candidates out silently
            header: dict[str, Any] = {"allow_partial_search_results": False}
            if pit:
                b = {**b, "pit": {"id": pit}}
            elif isinstance(target, str):
                header["index"] = target
            else:  # (partitions named: one dropped meanwhile holds no document the alias would show)
                header.update(index=",".join(target), ignore_unavailable=True)
            searches += [header, b]
        out = []
        for r in self.client.msearch(searches=searches, filter_path=MSEARCH_FILTER)["responses"]:
            if "error" in r:
                raise_item_error(r, "lookup", self.index)
            hits = r.get("hits", {}).get("hits", [])
            with self._counting:  # (lookups may run in several threads)
                self.searches += 1
                self.hits_read += len(hits)
            for h in hits:
                h["_source"] = from_docvalues(h.pop("fields", {}))
                h["_id"] = h["_source"]["doc_id"]
            out.append({"hits": {"hits": hits}, "aggregations": r.get("aggregations", {})})
        return out

    def retrying(self, fn: Callable[[], T], what: str) -> T:
        """``fn()`` retried on transient failures for at most ``retry_for`` seconds (:func:`retrying`)."""
        return retrying(fn, what, self.url, self.retry_for)
