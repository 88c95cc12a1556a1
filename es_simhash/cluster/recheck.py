"""The recheck (:func:`recheck`): every near duplicate decided again against its cluster's members as they are
now, split off or moved when it no longer matches (chains of near duplicates drift)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from es_simhash.decide.rule import DecisionRule, has_sketch
from es_simhash.index.base import (Lookup, MaintainedIndex, StoredDoc, arrival_key)
from es_simhash.errors import MaintenanceError
from es_simhash.cluster.writes import MAX_ATTEMPTS, RepairReport, Settled, Writer, as_canonical, as_member_of
from es_simhash.cluster.templates import all_matches, crowded_by_others, first_kept, stays
from es_simhash.cluster.settle import repoint


def _recheckable(d: StoredDoc) -> bool:
    """A near duplicate whose decision a template's hashes can have made: through shared sentence or sketch hashes,
    or by SimHash between texts that carry a sketch (the sketch support test). Exact copies and SimHash matches
    of longer texts are decided without them."""
    return d.duplicate_of is not None and d.cluster != d.id and (
        d.reason == "sentences" or (d.reason == "simhash" and has_sketch(d.fingerprint)))


def recheck_one(index: MaintainedIndex, rule: DecisionRule, writer: Writer, docs: Sequence[StoredDoc]) -> list[str]:
    """Decide each near duplicate among ``docs`` (:func:`_recheckable`) again against the documents that arrived
    before it, with what the whole index knows of templates now (:func:`crowded_by_others`; the document counts
    of ``max_sentence_df`` are left as they were on arrival: a much-reprinted article's own copies make them grow):
    one that no longer matches any member of its cluster leaves it, for the cluster it matches now or as a
    canonical. Returns the ids rewritten."""
    dups = [d for d in docs if _recheckable(d)]
    if not dups:
        return []
    verdicts: dict[str, tuple[Any, tuple[int, int, str, str | None]]] = {}
    for d, res in zip(dups, index.lookup([Lookup(d.id, d.fingerprint) for d in dups], rule.candidate_distance)):
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
    writer = Writer(index, settled, dry_run=dry_run)
    changed: set[str] = set()
    for docs in index.scan(page, after):
        rechecked = recheck_one(index, rule, writer, docs)
        if rechecked and not dry_run:
            repoint(index, writer, rechecked, rule)
        changed.update(rechecked)
        report.checked += len(docs)
        report.last_id = docs[-1].id
        report.changes = settled.changes
        if on_page is not None:
            on_page(report)
    # a document that left its cluster is one more holder for the documents that share hashes with it
    for _ in range(MAX_ATTEMPTS):
        if not (changed and repeat and not dry_run):
            break
        left = list(index.fetch(sorted(changed), whole=False).values())
        near: set[str] = set()
        for res in index.lookup([Lookup(d.id, d.fingerprint) for d in left], rule.candidate_distance):
            near.update(c.id for c in res.candidates if _recheckable(c))
        changed = set(recheck_one(index, rule, writer, list(index.fetch(sorted(near), whole=False).values())))
        if changed:
            repoint(index, writer, changed, rule)
    else:
        raise MaintenanceError("decisions kept changing while being rechecked; run again")
    report.changes = settled.changes
    return report
