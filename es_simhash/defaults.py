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

MAX_SENTENCE_DF = 50
"""A long sentence stored in more documents than this is a site's boilerplate: it stops bringing candidates (both
indexes)."""

RETRY_FOR = 300.0
"""Seconds an Elasticsearch request is retried for while the cluster is unavailable (429, 502-504, connection
errors) before the run stops with what it saved."""

DEAD_LETTERS = "dead-letters.jsonl"
"""``--dead-letters``: where records that cannot be indexed are written, each with its reason and line number."""

MIN_DF = 2
"""``fit-idf --min-df``: a word is kept in a fitted IDF table when at least this many documents hold it."""

MAX_WRITE_ATTEMPTS = 20
"""Times a conditional write (the engine's, or a cluster rewrite's) is tried again when it keeps meeting a newer
version another writer wrote, before the run stops with an error."""

MAX_SET_DOCUMENTS = 2_000_000
"""Documents an Elasticsearch index may hold for ``index`` (into a new index) and ``repair`` to decide them as a set
(the same clusters in any order): their fingerprints are held in memory meanwhile, about 2.5 KB each (5 GB at this
bound). A larger index is decided on arrival and rechecked, page by page."""
