"""The end of an embedded run with the recheck (``es-simhash dedup``, ``evaluate``): the final clusters decided again
in precedence order (:func:`precedence_run`), so that they are a function of the set of records, not of the order
they came in.

Decisions on arrival are taken against the documents that arrived before, so the order of the input shapes the
clusters: an original that arrives after two of its copies that do not match each other joins one copy's cluster and
leaves the other alone; a short excerpt that arrives first heads the cluster of its article's reprints. Once every
record is fingerprinted and indexed, this run decides every document of the index again, in one order that depends
on each document alone (:func:`~es_simhash.index.base.precedence_key`: the longest text first, then by content
hash, then by id): the engine's own decisions (:class:`~es_simhash.engine.dedup_engine.DedupEngine`, the rule on
arrival) in that order, then the recheck (:func:`~es_simhash.clustering.recheck`) with what the whole index shows
of templates. So the same records give the same clusters, with the same canonicals (each cluster's longest text),
whatever their order, batch size or number of workers. The summary, report and output are corrected to the final
clusters as the recheck corrects them (:class:`~es_simhash.pipeline.recheck.RecheckOutcome`)."""

from __future__ import annotations

from typing import Callable

from es_simhash.defaults import BATCH_SIZE
from es_simhash.engine.dedup_engine import DedupEngine
from es_simhash.index.base import precedence_key
from es_simhash.index.memory import MemoryIndex
from es_simhash.pipeline.recheck import RecheckOutcome, correct_summary
from es_simhash.pipeline.summary import Summary
from es_simhash.records import Document

__all__ = ["precedence_run"]


def precedence_run(engine: DedupEngine, summary: Summary, since: int,
                   on_page: Callable[[int, int], None] | None = None) -> RecheckOutcome:
    """Decide every document of ``engine``'s index (a :class:`MemoryIndex`) again in precedence order (see the
    module's text): the engine's rule and recheck rule, in batches of :data:`~es_simhash.defaults.BATCH_SIZE`,
    then the recheck. ``since``: when the run began (its documents are those that arrived then or later; the
    others that changed are counted in :attr:`Summary.rechecked_earlier`). Corrects ``summary``; returns what
    changed in the run's documents (for the report and the output). ``on_page(done, total)``: progress (the
    documents decided again; the total once the recheck is done)."""
    from es_simhash.clustering.recheck import recheck

    index = engine.index
    if not isinstance(index, MemoryIndex):
        raise TypeError(f"precedence_run: the engine's index is a {type(index).__name__}, not a MemoryIndex")
    before = {d.id: d for d in index.docs()}
    order = sorted(before.values(), key=precedence_key)
    total = len(order)
    index.clear()
    again = DedupEngine(index, engine.fingerprinter, engine.rule, batch_size=BATCH_SIZE,
                        recheck_rule=engine.recheck_rule)
    for start in range(0, len(order), BATCH_SIZE):
        part = order[start:start + BATCH_SIZE]
        again.process_batch([Document(d.id, "") for d in part], [d.fingerprint for d in part])
        if on_page is not None:
            on_page(start + len(part), total)
    recheck(index, again.recheck_rule, settles=again.far_marks.settles)
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
    if on_page is not None:
        on_page(total, total)
    return outcome
