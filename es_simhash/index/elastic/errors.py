"""Client exceptions as one-line :class:`~es_simhash.errors.ElasticError` messages that say what to do, and the retry
policy for transient failures (node restarting, shards unassigned, queue full)."""

from __future__ import annotations

import logging
import re
import time
from typing import Any, Callable, Literal, TypeVar
from urllib.parse import urlsplit, urlunsplit

from es_simhash.errors import ElasticError

log = logging.getLogger("es_simhash.index.elastic")
T = TypeVar("T")



class Transient(Exception):
    """A failure worth retrying (node restarting, shards unassigned, queue full)."""


RETRY_STATUSES = (429, 502, 503, 504)
"""HTTP statuses worth retrying: the client's transport, bulk items (``streaming_bulk``) and our own retries."""
RETRY_TYPES = (
    "es_rejected_execution_exception",
    "rejected_execution_exception",  # (OpenSearch's name for it)
    "unavailable_shards_exception",
    "no_shard_available_action_exception",
    "cluster_block_exception",
    "node_not_connected_exception",
    "node_disconnected_exception",  # (a node left while a search ran on it: the retry reaches its replica)
    "connect_transport_exception",
    "node_closed_exception",
    "search_context_missing_exception",  # (a point in time whose node left: opened again on retry)
)

READ_ONLY_BLOCKS = ("write", "read_only")
"""The index blocks (``index.blocks.*``) that make an index read-only on purpose (by its user, or a lifecycle
policy's warm phase): a write refused by one is refused for good (:func:`blocked_for_good`). The disk guard's
``read_only_allow_delete`` is lifted by the cluster once space is freed: a write it refuses is retried."""
_BLOCKED_FOR_GOOD = ("index write (api)", "index read-only (api)")
"""How a write refused by one of :data:`READ_ONLY_BLOCKS` names the block (``FORBIDDEN/8/index write (api)``,
``FORBIDDEN/5/index read-only (api)``)."""


def blocked_for_good(error_type: str | None, reason: str | None) -> bool:
    """Whether a failed write (its error ``type`` and ``reason``) was refused by one of :data:`READ_ONLY_BLOCKS`."""
    return error_type == "cluster_block_exception" and any(b in (reason or "") for b in _BLOCKED_FOR_GOOD)


