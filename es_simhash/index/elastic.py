"""The Elasticsearch backend: documents with their fingerprint, lookup keys, segments and duplicate cluster.

A batch of lookups is **one search** (an index made by an earlier release, with segments only: one search per
document in an ``_msearch``), a ``bool``/``should`` over

* the batch's ids and content hashes;
* the permutation-table ``lookup_keys`` of their SimHashes (re-ranked here by exact Hamming distance, numpy);
* their long-sentence hashes (every document holding one matched, so the hits give each hash's document
  frequency, and boilerplate sentences, in more than ``max_sentence_df`` documents, bring no candidates);
* per short text, its shingle-sketch hashes with ``minimum_should_match: 2`` (a document sharing one common
  shingle with the text is never a candidate, see ``base.MIN_SHARED_SKETCH``), plus a ``terms`` aggregation
  counting the documents that hold each sketch hash (so boilerplate sketch hashes are known without reading the
  thousands of documents that share them).

A search that comes back full is split, down to single documents read to the end with ``search_after`` (up to
``max_candidates``, past which the lookup is marked truncated and a warning is logged), so a crowded bucket is
never cut silently; the answers are exactly the embedded index's.

Only ``term``/``terms``/``ids``/``bool`` clauses and ``terms``/``filter``/``global`` aggregations are used: no
scripts (the test distribution has no Painless) and no ``query_string``, so user text never becomes query syntax.
Writes go through ``helpers.streaming_bulk`` (chunked, retried with backoff on 429) and are refreshed before the
next lookup, so a duplicate of a document written one batch earlier is found whatever the index's
``refresh_interval``.
"""

from __future__ import annotations

import inspect
import json
import logging
import os
import re
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from typing import Any, Collection, Iterator, Literal, Sequence
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from es_simhash import settings as conf
from es_simhash.lookup import hamming
from es_simhash.fingerprint.fingerprinter import SKETCH_BIT, Fingerprint, hex64
from es_simhash.fingerprint.fold import fold_text
from es_simhash.files.sources import record_meta
from es_simhash.lookup.keys import DEFAULT as DEFAULT_KEYS
from es_simhash.lookup.keys import LookupKeys
from es_simhash.index.base import MIN_SHARED_SKETCH, Lookup, LookupResult, StoredDoc, sentence_candidate, sharing_sketch
from es_simhash.errors import ElasticError, IndexNotManaged, InvalidURL

__all__ = [
    "ElasticIndex",
    "ElasticError",
    "IndexNotManaged",
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
]

log = logging.getLogger(__name__)

_LOOKUP_FIELDS = [  # read from doc values by lookups, never from _source (which holds the text)
    "doc_id",  # the hit's id: with no stored field read (not even _id), no compressed block of _source is opened
    "simhash",
    "content_hash",
    "sentences",
    "n_features",
    "n_chars",
    "short",
    "fingerprint_version",
    "word_bag",
    "dup_cluster",
    "dup_of",
    "dup_distance",
    "dup_reason",
    "arrival",
]
_MSEARCH_FILTER = (
    "responses.hits.hits._id,responses.hits.hits.fields,responses.hits.hits.sort,"
    "responses.aggregations,responses.error,responses.status"
)
_INVALID_INDEX_CHARS = re.compile(r'[\\/*?"<>| ,#:A-Z]')


def check_url(url: str, what: str = "Elasticsearch") -> str:
    """``url`` if it is ``http(s)://host[:port][/path]`` with a valid port; :class:`InvalidURL` (one line, what to
    write instead, no secrets) otherwise."""
    shown = url
    try:
        parts = urlsplit(url)
        if parts.password:  # never print a password
            shown = url.replace(f":{parts.password}@", ":***@", 1)
        port = parts.port  # ValueError for a port out of range or not a number
    except ValueError as exc:
        raise InvalidURL(f"invalid {what} URL {shown!r}: {exc}; expected http(s)://host:port, "
                         "e.g. http://127.0.0.1:9200") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        hint = f"http://{url}" if "://" not in url else "http(s)://host:port"
        raise InvalidURL(f"invalid {what} URL {shown!r}: it needs the scheme and host, e.g. {hint}")
    if port == 0:
        raise InvalidURL(f"invalid {what} URL {shown!r}: port 0")
    return url


class _Transient(Exception):
    """A failure worth retrying (node restarting, shards unassigned, queue full)."""


_RETRY_STATUSES = (429, 502, 503, 504)
"""HTTP statuses worth retrying: the client's transport, bulk items (``streaming_bulk``) and our own retries."""
_RETRY_TYPES = (
    "es_rejected_execution_exception",
    "unavailable_shards_exception",
    "no_shard_available_action_exception",
    "cluster_block_exception",
    "node_not_connected_exception",
    "node_closed_exception",
)


def validate_index_name(name: str) -> str:
    """Raise ``ValueError`` unless ``name`` is a valid, non-hidden Elasticsearch index name."""
    problem = None
    if not name:
        problem = "it is empty"
    elif _INVALID_INDEX_CHARS.search(name):
        problem = 'use lowercase letters, digits, "-", "_" or "." (no spaces, uppercase or \\/*?"<>|,#:)'
    elif name[0] in "-_+.":
        problem = "it may not start with -, _, + or ."
    elif len(name.encode("utf-8")) > 255:
        problem = "it is longer than 255 bytes"
    if problem:
        raise ValueError(f"invalid index name {name!r}: {problem}")
    return name


def index_template() -> dict[str, Any]:
    """The index template shipped in ``templates/index-template.json`` (a fresh copy)."""
    data = resources.files("es_simhash").joinpath("templates").joinpath("index-template.json").read_text(encoding="utf-8")
    template = json.loads(data)
    template.pop("_comment", None)
    return template


@dataclass
class ConnectionSettings:
    """How to reach Elasticsearch. :meth:`from_env` reads ``ES_URL``, ``ES_API_KEY``, ``ES_USERNAME``,
    ``ES_PASSWORD``, ``ES_CA_CERTS`` (explicit arguments win)."""

    url: str = "http://localhost:9200"
    api_key: str | None = None
    username: str | None = None
    password: str | None = None
    ca_certs: str | None = None
    request_timeout: float = 60.0
    max_retries: int = 5

    def __post_init__(self) -> None:
        check_url(self.url)

    @classmethod
    def from_env(cls, config: str | os.PathLike[str] | None = None, **overrides: Any) -> "ConnectionSettings":
        """Settings from, in increasing priority: a TOML config file (``config``, else ``$ES_SIMHASH_CONFIG``,
        else ``~/.config/es-simhash/config.toml`` if it exists; its ``[elasticsearch]`` table has ``url``,
        ``api_key``, ``username``, ``password``, ``ca_certs``), the environment (``ES_URL``, ``ES_API_KEY``,
        ``ES_USERNAME``, ``ES_PASSWORD``, ``ES_CA_CERTS``), then explicit arguments."""
        return cls(**cls.values(config, **overrides))

    @staticmethod
    def values(config: str | os.PathLike[str] | None = None, **overrides: Any) -> dict[str, Any]:
        """The settings :meth:`from_env` would use, as a dict of the keys found (not validated): e.g. Kibana's
        import takes the credentials and CA from it (Kibana accepts Elasticsearch credentials)."""
        values: dict[str, Any] = {}
        path, explicit = conf.config_path(config)
        if path is not None:
            values.update(conf.read_config(path, explicit))
        values.update(conf.elastic_env())
        values.update({k: v for k, v in overrides.items() if v is not None})
        return values

    @property
    def safe_url(self) -> str:
        """The URL without any user:password part, for messages."""
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
        return urlunsplit((parts.scheme, host, parts.path, "", ""))

    def client(self) -> Any:
        from elasticsearch import Elasticsearch

        kwargs: dict[str, Any] = {
            "request_timeout": self.request_timeout,
            "max_retries": self.max_retries,
            "retry_on_timeout": True,
            "retry_on_status": _RETRY_STATUSES,
        }
        if self.api_key:
            kwargs["api_key"] = self.api_key
        elif self.username:
            kwargs["basic_auth"] = (self.username, self.password or "")
        if self.ca_certs and urlsplit(self.url).scheme == "https":  # plain HTTP has no certificate to verify
            kwargs["ca_certs"] = self.ca_certs
        serializer = _fast_json_serializer()
        if serializer is not None:
            kwargs["serializer"] = serializer
        return Elasticsearch(self.url, **kwargs)


