"""Index maintenance over the index interface: concurrent writers, updates, deletes and repair.

It works on any :class:`~es_simhash.index.base.MaintainedIndex` (Elasticsearch, or the embedded
:class:`~es_simhash.index.memory.MemoryIndex`) and never knows which.

**The consistency model.** A document's cluster is a pointer to its canonical (``cluster``; the canonical points
at itself) and ``duplicate_of`` names the document it was matched against. Every document has an *arrival*
(:func:`~es_simhash.index.base.arrival_key`: when it was decided, later than everything it was decided against,
then its id), and the clusters keep three rules:

1. a canonical is not a duplicate of any document that arrived before it (so two canonicals are never within the
   decision rule of each other, whoever wrote them);
2. every ``cluster`` names a canonical that exists, and every ``duplicate_of`` a document that exists;
3. a cluster's canonical arrived before its members, so a merge of two clusters always goes into the older
   canonical and pointers never form a cycle.

A writer decides a batch against what it can see, writes it, makes it visible, and then *settles* it
(:func:`settle`): each document of the batch is looked up again; a canonical is decided against the documents that
arrived before it, and one that now has a match (a document another writer wrote at the same time) joins that
match's cluster with its members; a newer canonical that matches any document of the batch (canonical or duplicate)
is settled the same way. Two writers that each decided one document of a pair both write before they look again, so
at least one of them sees the other's document, and whichever sees it settles the pair; a merge is a write too, so a
writer that merged looks again from the merged documents and decides again every newer canonical they lead to (one
decided while the merged document was a cluster of its own, by another writer or by this very settling a step before
the merge, is found then). Only documents with a candidate among those written by others since the batch was looked
up (the index's ``visible_mark``) can have missed one, so only they are looked up again. Every rewrite is
conditional on the version it read (a writer that meets a newer version reads again and decides again), and after
re-pointing documents a writer reads their canonical again (a canonical merged meanwhile is followed to its own
canonical). A writer killed at any point leaves documents that settling the same batch again (the re-run finds them
already indexed) or :func:`repair` puts right.

**Deletes and updates.** When a document leaves (deleted, or re-indexed with other content), the rest of its
cluster is decided again in arrival order, as a sequential run without it would have decided them: the earliest
remaining member becomes the canonical, and members no longer within the rule of anyone in the cluster are
decided afresh against the whole index (:func:`delete`, :func:`settle` ``departed``); and every newer canonical
that had it among its candidates is settled again (it may have been the second holder of a template's sentences
that kept that canonical apart). A writer writes each document only over the version it replaces (created if no
document has the id): a version another writer wrote meanwhile is found by the conflict and leaves its cluster
in turn (``DedupEngine._write``). A decision is taken again when what it was decided against changed before it
was written (:func:`settle` ``candidates``, ``apart``): a duplicate whose match is gone or is another version, a
document one of whose candidates was rewritten since the lookup, a canonical that one of its candidates alone would
have made a duplicate when one of its candidates is gone (a delete, which no read shows).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, Iterator, Mapping, Sequence

from es_simhash.engine.engine import NO_FEATURES, DecisionRule, has_sketch
from es_simhash.fingerprint.fingerprinter import Fingerprint
from es_simhash.index.base import (CANONICAL, Lookup, MaintainedIndex, StoredDoc, arrival_key, boilerplate_of, found_by_lookup,
                         written_state)
from es_simhash.errors import MaintenanceError

if TYPE_CHECKING:
    from es_simhash.files.sources import DeadLetter, Record

__all__ = ["settle", "delete", "repair", "recheck", "migrate", "migration_input", "Change", "Settled", "RepairReport",
           "MaintenanceError"]

_MAX_ATTEMPTS = 20  # rewrites of one step that keep meeting newer versions (other writers) before giving up


@dataclass(slots=True)
class Change:
    """One document rewritten by maintenance: its cluster fields before and after, and why."""

    id: str
    why: str
    """``merged`` (a canonical that duplicates an older document), ``re-pointed`` (its cluster's canonical had
    joined another cluster, or was missing), ``re-decided`` (a document of its cluster left), ``deleted``,
    ``split`` / ``moved`` (a near duplicate that no longer matches its cluster, see :func:`recheck`)."""
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

    def latest(self) -> dict[str, StoredDoc]:
        """The last written state of each changed document that still exists."""
        out: dict[str, StoredDoc] = {}
        for c in self.changes:
            if c.doc is None:
                out.pop(c.id, None)
            else:
                out[c.id] = c.doc
        return out


def _as_canonical(doc: StoredDoc) -> StoredDoc:
    return replace(doc, cluster=doc.id, duplicate_of=None, distance=None,
                   reason=NO_FEATURES if doc.fingerprint.empty else CANONICAL)


def _joined(doc: StoredDoc, decision, cluster: str) -> StoredDoc:
    return replace(doc, cluster=cluster, duplicate_of=decision.of.id, distance=decision.distance,
                   reason=decision.reason)


def _state(doc: StoredDoc) -> tuple[str | None, str | None]:
    return doc.cluster, doc.duplicate_of


class _Writer:
    """Conditional rewrites with retries: ``change(doc)`` is applied to the freshly fetched document and returns the
    document to write, or ``None`` when nothing needs writing any more; on a version conflict the document is
    fetched again and ``change`` applied again. ``dry_run``: nothing is written, the changes are only recorded."""

    def __init__(self, index: MaintainedIndex, settled: Settled, dry_run: bool = False) -> None:
        self.index, self.settled, self.dry_run = index, settled, dry_run

    def rewrite(self, ids: Iterable[str], change: Callable[[StoredDoc], StoredDoc | None], why: str
                ) -> list[StoredDoc]:
        todo = self.index.fetch(sorted(set(ids)))  # whole, with their current versions
        written: list[StoredDoc] = []
        for _ in range(_MAX_ATTEMPTS):
            out = []
            for doc in todo.values():
                new = change(doc)
                if new is not None and (_state(new), new.distance, new.reason) != (_state(doc), doc.distance,
                                                                                   doc.reason):
                    out.append((doc, new))
            if not out:
                return written
            conflicts = set() if self.dry_run else set(self.index.replace([new for _, new in out]))
            for doc, new in out:
                if doc.id not in conflicts:
                    written.append(new)
                    self.settled.changes.append(Change(doc.id, why, _state(doc), _state(new), new, doc.reason))
            if not conflicts:
                return written
            todo = self.index.fetch(sorted(conflicts))
        raise MaintenanceError(f"{len(todo)} documents kept changing while being rewritten ({why}); run again")


def _roots(index: MaintainedIndex, targets: Collection[str]) -> dict[str, str | None]:
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


def _newer_canonicals(index: MaintainedIndex, rule: DecisionRule, docs: Sequence[StoredDoc], skip: set[str]
                      ) -> list[StoredDoc]:
    """The canonicals among the candidates of ``docs`` that arrived after the document they are a candidate of
    (leaving out ``skip``), each once."""
    out: dict[str, StoredDoc] = {}
    for d, res in zip(docs, index.lookup([Lookup(d.id, d.fingerprint) for d in docs], rule.candidate_distance)):
        for c in res.candidates:
            if c.cluster == c.id and arrival_key(c) > arrival_key(d) and c.id not in skip:
                out.setdefault(c.id, c)
    return list(out.values())


def _canonical_decision(index: MaintainedIndex, rule: DecisionRule, doc: StoredDoc, older: Sequence[StoredDoc],
                        res: Any, cap: int, known: bool, holders: Mapping[int, list[StoredDoc]]) -> Any:
    """What settling decides for the canonical ``doc`` against the documents ``older`` than it (``res``: its
    lookup): the decision it got on arrival, when nothing was written concurrently (:func:`_as_on_arrival`; so
    settling a document again changes nothing by itself); with ``known`` (:func:`repair`), with what the whole index
    knows of templates, and only into a cluster a recheck would keep it in (so a repair never undoes a recheck)."""
    if not known:
        candidates, boilerplate = _as_on_arrival(index, rule, doc, older, res, cap, holders)
        return rule.decide(doc.fingerprint, candidates, boilerplate)
    boilerplate = _known_boilerplate(rule, doc, res.candidates, res.sentence_df, cap)
    return _first_kept(rule, doc, _all_matches(rule, doc.fingerprint, older, boilerplate), res.candidates)


def _crossing(doc: StoredDoc, res: Any, cap: int) -> list[int]:
    """The hashes of ``doc`` held by more than ``cap`` documents now: the only ones that can have been under the
    bound when it arrived (its lookup then used them, and counted them as its own)."""
    return [h for h in doc.fingerprint.sentences if res.sentence_df.get(h, 0) > cap]


def _as_on_arrival(index: MaintainedIndex, rule: DecisionRule, doc: StoredDoc, older: Sequence[StoredDoc], res: Any,
                   cap: int, holders: Mapping[int, list[StoredDoc]]) -> tuple[list[StoredDoc], frozenset[int]]:
    """The candidates and boilerplate hashes a lookup gave ``doc`` when it arrived, from ``older`` (the candidates of
    its lookup now that arrived before it) and ``holders`` (:meth:`~es_simhash.index.base.MaintainedIndex.
    first_holders` of its :func:`_crossing` hashes, ``cap + 1`` each): a hash over the bound now was boilerplate
    then only if more than ``cap`` of the documents before it held it; if not, those documents were candidates
    through it (and the rest of its hashes counted differently for them). Decisions depend on the order of
    arrival alone: not on what arrived later."""
    crossing = _crossing(doc, res, cap)
    if not crossing:
        return list(older), frozenset()
    key = arrival_key(doc)
    boilerplate: set[int] = set()
    pool = {c.id: c for c in older}
    for h in crossing:
        before = [c for c in holders.get(h, ()) if arrival_key(c) < key and c.id != doc.id]
        if len(before) > cap:
            boilerplate.add(h)
        else:
            pool.update((c.id, c) for c in before if c.id not in pool and c.cluster != doc.id)
    found = found_by_lookup(doc.fingerprint, pool.values(), boilerplate, index.lookup_keys, rule.candidate_distance)
    return found, frozenset(boilerplate)


def _settle_canonicals(index: MaintainedIndex, rule: DecisionRule, writer: _Writer, docs: list[StoredDoc],
                       left: Sequence[StoredDoc] = (), known: bool = False) -> list[str]:
    """Decide each canonical among ``docs`` again against the documents that arrived before it; and settle
    likewise every newer canonical that matches one of ``docs`` (canonical or not: a canonical written at the same
    time as a duplicate it should have joined is only seen from that duplicate's side). A canonical with a match
    joins it (its members are re-pointed after). ``left``: stored versions of documents that left (deleted, or
    re-indexed with other content): every newer canonical that had one of them among its candidates was decided
    with it there (its match, or a holder of a template's sentences), so it is settled too. ``known``: a template's
    hashes are known from the whole index (:func:`_known_boilerplate`), and a canonical joins only a cluster a
    recheck would keep it in (:func:`_canonical_decision`); :func:`repair` settles so. Returns the ids that joined
    another cluster."""
    merged: list[str] = []
    seen: set[str] = set()
    todo = list(docs)
    if left:
        todo += _newer_canonicals(index, rule, left, {d.id for d in docs})
    moved: set[str] = set()  # the documents of ``todo`` that joined another cluster in the step before
    cap = index.max_sentence_df
    holders: dict[int, list[StoredDoc]] = {}  # (the first holders of hashes over the bound, read once)
    while todo:
        seen.update(d.id for d in todo)
        found = index.lookup([Lookup(d.id, d.fingerprint) for d in todo], rule.candidate_distance)
        if not known:
            wanted = {h for d, res in zip(todo, found) if d.cluster == d.id for h in _crossing(d, res, cap)}
            holders.update(index.first_holders(wanted - holders.keys(), cap + 1))
        newer: dict[str, StoredDoc] = {}
        joins: dict[str, tuple[Any, str, int, int]] = {}
        for d, res in zip(todo, found):
            key = arrival_key(d)
            older = [c for c in res.candidates if arrival_key(c) < key and c.cluster != d.id]
            if (older or _crossing(d, res, cap)) and d.cluster == d.id:
                decision = _canonical_decision(index, rule, d, older, res, cap, known, holders)
                if decision is not None:
                    joins[d.id] = (decision, decision.of.cluster, d.arrival, d.fingerprint.content_hash)
            for c in res.candidates:  # a newer canonical that may have been written at the same time as this one
                if c.cluster != c.id or arrival_key(c) <= key or c.id == d.cluster:
                    continue
                if d.id in moved:
                    # d just joined another cluster: every newer canonical that held some of d's sentences was
                    # decided while d was a cluster of its own (the template rule then counts d's cluster and
                    # its new one as two holders), also one decided a step ago in this very loop: decide it again
                    newer[c.id] = c
                elif c.id not in seen and rule.decide(c.fingerprint, [d]) is not None:
                    newer[c.id] = c
        joined: list[StoredDoc] = []
        if joins:
            targets = _roots(index, {cluster for _, cluster, _, _ in joins.values()})

            def join(doc: StoredDoc) -> StoredDoc | None:
                decision, cluster, arrival, content = joins[doc.id]
                if doc.cluster != doc.id or (doc.arrival, doc.fingerprint.content_hash) != (arrival, content):
                    return None  # (someone else merged it meanwhile, or re-indexed it: decided for another text)
                root = targets.get(cluster) or cluster
                return _joined(doc, decision, root)

            joined = writer.rewrite(joins, join, "merged")
            merged += [d.id for d in joined]
        # A merge is a write, and the look-up above came before it: a canonical that another writer wrote in between,
        # decided while the merged document still had a cluster of its own (so the template rule counted two
        # holders), is only found by looking again from the merged documents, now, after the write (each writer
        # writes, then looks: one of the two sees the other's write).
        todo = list(newer.values()) + [d for d in joined if d.id not in newer]
        moved = {d.id for d in joined}
    return merged


def _crowded_by_others(rule: DecisionRule, doc: StoredDoc, candidates: Sequence[StoredDoc]) -> frozenset[int]:
    """The hashes of ``doc`` that the clusters other than its own, among all its candidates whatever their
    arrival, show to be a template's (the rule's ``crowded``, when it has one): what the whole index knows now. A
    document decided before later posts of its template arrived was decided with less: the template's hashes
    still looked like its match's own. (Its own cluster does not count: a reprint's copies all hold its
    sentences.)"""
    return rule.crowded(doc.fingerprint, _others(doc, candidates))


def _others(doc: StoredDoc, candidates: Sequence[StoredDoc]) -> list[StoredDoc]:
    return [c for c in candidates if c.cluster != doc.cluster and c.id != doc.cluster]


def _held_twice(doc: StoredDoc, others: Sequence[StoredDoc]) -> frozenset[int]:
    """The hashes of ``doc`` that at least two of ``others`` hold: all that they can crowd (a holder is one text
    or more), found by counting alone."""
    mine = set(doc.fingerprint.sentences)
    counts = Counter(h for c in others for h in mine.intersection(c.fingerprint.sentences))
    return frozenset(h for h, n in counts.items() if n > 1)


def _known_boilerplate(rule: DecisionRule, doc: StoredDoc, candidates: Sequence[StoredDoc],
                       sentence_df: Mapping[int, int], cap: int) -> frozenset[int]:
    """Held by more than ``cap`` documents, or crowded by the other clusters (:func:`_crowded_by_others`)."""
    return boilerplate_of(doc.fingerprint, sentence_df, cap) | _crowded_by_others(rule, doc, candidates)


def _stays(rule: DecisionRule, doc: StoredDoc, candidates: Sequence[StoredDoc]) -> bool:
    """Whether ``doc``, as a member of the cluster ``doc.cluster``, matches one of that cluster's members that
    arrived before it alone (as on arrival), with what the other clusters among ``candidates`` show of templates
    set aside: first every hash two other texts hold (a superset of what they crowd, found by counting), then, if
    that was too much, what they crowd. The test a recheck keeps a decision by."""
    key = arrival_key(doc)
    own = [c for c in candidates if c.cluster == doc.cluster and arrival_key(c) < key]
    if not own:
        return False
    fp = doc.fingerprint
    others = _others(doc, candidates)
    held = _held_twice(doc, others)
    if any(rule.decide(fp, [m], held) is not None for m in own):
        return True
    if not held:
        return False
    crowded = _crowded_by_others(rule, doc, candidates)
    return any(rule.decide(fp, [m], crowded) is not None for m in own)


def _all_matches(rule: DecisionRule, fp: Fingerprint, candidates: Sequence[StoredDoc], boilerplate: frozenset[int]
                 ) -> list[Any]:
    """Every candidate ``fp`` duplicates, the rule's choice first."""
    return list(rule.matches(fp, candidates, boilerplate)) if candidates else []


