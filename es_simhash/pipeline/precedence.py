"""Clusters that are a function of the set of records: every document decided in one order that depends on the
documents alone (:func:`decide_set`), each cluster headed by its first member in that order.

Decisions on arrival are taken against the documents that arrived before, so the order of the input shapes the
clusters: an original that arrives after two of its copies that do not match each other joins one copy's cluster and
leaves the other alone; a short excerpt that arrives first heads the cluster of its article's reprints. Here the
documents are decided in **precedence order** (:func:`~es_simhash.index.base.precedence_key`: by content hash, then
by id), by the engine's own decisions (:class:`~es_simhash.engine.dedup_engine.DedupEngine`, the rule on arrival),
then rechecked (:func:`~es_simhash.clustering.recheck`) with what the whole set shows of templates, and then each
document left alone joins the cluster of a later document it matches (:func:`join_the_alone`). Each cluster's
canonical is its first member in that order (leaving out the members that joined through a later one) and every
``duplicate_of`` a match the rule made. Exact copies (one content hash) that differ in their fingerprints (other
punctuation, other spacing) are decided as one: the first of them, in id order, that matches a document before them
is decided first, so the copies join the cluster any of them matches, whichever id each has. So the same records
give the same clusters, with the same canonicals, whatever their order, batch size or number of workers.

:func:`decide_run` is the end of an embedded run (``es-simhash dedup``, ``evaluate``), whose records were only
fingerprinted and held; :func:`set_run` the end of an ``es-simhash index`` run (with its recheck) into an index that
holds nothing but its documents: they are decided so in an embedded mirror of their fingerprints, and what that
changes is written back, so ``index`` gives ``dedup``'s clusters; :func:`repair_index` ends ``es-simhash repair``
with the whole index decided so (:func:`decide_index`), up to :data:`~es_simhash.defaults.MAX_SET_DOCUMENTS`."""

from __future__ import annotations

from dataclasses import replace
from itertools import groupby
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from es_simhash.clustering.repair import repair
from es_simhash.clustering.templates import matches_one_of
from es_simhash.clustering.writes import RepairReport, Settled, Writer, as_member_of
from es_simhash.decide.rule import DecisionRule
from es_simhash.lookup.candidates import boilerplate_of
from es_simhash.defaults import BATCH_SIZE, MAX_SET_DOCUMENTS
from es_simhash.decide.default import DefaultRule
from es_simhash.fingerprint.fingerprinter import Fingerprinter
from es_simhash.engine.decisions import same_fingerprint
from es_simhash.engine.dedup_engine import DedupEngine
from es_simhash.index.base import Lookup, MaintainedIndex, arrival_key, precedence_key, without_payload
from es_simhash.index.memory import MemoryIndex
from es_simhash.pipeline.checkpoint import Checkpoint
from es_simhash.pipeline.recheck import RecheckOutcome, correct_summary
from es_simhash.pipeline.summary import Summary
from es_simhash.records import Document, Result, StoredDoc

__all__ = ["decide_index", "repair_index", "decide_run", "decide_set", "decision_arrivals", "precedence_run",
           "in_precedence_order", "join_the_alone", "run_documents", "set_run"]


def in_precedence_order(engine: DedupEngine, docs: Sequence[StoredDoc]) -> Iterator[list[StoredDoc]]:
    """``docs`` cut into the batches :func:`decide_set` decides (in precedence order, at most
    :data:`~es_simhash.defaults.BATCH_SIZE` each). A group of exact copies whose fingerprints differ starts a batch
    of its own, its first member the first of them (in id order) that ``engine`` finds a duplicate of the documents
    decided before the group (its index holds those): the copies are decided as one, whichever id each has.
    ``engine``'s index must hold every batch yielded before the next one is asked for."""
    pending: list[StoredDoc] = []
    for _, group_iter in groupby(sorted(docs, key=precedence_key), key=lambda d: d.fingerprint.content_hash):
        group = list(group_iter)
        if len(group) > 1 and any(not same_fingerprint(group[0].fingerprint, d.fingerprint) for d in group[1:]):
            if pending:
                yield pending
                pending = []
            group = _first_that_matches(engine, group)
        pending.extend(group)
        while len(pending) >= BATCH_SIZE:
            yield pending[:BATCH_SIZE]
            pending = pending[BATCH_SIZE:]
    if pending:
        yield pending


