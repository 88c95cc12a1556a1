"""Which member heads a cluster (:func:`label`): once the partition is decided, each cluster's canonical is its
longest member, whatever order its members were decided in.

The decisions fix the partition (which documents are one cluster); the canonical is a label put on it afterwards:
the member with the most characters (:attr:`Fingerprint.n_chars <es_simhash.fingerprint.model.Fingerprint.n_chars>`;
ties: the smallest id, :func:`canonical_key`), the fullest version of the article, which the others are excerpts,
cuts or copies of. Every member's ``cluster`` is then the canonical's id, and ``duplicate_of`` still names a member
it was matched with: the matches the decisions found form a tree over the cluster (each member points at the one it
was matched against); the tree is hung from the new canonical, so the members between the new canonical and the
former one point the other way along the same matches, with the same ``distance`` and ``reason``. The members'
arrivals are given again in the same order from the top (the cluster's earliest arrival to the canonical, then down
the tree), so a cluster's canonical arrives before its members and a member after the one it points at, as the rules
of :mod:`es_simhash.clustering` keep them; the arrivals of one cluster are those it had, so its place among the
others does not move."""

from __future__ import annotations

from collections import deque
from dataclasses import replace
from typing import Iterable, Sequence

from es_simhash.clustering.writes import Settled, Writer
from es_simhash.index.base import MaintainedIndex
from es_simhash.records import CANONICAL, StoredDoc

__all__ = ["canonical_key", "label", "labelled"]


def canonical_key(doc: StoredDoc) -> tuple[int, str]:
    """The order in which a cluster's members are candidates to head it: the most characters first, then the
    smallest id."""
    return -doc.fingerprint.n_chars, doc.id


def labelled(docs: Iterable[StoredDoc]) -> dict[str, StoredDoc]:
    """The documents whose labels change (see the module's text) as they are to be written, by id: each cluster of
    ``docs`` (every member of each cluster they hold) headed by its longest member."""
    clusters: dict[str, list[StoredDoc]] = {}
    for d in docs:
        clusters.setdefault(d.cluster, []).append(d)
    out: dict[str, StoredDoc] = {}
    for members in clusters.values():
        if len(members) == 1:
            continue
        out.update(_hung_from(min(members, key=canonical_key), members))
    return out


def _hung_from(top: StoredDoc, members: list[StoredDoc]) -> dict[str, StoredDoc]:
    """The cluster ``members`` with ``top`` as its canonical: the changed members."""
    by_id = {d.id: d for d in members}
    edges: dict[str, list[tuple[str, int | None, str]]] = {d.id: [] for d in members}
    for d in members:  # (a match is an edge of the tree, whichever way it was found)
        if d.duplicate_of is not None and d.duplicate_of in by_id:
            edges[d.id].append((d.duplicate_of, d.distance, d.reason))
            edges[d.duplicate_of].append((d.id, d.distance, d.reason))
    arrivals = sorted(d.arrival for d in members)
    state: dict[str, tuple[str | None, int | None, str]] = {top.id: (None, None, _canonical_reason(top))}
    order = [top.id]
    todo = deque([top.id])
    while todo:
        i = todo.popleft()
        for j, distance, reason in sorted(edges[i], key=lambda e: e[0]):
            if j not in state:
                state[j] = (i, distance, reason)
                order.append(j)
                todo.append(j)
    for d in sorted(members, key=canonical_key):  # (a member no match leads to: as it was, under the canonical)
        if d.id not in state:
            state[d.id] = (d.duplicate_of if d.duplicate_of in by_id else top.id, d.distance, d.reason)
            order.append(d.id)
    out = {}
    for arrival, i in zip(arrivals, order):
        d = by_id[i]
        of, distance, reason = state[i]
        new = replace(d, cluster=top.id, duplicate_of=of, distance=distance, reason=reason, arrival=arrival)
        if (new.cluster, new.duplicate_of, new.distance, new.reason, new.arrival) != (
                d.cluster, d.duplicate_of, d.distance, d.reason, d.arrival):
            out[i] = new
    return out


def _canonical_reason(doc: StoredDoc) -> str:
    from es_simhash.decide.rule import NO_FEATURES

    return NO_FEATURES if doc.fingerprint.empty else CANONICAL


def label(index: MaintainedIndex, docs: Sequence[StoredDoc], settled: Settled | None = None) -> list[StoredDoc]:
    """Head each cluster of ``docs`` (as stored now, every member of each cluster they hold) by its longest member
    (see the module's text), rewriting only the members whose labels change
    (:class:`~es_simhash.clustering.writes.Writer`: ``labelled``; a member rewritten meanwhile is left as it is).
    Returns the documents written."""
    wanted = labelled(docs)
    if not wanted:
        return []
    was = {d.id: (d.cluster, d.duplicate_of, d.arrival) for d in docs}

    def change(doc: StoredDoc) -> StoredDoc | None:
        new = wanted[doc.id]
        if (doc.cluster, doc.duplicate_of, doc.arrival) != was[doc.id]:
            return None  # (rewritten meanwhile)
        return replace(doc, cluster=new.cluster, duplicate_of=new.duplicate_of, distance=new.distance,
                       reason=new.reason, arrival=new.arrival)

    return Writer(index, settled if settled is not None else Settled()).rewrite(list(wanted), change, "labelled")
