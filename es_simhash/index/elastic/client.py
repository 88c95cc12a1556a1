"""The one seam between the backend and a search engine: :class:`SearchClient`, the requests the backend sends, and
its two implementations, :class:`ElasticsearchClient` (Elasticsearch 8 and 9, ``elasticsearch-py``) and
:class:`~es_simhash.index.elastic.opensearch.OpenSearchClient` (OpenSearch 2 and 3, ``opensearch-py``).

Every part of the backend (:mod:`~es_simhash.index.elastic.handle`, ``admin``, ``reads``, ``writes``), search, the
report and the tests send their requests through a :class:`SearchClient`; which engine answers is found out once, by
:func:`~es_simhash.index.elastic.connection.connect` from the node's own answer, and named by :attr:`engine`."""

from __future__ import annotations

import functools
from typing import Any, Iterator, Protocol

from elasticsearch import Elasticsearch


class SearchClient(Protocol):
    """The requests the backend sends, in ``elasticsearch-py``'s keyword form (a search's body fields as keywords:
    ``search(index=, query=, size=, sort=)``; ``msearch(searches=)``; ``indices.put_mapping(index=,
    properties=)``), with the namespaces ``indices``, ``cluster`` and ``nodes``, and:

    - :meth:`streaming_bulk`: the client library's bulk helper over this client (``(ok, item)`` per action);
    - :meth:`open_point_in_time` / :meth:`close_point_in_time`: each engine's own point-in-time API, opened as
      ``{"id": ...}`` and searched with ``{"pit": {"id": ...}}`` on both;
    - :meth:`options`: a view whose requests wait ``request_timeout`` and answer ``ignore_status`` as results;
    - :meth:`max_clause_count`: the engine's fixed bound on one search's clauses, if it has one.

    Errors are the client library's own exceptions: :mod:`~es_simhash.index.elastic.errors` reads both. (The
    protocol names what is sent; ``elasticsearch-py``'s keyword-only signatures are narrower than its stubs, so
    the clients are not checked against it statically: :func:`as_search_client` is the door.)"""

    engine: str
    """``"elasticsearch"`` or ``"opensearch"``."""
    indices: Any
    cluster: Any
    nodes: Any

    def search(self, index: str | None = None, body: dict[str, Any] | None = None, **kw: Any) -> Any: ...
    def count(self, index: str | None = None, query: dict[str, Any] | None = None, **kw: Any) -> Any: ...
    def msearch(self, searches: list[dict[str, Any]], **kw: Any) -> Any: ...
    def mget(self, index: str | None = None, ids: list[str] | None = None,
             docs: list[dict[str, Any]] | None = None, **kw: Any) -> Any: ...  # (docs: each with its _index)
    def streaming_bulk(self, actions: list[dict[str, Any]], **kw: Any) -> Iterator[tuple[bool, dict[str, Any]]]: ...
    def open_point_in_time(self, index: str, keep_alive: str) -> Any: ...
    def close_point_in_time(self, id: str) -> Any: ...  # noqa: A002
    def options(self, **kw: Any) -> "SearchClient": ...
    def max_clause_count(self) -> int | None: ...
    def info(self) -> Any: ...
    def close(self) -> None: ...
    # (and what tests and benchmarks send besides: get, index, delete, bulk, mtermvectors)
    def get(self, index: str, id: str, **kw: Any) -> Any: ...  # noqa: A002
    def index(self, index: str, document: dict[str, Any], id: str | None = None, **kw: Any) -> Any: ...  # noqa: A002
    def delete(self, index: str, id: str, **kw: Any) -> Any: ...  # noqa: A002
    def bulk(self, operations: list[dict[str, Any]], **kw: Any) -> Any: ...


def as_search_client(client: Any) -> Any:
    """``client`` as a :class:`SearchClient`: as it is when it is one (what :func:`connect` returns), else a plain
    ``elasticsearch.Elasticsearch`` or ``opensearchpy.OpenSearch`` a script made itself, wrapped (the same transport:
    its hosts, credentials and retries). :class:`TypeError` for anything else."""
    if isinstance(getattr(client, "engine", None), str):
        return client
    if isinstance(client, Elasticsearch):
        return ElasticsearchClient(_transport=client.transport)
    if type(client).__module__.startswith("opensearchpy"):  # (opensearch-py is imported only where it is used)
        from opensearchpy import OpenSearch

        from es_simhash.index.elastic.opensearch import OpenSearchClient

        if isinstance(client, OpenSearch):
            return OpenSearchClient(client, {"request_timeout": 60.0})
    raise TypeError(f"not a client of Elasticsearch or OpenSearch: {type(client).__name__} (use "
                    "es_simhash.index.elastic.connect)")


class ElasticsearchClient(Elasticsearch):
    """``elasticsearch.Elasticsearch`` as a :class:`SearchClient`: its requests as they are, and the bulk helper."""

    engine = "elasticsearch"

    def max_clause_count(self) -> int | None:
        """``None``: Elasticsearch 8 and 9 size the bound on a search's clauses by the heap (at least 1,024)."""
        return None

    def streaming_bulk(self, actions: list[dict[str, Any]], **kw: Any) -> Iterator[tuple[bool, dict[str, Any]]]:
        """``elasticsearch.helpers.streaming_bulk`` over this client (``retry_on_status``: left out on clients
        before 8.16, which retry 429 only)."""
        from elasticsearch import helpers

        if not _bulk_takes_retry_statuses():
            kw.pop("retry_on_status", None)
        yield from helpers.streaming_bulk(self, actions, **kw)


@functools.cache
def _bulk_takes_retry_statuses() -> bool:
    """Whether this elasticsearch-py's ``streaming_bulk`` takes ``retry_on_status`` (8.16 and later), read once."""
    import inspect

    from elasticsearch import helpers

    return "retry_on_status" in inspect.signature(helpers.streaming_bulk).parameters
