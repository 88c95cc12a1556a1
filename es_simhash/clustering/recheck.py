"""The recheck (:func:`recheck`): decisions taken again with what the whole index knows now, until they hold.

A document is decided when it arrives, against what is indexed then. The second post of a template (a site's
header and disclaimer around another text, a forum's share line) arrives when the template has been seen once:
its lines look like the first post's own, and the two are put in one cluster. Once more posts of the template are
indexed, the rule counts those lines as boilerplate (held by several clusters), and the decision no longer holds.
The recheck takes every such decision again (:func:`decide_again`): a near duplicate that matches no member of its
cluster any more leaves it (``split``: a canonical of its own; ``moved``: into the cluster it matches now) and the
documents that duplicate it follow it (``re-pointed``); a canonical joins an older document's cluster (``merged``)
only when it would have on arrival, as the index stands now, and the template rule keeps it there: every canonical
with long sentences is settled so (a run decides on arrival without the rule's far sentence bound,
``DefaultRule.on_arrival``, as a run without the recheck decides; the recheck applies it), or, in a run's recheck,
those its decisions on arrival call into question (``settles``:
:class:`~es_simhash.engine.decisions.FarMarks`, which says why no other can merge). Each change
can change a decision near it (a document that left its cluster is one more holder of the template's lines), so
the documents near every change are decided again, until nothing changes (:func:`until_settled`). A decision is
only taken back where the whole index shows it rested on a template; the recheck never makes the rule looser.
:func:`~es_simhash.clustering.repair` decides with the same steps."""

from __future__ import annotations

from typing import Any, Callable, Collection, Sequence

from es_simhash.defaults import MAX_WRITE_ATTEMPTS
from es_simhash.decide.rule import DecisionRule, has_sketch
from es_simhash.index.base import arrival_key, Lookup, MaintainedIndex
from es_simhash.records import StoredDoc
from es_simhash.errors import MaintenanceError
from es_simhash.clustering.dry_run import DryRun
from es_simhash.clustering.writes import RepairReport, Settled, Writer, as_canonical, as_member_of
from es_simhash.clustering.templates import all_matches, crowded_by_others, first_kept, stays
from es_simhash.clustering.settle import repoint, settle_canonicals


def _recheckable(d: StoredDoc) -> bool:
    """A near duplicate whose decision a template's hashes can have made: through shared sentence or sketch hashes,
    or by SimHash between texts that carry a sketch (the sketch support test). Exact copies and SimHash matches
    of longer texts are decided without them."""
    return d.duplicate_of is not None and d.cluster != d.id and (
        d.reason == "sentences" or (d.reason == "simhash" and has_sketch(d.fingerprint)))


def _has_sentences(d: StoredDoc) -> bool:
    """A document with a signature of long sentences: one a sentence match can reach (the far bound too)."""
    return bool(d.fingerprint.sentences)


def recheck_duplicates(index: MaintainedIndex, rule: DecisionRule, writer: Writer, docs: Sequence[StoredDoc]
                       ) -> list[str]:
    """Decide each near duplicate among ``docs`` (:func:`_recheckable`) again against the documents that arrived
    before it, with what the whole index knows of templates now (:func:`crowded_by_others`; the document counts
    of ``max_sentence_df`` are left as they were on arrival: a much-reprinted article's own copies make them grow):
    one that no longer matches any member of its cluster leaves it, for the cluster it matches now or as a
    canonical. Returns the ids rewritten."""
    dups = [d for d in docs if _recheckable(d)]
    if not dups:
        return []
    verdicts: dict[str, tuple[Any, tuple[int, int, str, str | None]]] = {}
    for d, res in zip(dups, index.lookup([Lookup(d.id, d.fingerprint) for d in dups], rule.candidate_contract)):
        if stays(rule, d, res.candidates):
            continue
        older = [c for c in res.candidates if arrival_key(c) < arrival_key(d)]
        found = all_matches(rule, d.fingerprint, older, crowded_by_others(rule, d, res.candidates))
        verdicts[d.id] = (first_kept(rule, d, found, res.candidates),
                          (d.arrival, d.fingerprint.content_hash, d.cluster, d.duplicate_of))

    def change(doc: StoredDoc) -> StoredDoc | None:
        decision, state = verdicts[doc.id]
        if (doc.arrival, doc.fingerprint.content_hash, doc.cluster, doc.duplicate_of) != state:
            return None  # (rewritten meanwhile: decided for another state)
        return as_canonical(doc) if decision is None else as_member_of(doc, decision, decision.of.cluster)

    split = writer.rewrite([i for i, (m, _) in verdicts.items() if m is None], change, "split")
    moved = writer.rewrite([i for i, (m, _) in verdicts.items() if m is not None], change, "moved")
    return [d.id for d in split + moved]