def _first_kept(rule: DecisionRule, doc: StoredDoc, decisions: Sequence[Any], candidates: Sequence[StoredDoc]
                ) -> Any:
    """The first of ``decisions`` whose cluster ``doc`` would stay in under a recheck (:func:`_stays`) once it
    and the documents that follow it (its cluster's members if it is a canonical, its own duplicates) are there,
    or None."""
    tried: set[str] = set()
    for decision in decisions:
        cluster = decision.of.cluster
        if cluster in tried:
            continue
        tried.add(cluster)
        view = [replace(c, cluster=cluster) if c.cluster == doc.id or c.duplicate_of == doc.id else c
                for c in candidates]
        if _stays(rule, replace(doc, cluster=cluster), view):
            return decision
    return None


def _recheckable(d: StoredDoc) -> bool:
    """A near duplicate whose decision a template's hashes can have made: through shared sentence or sketch hashes,
    or by SimHash between texts that carry a sketch (the sketch support test). Exact copies and SimHash matches
    of longer texts are decided without them."""
    return d.duplicate_of is not None and d.cluster != d.id and (
        d.reason == "sentences" or (d.reason == "simhash" and has_sketch(d.fingerprint)))


def _recheck(index: MaintainedIndex, rule: DecisionRule, writer: _Writer, docs: Sequence[StoredDoc]) -> list[str]:
    """Decide each near duplicate among ``docs`` (:func:`_recheckable`) again against the documents that arrived
    before it, with what the whole index knows of templates now (:func:`_crowded_by_others`; the document counts
    of ``max_sentence_df`` are left as they were on arrival: a much-reprinted article's own copies make them grow):
    one that no longer matches any member of its cluster leaves it, for the cluster it matches now or as a
    canonical. Returns the ids rewritten."""
    dups = [d for d in docs if _recheckable(d)]
    if not dups:
        return []
    verdicts: dict[str, tuple[Any, tuple[int, int, str, str | None]]] = {}
    for d, res in zip(dups, index.lookup([Lookup(d.id, d.fingerprint) for d in dups], rule.candidate_distance)):
        if _stays(rule, d, res.candidates):
            continue
        older = [c for c in res.candidates if arrival_key(c) < arrival_key(d)]
        found = _all_matches(rule, d.fingerprint, older, _crowded_by_others(rule, d, res.candidates))
        verdicts[d.id] = (_first_kept(rule, d, found, res.candidates),
                          (d.arrival, d.fingerprint.content_hash, d.cluster, d.duplicate_of))

    def change(doc: StoredDoc) -> StoredDoc | None:
        decision, state = verdicts[doc.id]
        if (doc.arrival, doc.fingerprint.content_hash, doc.cluster, doc.duplicate_of) != state:
            return None  # (rewritten meanwhile: decided for another state)
        return _as_canonical(doc) if decision is None else _joined(doc, decision, decision.of.cluster)

    split = writer.rewrite([i for i, (m, _) in verdicts.items() if m is None], change, "split")
    moved = writer.rewrite([i for i, (m, _) in verdicts.items() if m is not None], change, "moved")
    return [d.id for d in split + moved]