class elastic_errors:
    """Context manager turning client exceptions into one-line :class:`ElasticError` messages."""

    def __init__(self, url: str, credentials: tuple[str, str | None] | None = None,
                 where: Callable[[str], str] | None = None) -> None:
        self.url = url
        self.credentials = credentials
        """What to check when the cluster rejects the credentials, and its setting
        (:attr:`ConnectionSettings.credentials`)."""
        self.where = where or (lambda key: f"ES_{key.upper()}")
        """Where a connection setting is set, for messages (:meth:`ConnectionSettings.where`)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type, exc, tb) -> Literal[False]:
        if exc is None or isinstance(exc, ElasticError):
            return False
        kind = failure_kind(exc)
        engine = engine_name(exc)
        setting = None
        if kind == "tls":
            msg = _tls_message(self.url, str(exc), self.where("ca_certs"))
            setting = "ca_certs" if "TLS verification failed" in msg else None
        elif kind == "timeout":
            msg = (f"{engine} at {self.url} did not answer in time; check it is healthy, or raise "
                   "request_timeout (the config file's [elasticsearch] table)")
        elif kind == "connection":
            msg = _connection_message(self.url, str(exc), self.where("url"), engine)
            setting = "url" if msg.startswith("cannot reach") else None
        elif kind == "auth":
            advice, setting = self.credentials or ("check ES_API_KEY, or ES_USERNAME and ES_PASSWORD", None)
            msg = f"{engine} at {self.url} rejected the credentials (401): {advice}"
        elif kind == "forbidden":
            msg = f"{engine} at {self.url} refused the request (403): the user or API key lacks privileges"
        elif kind == "product":
            msg, setting = other_product_message(self.url, exc, self.where("url")), "url"
        elif kind == "api" and not _from_the_engine(exc):
            msg = _not_elasticsearch_message(self.url, exc)
        elif kind == "api":
            msg = f"{engine} refused the request ({api_status(exc)}): {api_reason(exc)}"
        elif kind == "transport":
            msg = f"{engine} transport error at {self.url}: {type(exc).__name__}"
        else:
            return False
        raise ElasticError(msg, setting) from None


def _opensearch_exceptions() -> Any:
    """``opensearchpy.exceptions``, or ``None`` where opensearch-py is not installed (no OpenSearch client can have
    raised then)."""
    try:
        from opensearchpy import exceptions
    except ImportError:
        return None
    return exceptions


def failure_kind(exc: BaseException) -> str | None:
    """What a client exception of either library says: ``"tls"``, ``"timeout"``, ``"connection"`` (no HTTP answer),
    ``"auth"`` (401), ``"forbidden"`` (403), ``"product"`` (an answer from a node that is not Elasticsearch, to
    Elasticsearch's client), ``"api"`` (any other HTTP error answer), ``"transport"``; ``None``: not a client
    exception."""
    from elasticsearch import (
        ApiError,
        AuthenticationException,
        AuthorizationException,
        ConnectionError,
        ConnectionTimeout,
        SSLError,
        TransportError,
        UnsupportedProductError,
    )

    kinds: list[tuple[Any, str]] = [
        (SSLError, "tls"), (ConnectionTimeout, "timeout"), (ConnectionError, "connection"),
        (AuthenticationException, "auth"), (AuthorizationException, "forbidden"), (UnsupportedProductError, "product"),
        (ApiError, "api"), (TransportError, "transport")]
    found = _opensearch_exceptions()
    if found is not None:
        kinds += [(found.SSLError, "tls"), (found.ConnectionTimeout, "timeout"), (found.ConnectionError, "connection"),
                  (found.AuthenticationException, "auth"), (found.AuthorizationException, "forbidden")]
    for cls, kind in kinds:
        if isinstance(exc, cls):
            return kind
    if found is not None and isinstance(exc, found.TransportError):
        return "api" if isinstance(exc.status_code, int) else "transport"
    if found is not None and isinstance(exc, (found.OpenSearchException, found.ImproperlyConfigured)):
        return "transport"  # (a response that does not parse, a client set up wrong)
    return None


def api_status(exc: BaseException) -> int | None:
    """The HTTP status of an error answer (either library's exception); ``None`` for other failures."""
    meta = getattr(exc, "meta", None)
    status = getattr(meta, "status", None) if meta is not None else getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _from_opensearch_py(exc: BaseException) -> bool:
    """Whether ``opensearch-py`` raised ``exc`` (else ``elasticsearch-py``, or neither)."""
    return type(exc).__module__.startswith("opensearchpy")


def engine_name(exc: BaseException) -> str:
    """The engine a client exception came from, for messages: ``"OpenSearch"`` for ``opensearch-py``'s."""
    return "OpenSearch" if _from_opensearch_py(exc) else "Elasticsearch"


def _body(exc: BaseException) -> Any:
    """An error answer's JSON (``opensearch-py`` keeps it as ``info``)."""
    return getattr(exc, "info" if _from_opensearch_py(exc) else "body", None)


def _headers(exc: BaseException) -> dict[str, str]:
    """An error answer's HTTP headers, names in lower case (none from ``opensearch-py``, which keeps none)."""
    try:
        return {k.lower(): v for k, v in (exc.meta.headers or {}).items()}  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001
        return {}


def api_reason(exc: Any) -> str:
    try:
        err = _body(exc)["error"]
        root = (err.get("root_cause") or [err])[0]
        return _one_line(f"{root.get('type')}: {root.get('reason')}")
    except Exception:  # noqa: BLE001
        return _one_line(str(getattr(exc, "message", None) or getattr(exc, "error", None) or exc))


def _one_line(text: str, limit: int = 300) -> str:
    return " ".join(text.split())[:limit]


def _other_scheme(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(("http" if parts.scheme == "https" else "https", parts.netloc, parts.path, "", ""))


_TLS_VERIFY = ("certificate verify failed", "certificate_verify_failed", "hostname mismatch",
               "doesn't match", "not valid for")


def _tls_message(url: str, reason: str, where: str = "ES_CA_CERTS") -> str:
    """A failed TLS handshake: the certificate was not trusted (pass the CA), or the other end does not speak TLS
    at all (a plain-HTTP node: use http://)."""
    found = re.search(r"\[SSL(?:: [A-Z_]+)?\] ([^()]+?)\s*(?:\(_ssl|\)|$)", reason)
    why = _one_line(found.group(1) if found else reason, 120)
    if any(k in reason.lower() for k in _TLS_VERIFY):
        return f"TLS verification failed for {url} ({why}): pass the cluster's CA certificate with {where}"
    return f"{url} does not answer TLS ({why}): if the node serves plain HTTP, use {_other_scheme(url)}"


_REFUSED = ("connection refused", "failed to establish", "no route to host", "network is unreachable",
            "cannot assign requested address")
_UNRESOLVED = ("name or service not known", "nodename nor servname", "temporary failure in name resolution",
               "no address associated with hostname", "getaddrinfo failed", "name resolution")


def _connection_message(url: str, reason: str, where: str = "ES_URL", engine: str = "Elasticsearch") -> str:
    """The host name does not resolve (check the URL), nothing listens (is it running?), or something took the
    connection and dropped it without an HTTP answer: over http:// that is what an HTTPS node does."""
    low = reason.lower()
    if any(k in low for k in _UNRESOLVED):
        host = urlsplit(url).hostname or url
        return (f"cannot reach {engine} at {url}: the host name {host!r} does not resolve (DNS): check the "
                f"host in the URL; set its URL with {where}")
    if any(k in low for k in _REFUSED) or not any(k in low for k in ("reset", "aborted", "remotedisconnected",
                                                                      "closed", "badstatusline")):
        return (f"cannot reach {engine} at {url}: is it running? (see README: docker compose, or "
                f"scripts/es_node.py start); set its URL with {where}")
    if urlsplit(url).scheme == "http":
        return (f"{url} closed the connection without an HTTP answer: an HTTPS node does that to plain HTTP; "
                f"use {_other_scheme(url)}")
    return f"{url} closed the connection without an answer: is it {engine}?"


def _from_the_engine(exc: Any) -> bool:
    """Whether an HTTP error response came from the search engine (Elasticsearch's ``X-Elastic-Product`` header, or
    an error body of theirs) rather than from another server at that address."""
    if _headers(exc).get("x-elastic-product") == "Elasticsearch":
        return True
    body = _body(exc)
    return isinstance(body, dict) and ("error" in body or "status" in body)


def other_product_message(url: str, exc: Any, where: str = "ES_URL", client_missing: bool = False) -> str:
    """A node that answers Elasticsearch's client without Elasticsearch's product header and is not OpenSearch
    either (a proxy that drops the header, another product), or, with ``client_missing``, may be OpenSearch but
    opensearch-py is not installed: which, when its answer says so."""
    version = exc.body.get("version") if isinstance(getattr(exc, "body", None), dict) else None
    if isinstance(version, dict) and version.get("distribution"):
        what = f"it is {_one_line(str(version['distribution']), 40)} {_one_line(str(version.get('number', '')), 20)}"
    else:
        what = "it answers without Elasticsearch's product header"
    if client_missing:
        return (f"the node at {url} is not Elasticsearch ({what.strip()}): if it is OpenSearch, install its client "
                f"with pip install 'es-simhash[opensearch]'; else set an Elasticsearch or OpenSearch node's URL "
                f"with {where}")
    return (f"the node at {url} is neither Elasticsearch nor OpenSearch ({what.strip()}: a proxy that drops "
            f"the header?): es-simhash speaks to Elasticsearch 8 and 9 and OpenSearch 2 and 3; set such a "
            f"node's URL with {where}")


def _not_elasticsearch_message(url: str, exc: Any) -> str:
    """An error answer that came from another server than the engine (a web server, a proxy's error page)."""
    status = api_status(exc) or "?"
    headers = _headers(exc)
    ctype, server = headers.get("content-type", ""), headers.get("server", "")
    what = ", ".join(x for x in (f"HTTP {status}", ctype.split(";")[0], server and f"server {server}") if x)
    engine = engine_name(exc)
    return f"the server at {url} is not {engine} ({_one_line(what, 120)}): check the {engine} URL"


def retrying(fn: Callable[[], T], what: str, url: str, retry_for: float) -> T:
    """Call ``fn`` until it succeeds, backing off (0.5 s doubling to 30 s) on transient failures — node down,
    timeouts, 429/502/503/504 — for at most ``retry_for`` seconds (``url``: for messages), then raise
    :class:`ElasticError`."""
    deadline = time.monotonic() + retry_for
    delay = 0.5
    while True:
        try:
            with elastic_errors(url):
                try:
                    return fn()
                except Exception as exc:
                    status = api_status(exc) if failure_kind(exc) == "api" else None
                    if status in RETRY_STATUSES:
                        raise Transient(f"HTTP {status}: {api_reason(exc)}") from None
                    raise
        except (Transient, ElasticError) as exc:
            cause = exc.__context__ if isinstance(exc, ElasticError) else None
            transient = isinstance(exc, Transient) or (
                cause is not None and failure_kind(cause) in ("connection", "timeout", "tls"))
            if not transient:
                raise
            if time.monotonic() + delay > deadline:
                raise ElasticError(
                    f"gave up on {what} after retrying for {retry_for:.0f}s: {exc}"
                ) from None
            log.warning("%s failed (%s); retrying in %.1fs", what, exc, delay)
            time.sleep(delay)
            delay = min(delay * 2, 30.0)


def raise_item_error(item: dict[str, Any], what: str, index: str) -> None:
    """Raise for one failed search of an ``_msearch`` (``item``, its response): :class:`Transient` when it is worth
    retrying, else :class:`ElasticError`."""
    err = item["error"]
    root = (err.get("root_cause") or [err])[0] if isinstance(err, dict) else {"reason": err}
    msg = f"{what} failed in index {index!r}: {root.get('type')}: {root.get('reason')}"
    if item.get("status") in RETRY_STATUSES or root.get("type") in RETRY_TYPES:
        raise Transient(msg)
    raise ElasticError(msg)
