"""The embedded backend: an in-memory index of lookup keys (no server), with save/load.

Every stored fingerprint has the keys of :mod:`es_simhash.lookup.keys` (by default 20 permutation-table keys of
32 bits). Rows live in *runs*: for each table a run holds its rows' keys sorted (``uint32``) with the row numbers
in the same order, and a direct-address directory over the keys' top bits (about one row per slot), so a batch
of lookups is a few vectorised gathers per run for all tables at once. New rows wait in a small unsorted *tail*
that lookups scan by brute force (a numpy popcount over at most ``tail_rows`` SimHashes); when the tail grows
past that it becomes a run, and runs of similar size are merged (as in a log-structured merge tree), so there
are O(log n) runs and each row is re-sorted O(log n) times in all.

A second channel maps sentence hashes to rows (a candidate holds as many of the query's long-sentence hashes, or
of its shingle-sketch and fuzzy hashes, as the lookup's :class:`~es_simhash.lookup.candidates.CandidateContract`
asks for), a third content hashes to the first row holding them. SimHash candidates are checked by exact Hamming
distance; replaced and removed documents keep their rows, never answered.

When the native core is installed (``es_simhash_native``), a batch's SimHash channel (the runs' key probes, the
tail scan, the distance and liveness tests) runs there (``memory_lookup``, on the index's own numpy buffers and
without the GIL), and so do the sentence postings (``SentencePostings``: one call per ``add``, one per lookup
batch). :class:`~es_simhash.index.memory.lookups.MemoryLookups` holds the numpy and dict-of-lists references,
with the same rows and document frequencies (``tests/test_memory_native.py``, ``tests/test_sentence_postings.py``).
``ES_SIMHASH_MEMORY_NATIVE=0`` turns both off.

:class:`~es_simhash.index.memory.index.MemoryIndex` owns its rows
(:class:`~es_simhash.index.memory.store.MemoryStore`) and delegates to them, to ``MemoryLookups``, to
``MemoryMaintenance`` and to :mod:`~es_simhash.index.memory.files`.
"""

from es_simhash.errors import IndexFileError
from es_simhash.index.memory.index import MemoryIndex

__all__ = ["MemoryIndex", "IndexFileError"]