def _anchor(doc: StoredDoc) -> str:
    """Where a duplicate's canonical is found: the cluster of the document it duplicates (``duplicate_of``, whose
    chain only goes to earlier arrivals), else its own ``cluster`` pointer (a malformed document)."""
    return doc.duplicate_of or doc.cluster


def _repoint(index: MaintainedIndex, writer: _Writer, ids: Collection[str], rule: DecisionRule | None = None) -> None:
    """Make every document among ``ids``, and every document pointing at one of them, point at a canonical that
    exists: the canonical that the document it duplicates leads to (``cluster`` pointers followed from its
    ``duplicate_of``), so a document whose match joined another cluster, or left its cluster (re-indexed with
    other content: decided while the match still pointed there), goes where its match is. Repeated until nothing
    changes (a canonical can join another cluster while documents are re-pointed to it)."""
    check = set(ids)
    for _ in range(_MAX_ATTEMPTS):
        if not check:
            return
        docs = index.fetch(sorted(check), whole=False)
        # (and at a canonical this writer rewrote: one decided again was a duplicate, its duplicates' clusters
        # are its own now; not at every canonical, which would read whole clusters for nothing)
        rewritten = {c.id for c in writer.settled.changes}
        pointing = index.pointing_at([i for i, d in docs.items() if d.cluster != d.id or i in rewritten])
        todo = {d.id: d for d in list(docs.values()) + pointing if d.cluster != d.id}
        roots = _roots(index, {_anchor(d) for d in todo.values()})
        wrong = [d for d in todo.values() if roots.get(_anchor(d)) != d.cluster]
        lost = [d for d in wrong if roots.get(_anchor(d)) is None]
        if lost and rule is not None:  # pointing at a missing document (or a cycle): decided again
            _redecide(index, rule, writer, {d.cluster for d in lost}, set())
        moved = [d for d in wrong if roots.get(_anchor(d)) is not None]
        if not moved:
            return
        new_root = {d.id: (_anchor(d), roots[_anchor(d)]) for d in moved}

        def point(doc: StoredDoc) -> StoredDoc | None:
            if doc.cluster == doc.id:
                return None
            anchor, target = new_root.get(doc.id, (None, None))
            if anchor != _anchor(doc):  # (rewritten meanwhile: found from what it duplicates now)
                target = _roots(index, [_anchor(doc)]).get(_anchor(doc))
            return None if target is None or target == doc.cluster else replace(doc, cluster=target)

        written = writer.rewrite([d.id for d in moved], point, "re-pointed")
        if writer.dry_run:
            return
        check = {d.id for d in written}  # read their canonicals again (merged meanwhile?)
    raise MaintenanceError("cluster pointers kept changing while being re-pointed; run again")


