"""Writes: bulk ``index`` and ``delete`` actions through the client's ``streaming_bulk``, conditional on the version read
when maintenance asks, refreshed before the next lookup; through an alias over partitions, a stored document's to
the partition that holds it, a new one's to the alias's write index."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Sequence

from es_simhash.errors import ElasticError
from es_simhash.records import StoredDoc
from es_simhash.index.elastic.codec import to_source
from es_simhash.index.elastic.errors import RETRY_STATUSES, RETRY_TYPES, Transient, blocked_for_good
from es_simhash.index.elastic.handle import IndexHandle
from es_simhash.lookup import hamming


class BulkWriter:
    """Writes documents into the index of ``handle`` in bulk requests of ``chunk_size`` actions, each retried up to
    ``max_retries`` times on 429 by the bulk helper, and the whole write on other transient failures until the
    handle's ``retry_for``. Every write refreshes the index when it returns (:meth:`IndexHandle.refresh`).

    Through an alias over partitions, each bulk first finds where its ids are stored (:meth:`IndexHandle.locate`,
    one search): an action on a stored document (written over, conditionally or not, or deleted) names the
    partition holding it, so it never makes a second copy in the write index and its version
    (``if_seq_no``/``if_primary_term``) is compared in the partition it was read from; a new document goes
    through the alias, to whichever index is the write index when it arrives (the alias may be rolled over by
    anyone between two writes, or during one). A write sent again after a failure first looks again where its
    new documents are stored (:meth:`_relocate`). An id stays unique across partitions."""

    def __init__(self, handle: IndexHandle, *, chunk_size: int = 500, max_retries: int = 8) -> None:
        self.handle = handle
        self.chunk_size = chunk_size
        self.max_retries = max_retries

    def add(self, docs: Sequence[StoredDoc]) -> dict[str, str]:
        """Bulk-index ``docs`` and refresh. Items refused for good (e.g. a mapping error) are returned with their
        reason; transient failures (429, unavailable shards, a node down) are retried until ``retry_for``."""
        return self._bulk(self._index_actions(docs, conditional=False))[0]

    def add_conditional(self, docs: Sequence[StoredDoc]) -> tuple[dict[str, str], list[str]]:
        """Bulk-index each document only over its stored version ``doc.version`` (``create`` when ``None``), then
        refresh: ``(refused, conflicts)``, conflicts being the ids whose stored version is another (409)."""
        return self._bulk(self._index_actions(docs, conditional=True))

    def replace(self, docs: Sequence[StoredDoc]) -> list[str]:
        """Write each document whole over its stored version ``doc.version`` (``create`` when ``None``), then
        refresh; returns the ids whose stored document had changed (version conflicts: nothing written)."""
        refused, conflicts = self._bulk(self._index_actions(docs, conditional=True))
        if refused:
            raise ElasticError(f"index {self.handle.index!r} refused {len(refused)} rewritten documents: "
                               f"{next(iter(refused.values()))}")
        return conflicts

    def remove(self, docs: Sequence[StoredDoc]) -> list[str]:
        """Delete each document if it is still ``doc.version`` (one already gone counts as deleted), then refresh;
        returns the ids that had changed in the meantime."""
        index = self.handle.index
        where = self.handle.locate([d.id for d in docs])
        actions = []
        for d in docs:
            action: dict[str, Any] = {"_op_type": "delete", "_index": where.get(d.id, index), "_id": d.id}
            if d.version is not None:
                action["if_seq_no"], action["if_primary_term"] = d.version
            actions.append(action)
        refused, conflicts = self._bulk(actions)
        if refused:
            raise ElasticError(f"index {index!r} refused to delete {len(refused)} documents: "
                               f"{next(iter(refused.values()))}")
        return conflicts

    def _index_actions(self, docs: Sequence[StoredDoc], conditional: bool) -> list[dict[str, Any]]:
        """Bulk ``index`` actions writing ``docs`` whole (the lookup keys, left out of ``_source``, are derived
        again from ``simhash``); ``conditional``: only over the stored version ``doc.version`` (``create`` when
        ``None``)."""
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        lookup_keys = self.handle.lookup_keys
        keys: list[list[str] | None] = [None] * len(docs)
        if not lookup_keys.is_segments:  # segments are always written (seg0..seg3): Kibana and users read them
            with_keys = [i for i, d in enumerate(docs) if d.fingerprint.n_features]
            terms = lookup_keys.terms(hamming.as_uint64([docs[i].fingerprint.simhash for i in with_keys]))
            for i, t in zip(with_keys, terms):
                keys[i] = t
        index = self.handle.index
        where = self.handle.locate([d.id for d in docs])
        actions = []
        for d, k in zip(docs, keys):
            action = {"_index": where.get(d.id, index), "_id": d.id, "_source": to_source(d, now, k)}
            if conditional:
                if d.version is None:
                    action["_op_type"] = "create"
                else:
                    action["if_seq_no"], action["if_primary_term"] = d.version
            actions.append(action)
        return actions

    def _bulk(self, actions: list[dict[str, Any]]) -> tuple[dict[str, str], list[str]]:
        """Send bulk ``actions`` and refresh: ``(refused, conflicts)``, the ids refused for good with their reason
        and the ids whose conditional write met another version (409). Transient failures are retried until
        ``retry_for``."""
        handle = self.handle
        pending = {a["_id"]: a for a in actions}
        refused: dict[str, str] = {}
        conflicts: list[str] = []
        written: set[str] = set()  # (the partitions the bulk wrote into, over every attempt)

        tries = 0

        def attempt() -> None:
            nonlocal tries
            if tries:
                self._relocate(pending)
            tries += 1
            transient: dict[str, str] = {}
            blocked: dict[str, tuple[str, str]] = {}  # (refused by a write block: id -> (index, reason))
            for ok, item in handle.client.streaming_bulk(
                list(pending.values()),
                chunk_size=self.chunk_size,
                max_retries=self.max_retries,
                initial_backoff=1,
                max_backoff=30,
                raise_on_error=False,
                yield_ok=True,
                retry_on_status=RETRY_STATUSES,
            ):
                op_type, op = next(iter(item.items()))
                doc_id = str(op.get("_id"))
                status = op.get("status")
                if ok or (op_type == "delete" and status == 404):  # (a delete of a document already gone)
                    pending.pop(doc_id, None)
                    if op.get("_index"):
                        written.add(str(op["_index"]))
                    continue
                err = op.get("error", {})
                reason = (f"{err.get('type')}: {err.get('reason')}" if isinstance(err, dict) else str(err))[:300]
                kind = err.get("type") if isinstance(err, dict) else None
                if status == 409:
                    conflicts.append(doc_id)
                    pending.pop(doc_id, None)
                elif blocked_for_good(kind, err.get("reason") if isinstance(err, dict) else None):
                    blocked[doc_id] = (str(op.get("_index")), reason)
                elif status in RETRY_STATUSES or kind in RETRY_TYPES:
                    transient[doc_id] = reason
                else:
                    refused[doc_id] = reason
                    pending.pop(doc_id, None)
            if blocked:
                # a partition made read-only, not the one written into: its documents are final, the write refused
                # for good; a block on the index written into (or on an index) is lifted by its user: retried
                writing = handle.write_index()
                for doc_id, (where, reason) in blocked.items():
                    if where != writing:
                        refused[doc_id] = f"its partition {where!r} is read-only ({reason})"[:300]
                        pending.pop(doc_id, None)
                    else:
                        transient[doc_id] = reason
            if transient:
                raise Transient(f"{len(transient)} documents not written yet: {next(iter(transient.values()))}")
            handle.refresh(written)  # (behind an alias: only the partitions written into)

        handle.retrying(attempt, "bulk write")
        return refused, conflicts

    def _relocate(self, pending: dict[str, dict[str, Any]]) -> None:
        """Before a bulk is sent again (through an alias): the actions that go through the alias are pointed at the
        partition holding their document, if a failed attempt stored it after all (a request that timed out may
        have been carried out), so a rollover since (by anyone) does not make a second copy in the new write
        index."""
        handle = self.handle
        through = [i for i, a in pending.items() if a["_index"] == handle.index]
        if not through or not handle.is_alias():
            return
        handle.client.indices.refresh(index=handle.index)
        for doc_id, partition in handle.locate(through).items():
            pending[doc_id]["_index"] = partition