def _fast_json_serializer():
    """A JSON serializer that parses responses with orjson (several times faster on the large lookup responses)
    and still writes requests with the standard library, which accepts any JSON a crawl record holds (orjson
    refuses integers beyond 64 bits). ``None`` without orjson."""
    try:
        import orjson
    except ImportError:
        return None
    from elasticsearch.serializer import JsonSerializer

    class _OrjsonLoads(JsonSerializer):
        def loads(self, data: bytes) -> Any:
            return orjson.loads(data)

    return _OrjsonLoads()


def connect(settings: ConnectionSettings | None = None, check: bool = True):
    """An ``elasticsearch.Elasticsearch`` client; with ``check`` it pings the cluster first and raises
    :class:`ElasticError` with a one-line, secret-free reason when that fails."""
    settings = settings or ConnectionSettings.from_env()
    client = settings.client()
    if check:
        with elastic_errors(settings.safe_url):
            # not GET /: minimal distributions (the integ-test zip) leave out the rest-root module serving it
            client.cluster.health()
    return client


def server_version(client) -> str:
    """The Elasticsearch version of the node answering (e.g. ``"9.5.2"``)."""
    nodes = client.nodes.info(node_id="_local", metric="_none", filter_path="nodes.*.version")
    return next(iter(nodes["nodes"].values()))["version"]


class elastic_errors:
    """Context manager turning client exceptions into one-line :class:`ElasticError` messages."""

    def __init__(self, url: str) -> None:
        self.url = url

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type, exc, tb) -> Literal[False]:
        if exc is None:
            return False
        from elasticsearch import (
            ApiError,
            AuthenticationException,
            AuthorizationException,
            ConnectionError,
            ConnectionTimeout,
            SSLError,
            TransportError,
        )

        if isinstance(exc, ElasticError):
            return False
        setting = None
        if isinstance(exc, SSLError):
            msg = _tls_message(self.url, str(exc))
            setting = "ca_certs" if "TLS verification failed" in msg else None
        elif isinstance(exc, ConnectionTimeout):
            msg = (f"Elasticsearch at {self.url} did not answer in time; check it is healthy, or raise "
                   "request_timeout (the config file's [elasticsearch] table)")
        elif isinstance(exc, ConnectionError):
            msg = _connection_message(self.url, str(exc))
            setting = "url" if msg.startswith("cannot reach") else None
        elif isinstance(exc, AuthenticationException):
            msg = (
                f"Elasticsearch at {self.url} rejected the credentials (401): "
                "check ES_API_KEY, or ES_USERNAME and ES_PASSWORD"
            )
        elif isinstance(exc, AuthorizationException):
            msg = f"Elasticsearch at {self.url} refused the request (403): the user or API key lacks privileges"
        elif isinstance(exc, ApiError) and not _from_elasticsearch(exc):
            msg = _not_elasticsearch_message(self.url, exc)
        elif isinstance(exc, ApiError):
            msg = f"Elasticsearch refused the request ({exc.meta.status}): {_api_reason(exc)}"
        elif isinstance(exc, TransportError):
            msg = f"Elasticsearch transport error at {self.url}: {type(exc).__name__}"
        else:
            return False
        raise ElasticError(msg, setting) from None


def _api_reason(exc: Any) -> str:
    try:
        err = exc.body["error"]
        root = (err.get("root_cause") or [err])[0]
        return _one_line(f"{root.get('type')}: {root.get('reason')}")
    except Exception:  # noqa: BLE001
        return _one_line(str(exc.message))


def _one_line(text: str, limit: int = 300) -> str:
    return " ".join(text.split())[:limit]


