"""Settling a written batch against what other writers wrote meanwhile (:func:`settle`): canonicals decided
again against the documents that arrived before them, merged clusters re-pointed (:func:`repoint`), clusters a
document left decided again in arrival order (:func:`redecide`). The consistency model is in
:mod:`es_simhash.clustering`."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any, Collection, Mapping, Sequence

from es_simhash.defaults import MAX_WRITE_ATTEMPTS
from es_simhash.decide.rule import DecisionRule
from es_simhash.index.base import arrival_key, Lookup, MaintainedIndex, written_state
from es_simhash.records import StoredDoc
from es_simhash.lookup.candidates import boilerplate_of, found_by_lookup
from es_simhash.errors import MaintenanceError
from es_simhash.clustering.writes import Settled, Writer, as_canonical, as_member_of, canonicals_of
from es_simhash.clustering.templates import all_matches, first_kept


def _newer_canonicals(index: MaintainedIndex, rule: DecisionRule, docs: Sequence[StoredDoc], skip: set[str]
                      ) -> list[StoredDoc]:
    """The canonicals among the candidates of ``docs`` that arrived after the document they are a candidate of
    (leaving out ``skip``), each once."""
    out: dict[str, StoredDoc] = {}
    for d, res in zip(docs, index.lookup([Lookup(d.id, d.fingerprint) for d in docs], rule.candidate_contract)):
        for c in res.candidates:
            if c.cluster == c.id and arrival_key(c) > arrival_key(d) and c.id not in skip:
                out.setdefault(c.id, c)
    return list(out.values())


def _canonical_decision(index: MaintainedIndex, rule: DecisionRule, doc: StoredDoc, older: Sequence[StoredDoc],
                        res: Any, cap: int, known: bool, holders: Mapping[int, list[StoredDoc]]) -> Any:
    """What settling decides for the canonical ``doc`` against the documents ``older`` than it (``res``: its
    lookup): the decision it got on arrival, when nothing was written concurrently (:func:`_as_on_arrival`; so
    settling a document again changes nothing by itself); with ``known`` (the recheck and :func:`repair`), only when
    that decision is a match and, with what the whole index knows of templates, into a cluster a recheck keeps it
    in (so neither undoes what the other did)."""
    candidates, boilerplate = _as_on_arrival(index, rule, doc, older, res, cap, holders)
    on_arrival = rule.decide(doc.fingerprint, candidates, boilerplate)
    if not known or on_arrival is None:
        return on_arrival
    # what the other clusters know of templates is counted per cluster it could join (first_kept: the members of
    # that cluster are no other holder), not against the canonical's own cluster of one: a third copy of a text,
    # written at the same time and canonical for now, would make the sentences the two share look like a template's
    boilerplate = boilerplate_of(doc.fingerprint, res.sentence_df, cap)
    return first_kept(rule, doc, all_matches(rule, doc.fingerprint, older, boilerplate), res.candidates)


def _crossing(doc: StoredDoc, res: Any, cap: int) -> list[int]:
    """The hashes of ``doc`` held by more than ``cap`` documents now: the only ones that can have been under the
    bound when it arrived (its lookup then used them, and counted them as its own)."""
    return [h for h in doc.fingerprint.hashes if res.sentence_df.get(h, 0) > cap]


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
    found = found_by_lookup(doc.fingerprint, pool.values(), boilerplate, index.lookup_keys, rule.candidate_contract)
    return found, frozenset(boilerplate)


def settle_canonicals(index: MaintainedIndex, rule: DecisionRule, writer: Writer, docs: list[StoredDoc],
                       left: Sequence[StoredDoc] = (), known: bool = False) -> list[str]:
    """Decide each canonical among ``docs`` again against the documents that arrived before it; and settle
    likewise every newer canonical that matches one of ``docs`` (canonical or not: a canonical written at the same
    time as a duplicate it should have joined is only seen from that duplicate's side). A canonical with a match
    joins it (its members are re-pointed after). ``left``: stored versions of documents that left (deleted, or
    re-indexed with other content): every newer canonical that had one of them among its candidates was decided
    with it there (its match, or a holder of a template's sentences), so it is settled too. ``known``: a canonical
    joins a cluster only when it would have on arrival and a recheck keeps it there, with what the whole index knows
    of templates (:func:`_canonical_decision`); the recheck and :func:`repair` settle so, and so does every settling
    with a rule whose decisions are rechecked (``rule.recheck``: what the recheck took back stays so). Returns the
    ids that joined another cluster."""
    known = known or rule.recheck
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
        found = index.lookup([Lookup(d.id, d.fingerprint) for d in todo], rule.candidate_contract)
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
        deferred: list[StoredDoc] = []
        if known and len(joins) > 1:
            joins, deferred = _one_at_a_time(index, joins, todo, found)
        joined: list[StoredDoc] = []
        joins = _holding_no_final(index, joins)
        if joins:
            targets = canonicals_of(index, {cluster for _, cluster, _, _ in joins.values()})

            def join(doc: StoredDoc) -> StoredDoc | None:
                decision, cluster, arrival, content = joins[doc.id]
                if doc.cluster != doc.id or (doc.arrival, doc.fingerprint.content_hash) != (arrival, content):
                    return None  # (someone else merged it meanwhile, or re-indexed it: decided for another text)
                root = targets.get(cluster) or cluster
                return as_member_of(doc, decision, root)

            joined = writer.rewrite(joins, join, "merged")
            merged += [d.id for d in joined]
        # A merge is a write, and the look-up above came before it: a canonical that another writer wrote in between,
        # decided while the merged document still had a cluster of its own (so the template rule counted two
        # holders), is only found by looking again from the merged documents, now, after the write (each writer
        # writes, then looks: one of the two sees the other's write).
        todo = list(newer.values()) + [d for d in joined if d.id not in newer]
        if deferred:  # (decided again once the joins before them are written and their members follow them)
            repoint(index, writer, [d.id for d in joined], rule)
            later = index.fetch(sorted(d.id for d in deferred if d.id not in newer), whole=False)
            todo = [d for d in todo if d.id not in later] + list(later.values())
        moved = {d.id for d in joined}
    return merged


def _one_at_a_time(index: MaintainedIndex, joins: dict[str, Any], todo: Sequence[StoredDoc], found: Sequence[Any]
                   ) -> tuple[dict[str, Any], list[StoredDoc]]:
    """The joins of ``joins`` that can be written together, and the canonicals whose join waits. Whether a
    canonical stays in the cluster it joins depends on the clusters of its candidates (the template rule counts
    holders by cluster), so two joins decided on one view can each undo the other's reason (both join, then a
    recheck splits both off again). In arrival order, a join waits when one of its candidates is a canonical that
    joins before it, or a member of one; it is decided again once those are written."""
    by_id = {d.id: (d, res) for d, res in zip(todo, found)}
    order = sorted(joins, key=lambda i: arrival_key(by_id[i][0]))
    follows: dict[str, set[str]] = {}
    for m in index.pointing_at(order):
        follows.setdefault(m.cluster, set()).add(m.id)
    touched: set[str] = set()
    now: dict[str, Any] = {}
    wait: list[StoredDoc] = []
    for i in order:
        doc, res = by_id[i]
        if touched.intersection(c.id for c in res.candidates):
            wait.append(doc)
            continue
        now[i] = joins[i]
        touched |= {i} | follows.get(i, set())
    return now, wait


def _anchor(doc: StoredDoc) -> str:
    """Where a duplicate's canonical is found: the cluster of the document it duplicates (``duplicate_of``, whose
    chain only goes to earlier arrivals), else its own ``cluster`` pointer (a malformed document)."""
    return doc.duplicate_of or doc.cluster


def _holding_no_final(index: MaintainedIndex, joins: dict[str, Any]) -> dict[str, Any]:
    """``joins`` (canonicals to merge into other clusters) but those whose cluster holds a document that can no
    longer be written (:attr:`StoredDoc.final`): it could not follow, so its canonical stays one."""
    if not joins:
        return joins
    held = {d.cluster for d in index.pointing_at(list(joins)) if d.final}
    return {i: j for i, j in joins.items() if i not in held}


def repoint(index: MaintainedIndex, writer: Writer, ids: Collection[str], rule: DecisionRule | None = None) -> None:
    """Make every document among ``ids``, and every document pointing at one of them, point at a canonical that
    exists: the canonical that the document it duplicates leads to (``cluster`` pointers followed from its
    ``duplicate_of``), so a document whose match joined another cluster, or left its cluster (re-indexed with
    other content: decided while the match still pointed there), goes where its match is. Repeated until nothing
    changes (a canonical can join another cluster while documents are re-pointed to it)."""
    check = set(ids)
    for _ in range(MAX_WRITE_ATTEMPTS):
        if not check:
            return
        docs = index.fetch(sorted(check), whole=False)
        # (and at a canonical this writer rewrote: one decided again was a duplicate, its duplicates' clusters
        # are its own now; not at every canonical, which would read whole clusters for nothing)
        rewritten = {c.id for c in writer.settled.changes}
        pointing = index.pointing_at([i for i, d in docs.items() if d.cluster != d.id or i in rewritten])
        todo = {d.id: d for d in list(docs.values()) + pointing if d.cluster != d.id}
        roots = canonicals_of(index, {_anchor(d) for d in todo.values()})
        wrong = [d for d in todo.values() if roots.get(_anchor(d)) != d.cluster]
        lost = [d for d in wrong if roots.get(_anchor(d)) is None]
        if lost and rule is not None:  # pointing at a missing document (or a cycle): decided again
            redecide(index, rule, writer, {d.cluster for d in lost}, set())
        moved = [d for d in wrong if roots.get(_anchor(d)) is not None]
        if not moved:
            return
        new_root = {d.id: (_anchor(d), roots[_anchor(d)]) for d in moved}

        def point(doc: StoredDoc) -> StoredDoc | None:
            if doc.cluster == doc.id:
                return None
            anchor, target = new_root.get(doc.id, (None, None))
            if anchor != _anchor(doc):  # (rewritten meanwhile: found from what it duplicates now)
                target = canonicals_of(index, [_anchor(doc)]).get(_anchor(doc))
            return None if target is None or target == doc.cluster else replace(doc, cluster=target)

        written = writer.rewrite([d.id for d in moved], point, "re-pointed")
        check = {d.id for d in written}  # read their canonicals again (merged meanwhile?)
    raise MaintenanceError("cluster pointers kept changing while being re-pointed; run again")


def redecide(index: MaintainedIndex, rule: DecisionRule, writer: Writer, roots: Collection[str], gone: Collection[str]
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
    found = index.lookup([Lookup(d.id, d.fingerprint) for d in group], rule.candidate_contract, exclude=hide)
    pending = MemoryIndex(cap, index.lookup_keys)
    pending_df: Counter[int] = Counter()
    decided: dict[str, StoredDoc] = {}
    for d, res in zip(group, found):
        key = arrival_key(d)
        candidates = [c for c in res.candidates if arrival_key(c) < key]
        candidates += pending.lookup([Lookup(d.id, d.fingerprint)], rule.candidate_contract)[0].candidates
        decision = rule.decide(d.fingerprint, candidates, boilerplate_of(d.fingerprint, res.sentence_df, cap, pending_df)
                               ) if candidates else None
        new = as_canonical(d) if decision is None else as_member_of(d, decision, decision.of.cluster)
        if new.cluster in decided:  # (a member of the group decided just before: its cluster as decided)
            new = replace(new, cluster=decided[new.cluster].cluster)
        decided[d.id] = new
        pending.add([new])
        pending_df.update(d.fingerprint.hashes)

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
    found = memory.lookup([Lookup(d.id, d.fingerprint) for d in docs], rule.candidate_contract)
    return [d for d, res in zip(docs, found) if res.candidates or res.existing is not None]


def _unmatched(index: MaintainedIndex, writer: Writer, docs: Sequence[StoredDoc], matched: Mapping[str, int],
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
        return as_canonical(doc)

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
    writer = Writer(index, settled)
    if departed:
        roots = {d.id if d.cluster == d.id else d.cluster for d in departed}
        gone_ids = {d.id for d in departed}
        redecide(index, rule, writer, roots - gone_ids, gone_ids)
    suspects: set[str] = set()  # the ids of the documents to look up again
    fresh_ids: set[str] = set()
    if since is None:
        suspects.update(d.id for d in docs)
    else:
        fresh = [d for d in index.written_since(since) if mine.get(d.id) != written_state(d)]
        fresh_ids = {d.id for d in fresh}
        settled.others = bool(fresh)
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
        merged = settle_canonicals(index, rule, writer, list(current.values()), left=departed)
    # each duplicate's canonical must still be one (another writer may have merged it into another cluster), and
    # no document may point at one that stopped being canonical (merged here, or before a kill)
    check = ({d.id for d in list(docs) + list(found) if d.cluster != d.id} | set(merged)
             | {c.id for c in settled.changes})
    if check:
        repoint(index, writer, check, rule)
    return settled
