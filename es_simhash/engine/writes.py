"""Writing a decided batch (:class:`BatchWriter`): over the version each document replaces when other writers
share the index (a conflict is read and written over in turn; the same content from another writer counts as
already indexed), then settling it (:func:`es_simhash.clustering.settle`)."""

from __future__ import annotations

from dataclasses import replace

from es_simhash.defaults import MAX_WRITE_ATTEMPTS
from es_simhash.decide.rule import DecisionRule
from es_simhash.engine.decisions import DecidedBatch, as_maintained, same_fingerprint
from es_simhash.records import Result, StoredDoc
from es_simhash.errors import MaintenanceError
from es_simhash.index.base import FingerprintIndex

"""Conditional writes of one batch that keep meeting other versions before :meth:`BatchWriter.write` gives up."""

READ_ONLY = "its stored document, with other content, is in a read-only partition: it cannot be replaced"
"""Why a record whose id is stored where it can no longer be written (:attr:`StoredDoc.final`) is refused."""


class BatchWriter:
    """Writes decided batches into one index and settles them with one rule (the rule their documents were
    decided with)."""

    def __init__(self, index: FingerprintIndex, rule: DecisionRule) -> None:
        self.index = index
        self.rule = rule

    def store(self, decided: DecidedBatch) -> dict[str, str]:
        """Write a decided batch (:meth:`write`), then settle it (:meth:`settle`). Returns the refused ids with
        their reasons; the results of documents that settling moved to another cluster are updated."""
        refused = self.write(decided)
        self.settle(decided, refused)
        return refused

    def write(self, decided: DecidedBatch) -> dict[str, str]:
        """Write a decided batch; returns the ids the backend refused, with their reasons.

        With other writers (``shared_writers``) each document is written only over the version it replaces:
        created if no document has its id, else over the stored version found, which becomes one of
        ``decided.departed`` (its cluster is decided again without it when the batch is settled). A version that
        another writer wrote or rewrote meanwhile (a page two crawlers index at once, each with its own content;
        or a re-indexed document merged by another writer's settling) is found by the conflict, fetched, and
        written over in turn: nothing is overwritten unseen, and the content written last stays. A version another
        writer wrote with the same content (two crawlers indexing one input) is left as it is: the document counts
        as found already indexed (its result, and settling, take that version)."""
        if not decided.to_store:
            return {}
        if not self.index.shared_writers:
            return self.index.add(decided.to_store)
        index = as_maintained(self.index)
        ours = {d.id: d for d in decided.to_store}
        # a re-indexed document's stored version, read now: its write then usually goes through at the first try
        departed = index.fetch([d.id for d in decided.departed], whole=False) if decided.departed else {}
        refused: dict[str, str] = {doc_id: READ_ONLY for doc_id, d in departed.items() if d.final}
        for doc_id in refused:  # (a document that can no longer be written keeps its content: the record is refused)
            del departed[doc_id]
        theirs: dict[str, StoredDoc] = {}  # the same content, written by another writer meanwhile
        todo = [replace(d, version=departed[d.id].version if d.id in departed else None) for d in decided.to_store
                if d.id not in refused]
        for _ in range(MAX_WRITE_ATTEMPTS):
            if not todo:
                break
            more_refused, conflicts = index.add_conditional(todo)
            refused.update(more_refused)
            for doc_id in more_refused:  # (not written: the version found stays where it is)
                departed.pop(doc_id, None)
            if not conflicts:
                break
            current = index.fetch(conflicts, whole=False)
            todo = []
            for doc_id in conflicts:
                stored, mine = current.get(doc_id), ours[doc_id]
                if stored is None:  # (deleted meanwhile: whoever deleted it decided its cluster again)
                    departed.pop(doc_id, None)
                    todo.append(replace(mine, version=None))
                elif (stored.arrival, stored.fingerprint.content_hash) == (mine.arrival, mine.fingerprint.content_hash):
                    pass  # (this very write, landed by a retried request)
                elif same_fingerprint(stored.fingerprint, mine.fingerprint):
                    departed.pop(doc_id, None)
                    theirs[doc_id] = stored
                else:
                    departed[doc_id] = stored
                    todo.append(replace(mine, version=stored.version))
        else:
            decided.departed = list(departed.values())
            raise MaintenanceError(f"{len(todo)} documents kept changing while being written; run again")
        decided.departed = list(departed.values())
        if theirs:
            decided.to_store = [d for d in decided.to_store if d.id not in theirs]
            decided.found.extend(theirs.values())
            decided.results = [Result.from_stored(theirs[r.id], already_indexed=True)
                               if isinstance(r, Result) and r.id in theirs else r for r in decided.results]
        return refused

    def settle(self, decided: DecidedBatch, refused: dict[str, str]) -> None:
        """Settle a written batch (:func:`es_simhash.clustering.settle`) when other processes may write into the
        index too, or when it re-indexes documents with other content."""
        shared = self.index.shared_writers
        if not shared and not decided.departed:
            return
        # (imported here: the clustering package is only needed once a batch is settled, not at the command's start)
        from es_simhash.clustering.settle import settle

        if shared:
            docs = [d for d in decided.to_store if d.id not in refused]
            if decided.resumed:
                docs += decided.found
        else:  # (a re-indexed document may now duplicate an older one)
            gone = {d.id for d in decided.departed}
            docs = [d for d in decided.to_store if d.id in gone]
        settled = settle(as_maintained(self.index), self.rule, docs, decided.departed, since=decided.mark,
                         mine=decided.mine, found=decided.found if shared and not decided.resumed else (),
                         candidates=decided.candidates if shared else {},
                         apart=decided.apart if shared else ())
        decided.others = settled.others or bool(settled.changes)
        latest = settled.latest()
        if latest:
            decided.results = [Result.from_stored(latest[r.id], r.already_indexed)
                               if isinstance(r, Result) and r.id in latest else r for r in decided.results]
