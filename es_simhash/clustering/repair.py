"""Repair (:func:`repair`): a scan of the whole index that puts right what a writer killed mid-settle or another
tool left (clusters naming missing canonicals, canonicals that duplicate an older document, malformed cluster
fields), and decides again with the recheck's steps what was decided before a template was known."""

from __future__ import annotations

from typing import Callable

from es_simhash.decide.rule import DecisionRule
from es_simhash.errors import EsSimhashError
from es_simhash.index.base import MaintainedIndex
from es_simhash.records import StoredDoc
from es_simhash.clustering.dry_run import DryRun
from es_simhash.clustering.writes import RepairReport, Settled, Writer, as_canonical
from es_simhash.clustering.recheck import decide_again, until_settled
from es_simhash.clustering.settle import redecide, repoint


class RepairInterrupted(EsSimhashError):
    """A :func:`repair` stopped by an interrupt (Ctrl-C). ``report``: what it checked (``checked`` documents, whole
    pages, up to ``last_id``) and changed until then (in a dry run: what it would change in those pages; nothing was
    written);
    ``dry_run``; ``settling``: every document was checked, and it was deciding again what the changes lead to.

    A repair started after an id checks nothing before it, and a dry run writes nothing: going on after
    ``last_id`` finishes an interrupted repair, or an interrupted dry run (reporting the rest), but after a dry
    run the real repair must still check the whole index."""

    def __init__(self, report: RepairReport, dry_run: bool, settling: bool) -> None:
        self.report, self.dry_run, self.settling = report, dry_run, settling
        super().__init__(self.describe(f"repair again after {report.last_id!r} to go on",
                                       "repair again", "repair without dry_run, from the first document"))

    @property
    def can_go_on(self) -> bool:
        """Whether going on after ``report.last_id`` finishes the run (False: nothing was checked yet, or every
        document was, and the run must be made again)."""
        return self.report.last_id is not None and not self.settling

    def describe(self, go_on: str, again: str, real: str) -> str:
        """What the run did, in one line ending in what to do: ``go_on``, the same run after ``report.last_id``
        (when :attr:`can_go_on`), else ``again``, the same run once more; after a dry run, ``real``: the repair
        that fixes the index, from the top."""
        r = self.report
        found = ", ".join(f"{n:,} {why}" for why, n in sorted(r.counts().items()))
        where = (f"after checking all {r.checked:,} documents, while deciding again what the changes lead to"
                 if self.settling else f"after checking {r.checked:,} documents")
        then = go_on if self.can_go_on else again
        if self.dry_run:
            so_far = f"so far it would change {found}" if found else "nothing to fix so far"
            return (f"dry run interrupted {where}: nothing was changed ({so_far}); {then}; a real repair must start "
                    f"from the top, as the dry run fixed nothing: {real}")
        return f"interrupted {where}: {f'changed {found}' if found else 'nothing changed'}; {then}"


def _malformed(d: StoredDoc) -> bool:
    """Flags that contradict each other: canonical (``duplicate_of`` empty) but in another cluster, or the reverse."""
    return (d.duplicate_of is None) != (d.cluster == d.id)


def repair(index: MaintainedIndex, rule: DecisionRule, dry_run: bool = False, after: str | None = None, page: int = 500,
           on_page: Callable[[RepairReport], None] | None = None,
           then: Callable[[MaintainedIndex, Writer], object] | None = None, decide: bool = True) -> RepairReport:
    """Find and fix what killed runs or other tools left, page by page in id order (from the first id after
    ``after``): documents pointing at missing documents (their clusters decided again without them), contradictory
    flags, clusters whose canonical joined another cluster; then every document of the page decided again as the
    recheck decides (:func:`~es_simhash.clustering.recheck.decide_again`: canonicals that a sequential run would have
    made duplicates join their cluster, near duplicates decided before their template was known leave theirs),
    until nothing changes. ``es-simhash repair`` is this with the whole index decided again as a set at the end
    (:func:`~es_simhash.pipeline.repair_index`): an index that ``es-simhash index`` or ``dedup`` built with their
    defaults, left alone since, has nothing to repair there. ``dry_run``: the same run, its writes kept in memory
    (:class:`~es_simhash.clustering.dry_run.DryRun`): what it would change, the index left as it is. ``on_page`` is
    called after each page (progress, checkpoints). ``then(index, writer)``: a last step over the whole index, once
    every page is checked and settled, its writes through ``writer`` counted as the repair's (``es-simhash repair``
    decides the whole index again as a set there: :func:`~es_simhash.pipeline.precedence.decide_index`).
    ``decide=False``: the pages get only the fixes of what is broken (missing documents, contradictory flags,
    canonicals that joined another cluster), their decisions are not taken again: for a ``then`` that decides every
    document again, whose decisions would replace the pages' (a page's recheck may split what the set decision then
    joins again: two writes, and a dry run listing changes that undo each other). An
    interrupt (Ctrl-C) raises :class:`RepairInterrupted`, with what was checked and changed until then."""
    if dry_run:
        index = DryRun(index)
    report = RepairReport(last_id=after)
    settled = Settled()
    writer = Writer(index, settled)
    changed: set[str] = set()
    settling = False
    whole = 0  # (the changes of the pages checked whole)
    try:
        for docs in index.scan(page, after):
            _repair_page(index, rule, writer, docs, changed, decide)
            report.checked += len(docs)
            report.last_id = docs[-1].id
            report.changes = settled.changes
            whole = len(settled.changes)
            if on_page is not None:
                on_page(report)
        settling = True
        if decide:
            until_settled(index, rule, writer, changed)
        if then is not None:
            then(index, writer)
    except KeyboardInterrupt:
        # a repair reports every change it wrote; a dry run, those of the pages it checked whole: a page it was
        # checking is checked again by the run that goes on after ``last_id``, and its changes so far may not be
        # what the whole page gives
        report.changes = settled.changes[:whole] if dry_run else settled.changes
        raise RepairInterrupted(report, dry_run, settling) from None
    report.changes = settled.changes
    return report


def _repair_page(index: MaintainedIndex, rule: DecisionRule, writer: Writer, docs: list[StoredDoc],
                 changed: set[str], decide: bool) -> None:
    """One page of :func:`repair`; the ids it changes are added to ``changed``. ``decide``: the page's decisions
    are taken again too (:func:`~es_simhash.clustering.recheck.decide_again`)."""
    settled = writer.settled
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
    if decide:
        decide_again(index, rule, writer, list(index.fetch(sorted(ids), whole=False).values()))
    changed |= {c.id for c in settled.changes[start:]}