def _first_that_matches(engine: DedupEngine, group: list[StoredDoc]) -> list[StoredDoc]:
    """``group`` (exact copies, in id order) with the first of them that ``engine`` finds a duplicate of what its
    index holds first (nothing is written)."""
    for n, d in enumerate(group):
        decided = engine.decider.decide_batch([Document(d.id, "")], [d.fingerprint])
        engine.decider.forget(decided)
        first = decided.results[0]
        if isinstance(first, Result) and first.duplicate:
            return [d, *group[:n], *group[n + 1:]]
    return group


def decide_set(engine: DedupEngine, docs: Sequence[StoredDoc],
               on_page: Callable[[int, int], None] | None = None,
               settles: Callable[[StoredDoc], bool] | None = None, *, recheck: bool = True,
               unrechecked: dict[str, StoredDoc] | None = None) -> None:
    """Decide ``docs`` (their fingerprints) into ``engine``'s index, which holds nothing yet, as the partition of
    the set (see the module's text): the engine's decisions in precedence order, then (unless ``recheck`` is false)
    the recheck with the engine's :attr:`~DedupEngine.recheck_rule` and :func:`join_the_alone`; each cluster is
    headed by its first member in the order decided (``engine``'s index gives the documents their arrivals in that
    order).
    ``on_page(done, total)``: the documents decided so far. ``settles``: the canonicals the recheck settles
    (default: those the engine's decisions call into question, :attr:`DedupEngine.far_marks`; see
    :func:`~es_simhash.clustering.recheck`). ``unrechecked``: filled with every document as the same decisions
    without the recheck leave it: what ``recheck=False`` gives, by id."""
    from es_simhash.clustering.recheck import recheck as recheck_index

    index = engine.index
    if not isinstance(index, MemoryIndex):
        raise TypeError(f"decide_set: the engine's index is a {type(index).__name__}, not a MemoryIndex")
    done, total = 0, len(docs)
    for part in in_precedence_order(engine, docs):
        engine.process_batch([Document(d.id, "") for d in part], [d.fingerprint for d in part])
        done += len(part)
        if on_page is not None:
            on_page(done, total)
    if recheck:
        if unrechecked is not None:
            unrechecked.update((d.id, d) for d in index.docs())
        recheck_index(index, engine.recheck_rule, settles=settles or engine.far_marks.settles)
        join_the_alone(index, engine.recheck_rule)


def join_the_alone(index: MemoryIndex, rule: DecisionRule) -> list[str]:
    """The last step of a set decision: each document left alone (a canonical without members) that matches a
    document decided after it joins that document's cluster, with what the other clusters show of templates set
    aside (:func:`~es_simhash.clustering.templates.matches_one_of`, the recheck's test), in precedence order. Each
    document was decided against those before it: two copies of an article that do not match each other, both
    before their original, head a cluster each, and the original joins one; here the other joins it too, through
    the original. Only a document alone joins (never a cluster into another: no chain of clusters), and only
    through a direct match. Returns the ids that joined."""
    docs = index.docs()
    members = {d.cluster for d in docs if d.cluster != d.id}
    alone = sorted((d for d in docs if d.cluster == d.id and d.id not in members), key=precedence_key)
    if not alone:
        return []
    cap = index.max_sentence_df
    cluster_now: dict[str, str] = {}  # (the clusters the alone joined, as this step goes)
    joined: list[StoredDoc] = []
    for d, res in zip(alone, index.lookup([Lookup(d.id, d.fingerprint) for d in alone], rule.candidate_contract)):
        key = precedence_key(d)
        if not any(precedence_key(c) > key for c in res.candidates):
            continue  # (d was decided against every candidate before it)
        candidates = res.candidates
        if cluster_now:
            candidates = [replace(c, cluster=cluster_now[c.id]) if c.id in cluster_now else c for c in candidates]
        others = [c for c in candidates if c.cluster != d.id]  # (all of them: the rule's veto of a whole cluster)
        boilerplate = boilerplate_of(d.fingerprint, res.sentence_df, cap)
        for decision in rule.matches(d.fingerprint, others, boilerplate):
            if precedence_key(decision.of) < key:
                continue  # (d was decided against it)
            cluster = decision.of.cluster
            view = [replace(c, cluster=cluster) if c.id == d.id else c for c in candidates]
            if matches_one_of(rule, replace(d, cluster=cluster), [decision.of], view):
                cluster_now[d.id] = cluster
                joined.append(as_member_of(d, decision, cluster))
                break
    if joined:
        into = {d.id: d for d in joined}
        Writer(index, Settled()).rewrite(into, lambda doc: replace(
            doc, cluster=into[doc.id].cluster, duplicate_of=into[doc.id].duplicate_of,
            distance=into[doc.id].distance, reason=into[doc.id].reason), "joined")
    return [d.id for d in joined]


