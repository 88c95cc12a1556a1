"""Deleting documents from a living index (:func:`delete`): the rest of each cluster decided again as a
sequential run without them would have decided it; :func:`iter_ids` reads ids, one per line."""

from __future__ import annotations

from typing import Iterable, Iterator, Sequence

from es_simhash.defaults import MAX_WRITE_ATTEMPTS
from es_simhash.decide.rule import DecisionRule
from es_simhash.index.base import Lookup, MaintainedIndex
from es_simhash.records import StoredDoc
from es_simhash.errors import MaintenanceError
from es_simhash.clustering.writes import Change, Settled, Writer, state_of
from es_simhash.clustering.settle import redecide, repoint, settle_canonicals
from es_simhash.clustering.recheck import until_settled


def delete(index: MaintainedIndex, rule: DecisionRule, ids: Iterable[str]) -> tuple[list[str], list[str], Settled]:
    """Delete documents, then decide the rest of their clusters again (the earliest remaining member becomes the
    canonical; members no longer within the rule of anyone in the cluster are decided afresh). No document is
    left pointing at a deleted one. With a rule whose decisions are rechecked (``rule.recheck``, what the
    command line deletes with), what changed and the documents near the deleted ones are then decided again as
    the recheck decides (:func:`~es_simhash.clustering.recheck.until_settled`), so a :func:`repair` right after
    finds nothing to change. Returns ``(deleted ids, ids not found, changes)``."""
    ids = list(dict.fromkeys(ids))
    settled = Settled()
    writer = Writer(index, settled)
    deleted: list[str] = []
    departed: list[StoredDoc] = []
    todo = index.fetch(ids, whole=False)
    missing = [i for i in ids if i not in todo]
    for _ in range(MAX_WRITE_ATTEMPTS):
        if not todo:
            break
        conflicts = set(index.remove(list(todo.values())))
        for i, d in todo.items():
            if i not in conflicts:
                deleted.append(i)
                departed.append(d)
                settled.changes.append(Change(i, "deleted", state_of(d), (None, None)))
        todo = index.fetch(sorted(conflicts), whole=False)
    else:
        raise MaintenanceError(f"{len(todo)} documents kept changing while being deleted; run again")
    if departed:
        settle_departed(index, rule, writer, departed)
    return deleted, missing, settled


def settle_departed(index: MaintainedIndex, rule: DecisionRule, writer: Writer, departed: Sequence[StoredDoc]) -> None:
    """Decide again what documents that left ``index`` (``departed``, as they were stored) leave behind: the rest
    of their clusters, as a sequential run without them would have decided it (the earliest remaining member the
    canonical), no document left pointing at one of them; with a rechecked rule, what changed and the documents
    near the departed ones are then decided again as the recheck decides. The changes go through ``writer``."""
    gone = {d.id for d in departed}
    roots = {d.id if d.cluster == d.id else d.cluster for d in departed} - gone
    rewritten = redecide(index, rule, writer, roots, gone)
    merged = settle_canonicals(index, rule, writer, [], left=departed)
    repoint(index, writer, [d.id for d in rewritten] + merged, rule)
    if rule.recheck:
        # (decided again as the recheck decides, and as repair checks: a member re-decided on arrival's terms
        # may rest on a template's lines that the other clusters show to be boilerplate; and a document near
        # a departed one was decided with it among its candidates)
        found = index.lookup([Lookup(d.id, d.fingerprint) for d in departed], rule.candidate_contract)
        near = {c.id for res in found for c in res.candidates}
        until_settled(index, rule, writer, near | {c.id for c in writer.settled.changes if c.why != "deleted"})


def iter_ids(lines: Iterable[str]) -> Iterator[str]:
    """Ids from lines of text (one per line; blank lines and ``#`` comments skipped)."""
    for line in lines:
        line = line.strip()
        if line and not line.startswith("#"):
            yield line