def _redecide(index: MaintainedIndex, rule: DecisionRule, writer: _Writer, roots: Collection[str], gone: Collection[str]
              ) -> list[StoredDoc]:
    """Decide again, in arrival order, every document of the clusters ``roots`` and every document that was a
    duplicate of one of ``gone`` (documents that left), leaving ``gone`` out: as a sequential run without them
    would have decided. Returns the documents rewritten."""
    from es_simhash.index.memory import MemoryIndex

    gone = set(gone)
    members = {d.id: d for d in index.pointing_at(set(roots) | gone) if d.id not in gone}
    members.update(index.fetch([r for r in roots if r not in gone], whole=False))
    if not members:
        return []
    group = sorted(members.values(), key=arrival_key)
    hide = sorted(gone | members.keys())
    cap = index.max_sentence_df
    found = index.lookup([Lookup(d.id, d.fingerprint) for d in group], rule.candidate_distance, exclude=hide)
    pending = MemoryIndex(cap, index.lookup_keys)
    pending_df: Counter[int] = Counter()
    decided: dict[str, StoredDoc] = {}
    for d, res in zip(group, found):
        key = arrival_key(d)
        candidates = [c for c in res.candidates if arrival_key(c) < key]
        candidates += pending.lookup([Lookup(d.id, d.fingerprint)], rule.candidate_distance)[0].candidates
        decision = rule.decide(d.fingerprint, candidates, boilerplate_of(d.fingerprint, res.sentence_df, cap, pending_df)
                               ) if candidates else None
        new = _as_canonical(d) if decision is None else _joined(d, decision, decision.of.cluster)
        if new.cluster in decided:  # (a member of the group decided just before: its cluster as decided)
            new = replace(new, cluster=decided[new.cluster].cluster)
        decided[d.id] = new
        pending.add([new])
        pending_df.update(d.fingerprint.sentences)

    def redo(doc: StoredDoc) -> StoredDoc | None:
        new = decided[doc.id]
        if arrival_key(doc) != arrival_key(new) or doc.fingerprint != new.fingerprint:
            return None  # (re-indexed meanwhile: its writer decided it)
        return replace(doc, cluster=new.cluster, duplicate_of=new.duplicate_of, distance=new.distance,
                       reason=new.reason)

    return writer.rewrite(members, redo, "re-decided")


