"""OpenSearch 2 and 3 through ``opensearch-py``, speaking the requests of
:class:`~es_simhash.index.elastic.client.SearchClient`.

OpenSearch answers the REST API this backend sends (mappings, ``_bulk`` with ``if_seq_no``, ``_msearch``,
``terms``/``filters`` aggregations, ``search_after``) as Elasticsearch does; what differs is the client library:
``opensearch-py`` takes a request's body as ``body=`` where ``elasticsearch-py`` takes its fields as keywords, and
opens points in time with its own API (``create_pit``/``delete_pit``). :class:`OpenSearchClient` turns the one form
into the other, request by request; nothing above it knows which engine answers.

``opensearch-py`` is an optional dependency (``pip install "es-simhash[opensearch]"``), imported when a node
turns out to be OpenSearch (:func:`~es_simhash.index.elastic.connection.connect`)."""

from __future__ import annotations

from typing import Any, Iterable, Iterator

ENGINE = "opensearch"

SEARCH_BODY = frozenset((
    "aggregations", "aggs", "collapse", "docvalue_fields", "explain", "ext", "fields", "from_", "highlight",
    "indices_boost", "min_score", "pit", "post_filter", "profile", "query", "rescore", "runtime_mappings",
    "script_fields", "search_after", "seq_no_primary_term", "size", "slice", "sort", "source", "stats",
    "stored_fields", "suggest", "terminate_after", "timeout", "track_scores", "track_total_hits", "version", "knn",
))
"""The keywords of a search that belong in its body (``elasticsearch-py``'s own list); the others are URL
parameters."""
RENAMED = {"from_": "from", "source": "_source", "source_excludes": "_source_excludes",
           "source_includes": "_source_includes"}
"""``elasticsearch-py``'s names for what the REST API calls otherwise."""


def _split(kw: dict[str, Any], body_fields: Iterable[str], body: dict[str, Any] | None = None
           ) -> tuple[dict[str, Any], dict[str, Any]]:
    """``kw`` as ``(body, params)``: the keywords in ``body_fields`` go into the request body (over ``body``), the
    rest are URL parameters, each under the REST API's name."""
    fields = set(body_fields)
    out_body = dict(body or {})
    params: dict[str, Any] = {}
    for key, value in kw.items():
        if value is None:
            continue
        name = RENAMED.get(key, key)
        if key in fields:
            out_body[name] = value
        else:
            params[name] = value
    return out_body, params


def _given(**parts: Any) -> dict[str, Any]:
    """A request body of the ``parts`` given (those not ``None``), as elasticsearch-py builds one from its keywords."""
    return {k: v for k, v in parts.items() if v is not None}


class _Namespace:
    def __init__(self, owner: "OpenSearchClient", raw: Any) -> None:
        self._owner = owner
        self._raw = raw

    def _call(self, method: str, **kw: Any) -> Any:
        return getattr(self._raw, method)(**self._owner._with_options(kw))