def decide_run(engine: DedupEngine, summary: Summary, recheck: bool,
               on_page: Callable[[int, int], None] | None = None) -> dict[str, StoredDoc]:
    """The end of an embedded run whose documents were taken in without being decided
    (:meth:`DedupEngine.process_batches` with ``decide=False``: ``engine``'s :attr:`~DedupEngine.held`; the ids
    the run decides are its decider's :attr:`~es_simhash.engine.decisions.BatchDecider.seen`): every document of
    ``engine``'s index (a :class:`MemoryIndex`: those it held before the run too) and every held one decided as
    the partition of the set (:func:`decide_set`, with ``engine``'s fingerprinter and rules), with the recheck or
    not. Sets ``summary``'s counts of the run's documents: kept, duplicates and reasons as they are in the end,
    and with ``recheck`` what it changed against the same decisions without it (:attr:`Summary.rechecked`, as a
    run with ``--no-recheck`` reports them), and the documents indexed before the run whose cluster changed
    (:attr:`Summary.rechecked_earlier`). Returns every document of the index as decided, by id."""
    index = engine.index
    if not isinstance(index, MemoryIndex):
        raise TypeError(f"decide_run: the engine's index is a {type(index).__name__}, not a MemoryIndex")
    held = {d.id: d for d in engine.held}
    earlier = {d.id: d for d in index.docs() if d.id not in held}
    index.clear()
    again = DedupEngine(index, engine.fingerprinter, engine.rule, batch_size=BATCH_SIZE,
                        recheck_rule=engine.recheck_rule)
    unrechecked: dict[str, StoredDoc] = {}
    decide_set(again, [*earlier.values(), *held.values()], on_page, recheck=recheck, unrechecked=unrechecked)
    final = {d.id: d for d in index.docs()}
    without = unrechecked if recheck else final  # (what the same run with --no-recheck decides)
    ran = engine.decider.seen
    kept = duplicates = 0
    reasons: dict[str, int] = {}
    for i in ran:
        d = without[i]
        if d.is_canonical:
            kept += 1
        else:
            duplicates += 1
        reasons[d.reason] = reasons.get(d.reason, 0) + 1
    summary.kept, summary.duplicates, summary.reasons = kept, duplicates, reasons
    outcome = RecheckOutcome()
    if recheck:
        for i in ran:
            was, now = without[i], final[i]
            if (now.cluster, now.duplicate_of, now.reason) != (was.cluster, was.duplicate_of, was.reason):
                outcome.before[i], outcome.after[i] = (was.cluster, was.duplicate_of, was.reason), now
    changed = sum((final[i].cluster, final[i].duplicate_of, final[i].reason) != (d.cluster, d.duplicate_of, d.reason)
                  for i, d in earlier.items() if i not in ran)
    correct_summary(summary, outcome, changed)
    return final


