"""Reaching Elasticsearch: the connection settings (config file, environment, arguments), the client, the server
version."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from es_simhash import settings as conf
from es_simhash.errors import InvalidSetting, InvalidURL
from es_simhash.index.elastic.errors import RETRY_STATUSES, elastic_errors
from es_simhash.redact import mask_url, remember, url_password


def check_url(url: str, what: str = "Elasticsearch", env: str = "ES_URL") -> str:
    """``url`` if it is ``http(s)://host[:port][/path]`` with a valid port; :class:`InvalidURL` (one line, what to
    write instead, the password masked whatever the URL's shape, ending with ``env``, the variable that sets it)
    otherwise."""
    shown = mask_url(url)
    try:
        parts = urlsplit(url)
        port = parts.port  # ValueError for a port out of range or not a number
    except ValueError as exc:
        raise InvalidURL(f"invalid {what} URL {shown!r}: {exc}; expected http(s)://host:port, "
                         f"e.g. http://127.0.0.1:9200; set it with {env}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        hint = f"http://{shown.lstrip('/')}" if "://" not in url else "http(s)://host:port"
        raise InvalidURL(f"invalid {what} URL {shown!r}: it needs the scheme and host, e.g. {hint}; set it with {env}")
    if port == 0:
        raise InvalidURL(f"invalid {what} URL {shown!r}: port 0; set it with {env}")
    return url


def check_ca_certs(path: str) -> str:
    """``path`` if it is a readable file holding a PEM certificate; :class:`InvalidSetting` naming the file
    otherwise."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 20)
    except FileNotFoundError:
        raise InvalidSetting(f"CA certificate file not found: {path}; set it with ES_CA_CERTS", "ca_certs") from None
    except IsADirectoryError:
        raise InvalidSetting(f"CA certificate {path} is a folder, not a PEM file; set it with ES_CA_CERTS",
                             "ca_certs") from None
    except OSError as exc:
        raise InvalidSetting(f"cannot read CA certificate {path}: {exc.strerror or exc}; set it with ES_CA_CERTS",
                             "ca_certs") from None
    if b"-----BEGIN CERTIFICATE-----" not in head:
        raise InvalidSetting(f"CA certificate {path} is not a PEM certificate (no BEGIN CERTIFICATE line): give the "
                             "CA's certificate in PEM form; set it with ES_CA_CERTS", "ca_certs")
    return path


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
        remember(self.password, self.api_key, url_password(self.url))
        check_url(self.url)
        if self.ca_certs and urlsplit(self.url).scheme == "https":  # plain HTTP has no certificate to verify
            check_ca_certs(self.ca_certs)

    @property
    def basic_auth(self) -> tuple[str, str] | None:
        """The user and password of basic auth: ``username``/``password``, else those written in the URL."""
        if self.username:
            return self.username, self.password or ""
        parts = urlsplit(self.url)
        if parts.username is not None:
            return unquote(parts.username), unquote(parts.password or "")
        return None

    @property
    def credentials(self) -> tuple[str, str | None]:
        """What to tell a user whose credentials a cluster rejects (401), ending with the environment variable that
        sets them, and that setting (``api_key``, ``password``, ``url``; ``None``: no credentials were given)."""
        if self.api_key:
            return "check the API key, set with ES_API_KEY", "api_key"
        if self.username:
            return "check the user and password, set with ES_USERNAME and ES_PASSWORD", "password"
        if urlsplit(self.url).username is not None:
            return "check the user and password written in the URL, set with ES_URL", "url"
        return "the cluster needs credentials: set ES_API_KEY, or ES_USERNAME and ES_PASSWORD", None

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
        return urlunsplit((parts.scheme, parts.netloc.rsplit("@", 1)[-1], parts.path, "", ""))

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
        elif self.basic_auth is not None:
            kwargs["basic_auth"] = self.basic_auth
        if self.ca_certs and urlsplit(self.url).scheme == "https":  # plain HTTP has no certificate to verify
            kwargs["ca_certs"] = self.ca_certs
        serializer = _fast_json_serializer()
        if serializer is not None:
            kwargs["serializer"] = serializer
        parts = urlsplit(self.url)  # (credentials go as basic_auth above, never in the URL the client keeps)
        return Elasticsearch(urlunsplit((parts.scheme, parts.netloc.rsplit("@", 1)[-1], parts.path, parts.query, "")),
                             **kwargs)


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
        with elastic_errors(settings.safe_url, settings.credentials):
            # not GET /: minimal distributions (the integ-test zip) leave out the rest-root module serving it
            client.cluster.health()
    return client


def server_version(client) -> str:
    """The Elasticsearch version of the node answering (e.g. ``"9.5.2"``)."""
    nodes = client.nodes.info(node_id="_local", metric="_none", filter_path="nodes.*.version")
    return next(iter(nodes["nodes"].values()))["version"]
