"""Deciding one batch (nothing written; :class:`BatchDecider`): each document against the index's candidates, the
documents of the batch still being written, and the ones this batch decided before it, in input order; what the
batch decided (:class:`DecidedBatch`), which settling and a resumed run read."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Collection, Mapping, Sequence, cast

from es_simhash.decide.default import DefaultRule
from es_simhash.decide.rule import NO_FEATURES, DecisionRule
from es_simhash.records import CANONICAL, Document, Result, StoredDoc
from es_simhash.errors import DuplicateIdError, IndexingError
from es_simhash.fingerprint.model import Fingerprint
from es_simhash.index.base import FingerprintIndex, Lookup, MaintainedIndex, without_payload, written_state
from es_simhash.index.memory import MemoryIndex
from es_simhash.lookup.candidates import found_by_lookup


_NONE: frozenset[int] = frozenset()


def split_boilerplate(fp: Fingerprint, counts: Sequence[Mapping[int, int]], cap: int) -> tuple[frozenset[int], bool]:
    """The hashes of ``fp`` held by more than ``cap`` documents in all ``counts`` together (each a part's
    document frequencies: the index's lookup, the batch being written, this batch's earlier documents), and
    whether a part under ``cap`` on its own held one of them: that part's lookup then brought candidates through a
    hash one lookup over all the documents would have left out (:meth:`BatchDecider._found_by_lookup`)."""
    if sum(max(c.values(), default=0) for c in counts) <= cap:  # (no hash can be over the bound: the common case)
        return _NONE, False
    out: list[int] = []
    split = False
    if len(counts) == 2:  # (the index and this batch, written out)
        index, batch = counts
        for h in fp.hashes:
            x, y = index.get(h, 0), batch.get(h, 0)
            if x + y > cap:
                out.append(h)
                split = split or 0 < x <= cap or 0 < y <= cap
        return frozenset(out), split
    for h in fp.hashes:
        n = [c.get(h, 0) for c in counts]
        if sum(n) > cap:
            out.append(h)
            split = split or any(0 < x <= cap for x in n)
    return frozenset(out), split


def mine_of(decided: DecidedBatch, being: Sequence[StoredDoc], mark: dict[str, Any] | None
          ) -> dict[str, tuple[int, str, str | None]]:
    """What this writer writes in a decided batch, or was writing when its mark was taken (``being``), as written;
    for the batch of a resumed run (``decided.resumed``), also what the interrupted run was writing then (``mark``)
    and what it wrote of this batch (found indexed)."""
    mine = {d.id: written_state(d) for d in [*being, *decided.to_store]}
    if not decided.resumed or mark is None:
        return mine
    return {**{i: (a, c, o) for i, (a, c, o) in mark["mine"].items()},
            **{d.id: written_state(d) for d in decided.found}, **mine}


def same_fingerprint(a: Fingerprint, b: Fingerprint) -> bool:
    """Same fingerprint (the order of sentence hashes does not matter: backends may store them as a set)."""
    return a == b or (
        (a.simhash, a.content_hash, a.n_features, a.n_chars, a.short, a.version, a.word_bag, a.number_bag,
         a.fuzzy_digests, a.date_bag, a.place_bag)
        == (b.simhash, b.content_hash, b.n_features, b.n_chars, b.short, b.version, b.word_bag, b.number_bag,
            b.fuzzy_digests, b.date_bag, b.place_bag)
        and sorted(a.hashes) == sorted(b.hashes)
    )


@dataclass
class DecidedBatch:
    """One batch looked up and decided, not yet written."""

    results: list[Result | DuplicateIdError | IndexingError] = field(default_factory=list)
    to_store: list[StoredDoc] = field(default_factory=list)
    new_ids: list[str] = field(default_factory=list)
    """Ids this batch marked as seen."""
    departed: list[StoredDoc] = field(default_factory=list)
    """Stored versions of documents this batch re-indexes with other content (their clusters are decided again)."""
    found: list[StoredDoc] = field(default_factory=list)
    """Documents of this batch found already indexed with the same content (settled again after a kill)."""
    resumed: bool = False
    """The batch an interrupted run was writing, decided with the mark that run took (``mark``): its documents
    found indexed were written by that run after the mark, and are settled as this batch's own writes."""
    mark: Any = None
    """The index's visible mark taken before this batch's lookup (backends with ``shared_writers``)."""
    apart: list[str] = field(default_factory=list)
    """Canonicals that one of their candidates alone would have made duplicates: kept apart by what the rule
    looks at over all candidates (a template's holders) or by boilerplate; settling decides one again if a
    candidate is gone by then (deleted: nothing else would tell)."""
    mine: dict[str, tuple[int, str, str | None]] = field(default_factory=dict)
    """What this engine writes in this batch, or was writing when the mark was taken: id -> (arrival, cluster,
    duplicate_of) as written. A document written since the mark in any other state is another writer's (or a
    rewrite), whatever its id."""
    candidates: dict[str, dict[str, int]] = field(default_factory=dict)
    """Each document's candidates when it was decided (id -> arrival; backends with ``shared_writers``): settling
    decides a document again when one of them was rewritten meanwhile, or when its match is gone or is another
    version by the time it is written."""
    far: list[str] = field(default_factory=list)
    """Canonicals of this batch with long sentences that the decider's ``recheck_rule`` would have made duplicates
    of one of the same candidates (:class:`FarMarks`)."""
    others: bool = False
    """Once written and settled: settling found documents that another writer wrote or rewrote since the batch's
    mark, or rewrote some, or the batch re-indexed documents with other content (:class:`FarMarks`)."""

    def stored(self, refused: dict[str, str]) -> list[Result | DuplicateIdError | IndexingError]:
        """The results once written: documents the backend refused become :class:`IndexingError`."""
        if not refused:
            return self.results
        return [IndexingError(f"refused by the index: {refused[r.id]}")
                if isinstance(r, Result) and r.id in refused and not r.already_indexed else r
                for r in self.results]

    def refers_to(self, ids: dict[str, str]) -> bool:
        return any(d.cluster in ids or d.duplicate_of in ids for d in self.to_store)

    def forget(self, seen: dict[str, None]) -> None:
        for doc_id in self.new_ids:
            seen.pop(doc_id, None)


