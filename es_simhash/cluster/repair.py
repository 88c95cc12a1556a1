"""Repair (:func:`repair`): a scan of the whole index that puts right what a writer killed mid-settle left
(clusters naming missing canonicals, canonicals that duplicate an older document, malformed cluster fields)."""

from __future__ import annotations

from typing import Callable

from es_simhash.decide.rule import DecisionRule
from es_simhash.index.base import (MaintainedIndex, StoredDoc)
from es_simhash.cluster.writes import RepairReport, Settled, Writer, as_canonical
from es_simhash.cluster.recheck import recheck_one
from es_simhash.cluster.settle import redecide, repoint, settle_canonicals


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
    writer = Writer(index, settled, dry_run=dry_run)
    for docs in index.scan(page, after):
        ids = {d.id for d in docs}
        # pointers to missing documents: their clusters are decided again without them
        targets = {d.cluster for d in docs} | {d.duplicate_of for d in docs if d.duplicate_of}
        present = set(index.fetch(sorted(targets - ids), whole=False)) | ids
        gone = targets - present
        if gone:
            dangling = [d for d in docs if d.cluster in gone or d.duplicate_of in gone]
            roots = {d.cluster for d in dangling if d.cluster not in gone}
            redecide(index, rule, writer, roots, gone)
        bad = [d for d in docs if _malformed(d) and d.cluster not in gone and d.duplicate_of not in gone]
        if bad:
            # (flags that contradict each other say nothing to trust: a canonical again, decided just below against
            # the documents that arrived before it)
            writer.rewrite([d.id for d in bad], lambda d: as_canonical(d) if _malformed(d) else None, "re-decided")
        fresh = index.fetch(sorted(ids), whole=False) if not dry_run else {d.id: d for d in docs}
        merged = settle_canonicals(index, rule, writer, list(fresh.values()), known=True)
        repoint(index, writer, ids | set(merged), None if dry_run else rule)
        # near duplicates decided before their template was known (see recheck), as the page stands now
        now = index.fetch(sorted(ids), whole=False) if not dry_run else fresh
        rechecked = recheck_one(index, rule, writer, list(now.values()))
        if rechecked and not dry_run:
            repoint(index, writer, rechecked, rule)
        report.checked += len(docs)
        report.last_id = docs[-1].id
        report.changes = settled.changes
        if on_page is not None:
            on_page(report)
    report.changes = settled.changes
    return report
