"""Keeping clusters true in a living index: concurrent writers, updates, deletes, the recheck and repair.

It works on any :class:`~es_simhash.index.base.MaintainedIndex` (Elasticsearch, or the embedded
:class:`~es_simhash.index.memory.MemoryIndex`) and never knows which.

Modules: :mod:`~es_simhash.clustering.writes` (the conditional writer and what changed),
:mod:`~es_simhash.clustering.templates` (shared sentences), :mod:`~es_simhash.clustering.settle`,
:mod:`~es_simhash.clustering.delete`, :mod:`~es_simhash.clustering.recheck`, :mod:`~es_simhash.clustering.repair`.

**The consistency model.** A document's cluster is a pointer to its canonical (``cluster``; the canonical points
at itself) and ``duplicate_of`` names the document it was matched against. Every document has an *arrival*
(:func:`~es_simhash.index.base.arrival_key`: when it was decided, later than everything it was decided against,
then its id), and the clusters keep three rules:

1. a canonical is not a duplicate of any document that arrived before it (so two canonicals are never within the
   decision rule of each other, whoever wrote them);
2. every ``cluster`` names a canonical that exists, and every ``duplicate_of`` a document that exists;
3. a cluster's canonical arrived before its members, so a merge of two clusters always goes into the older
   canonical and pointers never form a cycle.

A writer decides a batch against what it can see, writes it, makes it visible, and then *settles* it
(:func:`settle`): each document of the batch is looked up again; a canonical is decided against the documents that
arrived before it, and one that now has a match (a document another writer wrote at the same time) joins that
match's cluster with its members; a newer canonical that matches any document of the batch (canonical or duplicate)
is settled the same way. Two writers that each decided one document of a pair both write before they look again, so
at least one of them sees the other's document, and whichever sees it settles the pair; a merge is a write too, so a
writer that merged looks again from the merged documents and decides again every newer canonical they lead to (one
decided while the merged document was a cluster of its own, by another writer or by this very settling a step before
the merge, is found then). Only documents with a candidate among those written by others since the batch was looked
up (the index's ``visible_mark``) can have missed one, so only they are looked up again. Every rewrite is
conditional on the version it read (a writer that meets a newer version reads again and decides again), and after
re-pointing documents a writer reads their canonical again (a canonical merged meanwhile is followed to its own
canonical). A writer killed at any point leaves documents that settling the same batch again (the re-run finds them
already indexed) or :func:`repair` puts right.

**Deletes and updates.** When a document leaves (deleted, or re-indexed with other content), the rest of its
cluster is decided again in arrival order, as a sequential run without it would have decided them: the earliest
remaining member becomes the canonical, and members no longer within the rule of anyone in the cluster are
decided afresh against the whole index (:func:`delete`, :func:`settle` ``departed``); and every newer canonical
that had it among its candidates is settled again (it may have been the second holder of a template's sentences
that kept that canonical apart). A writer writes each document only over the version it replaces (created if no
document has the id): a version another writer wrote meanwhile is found by the conflict and leaves its cluster
in turn (``DedupEngine._write``). A decision is taken again when what it was decided against changed before it
was written (:func:`settle` ``candidates``, ``apart``): a duplicate whose match is gone or is another version, a
document one of whose candidates was rewritten since the lookup, a canonical that one of its candidates alone would
have made a duplicate when one of its candidates is gone (a delete, which no read shows).
"""

from es_simhash.clustering.delete import delete, iter_ids
from es_simhash.clustering.recheck import recheck
from es_simhash.clustering.repair import repair
from es_simhash.clustering.settle import settle
from es_simhash.clustering.writes import Change, RepairReport, Settled
from es_simhash.errors import MaintenanceError

__all__ = ["settle", "delete", "iter_ids", "repair", "recheck", "Change", "Settled", "RepairReport", "MaintenanceError"]