def precedence_run(engine: DedupEngine, summary: Summary, since: int,
                   on_page: Callable[[int, int], None] | None = None) -> RecheckOutcome:
    """Decide every document of ``engine``'s index (a :class:`MemoryIndex`) again as the partition of the set
    (:func:`decide_set`, with ``engine``'s fingerprinter and rules). ``since``: when the run began (its documents
    are those that arrived then or later; the others that changed are counted in
    :attr:`Summary.rechecked_earlier`). Corrects ``summary``; returns what changed in the run's documents (for the
    report and the output). ``on_page(done, total)``: progress."""
    index = engine.index
    if not isinstance(index, MemoryIndex):
        raise TypeError(f"precedence_run: the engine's index is a {type(index).__name__}, not a MemoryIndex")
    before = {d.id: d for d in index.docs()}
    index.clear()
    again = DedupEngine(index, engine.fingerprinter, engine.rule, batch_size=BATCH_SIZE,
                        recheck_rule=engine.recheck_rule)
    decide_set(again, list(before.values()), on_page)
    outcome = RecheckOutcome()
    earlier = 0
    for doc in index.docs():
        was = before[doc.id]
        if (doc.cluster, doc.duplicate_of, doc.reason) == (was.cluster, was.duplicate_of, was.reason):
            continue
        if was.arrival < since:
            earlier += 1
            continue
        outcome.before[doc.id], outcome.after[doc.id] = (was.cluster, was.duplicate_of, was.reason), doc
    correct_summary(summary, outcome, earlier)
    return outcome


def run_documents(engine: DedupEngine, since: int, decided: int) -> list[StoredDoc] | None:
    """The documents of ``engine``'s index (fingerprints, no payloads) when it holds nothing but the documents of the
    run that began at ``since`` and decided ``decided`` records (over the runs it resumed too: kept and duplicates);
    else None. The run's documents: those that arrived then or later, and those it found already indexed (the same
    input again, :attr:`~es_simhash.engine.decisions.BatchDecider.seen`). An index holding more documents than the
    run decided holds another writer's (one that ran, or runs now, at the same time) or earlier ones: the run's
    documents are no set of their own. None too over :data:`~es_simhash.defaults.MAX_SET_DOCUMENTS` documents."""
    index = engine.maintained()
    if len(index) > min(decided, MAX_SET_DOCUMENTS):
        return None
    seen = engine.decider.seen
    docs = [without_payload(d) for page in index.scan(1000) for d in page]
    return docs if all(d.arrival >= since or d.id in seen for d in docs) else None


def _duplicates_after(docs: Sequence[StoredDoc]) -> list[StoredDoc]:
    """``docs`` (in the order decided) with each document that comes before the one it duplicates (one that joined
    a later document's cluster, :func:`join_the_alone`) moved to just after it."""
    out: list[StoredDoc] = []
    placed: set[str] = set()
    waiting: dict[str, list[StoredDoc]] = {}
    for doc in docs:
        if doc.duplicate_of is not None and doc.duplicate_of not in placed:
            waiting.setdefault(doc.duplicate_of, []).append(doc)
            continue
        stack = [doc]
        while stack:
            d = stack.pop()
            out.append(d)
            placed.add(d.id)
            stack.extend(reversed(waiting.pop(d.id, [])))
    out.extend(d for ds in waiting.values() for d in ds)  # (pointing at no document here: as they came)
    return out


def decision_arrivals(decided: Iterable[StoredDoc], arrivals: Iterable[int]) -> dict[str, int]:
    """Arrivals for the documents ``decided`` (as a set, in an embedded index that gave them their arrivals in the
    order it decided them) taken from ``arrivals`` (theirs in the index they are written to), by id: the smallest
    to the first decided, and so on, each at least one more than the one before (so no two are equal and the
    arrival order, :func:`~es_simhash.index.base.arrival_key`, is the decision order), every document after the one
    it duplicates."""
    out: dict[str, int] = {}
    last: int | None = None
    for d, a in zip(_duplicates_after(sorted(decided, key=arrival_key)), sorted(arrivals)):
        last = a if last is None or a > last else last + 1
        out[d.id] = last
    return out


