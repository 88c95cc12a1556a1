"""Repair (:func:`repair`): a scan of the whole index that puts right what a writer killed mid-settle or another
tool left (clusters naming missing canonicals, canonicals that duplicate an older document, malformed cluster
fields), and decides again with the recheck's steps what was decided before a template was known."""

from __future__ import annotations

from typing import Callable

from es_simhash.decide.rule import DecisionRule
from es_simhash.index.base import MaintainedIndex
from es_simhash.records import StoredDoc
from es_simhash.clustering.dry_run import DryRun
from es_simhash.clustering.writes import RepairReport, Settled, Writer, as_canonical
from es_simhash.clustering.recheck import decide_again, until_settled
from es_simhash.clustering.settle import redecide, repoint


def _malformed(d: StoredDoc) -> bool:
    """Flags that contradict each other: canonical (``duplicate_of`` empty) but in another cluster, or the reverse."""
    return (d.duplicate_of is None) != (d.cluster == d.id)


def repair(index: MaintainedIndex, rule: DecisionRule, dry_run: bool = False, after: str | None = None, page: int = 500,
           on_page: Callable[[RepairReport], None] | None = None) -> RepairReport:
    """Find and fix what killed runs or other tools left, page by page in id order (from the first id after
    ``after``): documents pointing at missing documents (their clusters decided again without them), contradictory
    flags, clusters whose canonical joined another cluster; then every document of the page decided again as the
    recheck decides (:func:`~es_simhash.clustering.recheck.decide_again`: canonicals that a sequential run would have
    made duplicates join their cluster, near duplicates decided before their template was known leave theirs),
    until nothing changes. An index that ``es-simhash index`` or ``dedup`` built with their defaults, left alone
    since, has nothing to repair. ``dry_run``: the same run, its writes kept in memory
    (:class:`~es_simhash.clustering.dry_run.DryRun`): what it would change, the index left as it is. ``on_page`` is
    called after each page (progress, checkpoints)."""
    if dry_run:
        index = DryRun(index)
    report = RepairReport(last_id=after)
    settled = Settled()
    writer = Writer(index, settled)
    changed: set[str] = set()
    for docs in index.scan(page, after):
        start = len(settled.changes)
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
        repoint(index, writer, ids, rule)
        decide_again(index, rule, writer, list(index.fetch(sorted(ids), whole=False).values()))
        changed |= {c.id for c in settled.changes[start:]}
        report.checked += len(docs)
        report.last_id = docs[-1].id
        report.changes = settled.changes
        if on_page is not None:
            on_page(report)
    until_settled(index, rule, writer, changed)
    report.changes = settled.changes
    return report
