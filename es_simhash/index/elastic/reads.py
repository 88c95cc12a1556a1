"""What maintenance reads (:mod:`es_simhash.clustering`): documents by id with their versions, documents pointing at
others, what was written since a mark, first holders of a hash, every record for a migration."""

from __future__ import annotations

from typing import Any, Collection, Iterator

from es_simhash.fingerprint.model import hex64
from es_simhash.records import StoredDoc
from es_simhash.index.elastic.codec import stored_doc
from es_simhash.index.elastic.errors import raise_item_error
from es_simhash.index.elastic.handle import IndexHandle
from es_simhash.index.elastic.schema import PAYLOAD, written_above


class MaintenanceReader:
    """What maintenance reads from the index of ``handle``: documents with their versions (``(seq_no,
    primary_term)``), read whole by id or without text and record by query, every request retried on transient
    failures until the handle's ``retry_for``. Through an alias every read covers all its partitions (a version
    is that of the partition holding the document, where :class:`~es_simhash.index.elastic.writes.BulkWriter`
    writes it back)."""

    def __init__(self, handle: IndexHandle) -> None:
        self.handle = handle

    def fetch(self, ids: Collection[str], whole: bool = True) -> dict[str, StoredDoc]:
        """The stored documents with these ids, with their versions (missing ids are left out); without ``whole``
        only their fingerprints and cluster fields (no text or record: such a document cannot be written back).
        Through an alias: one real-time ``mget`` asking each partition for each id (a get through an alias over
        several indexes is refused), read after listing the partitions."""
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        light = {} if whole else {"source_excludes": PAYLOAD}

        def attempt() -> dict[str, StoredDoc]:
            client = self.handle.client
            if not self.handle.is_alias():
                resp = client.mget(index=self.handle.index, ids=ids, realtime=True, **light)
                return {d["_id"]: stored_doc(d) for d in resp["docs"] if d.get("found")}
            read_only = self.handle.read_only_partitions()
            docs = [{"_index": p, "_id": i} for p in self.handle.partitions() for i in ids]
            resp = client.mget(docs=docs, realtime=True, **light)
            out: dict[str, StoredDoc] = {}
            for d in resp["docs"]:
                if d.get("found"):  # (the first partition in name order, as locate())
                    out.setdefault(d["_id"], stored_doc(d, read_only))
            return out

        return self.handle.retrying(attempt, "fetch")

    def _search_all(self, query: dict[str, Any], page: int = 1000, after: str | None = None
                    ) -> Iterator[list[StoredDoc]]:
        """Every document matching ``query``, with versions but without text or record, in ``doc_id`` order, a
        page at a time."""
        cursor = [after] if after is not None else None
        read_only = self.handle.read_only_partitions()
        while True:
            body: dict[str, Any] = {"size": page, "query": query, "sort": [{"doc_id": "asc"}],
                                    "_source": {"excludes": list(PAYLOAD)},
                                    "seq_no_primary_term": True, "track_total_hits": False}
            if cursor is not None:
                body["search_after"] = cursor

            def attempt() -> list[dict[str, Any]]:
                return self.handle.client.search(index=self.handle.index, body=body)["hits"]["hits"]

            hits = self.handle.retrying(attempt, "search")
            if not hits:
                return
            yield [stored_doc(h, read_only) for h in hits]
            if len(hits) < page:
                return
            cursor = hits[-1]["sort"]

    def dangling_targets(self, page: int = 500) -> set[str]:
        """The ids that a stored document's ``dup_cluster`` or ``dup_of`` names and no stored document holds (what a
        partition deleted by someone else leaves behind). The members' two fields are read as a composite
        aggregation, ``page`` distinct ids at a time; the ids a search does not find are asked again in real time
        (:meth:`fetch`: a canonical written since the last refresh is there)."""
        gone: set[str] = set()
        for field in ("dup_cluster", "dup_of"):
            after: dict[str, Any] | None = None
            while True:
                composite: dict[str, Any] = {"size": page, "sources": [{"id": {"terms": {"field": field}}}]}
                if after is not None:
                    composite["after"] = after
                body = {"size": 0, "query": {"exists": {"field": "dup_of"}}, "aggs": {"ids": {"composite": composite}}}

                def attempt() -> dict[str, Any]:
                    return self.handle.client.search(index=self.handle.index, body=body)["aggregations"]["ids"]

                found = self.handle.retrying(attempt, "search")
                ids = [b["key"]["id"] for b in found["buckets"]]
                if ids:
                    gone |= self._absent(ids)
                after = found.get("after_key")
                if after is None or len(ids) < page:
                    break
        return gone

    def _absent(self, ids: list[str]) -> set[str]:
        """Those of ``ids`` no stored document holds: not found by a search, nor by a real-time :meth:`fetch`."""
        body = {"size": len(ids), "query": {"ids": {"values": ids}}, "_source": False, "track_total_hits": False}

        def attempt() -> set[str]:
            return {h["_id"] for h in self.handle.client.search(index=self.handle.index, body=body)["hits"]["hits"]}

        unseen = set(ids) - self.handle.retrying(attempt, "search")
        return unseen - self.fetch(sorted(unseen), whole=False).keys() if unseen else set()

    def pointing_at(self, ids: Collection[str]) -> list[StoredDoc]:
        """The stored documents whose ``dup_cluster`` or ``dup_of`` is one of ``ids`` (without text or record)."""
        ids = sorted(set(ids))
        if not ids:
            return []
        query = {"bool": {"should": self.handle.terms("dup_cluster", ids) + self.handle.terms("dup_of", ids),
                          "minimum_should_match": 1}}
        return [d for page in self._search_all(query) for d in page]

    def written_since(self, mark: int | dict[str, int]) -> list[StoredDoc]:
        """The documents whose ``_seq_no`` is above ``mark`` (written or rewritten since it; without text). A mark
        per partition (an alias's :meth:`~es_simhash.index.elastic.handle.IndexHandle.visible_mark`): in each
        partition those above its own, and every document of a partition made since."""
        if not isinstance(mark, dict):
            return [d for page in self._search_all(written_above(mark)) for d in page]
        should: list[dict[str, Any]] = [written_above(seq, name) for name, seq in sorted(mark.items())]
        should.append({"bool": {"must_not": [{"terms": {"_index": sorted(mark)}}]}})
        query = {"bool": {"should": should, "minimum_should_match": 1}}
        return [d for page in self._search_all(query) for d in page]

    def first_holders(self, hashes: Collection[int], limit: int) -> dict[int, list[StoredDoc]]:
        """For each hash, the first ``limit`` documents holding it in arrival order (one search per hash, in one
        ``_msearch``; without text or record)."""
        wanted = sorted(set(hashes))
        if not wanted:
            return {}
        searches: list[dict[str, Any]] = []
        for h in wanted:
            searches += [{"index": self.handle.index},
                         {"size": limit, "query": {"term": {"sentences": hex64(h)}},
                          "sort": [{"arrival": {"order": "asc", "unmapped_type": "long", "missing": "_first"}},
                                   {"doc_id": "asc"}],
                          "_source": {"excludes": list(PAYLOAD)}, "seq_no_primary_term": True,
                          "track_total_hits": False}]

        def attempt() -> dict[int, list[StoredDoc]]:
            resp = self.handle.client.msearch(searches=searches)
            out: dict[int, list[StoredDoc]] = {}
            for h, r in zip(wanted, resp["responses"]):
                if "error" in r:
                    raise_item_error(r, "search", self.handle.index)
                out[h] = [stored_doc(hit) for hit in r["hits"]["hits"]]
            return out

        return self.handle.retrying(attempt, "search")

    def records(self, page: int = 500) -> Iterator[tuple[str, str | None, dict[str, Any]]]:
        """``(id, text, record)`` of every stored document, the earliest first (arrival, then ``indexed_at`` for
        documents without one, then id): what a migration indexes again, in the order they came."""
        sort = [{"arrival": {"order": "asc", "unmapped_type": "long", "missing": "_first"}},
                {"indexed_at": {"order": "asc", "unmapped_type": "date", "missing": "_first"}},
                {"doc_id": "asc"}]
        cursor = None
        while True:
            body: dict[str, Any] = {"size": page, "query": {"match_all": {}}, "sort": sort,
                                    "_source": ["content", "record"], "track_total_hits": False}
            if cursor is not None:
                body["search_after"] = cursor

            def attempt() -> list[dict[str, Any]]:
                return self.handle.client.search(index=self.handle.index, body=body)["hits"]["hits"]

            hits = self.handle.retrying(attempt, "search")
            for h in hits:
                src = h.get("_source") or {}
                yield h["_id"], src.get("content"), src.get("record") or {}
            if len(hits) < page:
                return
            cursor = hits[-1]["sort"]

    def scan(self, page: int = 1000, after: str | None = None, since: int | None = None
             ) -> Iterator[list[StoredDoc]]:
        """All stored documents (without text or record), with versions, in ``doc_id`` order from the first id
        after ``after`` (with ``since``: those whose ``arrival`` is ``since`` or later)."""
        query = {"match_all": {}} if since is None else {"range": {"arrival": {"gte": since}}}
        return self._search_all(query, page, after)