def _sharing_a_candidate(index: MaintainedIndex, rule: DecisionRule, docs: Sequence[StoredDoc],
                         fresh: Sequence[StoredDoc]) -> list[StoredDoc]:
    """The documents among ``docs`` that have a candidate (or a new version) among ``fresh``, found in memory;
    nothing is boilerplate there, so this is a superset of what a lookup against the index would find."""
    from es_simhash.index.memory import MemoryIndex

    memory = MemoryIndex(max_sentence_df=1 << 30, lookup_keys=index.lookup_keys)
    memory.add(fresh)
    found = memory.lookup([Lookup(d.id, d.fingerprint) for d in docs], rule.candidate_distance)
    return [d for d, res in zip(docs, found) if res.candidates or res.existing is not None]


def _unmatched(index: MaintainedIndex, writer: _Writer, docs: Sequence[StoredDoc], matched: Mapping[str, int],
               own: Collection[str] = ()) -> list[StoredDoc]:
    """Duplicates among ``docs`` whose match is gone or is another version than the one they were decided against
    (arrival ``matched[id]``), written back as canonicals to be settled; returns them as they are now. ``own``:
    matches known to be as this writer wrote them (its batch, not rewritten by others since): not read again."""
    wanted = sorted({d.duplicate_of for d in docs if d.duplicate_of and d.duplicate_of not in own})
    targets = index.fetch(wanted, whole=False) if wanted else {}
    stale = {d.id: d for d in docs
             if d.duplicate_of and d.duplicate_of not in own and (targets.get(d.duplicate_of) is None
                                                                  or targets[d.duplicate_of].arrival != matched[d.id])}
    if not stale:
        return []

    def void(doc: StoredDoc) -> StoredDoc | None:
        was = stale[doc.id]
        if (doc.arrival, doc.duplicate_of) != (was.arrival, was.duplicate_of):
            return None  # (re-indexed, or decided again, meanwhile)
        return _as_canonical(doc)

    written = writer.rewrite(stale, void, "re-decided")
    missing = sorted(stale.keys() - {d.id for d in written})
    if missing:  # (a write that landed though its request was retried and met itself: canonical all the same)
        now = index.fetch(missing, whole=False)
        written += [d for i, d in now.items() if d.cluster == d.id and d.arrival == stale[i].arrival]
    return written