def as_maintained(index: FingerprintIndex) -> MaintainedIndex:
    """``index`` as a :class:`~es_simhash.index.base.MaintainedIndex`: one that shares writers, or that a batch
    re-indexes a document of with other content (settled after its write), must be one."""
    if not isinstance(index, MaintainedIndex):
        raise TypeError(f"{type(index).__name__} is not a MaintainedIndex: it can neither share writers nor "
                        "take a document re-indexed with other content")
    return index


class FarMarks:
    """What a run's decisions on arrival tell its recheck about its canonicals: the ids of those the rule the
    recheck decides with would have made duplicates (:attr:`ids`), and whether the others can be left as they are
    (:meth:`settles`).

    A run with the recheck decides on arrival with ``DefaultRule.on_arrival()`` (no far sentence bound) and its
    recheck decides with ``DefaultRule.rechecked()``; settling a canonical with long sentences costs the recheck a
    lookup, so it settles only those that :meth:`settles` picks. Why that is every canonical the recheck can merge:

    * Settling (:func:`~es_simhash.clustering.settle.settle_canonicals`, ``known``) joins a canonical to an
      *older* document only (candidates that arrived before it), never to a later one: a later document that
      belongs with it is a canonical of its own settled against the documents older than *it* (the settling of
      an older canonical brings it along), so it is that document's arrival that marks it. And it joins only when
      the recheck rule, given the candidates and the boilerplate that the canonical's lookup gave *on arrival*
      (rebuilt from the index as it stands, by arrival order alone: ``_as_on_arrival``), picks a match. That
      boilerplate grew since does not enter this decision: it enters only the test that the recheck keeps the
      join (``first_kept``), which can refuse a join, never make one.
    * On arrival the decider asks the recheck rule the same question, of the very same candidates (the index's,
      the batch being written, and the earlier documents of the batch) and boilerplate, and marks the canonical
      when it picks a match. Every document older than the canonical was visible to its lookup, unless another
      writer wrote it meanwhile (settling then finds it written since the batch's mark: :attr:`complete` off).
    * What can differ is the candidates' clusters (the template rule counts holders by cluster; the meaning guard
      vetoes a cluster), which change only when a candidate is rewritten: by the recheck itself, which calls the
      documents near each change into question and settles every canonical among them afterwards
      (:func:`~es_simhash.clustering.recheck.until_settled`: the documents its lookup finds from the changed one,
      which leaves out a canonical that found the changed one on arrival through a hash over the boilerplate
      bound by now; settling every canonical in its page misses it too when the change comes after that page),
      or by settling during the run (other writers, a re-indexed document: :attr:`complete` off).

    So :meth:`settles` takes the marked canonicals, the documents that arrived before the run (decided by another
    run) and, once the run saw another writer's or a rewrite's traces, every canonical. A resumed run carries the
    marks on (its checkpoint saves them, :meth:`saved`); the batch it resumes marks the documents it finds already
    written (by the run it resumes, whose marks of that batch were not saved) as that run may have."""

    def __init__(self, since: int | None = None) -> None:
        self.ids: set[str] = set()
        """The marked canonicals."""
        self.complete = True
        """Whether the marks cover every document of the run (no other writer's write nor a rewrite seen)."""
        self.since = time.time_ns() // 1000 if since is None else since
        """When the run began (microseconds, as :attr:`~es_simhash.records.StoredDoc.arrival`; default: now): a
        document that arrived before was decided by another run, and is not covered."""

    def add(self, decided: "DecidedBatch") -> None:
        """Take in a batch once written and settled: its marks, its documents found already written (marked when
        they arrived during the run: another writer's, or an interrupted run's), and whether it saw traces of
        another writer (:attr:`DecidedBatch.others`)."""
        self.ids.update(decided.far)
        self.ids.update(d.id for d in decided.found if d.cluster == d.id and d.fingerprint.sentences
                        and d.arrival >= self.since)
        if decided.others or decided.departed:
            self.complete = False

    def settles(self, doc: StoredDoc) -> bool:
        """Whether the recheck settles the canonical ``doc`` (see the class's text): a canonical with long sentences
        that is marked, or that the marks do not cover."""
        return bool(doc.fingerprint.sentences) and (doc.id in self.ids or not self.complete or doc.arrival < self.since)

    def saved(self) -> dict[str, Any]:
        """The marks as a checkpoint keeps them (JSON)."""
        return {"ids": sorted(self.ids), "complete": self.complete}

    def restore(self, saved: dict[str, Any] | None) -> None:
        """Carry on the marks of the run a resumed run resumes (:meth:`saved`; None: none saved, cover nothing)."""
        if saved is None:
            self.complete = False
            return
        self.ids.update(saved.get("ids", ()))
        self.complete = self.complete and bool(saved.get("complete", False))


