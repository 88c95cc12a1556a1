"""The Elasticsearch backend: documents with their fingerprint, lookup keys, segments and duplicate cluster.

A batch of lookups is **one search** (an index made by an earlier release, with segments only: one search per
document in an ``_msearch``), a ``bool``/``should`` over

* the batch's ids and content hashes;
* the permutation-table ``lookup_keys`` of their SimHashes (re-ranked here by exact Hamming distance, numpy);
* their long-sentence hashes (every document holding one matched, so the hits give each hash's document
  frequency, and boilerplate sentences, in more than ``max_sentence_df`` documents, bring no candidates);
* per short text, its shingle-sketch hashes with ``minimum_should_match: 2`` (a document sharing one common
  shingle with the text is never a candidate, see ``base.MIN_SHARED_SKETCH``). Before that search, on the same
  point in time, a second one counts the documents holding each of the batch's sketch hashes (a top-level
  ``filters`` aggregation, counted filter by filter from the postings): boilerplate sketch hashes are known
  without reading the thousands of documents that share them, and hashes no document holds (most of a short
  text's) are left out of the candidate search.

A search that comes back full is split, down to single documents read to the end with ``search_after`` (up to
``max_candidates``, past which the lookup is marked truncated and a warning is logged), so a crowded bucket is
never cut silently; the answers are exactly the embedded index's.

Only ``term``/``terms``/``ids``/``bool`` clauses and ``terms``/``filter``/``filters`` aggregations are used: no
scripts (the test distribution has no Painless) and no ``query_string``, so user text never becomes query syntax.
Writes go through ``helpers.streaming_bulk`` (chunked, retried with backoff on 429) and are refreshed before the
next lookup, so a duplicate of a document written one batch earlier is found whatever the index's
``refresh_interval``.

Modules: :mod:`~es_simhash.index.elastic.connection` (settings, client), :mod:`~es_simhash.index.elastic.errors`
(one-line messages, retry policy), :mod:`~es_simhash.index.elastic.schema` (template, fields),
:mod:`~es_simhash.index.elastic.codec` (documents to and from Elasticsearch), :mod:`~es_simhash.index.elastic.admin`
(create, check, aliases), :mod:`~es_simhash.index.elastic.handle`, :mod:`~es_simhash.index.elastic.planner`
(lookups), :mod:`~es_simhash.index.elastic.writes`, :mod:`~es_simhash.index.elastic.reads` (for maintenance) and
:mod:`~es_simhash.index.elastic.index` (:class:`ElasticIndex`, all of them).
"""

from es_simhash.errors import ElasticError, IndexNotManaged, InvalidSetting, InvalidURL
from es_simhash.index.elastic.admin import (check_index_config, ensure_index, index_exists, read_lookup_keys,
                                            require_index, switch_alias, validate_index_name)
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