class Indices(_Namespace):
    """``client.indices``: the index requests the backend, its tests and its benchmarks send."""

    def refresh(self, index: str, **kw: Any) -> Any:
        return self._call("refresh", index=index, **kw)

    def exists(self, index: str) -> bool:
        return bool(self._call("exists", index=index))

    def exists_alias(self, name: str, index: str | None = None) -> bool:
        return bool(self._call("exists_alias", name=name, index=index))

    def get_alias(self, name: str | None = None, index: str | None = None) -> Any:
        return self._call("get_alias", name=name, index=index)

    def update_aliases(self, actions: list[dict[str, Any]]) -> Any:
        return self._call("update_aliases", body={"actions": actions})

    def create(self, index: str, mappings: dict[str, Any] | None = None, settings: dict[str, Any] | None = None,
               aliases: dict[str, Any] | None = None, **kw: Any) -> Any:
        body = _given(mappings=mappings, settings=settings, aliases=aliases)
        return self._call("create", index=index, body=body or None, **kw)

    def rollover(self, alias: str, conditions: dict[str, Any] | None = None,
                 mappings: dict[str, Any] | None = None, settings: dict[str, Any] | None = None, **kw: Any) -> Any:
        body = _given(conditions=conditions, mappings=mappings, settings=settings)
        return self._call("rollover", alias=alias, body=body or None, **kw)

    def delete(self, index: str, **kw: Any) -> Any:
        return self._call("delete", index=index, **kw)

    def get_mapping(self, index: str) -> Any:
        return self._call("get_mapping", index=index)

    def put_mapping(self, index: str, properties: dict[str, Any] | None = None, **body: Any) -> Any:
        if properties is not None:
            body["properties"] = properties
        return self._call("put_mapping", index=index, body=body)

    def put_settings(self, index: str, settings: dict[str, Any] | None = None, **kw: Any) -> Any:
        body, params = _split(kw, ())
        return self._call("put_settings", index=index, body=settings or body, **params)

    def get_settings(self, index: str, **kw: Any) -> Any:
        return self._call("get_settings", index=index, **kw)

    def put_index_template(self, name: str, **template: Any) -> Any:
        if "meta" in template:  # (elasticsearch-py's name for the body's ``_meta``)
            template["_meta"] = template.pop("meta")
        return self._call("put_index_template", name=name, body=template)

    def get_index_template(self, name: str) -> Any:
        return self._call("get_index_template", name=name)

    def delete_index_template(self, name: str) -> Any:
        return self._call("delete_index_template", name=name)

    def stats(self, index: str | None = None, metric: str | None = None, **kw: Any) -> Any:
        return self._call("stats", index=index, metric=metric, **kw)

    def add_block(self, index: str, block: str) -> Any:
        return self._call("add_block", index=index, block=block)

    def close(self, index: str, **kw: Any) -> Any:
        return self._call("close", index=index, **kw)

    def open(self, index: str, **kw: Any) -> Any:
        return self._call("open", index=index, **kw)

    def flush(self, index: str | None = None, **kw: Any) -> Any:
        return self._call("flush", index=index, **kw)

    def forcemerge(self, index: str | None = None, **kw: Any) -> Any:
        return self._call("forcemerge", index=index, **kw)


class Cluster(_Namespace):
    """``client.cluster``."""

    def health(self, index: str | None = None, **kw: Any) -> Any:
        return self._call("health", index=index, **kw)

    def get_settings(self, **kw: Any) -> Any:
        return self._call("get_settings", **kw)

    def put_settings(self, persistent: dict[str, Any] | None = None, transient: dict[str, Any] | None = None,
                     **kw: Any) -> Any:
        return self._call("put_settings", body=_given(persistent=persistent, transient=transient), **kw)


class Nodes(_Namespace):
    """``client.nodes``."""

    def info(self, node_id: str | None = None, metric: str | None = None, **kw: Any) -> Any:
        return self._call("info", node_id=node_id, metric=metric, **kw)

    def stats(self, node_id: str | None = None, metric: str | None = None, **kw: Any) -> Any:
        return self._call("stats", node_id=node_id, metric=metric, **kw)


