"""The embedded backend, one class: :class:`MemoryIndex`."""

from __future__ import annotations

from es_simhash.index.memory.files import MemoryFiles
from es_simhash.index.memory.lookups import MemoryLookups
from es_simhash.index.memory.maintenance import MemoryMaintenance


class MemoryIndex(MemoryLookups, MemoryMaintenance, MemoryFiles):
    """In-memory :class:`~es_simhash.index.base.MaintainedIndex`: ``MemoryIndex(max_sentence_df=50,
    lookup_keys=DEFAULT)``.

    ``max_sentence_df``: a sentence hash held by more documents than this is boilerplate (site footers,
    disclaimers) and no longer brings candidates. ``lookup_keys``: which keys bring SimHash candidates
    (:data:`es_simhash.lookup.keys.DEFAULT`: 20 permutation tables for k = 3).

    Its parts, one module each: :class:`~es_simhash.index.memory.store.MemoryStore` (the rows and how they are
    added), :class:`~es_simhash.index.memory.lookups.MemoryLookups`,
    :class:`~es_simhash.index.memory.maintenance.MemoryMaintenance` and
    :class:`~es_simhash.index.memory.files.MemoryFiles` (save and load); the runs are
    :mod:`~es_simhash.index.memory.runs`.
    """

    shared_writers = False
    """Only this process writes into it: batches need no settling after their write (:mod:`es_simhash.clustering`)."""
    overlapping_writes = False
    """A write is done when ``add`` returns: nothing to overlap with the next lookup."""