def decide_again(index: MaintainedIndex, rule: DecisionRule, writer: Writer, docs: Sequence[StoredDoc],
                 canonicals: Callable[[StoredDoc], bool] | None = lambda d: True) -> set[str]:
    """One step of the recheck on ``docs`` (as stored now): each canonical among them that ``canonicals`` picks
    (None: none) settled with what the whole index knows (:func:`~es_simhash.clustering.settle.settle_canonicals`,
    ``known``); each near duplicate decided again (:func:`recheck_duplicates`); whatever that moved re-pointed.
    Returns the ids of every document this step rewrote."""
    start = len(writer.settled.changes)
    settled = [d for d in docs if d.cluster == d.id and canonicals is not None and canonicals(d)]
    if settled:
        merged = settle_canonicals(index, rule, writer, settled, known=True)
        if merged:
            repoint(index, writer, merged, rule)
            docs = list(index.fetch(sorted(d.id for d in docs), whole=False).values())
    rechecked = recheck_duplicates(index, rule, writer, docs)
    if rechecked:
        repoint(index, writer, rechecked, rule)
    return {c.id for c in writer.settled.changes[start:]}


def until_settled(index: MaintainedIndex, rule: DecisionRule, writer: Writer, changed: Collection[str]) -> None:
    """Decide again the documents ``changed`` and every document near one of them (its lookup's candidates), and
    then those near what that changed, until nothing changes (:class:`MaintenanceError` after
    :data:`~es_simhash.defaults.MAX_WRITE_ATTEMPTS` rounds)."""
    changed = set(changed)
    for _ in range(MAX_WRITE_ATTEMPTS):
        if not changed:
            return
        now = list(index.fetch(sorted(changed), whole=False).values())
        near = set(changed)
        for res in index.lookup([Lookup(d.id, d.fingerprint) for d in now], rule.candidate_contract):
            near.update(c.id for c in res.candidates)
        changed = decide_again(index, rule, writer, list(index.fetch(sorted(near), whole=False).values()))
    raise MaintenanceError("decisions kept changing while being rechecked; run again")


def recheck(index: MaintainedIndex, rule: DecisionRule, dry_run: bool = False, after: str | None = None,
            page: int = 500, on_page: Callable[[RepairReport], None] | None = None, since: int | None = None,
            settles: Callable[[StoredDoc], bool] = _has_sentences) -> RepairReport:
    """Take the decisions of the index again with what the whole index knows now (see the module's text), page by
    page in id order from the first id after ``after``, until they hold. ``since``: only the documents that arrived
    then or later are rechecked, and what their changes lead to (what one run decided, when ``since`` is its start:
    ``es-simhash index`` rechecks so; ``None``: the whole index, as ``es-simhash dedup`` does). ``dry_run``: the
    same run, its writes kept in memory (:class:`~es_simhash.clustering.dry_run.DryRun`): what it would change, the
    index left as it is. ``on_page`` is called after each page (progress). ``settles``: the canonicals the pages
    settle (default: every one with long sentences; a run passes those its decisions on arrival call into question,
    :meth:`~es_simhash.engine.decisions.FarMarks.settles`); those near a change are settled in any case."""
    if dry_run:
        index = DryRun(index)
    report = RepairReport(last_id=after)
    settled = Settled()
    writer = Writer(index, settled)
    changed: set[str] = set()
    for docs in index.scan(page, after, since):
        # (a canonical with long sentences is settled: the run decided it on arrival without the far sentence bound,
        # DefaultRule.on_arrival; ``settles`` may leave out those the run knows the far bound does not merge; any
        # other is left as decided on arrival, unless a change near it calls it into question: see below)
        changed |= decide_again(index, rule, writer, docs, canonicals=settles)
        report.checked += len(docs)
        report.last_id = docs[-1].id
        report.changes = settled.changes
        if on_page is not None:
            on_page(report)
    until_settled(index, rule, writer, changed)
    report.changes = settled.changes
    return report
