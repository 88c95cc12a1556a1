"""How maintenance writes: the :class:`Writer` that rewrites documents over the version it read, the record of
what changed (:class:`Change`, :class:`Settled`, :class:`RepairReport`) and the small helpers every step uses
(:func:`as_canonical`, :func:`joined`, :func:`roots`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable, Collection, Iterable

from es_simhash.defaults import MAX_WRITE_ATTEMPTS
from es_simhash.decide.rule import NO_FEATURES
from es_simhash.index.base import MaintainedIndex
from es_simhash.records import CANONICAL, StoredDoc
from es_simhash.errors import MaintenanceError




@dataclass(slots=True)
class Change:
    """One document rewritten by maintenance: its cluster fields before and after, and why."""

    id: str
    why: str
    """``merged`` (a canonical that duplicates an older document), ``re-pointed`` (its cluster's canonical had
    joined another cluster, or was missing), ``re-decided`` (a document of its cluster left), ``deleted``,
    ``split`` / ``moved`` (a near duplicate that no longer matches its cluster, see :func:`recheck`), ``decided
    again`` (an ``index`` run into a new index: its documents decided as a set,
    ``es_simhash.pipeline.precedence.set_run``)."""
    before: tuple[str | None, str | None]
    """``(cluster, duplicate_of)`` before."""
    after: tuple[str | None, str | None]
    """``(cluster, duplicate_of)`` after (``(None, None)`` for a deleted document)."""
    doc: StoredDoc | None = field(default=None, repr=False)
    """The document as written (``None`` for a deleted one)."""
    was_reason: str | None = field(default=None, repr=False)
    """Its ``reason`` before."""

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "change": self.why, "cluster": self.after[0], "duplicate_of": self.after[1],
                "was_cluster": self.before[0], "was_duplicate_of": self.before[1]}


@dataclass
class Settled:
    """What settling changed, in order (a document may appear more than once)."""

    changes: list[Change] = field(default_factory=list)
    others: bool = False
    """Whether settling found documents another writer wrote or rewrote since the batch's mark."""
    kept: list[str] = field(default_factory=list)
    """Documents a step would have changed but that can no longer be written (:attr:`StoredDoc.final`: in a
    read-only partition): left as they are."""

    def latest(self) -> dict[str, StoredDoc]:
        """The last written state of each changed document that still exists."""
        out: dict[str, StoredDoc] = {}
        for c in self.changes:
            if c.doc is None:
                out.pop(c.id, None)
            else:
                out[c.id] = c.doc
        return out


def as_canonical(doc: StoredDoc) -> StoredDoc:
    return replace(doc, cluster=doc.id, duplicate_of=None, distance=None,
                   reason=NO_FEATURES if doc.fingerprint.empty else CANONICAL)


def as_member_of(doc: StoredDoc, decision, cluster: str) -> StoredDoc:
    return replace(doc, cluster=cluster, duplicate_of=decision.of.id, distance=decision.distance,
                   reason=decision.reason)


def state_of(doc: StoredDoc) -> tuple[str | None, str | None]:
    return doc.cluster, doc.duplicate_of


class Writer:
    """Conditional rewrites with retries: ``change(doc)`` is applied to the freshly fetched document and returns the
    document to write, or ``None`` when nothing needs writing any more; on a version conflict the document is
    fetched again and ``change`` applied again (a dry run writes into a :class:`~es_simhash.clustering.dry_run.DryRun`).
    A document that can no longer be written (:attr:`StoredDoc.final`: in a read-only partition) is never written:
    it is left as it is, listed in :attr:`Settled.kept`."""

    def __init__(self, index: MaintainedIndex, settled: Settled) -> None:
        self.index, self.settled = index, settled

    def rewrite(self, ids: Iterable[str], change: Callable[[StoredDoc], StoredDoc | None], why: str
                ) -> list[StoredDoc]:
        todo = self.index.fetch(sorted(set(ids)))  # whole, with their current versions
        written: list[StoredDoc] = []
        for _ in range(MAX_WRITE_ATTEMPTS):
            out = []
            for doc in todo.values():
                new = change(doc)
                if new is not None and (state_of(new), new.distance, new.reason, new.arrival) != (
                        state_of(doc), doc.distance, doc.reason, doc.arrival):
                    if doc.final:
                        self.settled.kept.append(doc.id)
                    else:
                        out.append((doc, new))
            if not out:
                return written
            conflicts = set(self.index.replace([new for _, new in out]))
            for doc, new in out:
                if doc.id not in conflicts:
                    written.append(new)
                    self.settled.changes.append(Change(doc.id, why, state_of(doc), state_of(new), new, doc.reason))
            if not conflicts:
                return written
            todo = self.index.fetch(sorted(conflicts))
        raise MaintenanceError(f"{len(todo)} documents kept changing while being rewritten ({why}); run again")


def canonicals_of(index: MaintainedIndex, targets: Collection[str]) -> dict[str, str | None]:
    """The canonical each of ``targets`` leads to by following ``cluster`` pointers (``None``: a missing document
    or a cycle on the way)."""
    out: dict[str, str | None] = {}
    path: dict[str, list[str]] = {t: [t] for t in targets}
    docs: dict[str, StoredDoc | None] = {}
    while path:
        wanted = sorted({p[-1] for p in path.values()} - docs.keys())
        if wanted:
            found = index.fetch(wanted, whole=False)
            docs.update({i: found.get(i) for i in wanted})
        for t, p in list(path.items()):
            d = docs[p[-1]]
            if d is None or (d.cluster != d.id and (d.cluster in p or len(p) > 64)):
                out[t] = None
            elif d.cluster == d.id:
                out[t] = d.id
            else:
                p.append(d.cluster)
                continue
            del path[t]
    return out


@dataclass
class RepairReport:
    """What :func:`repair` found and changed."""

    checked: int = 0
    changes: list[Change] = field(default_factory=list)
    last_id: str | None = None
    """The last id checked (a repair interrupted after it can go on from there)."""

    def counts(self) -> dict[str, int]:
        return dict(Counter(c.why for c in self.changes))
