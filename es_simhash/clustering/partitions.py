"""Dropping a partition of an index stored in partitions (:func:`drop_partition`): the oldest months of a crawl
that runs for years, deleted without leaving a pointer to a missing document."""

from __future__ import annotations

from es_simhash.decide.rule import DecisionRule
from es_simhash.errors import MaintenanceError
from es_simhash.index.base import PartitionedIndex
from es_simhash.clustering.delete import settle_departed
from es_simhash.clustering.recheck import until_settled
from es_simhash.clustering.settle import redecide, repoint
from es_simhash.clustering.writes import Settled, Writer


def drop_partition(index: PartitionedIndex, rule: DecisionRule, partition: str) -> tuple[int, Settled]:
    """Drop ``partition``: take it out of what ``index`` reads, decide again what its documents leave behind in
    the other partitions (the members of a cluster whose canonical it held keep together under the earliest
    remaining member; no document is left pointing at a dropped one: :func:`~es_simhash.clustering.delete.
    settle_departed`, as :func:`~es_simhash.clustering.delete` does for deleted documents), then delete it.
    Returns the number of documents dropped and the changes to the documents that remain. Interrupted, it leaves
    the partition taken out but not deleted, and the same call finishes it. The partition written into is
    refused, and so is a partition that documents of read-only partitions point into (:attr:`StoredDoc.final`:
    they could not be re-pointed, and would be left naming dropped documents): a :class:`MaintenanceError` naming
    how many and where, before anything is changed."""
    held = {d.id for d in index.partition_documents(partition)}
    stuck = [d for d in index.pointing_at(held) if d.final and d.id not in held]
    if stuck:
        raise MaintenanceError(
            f"{len(stuck):,} documents in read-only partitions point at documents of {partition!r} (e.g. "
            f"{stuck[0].id!r}): dropping it would leave them naming dropped documents; lift the write block of "
            "their partitions for the drop, or drop those partitions first")
    departed = index.detach_partition(partition)
    settled = Settled()
    if departed:
        settle_departed(index, rule, Writer(index, settled), departed)
    index.delete_partition(partition)
    index.record_partitions()
    return len(departed), settled


def settle_vanished(index: PartitionedIndex, rule: DecisionRule) -> tuple[list[str], Settled]:
    """Put right what partitions deleted by someone else left behind (a lifecycle policy's delete phase: their
    documents are gone before es-simhash hears of it, unlike :func:`drop_partition`): when a partition recorded
    last time is gone (:meth:`~es_simhash.index.base.PartitionedIndex.vanished_partitions`), every document naming
    a missing document in its ``cluster`` or ``duplicate_of`` (:meth:`~es_simhash.index.base.PartitionedIndex.
    dangling_targets`: one pass over the members' cluster fields) is decided again without the missing ones, as
    :func:`~es_simhash.clustering.repair` decides them: the members of a cluster whose canonical went keep together
    under the earliest remaining member. Then the partitions there are now are recorded. Returns the partitions
    found gone and the changes. ``es-simhash index`` into an alias calls it once every record is decided, before
    its recheck."""
    vanished = index.vanished_partitions()
    settled = Settled()
    if vanished:
        gone = index.dangling_targets()
        if gone:
            writer = Writer(index, settled)
            dangling = index.pointing_at(gone)
            roots = {d.cluster for d in dangling if d.cluster not in gone}
            redecide(index, rule, writer, roots, gone)
            repoint(index, writer, [d.id for d in dangling], rule)
            if rule.recheck:  # (what changed decided again as the recheck decides, as repair checks it)
                until_settled(index, rule, writer, {c.id for c in settled.changes})
    index.record_partitions()
    return vanished, settled
