"""Keeping clusters true in a living index: concurrent writers, updates, deletes, the recheck and repair.

It works on any :class:`~es_simhash.index.base.MaintainedIndex` (Elasticsearch, or the embedded
:class:`~es_simhash.index.memory.MemoryIndex`) and never knows which. The rules it keeps are three: a canonical is
not a duplicate of any document that arrived before it; every ``cluster`` and ``duplicate_of`` names a document that
exists; a cluster's canonical arrived before its members (so merges go into the older canonical and pointers never
form a cycle). How writers keep them (decide, write, make visible, :func:`settle`; conditional rewrites; deletes and
updates decided again in arrival order): docs/how-it-works.md, "The consistency model of concurrent writers".

Modules: :mod:`~es_simhash.clustering.writes` (the conditional writer and what changed),
:mod:`~es_simhash.clustering.templates` (shared sentences), :mod:`~es_simhash.clustering.settle`,
:mod:`~es_simhash.clustering.delete`, :mod:`~es_simhash.clustering.partitions` (dropping a partition),
:mod:`~es_simhash.clustering.recheck`, :mod:`~es_simhash.clustering.repair`.
"""

from es_simhash.clustering.delete import delete, iter_ids
from es_simhash.clustering.partitions import drop_partition, settle_vanished
from es_simhash.clustering.recheck import recheck
from es_simhash.clustering.repair import RepairInterrupted, repair
from es_simhash.clustering.settle import settle
from es_simhash.clustering.writes import Change, RepairReport, Settled
from es_simhash.errors import MaintenanceError

__all__ = ["settle", "delete", "drop_partition", "settle_vanished", "iter_ids", "repair", "recheck",
           "RepairInterrupted", "Change", "Settled", "RepairReport", "MaintenanceError"]
