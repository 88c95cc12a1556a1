"""The defaults that the command line shows and the library uses, in one room (standard library only: the
command line reads them before its heavy imports)."""

MAX_DISTANCE = 3
"""``-k``: the Hamming distance within which two long texts are near duplicates."""

BATCH_SIZE = 1_000
"""Documents per batch with an index no other process writes into (the embedded index)."""

SHARED_BATCH_SIZE = 2_000
"""Documents per batch with an index that shares writers (Elasticsearch): each batch costs such an index a refresh,
a visible mark, a settling and a few searches, whatever its size; with 2,000 instead of 500 the node spends a
quarter less CPU per document (``python bench/ingest.py --workload news --batch-size 500``, then without
``--batch-size``)."""