class OpenSearchClient:
    """An ``opensearchpy.OpenSearch`` client taking the requests of
    :class:`~es_simhash.index.elastic.client.SearchClient` in ``elasticsearch-py``'s keyword form (``search(index=,
    query=, size=)``, ``msearch(searches=)``, ``open_point_in_time``, ``options(ignore_status=)``) and sending them
    as OpenSearch's client does. Responses are OpenSearch's JSON as it is (the same shapes)."""

    engine = ENGINE

    def __init__(self, raw: Any, options: dict[str, Any] | None = None) -> None:
        self.raw = raw
        """The ``opensearchpy.OpenSearch`` client underneath."""
        self._options = dict(options or {})
        """What every request through this client (or view, :meth:`options`) is sent with: ``request_timeout``,
        ``ignore``."""
        self.indices = Indices(self, raw.indices)
        self.cluster = Cluster(self, raw.cluster)
        self.nodes = Nodes(self, raw.nodes)

    def _with_options(self, kw: dict[str, Any]) -> dict[str, Any]:
        """A request's keywords (those given as ``None`` left out) over the view's options."""
        return {**self._options, **_given(**kw)}

    def options(self, *, request_timeout: float | None = None, ignore_status: int | tuple[int, ...] | None = None,
                max_retries: int | None = None, retry_on_status: Any = None) -> "OpenSearchClient":
        """A view of this client whose requests wait ``request_timeout`` seconds and return the statuses in
        ``ignore_status`` as answers rather than errors. (``max_retries`` and ``retry_on_status`` belong to the
        transport: requests made through the view are retried as the client's are.)"""
        options = dict(self._options)
        if request_timeout is not None:
            options["request_timeout"] = request_timeout
        if ignore_status is not None:
            options["ignore"] = ignore_status
        return OpenSearchClient(self.raw, options)

    def _call(self, method: str, **kw: Any) -> Any:
        return getattr(self.raw, method)(**self._with_options(kw))

    # -- documents ----------------------------------------------------------------------------------------------
    def search(self, index: str | None = None, body: dict[str, Any] | None = None, **kw: Any) -> Any:
        body, params = _split(kw, SEARCH_BODY, body)
        return self._call("search", index=index, body=body, **params)

    def count(self, index: str | None = None, query: dict[str, Any] | None = None, **kw: Any) -> Any:
        return self._call("count", index=index, body={"query": query} if query is not None else None, **kw)

    def msearch(self, searches: list[dict[str, Any]], **kw: Any) -> Any:
        return self._call("msearch", body=searches, **kw)

    def mget(self, index: str | None = None, ids: list[str] | None = None,
             docs: list[dict[str, Any]] | None = None, **kw: Any) -> Any:
        _, params = _split(kw, ())
        body = {"docs": docs} if docs is not None else {"ids": ids}
        return self._call("mget", index=index, body=body, **params)

    def get(self, index: str, id: str, **kw: Any) -> Any:  # noqa: A002 (the REST API's name)
        _, params = _split(kw, ())
        return self._call("get", index=index, id=id, **params)

    def index(self, index: str, document: dict[str, Any], id: str | None = None, **kw: Any) -> Any:  # noqa: A002
        return self._call("index", index=index, body=document, id=id, **kw)

    def delete(self, index: str, id: str, **kw: Any) -> Any:  # noqa: A002
        return self._call("delete", index=index, id=id, **kw)

    def bulk(self, operations: list[dict[str, Any]], **kw: Any) -> Any:
        return self._call("bulk", body=operations, **kw)

    def mtermvectors(self, index: str, ids: list[str] | None = None, **kw: Any) -> Any:
        body, params = _split(kw, ("docs", "parameters"))
        if ids is not None:
            body["ids"] = ids
        return self._call("mtermvectors", index=index, body=body, **params)

    def streaming_bulk(self, actions: list[dict[str, Any]], **kw: Any) -> Iterator[tuple[bool, dict[str, Any]]]:
        """``opensearchpy.helpers.streaming_bulk`` over this client: ``(ok, item)`` per action. Items refused with 429
        are retried with backoff inside the call, as ``elasticsearch-py``'s helper does (``retry_on_status``
        beyond 429 is the caller's: it retries the items left)."""
        from opensearchpy import helpers

        kw.pop("retry_on_status", None)
        return helpers.streaming_bulk(self.raw, actions, **kw)

    # -- points in time -------------------------------------------------------------------------------------------
    def open_point_in_time(self, index: str, keep_alive: str) -> dict[str, Any]:
        """OpenSearch's ``POST /INDEX/_search/point_in_time`` (2.4 and later), answered as Elasticsearch's is:
        ``{"id": ...}``."""
        resp = self._call("create_pit", index=index, params={"keep_alive": keep_alive})
        return {"id": resp["pit_id"]}

    def close_point_in_time(self, id: str) -> Any:  # noqa: A002
        return self._call("delete_pit", body={"pit_id": [id]})

    def max_clause_count(self) -> int:
        """``indices.query.bool.max_clause_count`` as the cluster sets it (1,024 by default): OpenSearch refuses a
        search holding more clauses (``too_many_nested_clauses``)."""
        path = ("indices", "query", "bool", "max_clause_count")
        resp = self.cluster.get_settings(include_defaults=True, filter_path="*." + ".".join(path))
        for scope in ("transient", "persistent", "defaults"):
            value: Any = resp.get(scope) or {}
            for key in path:
                value = value.get(key) if isinstance(value, dict) else None
            if value is not None:
                return int(value)
        return 1024

    def info(self) -> Any:
        return self._call("info")

    def close(self) -> None:
        self.raw.close()
