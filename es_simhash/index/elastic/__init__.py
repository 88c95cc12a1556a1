"""The Elasticsearch backend: documents with their fingerprint, lookup keys, segments and duplicate cluster.

A batch of lookups is **one search** (an index with segments only: one search per document in an ``_msearch``),
a ``bool``/``should`` over the batch's ids and content hashes; the permutation-table ``lookup_keys`` of their
SimHashes (re-ranked here by exact Hamming distance); their long-sentence hashes (the hits give each hash's
document frequency: boilerplate sentences, in more than ``max_sentence_df`` documents, bring no candidates); and
per short text its shingle-sketch hashes with ``minimum_should_match: 2``, after a search on the same point in
time that counts each sketch hash's holders from the postings (a ``filters`` aggregation), so boilerplate and
unheld hashes are left out. A search that comes back full is split, down to single documents read to the end with
``search_after`` (up to ``max_candidates``, past which the lookup is marked truncated and a warning is logged):
the answers are exactly the embedded index's.

Only ``term``/``terms``/``ids``/``bool`` clauses and ``terms``/``filter``/``filters`` aggregations are used: no
scripts and no ``query_string``, so user text never becomes query syntax. Writes go through
``helpers.streaming_bulk`` (chunked, retried with backoff on 429) and are refreshed before the next lookup.

Modules: :mod:`~es_simhash.index.elastic.connection` (settings, client), :mod:`~es_simhash.index.elastic.errors`
(one-line messages, retry policy), :mod:`~es_simhash.index.elastic.schema` (template, fields),
:mod:`~es_simhash.index.elastic.codec` (documents to and from Elasticsearch), :mod:`~es_simhash.index.elastic.admin`
(create, check, aliases, partitions rolled over behind an alias) and :mod:`~es_simhash.index.elastic.index` (:class:`ElasticIndex`), which delegates to
its collaborators: :mod:`~es_simhash.index.elastic.handle` (client, requests, refreshes),
:mod:`~es_simhash.index.elastic.planner` (lookups), :mod:`~es_simhash.index.elastic.writes` and
:mod:`~es_simhash.index.elastic.reads` (for maintenance).
"""

from es_simhash.errors import ElasticError, IndexNotManaged, InvalidSetting, InvalidURL
from es_simhash.index.elastic.admin import (
                                            check_index_config,
                                            ensure_index,
                                            ensure_partitioned,
                                            index_exists,
                                            install_partition_template,
                                            partition_template_name,
                                            read_lookup_keys,
                                            require_index,
                                            roll_over,
                                            switch_alias,
                                            validate_index_name,
)
from es_simhash.index.elastic.connection import ConnectionSettings, check_url, connect, server_version
from es_simhash.index.elastic.errors import elastic_errors
from es_simhash.index.elastic.index import ElasticIndex
from es_simhash.index.elastic.schema import index_template

__all__ = [
    "ElasticIndex",
    "ElasticError",
    "IndexNotManaged",
    "InvalidSetting",
    "InvalidURL",
    "check_url",
    "ConnectionSettings",
    "connect",
    "ensure_index",
    "ensure_partitioned",
    "roll_over",
    "install_partition_template",
    "partition_template_name",
    "index_template",
    "validate_index_name",
    "server_version",
    "require_index",
    "switch_alias",
    "index_exists",
    "check_index_config",
    "read_lookup_keys",
    "elastic_errors",
]