def _lost_a_candidate(index: MaintainedIndex, docs: Sequence[StoredDoc], candidates: Mapping[str, Mapping[str, int]],
                      written: Collection[str]) -> list[StoredDoc]:
    """The documents among ``docs`` one of whose candidates (other than the ``written`` ones) is gone."""
    wanted = sorted({c for d in docs for c in candidates.get(d.id, ()) if c not in written})
    gone = set(wanted) - index.fetch(wanted, whole=False).keys() if wanted else set()
    return [d for d in docs if not gone.isdisjoint(candidates.get(d.id, ()))]


def settle(index: MaintainedIndex, rule: DecisionRule, docs: Sequence[StoredDoc], departed: Sequence[StoredDoc] = (),
           since: object = None, mine: Mapping[str, tuple[int, str, str | None]] = {},
           found: Sequence[StoredDoc] = (),
           candidates: Mapping[str, Mapping[str, int]] = {}, apart: Collection[str] = ()) -> Settled:
    """Settle documents just written (and visible): see the module's consistency model.

    ``docs``: the documents of the batch as written, or as found already indexed (a re-run after a kill settles
    them again). ``departed``: the stored versions of documents that were re-indexed with other content (or
    deleted): the rest of their former clusters is decided again first.

    ``since``: the index's :meth:`~es_simhash.index.base.MaintainedIndex.visible_mark` taken before the batch was
    looked up; only documents with a candidate among those written since then by others (all but ``mine``: id ->
    :func:`~es_simhash.index.base.written_state` of what this writer wrote; the same id in another state is
    another writer's rewrite of it) can
    have been decided without a document they should have seen, so only they are looked up again (``None``: all
    of them). ``found``: documents of the batch found already indexed: always looked up again (they may have been
    written by a run killed before it settled them, whose mark is lost). Every duplicate's canonical is checked
    in any case. ``candidates``: each document's candidates when it was decided (id -> arrival): a document with
    a candidate rewritten since ``since`` by others (merged, re-pointed, re-indexed with other content: what it
    was decided against changed) is looked up again too; and a duplicate whose match is gone or is another version
    now (deleted, or re-indexed by another writer meanwhile) is decided again, as a canonical settled against the
    documents that arrived before it. ``apart``: canonicals among ``docs`` that one of their candidates alone
    would have made duplicates (kept apart by the rules over all candidates): one with a candidate gone by now
    (deleted meanwhile, which no other read shows) is looked up again. Returns what changed."""
    settled = Settled()
    writer = _Writer(index, settled)
    if departed:
        roots = {d.id if d.cluster == d.id else d.cluster for d in departed}
        gone_ids = {d.id for d in departed}
        _redecide(index, rule, writer, roots - gone_ids, gone_ids)
    suspects: set[str] = set()  # the ids of the documents to look up again
    fresh_ids: set[str] = set()
    if since is None:
        suspects.update(d.id for d in docs)
    else:
        fresh = [d for d in index.written_since(since) if mine.get(d.id) != written_state(d)]
        fresh_ids = {d.id for d in fresh}
        if fresh:
            suspects.update(d.id for d in _sharing_a_candidate(index, rule, docs, fresh))
        if fresh and candidates:
            suspects.update(d.id for d in docs if not fresh_ids.isdisjoint(candidates.get(d.id, ())))
    suspects.update(d.id for d in found)
    if apart:
        kept_apart = [d for d in docs if d.id in apart and d.id not in suspects]
        suspects.update(d.id for d in _lost_a_candidate(index, kept_apart, candidates, {d.id for d in docs}))
    if departed:  # (the new version of a re-indexed document: always decided against what came before it)
        gone = {d.id for d in departed}
        suspects.update(d.id for d in docs if d.id in gone)
    matched = {d.id: candidates[d.id][d.duplicate_of] for d in docs
               if d.duplicate_of and d.duplicate_of in candidates.get(d.id, ())}
    if matched:
        own = {d.id for d in docs} - fresh_ids if since is not None else ()
        suspects.update(d.id for d in _unmatched(index, writer, [d for d in docs if d.id in matched], matched, own))
    merged: list[str] = []
    if suspects or departed:
        current = index.fetch(sorted(suspects), whole=False) if suspects else {}
        merged = _settle_canonicals(index, rule, writer, list(current.values()), left=departed)
    # each duplicate's canonical must still be one (another writer may have merged it into another cluster), and
    # no document may point at one that stopped being canonical (merged here, or before a kill)
    check = ({d.id for d in list(docs) + list(found) if d.cluster != d.id} | set(merged)
             | {c.id for c in settled.changes})
    if check:
        _repoint(index, writer, check, rule)
    return settled