def _other_scheme(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(("http" if parts.scheme == "https" else "https", parts.netloc, parts.path, "", ""))


_TLS_VERIFY = ("certificate verify failed", "certificate_verify_failed", "hostname mismatch",
               "doesn't match", "not valid for")


def _tls_message(url: str, reason: str) -> str:
    """A failed TLS handshake: the certificate was not trusted (pass the CA), or the other end does not speak TLS
    at all (a plain-HTTP node: use http://)."""
    found = re.search(r"\[SSL(?:: [A-Z_]+)?\] ([^()]+?)\s*(?:\(_ssl|\)|$)", reason)
    why = _one_line(found.group(1) if found else reason, 120)
    if any(k in reason.lower() for k in _TLS_VERIFY):
        return f"TLS verification failed for {url} ({why}): pass the cluster's CA certificate with ES_CA_CERTS"
    return f"{url} does not answer TLS ({why}): if the node serves plain HTTP, use {_other_scheme(url)}"


_REFUSED = ("connection refused", "failed to establish", "no route to host", "network is unreachable",
            "cannot assign requested address")
_UNRESOLVED = ("name or service not known", "nodename nor servname", "temporary failure in name resolution",
               "no address associated with hostname", "getaddrinfo failed", "name resolution")


def _connection_message(url: str, reason: str) -> str:
    """The host name does not resolve (check the URL), nothing listens (is it running?), or something took the
    connection and dropped it without an HTTP answer: over http:// that is what an HTTPS node does."""
    low = reason.lower()
    if any(k in low for k in _UNRESOLVED):
        host = urlsplit(url).hostname or url
        return (f"cannot reach Elasticsearch at {url}: the host name {host!r} does not resolve (DNS): check the "
                "host in the URL; set its URL with ES_URL")
    if any(k in low for k in _REFUSED) or not any(k in low for k in ("reset", "aborted", "remotedisconnected",
                                                                      "closed", "badstatusline")):
        return (f"cannot reach Elasticsearch at {url}: is it running? (see README: docker compose, or "
                "scripts/es_node.py start); set its URL with ES_URL")
    if urlsplit(url).scheme == "http":
        return (f"{url} closed the connection without an HTTP answer: an HTTPS node does that to plain HTTP; "
                f"use {_other_scheme(url)}")
    return f"{url} closed the connection without an answer: is it Elasticsearch?"


def _from_elasticsearch(exc: Any) -> bool:
    """Whether an HTTP error response came from Elasticsearch (its ``X-Elastic-Product`` header, or an
    Elasticsearch error body) rather than from another server at that address."""
    try:
        headers = {k.lower(): v for k, v in (exc.meta.headers or {}).items()}
    except Exception:  # noqa: BLE001
        headers = {}
    if headers.get("x-elastic-product") == "Elasticsearch":
        return True
    body = getattr(exc, "body", None)
    return isinstance(body, dict) and ("error" in body or "status" in body)


def _not_elasticsearch_message(url: str, exc: Any) -> str:
    try:
        status = exc.meta.status
        ctype = {k.lower(): v for k, v in (exc.meta.headers or {}).items()}.get("content-type", "")
        server = {k.lower(): v for k, v in (exc.meta.headers or {}).items()}.get("server", "")
    except Exception:  # noqa: BLE001
        status, ctype, server = "?", "", ""
    what = ", ".join(x for x in (f"HTTP {status}", ctype.split(";")[0], server and f"server {server}") if x)
    return f"the server at {url} is not Elasticsearch ({_one_line(what, 120)}): check the Elasticsearch URL"


def ensure_index(client, index: str, fingerprint_config: dict[str, Any], replicas: int | None = None,
                 lookup_keys: LookupKeys = DEFAULT_KEYS) -> bool:
    """Install the index template for ``index`` and create the index if missing (idempotent).

    A new index records ``lookup_keys`` in its mapping (``_meta.lookup``); an existing index keeps the keys it
    was made with (:class:`ElasticIndex` reads them from there). Returns True when the index was created. Raises
    :class:`ElasticError` when the index exists but was built with a different fingerprint configuration (its
    fingerprints would not be comparable).
    """
    validate_index_name(index)
    template = index_template()
    template["index_patterns"] = [index]
    template["template"]["mappings"]["_meta"]["fingerprint"] = fingerprint_config
    template["template"]["mappings"]["_meta"]["lookup"] = lookup_keys.to_meta()
    if replicas is not None:  # (else auto_expand_replicas 0-1: green on one node, a replica once there are two)
        template["template"]["settings"]["index"]["number_of_replicas"] = replicas
        template["template"]["settings"]["index"]["auto_expand_replicas"] = "false"
    client.indices.put_index_template(name=f"es-simhash-{index}", **template)
    if client.indices.exists(index=index):
        check_index_config(client, index, fingerprint_config)
        # fields added by later releases (an index keeps its mapping): adding a field to a mapping is allowed
        props = template["template"]["mappings"]["properties"]
        client.indices.put_mapping(index=index, properties={k: props[k] for k in _ADDED_FIELDS})
        return False
    from elasticsearch import BadRequestError

    try:
        client.indices.create(index=index)
    except BadRequestError as exc:
        if "resource_already_exists_exception" not in str(exc):
            raise
        return False
    client.cluster.health(index=index, wait_for_status="yellow", timeout="60s")
    return True


def index_exists(client, index: str, url: str = "") -> bool:
    """Whether ``index`` exists (an index or an alias)."""
    with elastic_errors(url):
        return bool(client.indices.exists(index=index))


def require_index(client, index: str, url: str = "") -> dict[str, Any]:
    """The mapping ``_meta`` of an index es-simhash made; :class:`IndexNotManaged` (one line, what to do) when the
    index does not exist or was not made by es-simhash (its documents have none of the fields es-simhash reads, so
    searches, clusters and near-duplicate checks on it would be meaningless)."""
    from elasticsearch import NotFoundError

    validate_index_name(index)
    where = f" at {url}" if url else ""
    with elastic_errors(url):
        try:
            mapping = client.indices.get_mapping(index=index)
        except NotFoundError:
            raise IndexNotManaged(f"index {index!r} does not exist{where}: check the index name") from None
    meta = next(iter(mapping.values()))["mappings"].get("_meta", {})
    if meta.get("managed_by") != "es-simhash":
        raise IndexNotManaged(f"index {index!r}{where} was not made by es-simhash: pick an index "
                              "`es-simhash index` wrote")
    return meta


def switch_alias(client, alias: str, index: str, url: str = "") -> list[str]:
    """Point ``alias`` at ``index`` alone, in one atomic request (readers never see it missing); returns the
    indexes it pointed at before."""
    from elasticsearch import NotFoundError

    validate_index_name(alias)
    with elastic_errors(url):
        if client.indices.exists(index=alias) and not client.indices.exists_alias(name=alias):
            raise ElasticError(f"{alias!r} is an index, not an alias: pick another alias name")
        try:
            before = sorted(client.indices.get_alias(name=alias))
        except NotFoundError:
            before = []
        actions: list[dict[str, Any]] = [{"remove": {"index": i, "alias": alias}} for i in before if i != index]
        actions.append({"add": {"index": index, "alias": alias}})
        client.indices.update_aliases(actions=actions)
    return before


_PAYLOAD = ("content", "record")
"""What maintenance reads only to write a document back."""
_ADDED_FIELDS = ("arrival", "title_folded", "content_folded")
"""Mapped fields that indexes made by earlier releases lack (``ensure_index`` adds them)."""


def check_index_config(client, index: str, fingerprint_config: dict[str, Any]) -> None:
    mapping = client.indices.get_mapping(index=index)
    meta = next(iter(mapping.values()))["mappings"].get("_meta", {})
    if meta.get("managed_by") != "es-simhash":
        raise ElasticError(f"index {index!r} exists but was not created by es-simhash: pick another index name")
    stored = meta.get("fingerprint") or {}
    if stored != fingerprint_config:
        diff = "; ".join(f"{_SETTING_NAMES.get(k, k)} {_shown(stored.get(k))} (this run: {_shown(v)})"
                         for k, v in fingerprint_config.items() if stored.get(k) != v)
        how = (f"migrate {index!r} into a new index (`es-simhash migrate`) to fingerprint it again"
               if stored.get("fingerprint_version") != fingerprint_config.get("fingerprint_version")
               else "use the same IDF table (--idf) and options, or a new index")
        raise ElasticError(f"index {index!r} holds fingerprints made with other settings: {diff}: {how}")


_SETTING_NAMES = {"idf": "IDF table checksum", "fingerprint_version": "fingerprint version"}


def _shown(value: Any) -> str:
    """A fingerprint setting in a message: as JSON, a missing one as "none"."""
    return "none" if value is None else json.dumps(value)


def _bulk_retry_statuses() -> dict[str, Any]:
    """``streaming_bulk``'s ``retry_on_status`` (retried items, with backoff, inside one bulk call): the same
    statuses as everywhere else; clients before 8.16 take no such argument (they retry 429 only)."""
    from elasticsearch import helpers

    if "retry_on_status" in inspect.signature(helpers.streaming_bulk).parameters:
        return {"retry_on_status": _RETRY_STATUSES}
    return {}


def _from_docvalues(fields: dict[str, list[Any]]) -> dict[str, Any]:
    """A hit's ``fields`` (doc values: lists) as a flat dict like ``_source``; doc values are read without
    parsing the stored ``_source`` (which holds the whole text), which makes lookups much cheaper."""
    out: dict[str, Any] = {k: (v if k == "sentences" else v[0]) for k, v in fields.items() if v}
    out.setdefault("sentences", [])
    return out


def _shared_keys(qkeys: np.ndarray, hkeys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(query, hit) pairs that share a key in some table, from ``(n_queries, T)`` and ``(n_hits, T)`` key arrays
    (pairs may repeat when they share several keys)."""
    n_tables = qkeys.shape[1]
    table = np.arange(n_tables, dtype=np.uint64) << np.uint64(32)
    q_comp = (qkeys.astype(np.uint64) | table).ravel()
    order = np.argsort(q_comp, kind="stable")
    q_sorted = q_comp[order]
    h_comp = (hkeys.astype(np.uint64) | table).ravel()
    lo = np.searchsorted(q_sorted, h_comp, "left")
    found = np.flatnonzero(q_sorted[np.minimum(lo, len(q_sorted) - 1)] == h_comp)  # most hit keys match nothing
    lo = lo[found]
    counts = np.searchsorted(q_sorted, h_comp[found], "right") - lo
    total = int(counts.sum())
    pos = np.repeat(lo - np.cumsum(counts) + counts, counts) + np.arange(total)
    return order[pos] // n_tables, np.repeat(found, counts) // n_tables


def _parse_hex64(values: Sequence[str]) -> list[int]:
    """16-digit hex strings as ints, all at once (one ``bytes.fromhex`` instead of an ``int(x, 16)`` each)."""
    if not values:
        return []
    return np.frombuffer(bytes.fromhex("".join(values)), dtype=">u8").tolist()


class _Hits:
    """The hits of a lookup search as columns, their hex fields parsed in bulk; StoredDocs built on demand."""

    def __init__(self, hits: list[dict[str, Any]]) -> None:
        self.ids = [h["_id"] for h in hits]
        self.srcs = srcs = [h["_source"] for h in hits]
        self.simhash = _parse_hex64([s["simhash"] for s in srcs])
        self.content = _parse_hex64([s.get("content_hash") or "0000000000000000" for s in srcs])
        self.word_bag = _parse_hex64([s.get("word_bag") or "0000000000000000" for s in srcs])
        hex_sentences = [s.get("sentences") or () for s in srcs]
        flat = _parse_hex64([x for sentences in hex_sentences for x in sentences])
        self.sentence_ints: list[tuple[int, ...]] = []
        start = 0
        for sentences in hex_sentences:
            end = start + len(sentences)
            self.sentence_ints.append(tuple(flat[start:end]))
            start = end
        self._docs: dict[int, StoredDoc] = {}

    def doc(self, j: int) -> StoredDoc:
        d = self._docs.get(j)
        if d is None:
            src = self.srcs[j]
            fp = Fingerprint(self.simhash[j], self.content[j], self.sentence_ints[j], int(src["n_features"]),
                             int(src["n_chars"]), bool(src["short"]), int(src["fingerprint_version"]), self.word_bag[j])
            d = self._docs[j] = StoredDoc(self.ids[j], fp, cluster=src["dup_cluster"], duplicate_of=src.get("dup_of"),
                                          distance=src.get("dup_distance"), reason=src.get("dup_reason", "canonical"),
                                          arrival=int(src.get("arrival") or 0))
        return d


def _stored(hit: dict[str, Any]) -> StoredDoc:
    """A whole stored document (``_source``, as fetched by maintenance) with its version."""
    src = hit["_source"]
    fp = Fingerprint.from_dict({**src, "content_hash": src.get("content_hash") or "0"})
    return StoredDoc(hit["_id"], fp, cluster=src["dup_cluster"], duplicate_of=src.get("dup_of"),
                     distance=src.get("dup_distance"), reason=src.get("dup_reason", "canonical"),
                     fields=src.get("record") or {}, text=src.get("content"), arrival=int(src.get("arrival") or 0),
                     version=(hit["_seq_no"], hit["_primary_term"]))


def read_lookup_keys(client, index: str, url: str = "") -> LookupKeys:
    """The lookup keys recorded in an index's mapping (``_meta.lookup``): segments when none are recorded (an index
    made before lookup keys existed), the default keys when the index does not exist yet."""
    from elasticsearch import NotFoundError

    with elastic_errors(url):
        try:
            mapping = client.indices.get_mapping(index=index)
        except NotFoundError:
            return DEFAULT_KEYS
    meta = next(iter(mapping.values()))["mappings"].get("_meta", {})
    return LookupKeys.from_meta(meta.get("lookup"))


class ElasticIndex:
    """A :class:`~es_simhash.index.base.SegmentIndex` over one Elasticsearch index.

    ``lookup_keys``: the index's lookup keys; by default read from its mapping (``_meta.lookup``, recorded by
    :func:`ensure_index`); an index made before lookup keys existed has none recorded and uses its four 16-bit
    segments. ``batch_page``: hits one batched lookup search may return before the batch falls back to one
    search per document (a bucket shared by many documents: boilerplate).
    """

    overlapping_writes = True
    """The engine may look up batch N+1 while batch N is written (see :meth:`lookup`'s ``exclude``)."""
    shared_writers = True
    """Other processes may write into the index at the same time: the engine settles each batch after its write
    (:func:`es_simhash.cluster.settle`)."""
    max_terms_count = 65_536
    """Most values in one ``terms`` clause (the index setting ``index.max_terms_count``; its default)."""
    max_sketch_clauses = 4_000
    """Most sketch-hash clauses in one batched search (the batch is looked up in several searches beyond that):
    Elasticsearch allows at least 1,024 clauses per search, more with a bigger heap (8,192 with 512 MB)."""

    def __init__(
        self,
        client,
        index: str,
        *,
        page_size: int = 500,
        batch_page: int = 10_000,
        max_candidates: int = 20_000,
        max_sentence_df: int = 50,
        chunk_size: int = 500,
        max_retries: int = 8,
        retry_for: float = 300.0,
        url: str = "",
        lookup_keys: LookupKeys | None = None,
    ) -> None:
        self.client = client
        self.index = validate_index_name(index)
        self.page_size = page_size
        self.batch_page = batch_page
        self.max_candidates = max_candidates
        self.max_sentence_df = max_sentence_df
        self.chunk_size = chunk_size
        self.max_retries = max_retries
        self.url = url
        self.retry_for = retry_for
        self.truncated_lookups = 0
        self.crowded_batches = 0
        """Documents whose own lookup search was full, so they were read to the end one page at a time."""
        self.split_batches = 0
        """Batched searches that came back full and were split in two."""
        self.searches = 0
        """Searches sent by lookups (each search of an ``_msearch`` counts)."""
        self.hits_read = 0
        """Hits those searches brought to the client (before the exact re-rank)."""
        self._lookup_keys = lookup_keys
        self._counting = threading.Lock()
        self._boilerplate: dict[str, int] = {}
        """Sentence hashes seen in more than ``max_sentence_df`` documents, with that count: left out of later
        lookups (a sentence's document frequency only grows while documents are added)."""

    @property
    def lookup_keys(self) -> LookupKeys:
        """The keys recorded in the index's mapping (segments for an index made before lookup keys existed;
        the default keys for an index that does not exist yet)."""
        if self._lookup_keys is None:
            self._lookup_keys = read_lookup_keys(self.client, self.index, self.url)
        return self._lookup_keys

    def __len__(self) -> int:
        with elastic_errors(self.url):
            self.client.indices.refresh(index=self.index)
            return int(self.client.count(index=self.index)["count"])

    # -- lookups -------------------------------------------------------------------------------------------
    def lookup(self, queries: Sequence[Lookup], max_distance: int, exclude: Sequence[str] = ()) -> list[LookupResult]:
        """Candidates for a batch of queries.

        With permutation-table keys: **one search for the whole batch**, a ``bool``/``should`` over the batch's
        ids, content hashes, lookup keys and (non-boilerplate) sentence hashes, fetching doc values only; hits
        are mapped back to their queries here (a key both share, exact Hamming distance with numpy; same content;
        a shared long sentence, or two shared sketch hashes, that are not boilerplate). When that search is full (documents sharing keys or sentences
        with many stored ones), the batch is split in halves until each part's search fits; a single document whose
        own search is still full is read to the end with ``search_after``. An index with segments (made by an earlier release) is always looked up one search
        per document, as before.

        ``exclude``: ids whose stored versions are left out of the answers (the engine passes the batch it is
        still writing, whose documents it holds in memory: so the answer does not depend on whether that write
        is visible yet)."""
        if not queries:
            return []
        if self.lookup_keys.is_segments:
            return self._lookup_each(queries, max_distance, exclude)
        groups = list(self._clause_groups(queries))
        if len(groups) == 1:
            return self._lookup_batched(queries, max_distance, exclude)
        # several searches: sent at once (Elasticsearch runs each on its own search thread, one per core)
        with ThreadPoolExecutor(min(len(groups), 4), thread_name_prefix="lookup") as pool:
            parts = list(pool.map(lambda g: self._lookup_batched(g, max_distance, exclude), groups))
        return [r for part in parts for r in part]

    def _clause_groups(self, queries: Sequence[Lookup]) -> Iterator[Sequence[Lookup]]:
        """``queries`` in consecutive groups whose sketch clauses hold at most ``max_sketch_clauses`` terms
        (Elasticsearch limits the clauses of one search: 1,024 or more, by heap size)."""
        start, used = 0, 0
        for i, q in enumerate(queries):
            n = sum(1 for h in q.fingerprint.sentences if h >= SKETCH_BIT)
            if used + n > self.max_sketch_clauses and i > start:
                yield queries[start:i]
                start, used = i, 0
            used += n
        yield queries[start:]

    def _lookup_batched(self, queries: Sequence[Lookup], max_distance: int, exclude: Sequence[str]) -> list[LookupResult]:
        """One search for ``queries``. When it comes back full, the sentences it shows to be boilerplate are left
        out and the search is sent again; when it is still full (many documents share the batch's keys or
        sentences: near-duplicate clusters), each half is looked up on its own, down to single documents, which are
        read to the end one search at a time."""
        known = len(self._boilerplate)
        found = self._batch_search(queries, exclude)
        if found is not None:
            return self._match_batch(queries, *found, max_distance)
        if len(self._boilerplate) > known:  # the full page showed boilerplate sentences: again without them
            return self._lookup_batched(queries, max_distance, exclude)
        if len(queries) == 1:
            self.crowded_batches += 1
            return self._lookup_each(queries, max_distance, exclude)
        self.split_batches += 1
        mid = len(queries) // 2
        return (self._lookup_batched(queries[:mid], max_distance, exclude)
                + self._lookup_batched(queries[mid:], max_distance, exclude))

    def _sentence_terms(self, fp: Fingerprint, sentences: bool = True, sketch: bool = True) -> list[str]:
        """The fingerprint's sentence hashes as stored (long-sentence hashes, sketch hashes or both), less the
        known boilerplate ones."""
        wanted = (hex64(h) for h in fp.sentences if (sketch if h >= SKETCH_BIT else sentences))
        return [x for x in wanted if x not in self._boilerplate]

    def _terms(self, field: str, values: list[str]) -> list[dict[str, Any]]:
        """``terms`` clauses over ``values`` (``ids`` clauses for the field ``"ids"``), split so none holds more than
        ``max_terms_count`` (Elasticsearch's ``index.max_terms_count``, 65,536 by default, which a big batch's keys
        can exceed)."""
        step = self.max_terms_count
        chunks = [values[i:i + step] for i in range(0, len(values), step)]
        if field == "ids":
            return [{"ids": {"values": c}} for c in chunks]
        return [{"terms": {field: c}} for c in chunks]

    def _batch_search(self, queries: Sequence[Lookup], exclude: Sequence[str]
                      ) -> tuple[list[dict[str, Any]], dict[str, int]] | None:
        """The hits of one search for all ``queries`` and the document frequencies of their sketch hashes (hex ->
        count; absent: 0), or ``None`` when it returned a full page."""
        lk = self.lookup_keys
        fps = [q.fingerprint for q in queries]
        should: list[dict[str, Any]] = self._terms("ids", [q.id for q in queries])
        contents = sorted({hex64(fp.content_hash) for fp in fps if fp.n_chars})
        if contents:
            should += self._terms("content_hash", contents)
        with_keys = [fp.simhash for fp in fps if fp.n_features]
        if with_keys:
            terms = sorted({t for row in lk.terms(hamming.as_uint64(with_keys)) for t in row})
            should += self._terms("lookup_keys", terms)
        # long-sentence hashes: every stored document holding one is a candidate (and counting them in the hits
        # gives each hash's document frequency)
        sentences = sorted({x for fp in fps for x in self._sentence_terms(fp, sketch=False)})
        if sentences:
            should += self._terms("sentences", sentences)
        # shingle-sketch hashes: only a document holding MIN_SHARED_SKETCH of one query's is a candidate (one
        # shared common shingle would bring thousands), so one clause per query; their document frequencies are
        # counted by an aggregation instead, over every document holding one
        sketches = [self._sentence_terms(fp, sentences=False) for fp in fps]
        should += [{"bool": {"should": [{"term": {"sentences": x}} for x in terms],
                             "minimum_should_match": MIN_SHARED_SKETCH}}
                   for terms in dict.fromkeys(map(tuple, sketches)) if len(terms) >= MIN_SHARED_SKETCH]
        query: dict[str, Any] = {"bool": {"should": should, "minimum_should_match": 1}}
        if exclude:
            query["bool"]["must_not"] = self._terms("ids", list(exclude))
        body: dict[str, Any] = {"size": self.batch_page, "_source": False, "stored_fields": "_none_",
                                "docvalue_fields": _LOOKUP_FIELDS, "query": {"bool": {"filter": query}},
                                "track_total_hits": False}
        sketch_terms = sorted({x for terms in sketches for x in terms})
        if sketch_terms:
            body["aggs"] = {"sketch": {"global": {}, "aggs": {"held": self._df_agg(sketch_terms, exclude)}}}
        resp = self._msearch([body])[0]
        hits = resp["hits"]["hits"]
        sketch_df: dict[str, int] = {}
        if sketch_terms:  # document frequencies of the sketch hashes; the ones above max_sentence_df are boilerplate
            sketch_df = {b["key"]: b["doc_count"] for b in resp["aggregations"]["sketch"]["held"]["df"]["buckets"]}
            self._boilerplate.update({x: n for x, n in sketch_df.items() if n > self.max_sentence_df})
        if len(hits) >= self.batch_page:
            self._learn_boilerplate(hits, sentences)
            return None
        return hits, sketch_df

    def _learn_boilerplate(self, hits: list[dict[str, Any]], sentences: Sequence[str]) -> None:
        """From a full page: the batch's sentence hashes held by more than ``max_sentence_df`` of its hits are
        boilerplate (their document frequency is at least that), so later searches leave them out."""
        wanted = set(sentences)
        counts = Counter(x for h in hits for x in h["_source"].get("sentences") or () if x in wanted)
        self._boilerplate.update({x: n for x, n in counts.items() if n > self.max_sentence_df})

    def _match_batch(self, queries: Sequence[Lookup], hits: list[dict[str, Any]], sketch_df: dict[str, int],
                     max_distance: int) -> list[LookupResult]:
        """Map the hits of one batched search back to the queries that would have found them one by one."""
        lk = self.lookup_keys
        cap = self.max_sentence_df
        cols = _Hits(hits)
        pairs: list[set[int]] = [set() for _ in queries]  # query -> hit numbers
        # lookup keys: (table, key) of every query with features against those of every hit with features
        q_rows = [i for i, q in enumerate(queries) if q.fingerprint.n_features]
        h_rows = [j for j, s in enumerate(cols.srcs) if s.get("n_features")]
        if q_rows and h_rows:
            q_sims = hamming.as_uint64([queries[i].fingerprint.simhash for i in q_rows])
            h_sims = np.array(cols.simhash, dtype=np.uint64)[h_rows]
            qi, hj = _shared_keys(lk.keys(q_sims), lk.keys(h_sims))
            near = hamming.popcount(q_sims[qi] ^ h_sims[hj]) <= max_distance
            for i, j in zip(qi[near].tolist(), hj[near].tolist()):
                pairs[q_rows[i]].add(h_rows[j])
        # same content, and sentences: every stored document holding one of the batch's long sentences matched,
        # so counting the hits gives each such hash's document frequency (the sketch hashes' came counted)
        wanted_content = {q.fingerprint.content_hash for q in queries if q.fingerprint.n_chars}
        by_content: dict[int, list[int]] = {}
        wanted = {h for q in queries for h in q.fingerprint.sentences}
        by_sentence: dict[int, list[int]] = {}
        for j, (content, sentences) in enumerate(zip(cols.content, cols.sentence_ints)):
            if content in wanted_content and cols.srcs[j].get("content_hash"):
                by_content.setdefault(content, []).append(j)
            for h in sentences:
                if h in wanted:
                    by_sentence.setdefault(h, []).append(j)
        df_of: dict[int, int] = {}
        for h in wanted:
            x = hex64(h)
            df = self._boilerplate.get(x) or (sketch_df.get(x, 0) if h >= SKETCH_BIT else len(by_sentence.get(h, ())))
            df_of[h] = df
            if df > cap:
                self._boilerplate[x] = df
        by_id = {doc_id: j for j, doc_id in enumerate(cols.ids)}
        out = []
        for q, found in zip(queries, pairs):
            fp = q.fingerprint
            if fp.n_chars:
                found.update(by_content.get(fp.content_hash, ()))
            sentence_df: dict[int, int] = {}
            sketch_hits: list[int] = []
            for h in fp.sentences:
                df = sentence_df[h] = df_of[h]
                if df and df <= cap:
                    if h < SKETCH_BIT:
                        found.update(by_sentence[h])
                    else:  # (the hits hold only some of the documents with this hash: those sharing two)
                        sketch_hits += by_sentence.get(h, ())
            found.update(sharing_sketch(sketch_hits))
            own = by_id.get(q.id)
            found.discard(own)  # type: ignore[arg-type]
            existing = cols.doc(own) if own is not None else None
            out.append(LookupResult(existing, [cols.doc(j) for j in sorted(found)], False, sentence_df))
        return out

    def _body(
        self, q: Lookup, sentences: Sequence[str], exclude: Sequence[str] = (), search_after: list[Any] | None = None,
        paged: bool = False,
    ) -> dict[str, Any]:
        """One ``bool``/``should`` over id, content hash, the lookup keys (or the four segments) and the sentence
        hashes of one document.

        The first page is unsorted (sorting costs more than the search); only a crowded bucket is read again
        in ``doc_id`` order with ``search_after``."""
        fp = q.fingerprint
        lk = self.lookup_keys
        should: list[dict[str, Any]] = [{"ids": {"values": [q.id]}}]
        if fp.n_chars:
            should.append({"term": {"content_hash": hex64(fp.content_hash)}})
        if fp.n_features:
            if lk.is_segments:
                should += [{"term": {f"seg{i}": key}} for i, key in enumerate(lk.segment_terms(fp.simhash))]
            else:
                should.append({"terms": {"lookup_keys": lk.terms(hamming.as_uint64([fp.simhash]))[0]}})
        if sentences:
            should.append({"terms": {"sentences": list(sentences)}})
        query: dict[str, Any] = {"bool": {"should": should, "minimum_should_match": 1}}
        if exclude:
            query["bool"]["must_not"] = self._terms("ids", list(exclude))
        body: dict[str, Any] = {
            "size": self.page_size,
            "_source": False,
            "stored_fields": "_none_",
            "docvalue_fields": _LOOKUP_FIELDS,
            "query": {"bool": {"filter": query}},
            "track_total_hits": False,
        }
        if paged:
            body["sort"] = [{"doc_id": "asc"}]
        if search_after is not None:
            body["search_after"] = search_after
        return body

    def _msearch(self, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if not bodies:
            return []
        searches: list[dict[str, Any]] = []
        for b in bodies:
            searches += [{"index": self.index}, b]

        def attempt() -> list[dict[str, Any]]:
            resp = self.client.msearch(searches=searches, filter_path=_MSEARCH_FILTER)
            out = []
            for r in resp["responses"]:
                if "error" in r:
                    err = r["error"]
                    root = (err.get("root_cause") or [err])[0] if isinstance(err, dict) else {"reason": err}
                    msg = f"lookup failed in index {self.index!r}: {root.get('type')}: {root.get('reason')}"
                    if r.get("status") in _RETRY_STATUSES or root.get("type") in _RETRY_TYPES:
                        raise _Transient(msg)
                    raise ElasticError(msg)
                hits = r.get("hits", {}).get("hits", [])
                with self._counting:  # (lookups may run in several threads)
                    self.searches += 1
                    self.hits_read += len(hits)
                for h in hits:
                    h["_source"] = _from_docvalues(h.pop("fields", {}))
                    h["_id"] = h["_source"]["doc_id"]
                out.append({"hits": {"hits": hits}, "aggregations": r.get("aggregations", {})})
            return out

        return self._retrying(attempt, "lookup")

    def _lookup_each(self, queries: Sequence[Lookup], max_distance: int, exclude: Sequence[str]) -> list[LookupResult]:
        """One search per query in one ``_msearch``; more requests only for lookups that hit a crowded bucket."""
        sentences = [self._sentence_terms(q.fingerprint) for q in queries]
        responses = self._msearch([self._body(q, s, exclude) for q, s in zip(queries, sentences)])
        hits_of = [r["hits"]["hits"] for r in responses]
        crowded = [i for i, h in enumerate(hits_of) if len(h) >= self.page_size]
        truncated: set[int] = set()
        if crowded:
            # A full first page: some bucket is shared by many documents. Boilerplate sentences (document
            # frequency above max_sentence_df) are left out of the query, then the rest is read to the end.
            with_sentences = [i for i in crowded if sentences[i]]
            dfs = self._msearch([self._df_body(sentences[i], exclude) for i in with_sentences])
            for i, resp in zip(with_sentences, dfs):
                df = {b["key"]: b["doc_count"] for b in resp["aggregations"]["held"]["df"]["buckets"]}
                self._boilerplate.update({h: df[h] for h in sentences[i] if df.get(h, 0) > self.max_sentence_df})
                sentences[i] = [h for h in sentences[i] if h not in self._boilerplate]
            truncated = self._page_through(queries, sentences, exclude, crowded, hits_of)
        return [
            self._rank(q, s, hits, max_distance, i in truncated)
            for i, (q, s, hits) in enumerate(zip(queries, sentences, hits_of))
        ]

    def _df_body(self, sentences: list[str], exclude: Sequence[str]) -> dict[str, Any]:
        return {"size": 0, "aggs": {"held": self._df_agg(sentences, exclude)}}

    def _df_agg(self, sentences: list[str], exclude: Sequence[str]) -> dict[str, Any]:
        """An aggregation counting the documents that hold each of ``sentences`` (their document frequency),
        leaving out ``exclude``. (``map``: no global ordinals, which would be rebuilt after every refresh.)"""
        query: dict[str, Any] = {"terms": {"sentences": sentences}}
        if exclude:
            query = {"bool": {"filter": query, "must_not": self._terms("ids", list(exclude))}}
        return {"filter": query, "aggs": {"df": {"terms": {
            "field": "sentences", "include": sentences, "size": len(sentences), "execution_hint": "map"}}}}

    def _page_through(
        self, queries: Sequence[Lookup], sentences: list[list[str]], exclude: Sequence[str], crowded: list[int],
        hits_of: list[list],
    ) -> set[int]:
        truncated: set[int] = set()
        for i in crowded:
            hits_of[i] = []
        open_ = {i: None for i in crowded}  # lookup -> search_after
        while open_:
            order = list(open_)
            pages = self._msearch([self._body(queries[i], sentences[i], exclude, open_[i], paged=True) for i in order])
            open_ = {}
            for i, resp in zip(order, pages):
                page = resp["hits"]["hits"]
                hits_of[i].extend(page)
                if len(hits_of[i]) >= self.max_candidates:
                    truncated.add(i)
                    self.truncated_lookups += 1
                    log.warning(
                        "document %r shares a bucket with more than %d documents in index %r: only the first %d "
                        "candidates were compared (raise max_candidates)",
                        queries[i].id, self.max_candidates, self.index, len(hits_of[i]),
                    )
                elif len(page) == self.page_size:
                    open_[i] = page[-1]["sort"]
        return truncated

    def _rank(
        self,
        q: Lookup,
        sentences: list[str],
        hits: list[dict[str, Any]],
        max_distance: int,
        truncated: bool,
    ) -> LookupResult:
        """Keep what the embedded index would return: same content; a shared lookup key within ``max_distance``
        (exact Hamming re-rank, vectorised); or a shared sentence that is not boilerplate."""
        fp = q.fingerprint
        # document frequency of the query's sentences: counted in the hits (every stored document holding one of
        # them matched the query), or known for the boilerplate ones left out of it
        df = Counter(x for h in hits for x in h["_source"].get("sentences") or () if x in sentences)
        for x, n in df.items():
            if n > self.max_sentence_df:
                self._boilerplate[x] = n
        sentence_df = {h: self._boilerplate.get(hex64(h)) or df.get(hex64(h), 0) for h in fp.sentences}
        cols = _Hits(hits)
        existing = next((cols.doc(j) for j, doc_id in enumerate(cols.ids) if doc_id == q.id), None)
        others = np.array([j for j, doc_id in enumerate(cols.ids) if doc_id != q.id], dtype=np.intp)
        if not len(others):
            return LookupResult(existing, [], truncated, sentence_df)
        srcs = [cols.srcs[j] for j in others.tolist()]
        sims = np.array(cols.simhash, dtype=np.uint64)[others]
        keep = np.zeros(len(others), dtype=bool)
        if fp.n_features:
            lk = self.lookup_keys
            shares_key = lk.share_a_key(sims, np.full(len(sims), fp.simhash, dtype=np.uint64))
            shares_key &= np.array([s.get("n_features") != 0 for s in srcs])
            keep |= shares_key & (hamming.distances(fp.simhash, sims) <= max_distance)
        if fp.n_chars:
            content = hex64(fp.content_hash)
            keep |= np.array([s.get("content_hash") == content for s in srcs])
        good = {x for x in sentences if df[x] <= self.max_sentence_df}
        if good:
            long_ = {x for x in good if int(x, 16) < SKETCH_BIT}
            sketch = good - long_
            keep |= np.array([sentence_candidate(long_, sketch, s.get("sentences") or ()) for s in srcs])
        return LookupResult(existing, [cols.doc(j) for j in others[keep].tolist()], truncated, sentence_df)

    # -- writes --------------------------------------------------------------------------------------------
    def _source(self, doc: StoredDoc, now: str, lookup_keys: list[str] | None = None) -> dict[str, Any]:
        fp = doc.fingerprint
        src: dict[str, Any] = {
            "doc_id": doc.id,
            "fingerprint_version": fp.version,
            "simhash": hex64(fp.simhash),
            "simhash_long": hamming.to_signed(fp.simhash),
            "sentences": [hex64(h) for h in fp.sentences],
            "n_features": fp.n_features,
            "n_chars": fp.n_chars,
            "short": fp.short,
            "dup_cluster": doc.cluster,
            "dup_of": doc.duplicate_of,
            "dup_distance": doc.distance,
            "dup_reason": doc.reason,
            "is_canonical": doc.is_canonical,
            "indexed_at": (datetime.fromtimestamp(doc.arrival / 1e6, timezone.utc).isoformat(timespec="seconds")
                           if doc.arrival else now),
            "arrival": doc.arrival,
        }
        if fp.n_chars:
            src["content_hash"] = hex64(fp.content_hash)
        if fp.word_bag:
            src["word_bag"] = hex64(fp.word_bag)
        for i, key in enumerate(fp.segment_keys()):
            src[f"seg{i}"] = key
        if lookup_keys:
            src["lookup_keys"] = lookup_keys
        record = doc.fields or {}
        if doc.text is not None:
            src["content"] = doc.text
            src["content_folded"] = fold_text(doc.text)
        for name, value in zip(("title", "url", "crawl_time"), record_meta(record)):
            if value is not None and not isinstance(value, (dict, list)):
                src[name] = value if name == "crawl_time" else str(value)
        if "title" in src:
            src["title_folded"] = fold_text(src["title"])
        rest = {k: v for k, v in record.items() if doc.text is None or v is not doc.text}
        if rest:
            src["record"] = rest
        return src

    def add(self, docs: Sequence[StoredDoc]) -> dict[str, str]:
        """Bulk-index ``docs`` and refresh. Items refused for good (e.g. a mapping error) are returned with their
        reason; transient failures (429, unavailable shards, a node down) are retried until ``retry_for``."""
        return self._bulk(self._index_actions(docs, conditional=False))[0]

    def add_conditional(self, docs: Sequence[StoredDoc]) -> tuple[dict[str, str], list[str]]:
        """Bulk-index each document only over its stored version ``doc.version`` (``create`` when ``None``), then
        refresh: ``(refused, conflicts)``, conflicts being the ids whose stored version is another (409)."""
        return self._bulk(self._index_actions(docs, conditional=True))

    def _index_actions(self, docs: Sequence[StoredDoc], conditional: bool) -> list[dict[str, Any]]:
        """Bulk ``index`` actions writing ``docs`` whole (the lookup keys, left out of ``_source``, are derived
        again from ``simhash``); ``conditional``: only over the stored version ``doc.version`` (``create`` when
        ``None``)."""
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        keys: list[list[str] | None] = [None] * len(docs)
        if not self.lookup_keys.is_segments:  # segments are always written (seg0..seg3): Kibana and users read them
            with_keys = [i for i, d in enumerate(docs) if d.fingerprint.n_features]
            terms = self.lookup_keys.terms(hamming.as_uint64([docs[i].fingerprint.simhash for i in with_keys]))
            for i, t in zip(with_keys, terms):
                keys[i] = t
        actions = []
        for d, k in zip(docs, keys):
            action = {"_index": self.index, "_id": d.id, "_source": self._source(d, now, k)}
            if conditional:
                if d.version is None:
                    action["_op_type"] = "create"
                else:
                    action["if_seq_no"], action["if_primary_term"] = d.version
            actions.append(action)
        return actions

    def _bulk(self, actions: list[dict[str, Any]]) -> tuple[dict[str, str], list[str]]:
        """Send bulk ``actions`` and refresh: ``(refused, conflicts)``, the ids refused for good with their reason
        and the ids whose conditional write met another version (409). Transient failures are retried until
        ``retry_for``."""
        from elasticsearch import helpers

        pending = {a["_id"]: a for a in actions}
        refused: dict[str, str] = {}
        conflicts: list[str] = []

        def attempt() -> None:
            transient: dict[str, str] = {}
            for ok, item in helpers.streaming_bulk(
                self.client,
                list(pending.values()),
                chunk_size=self.chunk_size,
                max_retries=self.max_retries,
                initial_backoff=1,
                max_backoff=30,
                raise_on_error=False,
                yield_ok=True,
                **_bulk_retry_statuses(),
            ):
                op_type, op = next(iter(item.items()))
                doc_id = str(op.get("_id"))
                status = op.get("status")
                if ok or (op_type == "delete" and status == 404):  # (a delete of a document already gone)
                    pending.pop(doc_id, None)
                    continue
                err = op.get("error", {})
                reason = (f"{err.get('type')}: {err.get('reason')}" if isinstance(err, dict) else str(err))[:300]
                if status == 409:
                    conflicts.append(doc_id)
                    pending.pop(doc_id, None)
                elif status in _RETRY_STATUSES or (isinstance(err, dict) and err.get("type") in _RETRY_TYPES):
                    transient[doc_id] = reason
                else:
                    refused[doc_id] = reason
                    pending.pop(doc_id, None)
            if transient:
                raise _Transient(f"{len(transient)} documents not written yet: {next(iter(transient.values()))}")
            self.client.indices.refresh(index=self.index)

        self._retrying(attempt, "bulk write")
        return refused, conflicts

    # -- maintenance (es_simhash.cluster) ---------------------------------------------------------------
    def fetch(self, ids: Collection[str], whole: bool = True) -> dict[str, StoredDoc]:
        """The stored documents with these ids, with their versions (missing ids are left out); without ``whole``
        only their fingerprints and cluster fields (no text or record: such a document cannot be written back)."""
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        light = {} if whole else {"source_excludes": _PAYLOAD}

        def attempt() -> dict[str, StoredDoc]:
            resp = self.client.mget(index=self.index, ids=ids, realtime=True, **light)
            return {d["_id"]: _stored(d) for d in resp["docs"] if d.get("found")}

        return self._retrying(attempt, "fetch")

    def _search_all(self, query: dict[str, Any], page: int = 1000, after: str | None = None
                    ) -> Iterator[list[StoredDoc]]:
        """Every document matching ``query``, with versions but without text or record, in ``doc_id`` order, a
        page at a time."""
        cursor = [after] if after is not None else None
        while True:
            body: dict[str, Any] = {"size": page, "query": query, "sort": [{"doc_id": "asc"}],
                                    "_source": {"excludes": list(_PAYLOAD)},
                                    "seq_no_primary_term": True, "track_total_hits": False}
            if cursor is not None:
                body["search_after"] = cursor

            def attempt() -> list[dict[str, Any]]:
                return self.client.search(index=self.index, body=body)["hits"]["hits"]

            hits = self._retrying(attempt, "search")
            if not hits:
                return
            yield [_stored(h) for h in hits]
            if len(hits) < page:
                return
            cursor = hits[-1]["sort"]

    def pointing_at(self, ids: Collection[str]) -> list[StoredDoc]:
        """The stored documents whose ``dup_cluster`` or ``dup_of`` is one of ``ids`` (without text or record)."""
        ids = sorted(set(ids))
        if not ids:
            return []
        query = {"bool": {"should": self._terms("dup_cluster", ids) + self._terms("dup_of", ids),
                          "minimum_should_match": 1}}
        return [d for page in self._search_all(query) for d in page]

    def replace(self, docs: Sequence[StoredDoc]) -> list[str]:
        """Write each document whole over its stored version ``doc.version`` (``create`` when ``None``), then
        refresh; returns the ids whose stored document had changed (version conflicts: nothing written)."""
        refused, conflicts = self._bulk(self._index_actions(docs, conditional=True))
        if refused:
            raise ElasticError(f"index {self.index!r} refused {len(refused)} rewritten documents: "
                               f"{next(iter(refused.values()))}")
        return conflicts

    def remove(self, docs: Sequence[StoredDoc]) -> list[str]:
        """Delete each document if it is still ``doc.version`` (one already gone counts as deleted), then refresh;
        returns the ids that had changed in the meantime."""
        actions = []
        for d in docs:
            action: dict[str, Any] = {"_op_type": "delete", "_index": self.index, "_id": d.id}
            if d.version is not None:
                action["if_seq_no"], action["if_primary_term"] = d.version
            actions.append(action)
        refused, conflicts = self._bulk(actions)
        if refused:
            raise ElasticError(f"index {self.index!r} refused to delete {len(refused)} documents: "
                               f"{next(iter(refused.values()))}")
        self._boilerplate.clear()  # document frequencies went down: learn them again
        return conflicts

    def visible_mark(self) -> int:
        """The lowest global checkpoint of the index's shards, read before a refresh: every operation up to it has
        been processed by every copy, so after the refresh every document with a ``_seq_no`` up to it is visible
        (with several shards, the lowest over them makes :meth:`written_since` a superset)."""

        def attempt() -> int:
            stats = self.client.indices.stats(index=self.index, level="shards", metric="docs",
                                              filter_path="indices.*.shards.*.seq_no.global_checkpoint")
            marks = [copy["seq_no"]["global_checkpoint"] for index in stats.get("indices", {}).values()
                     for copies in index["shards"].values() for copy in copies]
            self.client.indices.refresh(index=self.index)
            return min(marks) if marks else -1

        return self._retrying(attempt, "stats")

    def written_since(self, mark: int) -> list[StoredDoc]:
        """The documents whose ``_seq_no`` is above ``mark`` (written or rewritten since it; without text)."""
        return [d for page in self._search_all({"range": {"_seq_no": {"gt": mark}}}) for d in page]

    def first_holders(self, hashes: Collection[int], limit: int) -> dict[int, list[StoredDoc]]:
        """For each hash, the first ``limit`` documents holding it in arrival order (one search per hash, in one
        ``_msearch``; without text or record)."""
        wanted = sorted(set(hashes))
        if not wanted:
            return {}
        searches: list[dict[str, Any]] = []
        for h in wanted:
            searches += [{"index": self.index},
                         {"size": limit, "query": {"term": {"sentences": hex64(h)}},
                          "sort": [{"arrival": {"order": "asc", "unmapped_type": "long", "missing": "_first"}},
                                   {"doc_id": "asc"}],
                          "_source": {"excludes": list(_PAYLOAD)}, "seq_no_primary_term": True,
                          "track_total_hits": False}]

        def attempt() -> dict[int, list[StoredDoc]]:
            resp = self.client.msearch(searches=searches)
            out: dict[int, list[StoredDoc]] = {}
            for h, r in zip(wanted, resp["responses"]):
                if "error" in r:
                    err = r["error"]
                    root = (err.get("root_cause") or [err])[0] if isinstance(err, dict) else {"reason": err}
                    msg = f"search failed in index {self.index!r}: {root.get('type')}: {root.get('reason')}"
                    if r.get("status") in _RETRY_STATUSES or root.get("type") in _RETRY_TYPES:
                        raise _Transient(msg)
                    raise ElasticError(msg)
                out[h] = [_stored(hit) for hit in r["hits"]["hits"]]
            return out

        return self._retrying(attempt, "search")

    def records(self, page: int = 500) -> Iterator[tuple[str, str | None, dict[str, Any]]]:
        """``(id, text, record)`` of every stored document, the earliest first (arrival, then ``indexed_at`` for
        documents of earlier releases, then id): what a migration indexes again, in the order they came."""
        sort = [{"arrival": {"order": "asc", "unmapped_type": "long", "missing": "_first"}},
                {"indexed_at": {"order": "asc", "unmapped_type": "date", "missing": "_first"}},
                {"doc_id": "asc"}]
        cursor = None
        while True:
            body: dict[str, Any] = {"size": page, "query": {"match_all": {}}, "sort": sort,
                                    "_source": ["content", "record"], "track_total_hits": False}
            if cursor is not None:
                body["search_after"] = cursor

            def attempt() -> list[dict[str, Any]]:
                return self.client.search(index=self.index, body=body)["hits"]["hits"]

            hits = self._retrying(attempt, "search")
            for h in hits:
                src = h.get("_source") or {}
                yield h["_id"], src.get("content"), src.get("record") or {}
            if len(hits) < page:
                return
            cursor = hits[-1]["sort"]

    def scan(self, page: int = 1000, after: str | None = None) -> Iterator[list[StoredDoc]]:
        """All stored documents (without text or record), with versions, in ``doc_id`` order from the first id
        after ``after``."""
        return self._search_all({"match_all": {}}, page, after)

    def _retrying(self, fn, what: str):
        """Call ``fn`` until it succeeds, backing off (0.5 s doubling to 30 s) on transient failures — node down,
        timeouts, 429/502/503/504 — for at most ``retry_for`` seconds, then raise :class:`ElasticError`."""
        from elasticsearch import ApiError, ConnectionError, ConnectionTimeout

        deadline = time.monotonic() + self.retry_for
        delay = 0.5
        while True:
            try:
                with elastic_errors(self.url):
                    try:
                        return fn()
                    except ApiError as exc:
                        if exc.meta.status in _RETRY_STATUSES:
                            raise _Transient(f"HTTP {exc.meta.status}: {_api_reason(exc)}") from None
                        raise
            except (_Transient, ElasticError) as exc:
                cause = exc.__context__ if isinstance(exc, ElasticError) else None
                transient = isinstance(exc, _Transient) or isinstance(cause, (ConnectionError, ConnectionTimeout))
                if not transient:
                    raise
                if time.monotonic() + delay > deadline:
                    raise ElasticError(
                        f"gave up on {what} after retrying for {self.retry_for:.0f}s: {exc}"
                    ) from None
                log.warning("%s failed (%s); retrying in %.1fs", what, exc, delay)
                time.sleep(delay)
                delay = min(delay * 2, 30.0)
