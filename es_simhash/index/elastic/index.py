"""The Elasticsearch backend, one class: :class:`ElasticIndex`."""

from __future__ import annotations

from es_simhash.index.elastic.planner import LookupPlanner
from es_simhash.index.elastic.reads import MaintenanceReads
from es_simhash.index.elastic.writes import Writes


class ElasticIndex(LookupPlanner, Writes, MaintenanceReads):
    """A :class:`~es_simhash.index.base.MaintainedIndex` over one Elasticsearch index: ``ElasticIndex(client,
    index, *, page_size=500, batch_page=10_000, max_candidates=20_000, max_sentence_df=50, chunk_size=500,
    max_retries=8, retry_for=300.0, url="", lookup_keys=None)``.

    Its parts, one module each: :class:`~es_simhash.index.elastic.handle.IndexHandle` (state, retried requests),
    :class:`~es_simhash.index.elastic.planner.LookupPlanner` (lookups),
    :class:`~es_simhash.index.elastic.writes.Writes`, :class:`~es_simhash.index.elastic.reads.MaintenanceReads`.

    ``lookup_keys``: the index's lookup keys; by default read from its mapping (``_meta.lookup``, recorded by
    :func:`ensure_index`); an index made before lookup keys existed has none recorded and uses its four 16-bit
    segments. ``batch_page``: hits one batched lookup search may return before the batch falls back to one
    search per document (a bucket shared by many documents: boilerplate).
    """

    overlapping_writes = True
    """The engine may look up batch N+1 while batch N is written (see :meth:`lookup`'s ``exclude``)."""
    shared_writers = True
    """Other processes may write into the index at the same time: the engine settles each batch after its write
    (:func:`es_simhash.clustering.settle`)."""
