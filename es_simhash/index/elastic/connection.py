"""Reaching Elasticsearch: the connection settings (config file, environment, arguments), the client, the server
version."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from es_simhash.index.elastic.errors import RETRY_STATUSES, elastic_errors

from es_simhash import settings as conf
from es_simhash.errors import InvalidURL


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
            "retry_on_status": RETRY_STATUSES,
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