class BatchDecider:
    """Looks up and decides batches against one index with one rule (nothing is written): the ids seen so far in
    this run (a document whose id was seen is a :class:`DuplicateIdError`) and the last arrival given (arrivals
    only grow). With a ``recheck_rule`` other than ``rule``, each canonical with long sentences that it would have
    made a duplicate is marked (:attr:`DecidedBatch.far`, :class:`FarMarks`)."""

    def __init__(self, index: FingerprintIndex, rule: DecisionRule, recheck_rule: DecisionRule | None = None) -> None:
        self.index = index
        self.rule = rule
        self.recheck_rule = recheck_rule or rule
        self._far_only = isinstance(self.recheck_rule, DefaultRule) and self.rule == self.recheck_rule.on_arrival()
        """The recheck rule is the rule with the far sentence bound (``DefaultRule.on_arrival``): only a candidate
        that bound can reach (:meth:`DefaultRule.far_reachable`) can make the two decide otherwise."""
        self.seen: dict[str, None] = {}
        """Ids decided in this run (a dict: ordered, and fast to test)."""
        self.last_arrival = 0
        """The arrival (microseconds) given to the last document decided."""

    def forget(self, decided: DecidedBatch) -> None:
        """Unmark the ids ``decided`` marked as seen (a batch decided again, or not decided after all)."""
        decided.forget(self.seen)

    def hold_batch(self, docs: Sequence[Document], fps: Sequence[Fingerprint]
                   ) -> tuple[list[Result | DuplicateIdError | IndexingError], list[StoredDoc]]:
        """Take in one batch without deciding it (no lookup, no decision, nothing written): for a run whose
        documents are decided at its end as a set (:func:`~es_simhash.pipeline.precedence.decide_run`). Each
        document whose id was seen is a :class:`DuplicateIdError`; one the index holds with the same fingerprint
        is found already indexed (its stored state); each other one is held, as its own canonical until it is
        decided, with its arrival. Returns the results (provisional) and the documents held (no payload)."""
        results: list[Result | DuplicateIdError | IndexingError] = []
        held: list[StoredDoc] = []
        index = self.index
        if not isinstance(index, MemoryIndex):
            raise TypeError(f"hold_batch: the index is a {type(index).__name__}, not a MemoryIndex")
        for doc, fp in zip(docs, fps):
            if doc.id in self.seen:
                results.append(DuplicateIdError(f"duplicate id {doc.id!r}: already seen earlier in this input"))
                continue
            self.seen[doc.id] = None
            existing = index.get(doc.id)
            if existing is not None and same_fingerprint(existing.fingerprint, fp):
                results.append(Result.from_stored(existing, already_indexed=True))
                continue
            now = max(time.time_ns() // 1000, self.last_arrival + 1)
            self.last_arrival = now
            stored = StoredDoc(doc.id, fp, doc.id, reason=NO_FEATURES if fp.empty else CANONICAL, arrival=now)
            held.append(stored)
            results.append(Result.from_stored(stored))
        return results, held

    def decide_batch(self, docs: Sequence[Document], fps: Sequence[Fingerprint],
                     writing: MemoryIndex | None = None, in_order: bool = False, mark: Any = None) -> DecidedBatch:
        """Look up and decide one batch (nothing is written). ``writing``: the documents of the batch still being
        written, in memory; the backend's stored versions of them are left out of the lookup. ``in_order``: the
        documents of the batch found already indexed are decided around as members of the batch at their places,
        and with ``mark`` settled as the batch's own (see ``resumed`` in
        :meth:`~es_simhash.engine.dedup_engine.DedupEngine.process_batches`)."""
        queries = [Lookup(d.id, fp) for d, fp in zip(docs, fps)]
        contract = self.rule.candidate_contract
        decided = DecidedBatch()
        being = writing.docs() if writing is not None else []  # (the batch before, being written)
        being_written = [doc.id for doc in being]
        if self.index.shared_writers:  # what is visible now: settling looks at what came after
            decided.resumed = in_order and mark is not None
            decided.mark = mark["mark"] if decided.resumed else as_maintained(self.index).visible_mark()
        if writing is not None:
            found = self.index.lookup(queries, contract, exclude=being_written)
            in_writing = writing.lookup(queries, contract)
        else:
            found = self.index.lookup(queries, contract)
            in_writing = None
        results: list[Result | DuplicateIdError | IndexingError | None] = [None] * len(docs)
        todo: list[int] = []  # the documents this batch decides, in input order
        for i, (doc, fp, res) in enumerate(zip(docs, fps, found)):
            if doc.id in self.seen:
                results[i] = DuplicateIdError(f"duplicate id {doc.id!r}: already seen earlier in this input")
                continue
            self.seen[doc.id] = None
            decided.new_ids.append(doc.id)
            if res.existing is not None and same_fingerprint(res.existing.fingerprint, fp):
                results[i] = Result.from_stored(res.existing, already_indexed=True)
                decided.found.append(res.existing)
                continue
            if res.existing is not None:  # re-indexed with other content: its former cluster is decided again
                decided.departed.append(res.existing)
            todo.append(i)
        try:
            # Each document is decided against the index and the documents this batch decided before it: one
            # lookup in an index of the batch, where each sees only the documents before it (their candidates and
            # sentence counts)
            batch_decided: dict[str, StoredDoc] = {}  # the documents this batch decided so far
            members = todo
            if in_order and todo and decided.found:  # (looked up again without them: they are batch members)
                placed = {d.id: without_payload(d) for d in decided.found}
                found = self.index.lookup(queries, contract, exclude=[*being_written, *placed])
                batch_decided.update(placed)
                members = sorted(todo + [i for i, r in enumerate(results) if isinstance(r, Result)])
            batch = MemoryIndex(self.index.max_sentence_df, self.index.lookup_keys)
            batch.add([batch_decided.get(docs[i].id) or StoredDoc(docs[i].id, fps[i], docs[i].id) for i in members])
            place = {i: n for n, i in enumerate(members)}
            earlier = batch.lookup([queries[i] for i in todo], contract, before=[place[i] for i in todo])
            cap = self.index.max_sentence_df
            for i, before in zip(todo, earlier):
                doc, fp, res = docs[i], fps[i], found[i]
                # never a duplicate of a document decided relative to this one (possible after an interrupted write)
                candidates = [c for c in res.candidates
                              if c.id not in batch_decided and c.cluster != doc.id and c.duplicate_of != doc.id]
                counts = [res.sentence_df, before.sentence_df]
                if in_writing is not None:
                    other = in_writing[i]
                    candidates += [c for c in other.candidates if c.id not in batch_decided
                                   and c.cluster != doc.id and c.duplicate_of != doc.id]
                    counts.append(other.sentence_df)
                candidates += [batch_decided[c.id] for c in before.candidates]
                boilerplate, split = split_boilerplate(fp, counts, cap)
                if split:  # a part under the bound brought candidates through a hash that is over it in all parts
                    candidates = self._found_by_lookup(fp, candidates, boilerplate)
                stored = self._decide(doc, fp, candidates, boilerplate)
                self._note(decided, stored, candidates, boilerplate)
                batch_decided[doc.id] = without_payload(stored)  # (as an index keeps it: no text, no record)
                decided.to_store.append(stored)
                results[i] = Result.from_stored(stored)
        except BaseException:  # (a rule that raised, Ctrl-C: nothing of this batch was decided, so nothing seen)
            self.forget(decided)
            raise
        decided.results = cast("list[Result | DuplicateIdError | IndexingError]", results)  # (every slot is filled)
        if decided.mark is not None:
            decided.mine = mine_of(decided, being, mark)
        return decided

    def _note(self, decided: DecidedBatch, stored: StoredDoc, candidates: Sequence[StoredDoc],
              boilerplate: frozenset[int]) -> None:
        """What settling and the recheck need to know of the decision ``stored`` against ``candidates``: a
        canonical with long sentences that the :attr:`recheck_rule` would have made a duplicate of one of the same
        candidates (:attr:`DecidedBatch.far`); with a mark, its candidates, and whether one alone would have made
        it a duplicate (:attr:`DecidedBatch.apart`)."""
        if not candidates:
            return
        fp, canonical = stored.fingerprint, stored.duplicate_of is None
        if canonical and fp.sentences and self.recheck_rule is not self.rule \
                and (not self._far_only or cast(DefaultRule, self.recheck_rule).far_reachable(fp, candidates)) \
                and self.recheck_rule.decide(fp, candidates, boilerplate) is not None:
            decided.far.append(stored.id)
        if decided.mark is not None:
            decided.candidates[stored.id] = {c.id: c.arrival for c in candidates}
            if canonical and any(self.rule.decide(fp, [c]) is not None for c in candidates):
                decided.apart.append(stored.id)

    def _found_by_lookup(self, fp: Fingerprint, candidates: list[StoredDoc], boilerplate: Collection[int]
                         ) -> list[StoredDoc]:
        """The candidates one lookup against all of them would have returned (:func:`found_by_lookup`): a hash can
        be under the boilerplate bound in each part a lookup was split into, and over it in all of them together."""
        return found_by_lookup(fp, candidates, boilerplate, self.index.lookup_keys, self.rule.candidate_contract)

    def _arrival(self, candidates: Sequence[StoredDoc]) -> int:
        """Now (microseconds), but later than every candidate and every document this decider decided before: a
        document always arrives after what it was decided against, even across machines whose clocks differ."""
        now = max(time.time_ns() // 1000, self.last_arrival + 1)
        for c in candidates:
            if c.arrival >= now:
                now = c.arrival + 1
        self.last_arrival = now
        return now

    def _decide(
        self, doc: Document, fp: Fingerprint, candidates: Sequence[StoredDoc], boilerplate: frozenset[int]
    ) -> StoredDoc:
        """``doc`` decided against ``candidates`` (a canonical, or a duplicate of one), as it is to be stored."""
        decision = self.rule.decide(fp, candidates, boilerplate)
        arrival = self._arrival(candidates)
        if decision is None:
            reason = NO_FEATURES if fp.empty else CANONICAL
            return StoredDoc(doc.id, fp, cluster=doc.id, reason=reason, fields=doc.fields, text=doc.text,
                             arrival=arrival)
        return StoredDoc(
            doc.id,
            fp,
            cluster=decision.of.cluster,
            duplicate_of=decision.of.id,
            distance=decision.distance,
            reason=decision.reason,
            fields=doc.fields,
            text=doc.text,
            arrival=arrival,
        )