def delete(index: MaintainedIndex, rule: DecisionRule, ids: Iterable[str]) -> tuple[list[str], list[str], Settled]:
    """Delete documents, then decide the rest of their clusters again (the earliest remaining member becomes the
    canonical; members no longer within the rule of anyone in the cluster are decided afresh). No document is
    left pointing at a deleted one. Returns ``(deleted ids, ids not found, changes)``."""
    ids = list(dict.fromkeys(ids))
    settled = Settled()
    writer = _Writer(index, settled)
    deleted: list[str] = []
    departed: list[StoredDoc] = []
    todo = index.fetch(ids, whole=False)
    missing = [i for i in ids if i not in todo]
    for _ in range(_MAX_ATTEMPTS):
        if not todo:
            break
        conflicts = set(index.remove(list(todo.values())))
        for i, d in todo.items():
            if i not in conflicts:
                deleted.append(i)
                departed.append(d)
                settled.changes.append(Change(i, "deleted", _state(d), (None, None)))
        todo = index.fetch(sorted(conflicts), whole=False)
    else:
        raise MaintenanceError(f"{len(todo)} documents kept changing while being deleted; run again")
    if departed:
        gone = {d.id for d in departed}
        roots = {d.id if d.cluster == d.id else d.cluster for d in departed} - gone
        rewritten = _redecide(index, rule, writer, roots, gone)
        merged = _settle_canonicals(index, rule, writer, [], left=departed)
        _repoint(index, writer, [d.id for d in rewritten] + merged, rule)
    return deleted, missing, settled


@dataclass
class RepairReport:
    """What :func:`repair` found and changed."""

    checked: int = 0
    changes: list[Change] = field(default_factory=list)
    last_id: str | None = None
    """The last id checked (a repair interrupted after it can go on from there)."""

    def counts(self) -> dict[str, int]:
        return dict(Counter(c.why for c in self.changes))


def _malformed(d: StoredDoc) -> bool:
    """Flags that contradict each other: canonical (``duplicate_of`` empty) but in another cluster, or the reverse."""
    return (d.duplicate_of is None) != (d.cluster == d.id)


def repair(index: MaintainedIndex, rule: DecisionRule, dry_run: bool = False, after: str | None = None, page: int = 500,
           on_page: Callable[[RepairReport], None] | None = None) -> RepairReport:
    """Find and fix what older runs or other tools left, page by page in id order (from the first id after
    ``after``): canonicals that duplicate an older document, clusters whose canonical joined another cluster or
    is missing, documents pointing at missing documents, contradictory flags; and near duplicates decided before
    their template was known (:func:`recheck`; canonicals are settled with the same knowledge and join only a
    cluster a recheck would keep them in, so a repair does not merge what a recheck split: on 600 random small
    indexes a second repair changes nothing; one in 3,000 with ``DefaultRule.rechecked()`` flips two documents at
    every repair, the clusters consistent each time). ``dry_run``: report what would change, write nothing (only first-order changes: a merge's
    re-pointed members are not listed). ``on_page`` is called after each page (progress, checkpoints)."""
    report = RepairReport(last_id=after)
    settled = Settled()
    writer = _Writer(index, settled, dry_run=dry_run)
    for docs in index.scan(page, after):
        ids = {d.id for d in docs}
        # pointers to missing documents: their clusters are decided again without them
        targets = {d.cluster for d in docs} | {d.duplicate_of for d in docs if d.duplicate_of}
        present = set(index.fetch(sorted(targets - ids), whole=False)) | ids
        gone = targets - present
        if gone:
            dangling = [d for d in docs if d.cluster in gone or d.duplicate_of in gone]
            roots = {d.cluster for d in dangling if d.cluster not in gone}
            _redecide(index, rule, writer, roots, gone)
        bad = [d for d in docs if _malformed(d) and d.cluster not in gone and d.duplicate_of not in gone]
        if bad:
            # (flags that contradict each other say nothing to trust: a canonical again, decided just below against
            # the documents that arrived before it)
            writer.rewrite([d.id for d in bad], lambda d: _as_canonical(d) if _malformed(d) else None, "re-decided")
        fresh = index.fetch(sorted(ids), whole=False) if not dry_run else {d.id: d for d in docs}
        merged = _settle_canonicals(index, rule, writer, list(fresh.values()), known=True)
        _repoint(index, writer, ids | set(merged), None if dry_run else rule)
        # near duplicates decided before their template was known (see recheck), as the page stands now
        now = index.fetch(sorted(ids), whole=False) if not dry_run else fresh
        rechecked = _recheck(index, rule, writer, list(now.values()))
        if rechecked and not dry_run:
            _repoint(index, writer, rechecked, rule)
        report.checked += len(docs)
        report.last_id = docs[-1].id
        report.changes = settled.changes
        if on_page is not None:
            on_page(report)
    report.changes = settled.changes
    return report