def set_run(engine: DedupEngine, summary: Summary, since: int, docs: Sequence[StoredDoc],
            checkpoint: Checkpoint | None = None, on_page: Callable[[int, int], None] | None = None
            ) -> RecheckOutcome:
    """Decide ``docs`` (:func:`run_documents`: the documents of ``engine``'s index, which holds nothing but those of
    the run that began at ``since``) as a set (:func:`decide_set`) in an embedded mirror of their fingerprints, with
    ``engine``'s fingerprinter and rules, and write back to ``engine``'s index the documents whose cluster fields
    change (:class:`~es_simhash.clustering.writes.Writer`: ``decided again``; a document rewritten meanwhile by
    another writer is left as it is). The run's documents are given their arrivals again in the order the set was
    decided in (:func:`decision_arrivals`), so the rules that decide by arrival (``repair``, ``delete``, settling)
    take them in the very order the set run took them and find each cluster as its decisions left it. Corrects
    ``summary``; returns what changed in the run's documents (for the report and the output). With a
    ``checkpoint``, the state of every document to be written is saved before the writes
    (:attr:`Checkpoint.rechecked`): a run resumed after an interruption decides the set again (the same decisions)
    and corrects with what the documents were before the first writes."""
    index = engine.maintained()
    if checkpoint is not None and checkpoint.rechecked is None:
        checkpoint.rechecked = {}
        checkpoint.save(summary)
    was, final = _decided_in_mirror(index, docs, engine.fingerprinter, engine.rule, engine.recheck_rule, on_page)
    wanted, change, arrival = _rewrites(was, final)
    before = {i: (was[i].cluster, was[i].duplicate_of, was[i].reason) for i in wanted}
    if checkpoint is not None:
        saved = checkpoint.rechecked or {}
        before.update((i, (c, d, r)) for i, (c, d, r) in saved.items())
        checkpoint.rechecked = {i: list(v) for i, v in before.items()}
        checkpoint.save(summary)

    Writer(index, Settled()).rewrite(wanted, change, "decided again")
    outcome = RecheckOutcome()
    for i, state in before.items():
        doc = final.get(i)
        if doc is not None and (doc.cluster, doc.duplicate_of, doc.reason) != state:
            outcome.before[i], outcome.after[i] = state, replace(doc, arrival=arrival[i])
    correct_summary(summary, outcome, 0)
    return outcome


def _decided_in_mirror(index: MaintainedIndex, docs: Sequence[StoredDoc], fingerprinter: Fingerprinter,
                       rule: DecisionRule, recheck_rule: DecisionRule,
                       on_page: Callable[[int, int], None] | None) -> tuple[dict[str, StoredDoc], dict[str, StoredDoc]]:
    """``docs`` (read from ``index``) decided as a set (:func:`decide_set`) in an embedded mirror with ``index``'s
    sentence bound and lookup keys: ``(was, final)``, each by id, as read and as decided."""
    mirror_index = MemoryIndex(index.max_sentence_df, index.lookup_keys)
    mirror = DedupEngine(mirror_index, fingerprinter, rule, batch_size=BATCH_SIZE, recheck_rule=recheck_rule)
    decide_set(mirror, docs, on_page)
    return {d.id: d for d in docs}, {d.id: d for d in mirror_index.docs()}


def _rewrites(was: Mapping[str, StoredDoc], final: Mapping[str, StoredDoc]
              ) -> tuple[list[str], Callable[[StoredDoc], StoredDoc | None], dict[str, int]]:
    """What writing back the documents ``final`` (decided as a set in an embedded mirror) over ``was`` (as they
    were read from the index) takes: the ids whose cluster fields or arrival change, the change to apply to each as
    fetched (None for a document rewritten meanwhile by another writer: it is left as it is), and the arrivals in
    decision order (:func:`decision_arrivals`). A document that can no longer be written (:attr:`StoredDoc.final`)
    keeps its state, and the others are decided around it (:func:`_around_final`)."""
    final = _around_final(was, final)
    arrival = decision_arrivals(final.values(), [d.arrival for d in was.values()])
    wanted = [i for i, d in final.items() if (d.cluster, d.duplicate_of, d.distance, d.reason, arrival[i]) != (
        was[i].cluster, was[i].duplicate_of, was[i].distance, was[i].reason, was[i].arrival)]

    def change(doc: StoredDoc) -> StoredDoc | None:
        old, new = was[doc.id], final[doc.id]
        if (doc.arrival, doc.cluster, doc.duplicate_of) != (old.arrival, old.cluster, old.duplicate_of):
            return None  # (rewritten meanwhile)
        return replace(doc, cluster=new.cluster, duplicate_of=new.duplicate_of, distance=new.distance,
                       reason=new.reason, arrival=arrival[doc.id])

    return wanted, change, arrival


def _around_final(was: Mapping[str, StoredDoc], final: Mapping[str, StoredDoc]) -> Mapping[str, StoredDoc]:
    """``final`` with each document that can no longer be written (:attr:`StoredDoc.final`: in a read-only
    partition) as it was, and so the canonical its cluster names (its final members could not follow it into
    another cluster), and every other document's cluster the canonical its cluster leads to then: a document the
    set made a canonical but that stays a member hands its members to its own cluster; one that stays a canonical
    keeps the members it has."""
    kept = {i for i, d in was.items() if d.final}
    if not kept:
        return final
    todo = list(kept)
    while todo:  # (and the cluster each kept document names, and so on)
        c = was[todo.pop()].cluster
        if c in was and c not in kept:
            kept.add(c)
            todo.append(c)
    out = dict(final)
    out.update((i, was[i]) for i in kept)
    for i, d in out.items():
        if i in kept:
            continue
        c, steps = d.cluster, 0
        while c in out and out[c].cluster != c and steps < 64:
            c, steps = out[c].cluster, steps + 1
        if c != d.cluster:
            out[i] = replace(d, cluster=c)
    return out


def decide_index(index: MaintainedIndex, rule: DefaultRule, writer: Writer,
                 on_page: Callable[[int, int], None] | None = None) -> bool:
    """Decide every document of ``index`` again as a set (:func:`decide_set`, with ``rule``: the decisions
    without its far sentence bound, then the recheck with it) in an embedded mirror of their fingerprints, and write
    back through ``writer`` the documents whose cluster changes (``decided again``; their arrivals rewritten into
    the order decided, unreported). The last step of ``es-simhash repair``: an index fed the same documents in any
    order, by any number of writers, ends with the clusters ``dedup`` gives them. Does nothing and returns False
    when ``index`` holds more than :data:`~es_simhash.defaults.MAX_SET_DOCUMENTS` documents (too many to hold)."""
    if len(index) > MAX_SET_DOCUMENTS:
        return False
    _decide_all(index, rule, writer, on_page)
    return True


def _decide_all(index: MaintainedIndex, rule: DefaultRule, writer: Writer,
                on_page: Callable[[int, int], None] | None) -> None:
    """:func:`decide_index` of an index already known to be within the bound."""
    docs = [without_payload(d) for page in index.scan(1000) for d in page]
    was, final = _decided_in_mirror(index, docs, Fingerprinter(), rule.on_arrival(), rule, on_page)
    wanted, change, _ = _rewrites(was, final)
    moved = [i for i in wanted if (final[i].cluster, final[i].duplicate_of) != (was[i].cluster, was[i].duplicate_of)]
    writer.rewrite(moved, change, "decided again")
    Writer(writer.index, Settled()).rewrite(sorted(set(wanted) - set(moved)), change, "decided again")


def repair_index(index: MaintainedIndex, rule: DefaultRule, dry_run: bool = False, after: str | None = None,
                 on_page: Callable[[RepairReport], None] | None = None,
                 on_set: Callable[[int, int], None] | None = None) -> RepairReport:
    """``es-simhash repair``: :func:`~es_simhash.clustering.repair` (what killed runs or other tools left, and the
    decisions taken before a template was known, page by page), then the whole index decided again as a set
    (:func:`decide_index`, up to :data:`~es_simhash.defaults.MAX_SET_DOCUMENTS` documents): the same documents,
    whatever order and writers brought them, end with the same clusters, ``dedup``'s. ``dry_run``: what it would
    change, nothing written. ``on_page``: after each page of the scan; ``on_set(done, total)``: the documents
    decided as a set so far. Raises :class:`~es_simhash.clustering.RepairInterrupted` on an interrupt. When the
    set step runs, the pages only fix what is broken and the set takes every decision (a page's recheck alone can
    split a document the set joins again: an index ``dedup`` or ``index`` built has nothing to repair); an index
    over the bound has its decisions taken again page by page (the bound is read once: the pages and the last step
    agree on which kind of repair this is)."""
    as_set = len(index) <= MAX_SET_DOCUMENTS
    return repair(index, rule, dry_run=dry_run, after=after, on_page=on_page,
                  then=(lambda where, writer: _decide_all(where, rule, writer, on_set)) if as_set else None,
                  decide=not as_set)