def recheck(index: MaintainedIndex, rule: DecisionRule, dry_run: bool = False, after: str | None = None,
            page: int = 500, on_page: Callable[[RepairReport], None] | None = None, repeat: bool = False
            ) -> RepairReport:
    """Take every near-duplicate decision again with what the whole index knows now, page by page in id order.

    A document is decided when it arrives, against what is indexed then. The second post of a template (a site's
    header and disclaimer around another text, a forum's share line) arrives when the template has been seen
    once: its sentences look like the first post's own, and the two are put in one cluster. Once more posts of
    the template are indexed, the rule counts its hashes as boilerplate (held by several clusters), and the
    decision no longer holds. ``recheck`` decides each near duplicate again against the documents that arrived
    before it, counting as boilerplate what the candidates of the other clusters, of any arrival, show to be a
    template's (:meth:`DefaultRule.crowded`); one that matches no member of its cluster any more leaves it
    (``split``: a canonical; ``moved``: into the cluster it matches now), and the documents that duplicate it
    follow it. A document that left its cluster is one more holder of the template's hashes for the decisions
    after it, so a recheck that changed something can change a little more when run again (``repeat``: pass
    over the index again until a pass changes nothing, as ``dedup`` does); a decision is only ever taken back,
    never made looser. :func:`repair` does the same for each page it checks. ``dry_run``: report, write
    nothing."""
    report = RepairReport(last_id=after)
    settled = Settled()
    writer = _Writer(index, settled, dry_run=dry_run)
    changed: set[str] = set()
    for docs in index.scan(page, after):
        rechecked = _recheck(index, rule, writer, docs)
        if rechecked and not dry_run:
            _repoint(index, writer, rechecked, rule)
        changed.update(rechecked)
        report.checked += len(docs)
        report.last_id = docs[-1].id
        report.changes = settled.changes
        if on_page is not None:
            on_page(report)
    # a document that left its cluster is one more holder for the documents that share hashes with it
    for _ in range(_MAX_ATTEMPTS):
        if not (changed and repeat and not dry_run):
            break
        left = list(index.fetch(sorted(changed), whole=False).values())
        near: set[str] = set()
        for res in index.lookup([Lookup(d.id, d.fingerprint) for d in left], rule.candidate_distance):
            near.update(c.id for c in res.candidates if _recheckable(c))
        changed = set(_recheck(index, rule, writer, list(index.fetch(sorted(near), whole=False).values())))
        if changed:
            _repoint(index, writer, changed, rule)
    else:
        raise MaintenanceError("decisions kept changing while being rechecked; run again")
    report.changes = settled.changes
    return report


class _StoredRecords:
    """A record reader (as :func:`es_simhash.pipeline.run_dedup` takes) over the documents stored in an index:
    each is one "line" of the input named after the index, in the order they arrived; ``bytes_read`` counts
    documents (for progress)."""

    def __init__(self, source) -> None:
        self.source = source
        self.bytes_read = 0

    def read_one(self, path: str, skip_lines: int = 0) -> Iterator[Record | DeadLetter]:
        from es_simhash.files.sources import DeadLetter, Record

        for n, (doc_id, text, record) in enumerate(self.source.records(), 1):
            self.bytes_read = n
            if n <= skip_lines:
                continue
            if not isinstance(text, str) or not text:
                yield DeadLetter(path, n, "no stored text to fingerprint again", doc_id)
            else:
                yield Record(path, n, doc_id, text, record)


def migrate(source, engine, *, dead_letters: str = "dead-letters.jsonl", checkpoint=None, report=None,
            on_progress=None, start=None, stop=None):
    """Index every document stored in ``source`` (an :class:`~es_simhash.index.elastic.ElasticIndex`) again
    through ``engine`` (whose index is the new one), from its stored text and record, the earliest first: each is
    fingerprinted with the engine's fingerprinter and decided afresh (so clusters follow the new fingerprint).
    Client-side (no reindex module needed). A document without stored text is a dead letter (its "line" is its
    position in arrival order). With a ``checkpoint`` (inputs: ``[migration_input(source)]``) an interrupted
    migration goes on where it stopped. ``start`` and ``stop``: as :func:`~es_simhash.pipeline.run_dedup` takes
    them (create the new index before the first document; stop after a batch). Returns the
    :class:`~es_simhash.pipeline.Summary`."""
    from es_simhash.pipeline.run import run_dedup

    return run_dedup([migration_input(source)], engine, _StoredRecords(source), report=report,
                     dead_letters=dead_letters, on_progress=on_progress, checkpoint=checkpoint, start=start,
                     stop=stop)


def migration_input(source) -> str:
    """The name a migration gives its input (in dead letters, reports and checkpoints)."""
    return f"index:{source.index}"


def iter_ids(lines: Iterable[str]) -> Iterator[str]:
    """Ids from lines of text (one per line; blank lines and ``#`` comments skipped)."""
    for line in lines:
        line = line.strip()
        if line and not line.startswith("#"):
            yield line
