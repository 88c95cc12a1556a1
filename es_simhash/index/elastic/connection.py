"""Reaching the cluster: the connection settings (config file, environment, arguments), the client of the engine
that answers (Elasticsearch or OpenSearch, told from the node's own answer), the server version."""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from es_simhash import settings as conf
from es_simhash import urls
from es_simhash.errors import InvalidSetting, InvalidURL
from es_simhash.errors import ElasticError
from es_simhash.index.elastic.errors import RETRY_STATUSES, elastic_errors, failure_kind, other_product_message
from es_simhash.redact import mask_url, remember, url_password

if TYPE_CHECKING:
    from es_simhash.index.elastic.client import SearchClient


def _url_credentials(url: Any) -> dict[str, str]:
    """The user and password written in ``url`` (:func:`es_simhash.urls.credentials`), the ones it has."""
    user, password = urls.credentials(url) if isinstance(url, str) else (None, None)
    return {k: v for k, v in (("username", user), ("password", password)) if v is not None}


def check_url(url: str, what: str = "Elasticsearch", env: str = "ES_URL") -> str:
    """``url`` if it names an ``http(s)://host[:port][/path]`` (:func:`es_simhash.urls.parse`: a password may hold any
    character); :class:`InvalidURL` otherwise: one line, what to write instead, no byte of the password whatever the
    URL's shape, ending with ``env``, where it is set."""
    parse_url(url, what, env)
    return url


def parse_url(url: Any, what: str = "Elasticsearch", env: str = "ES_URL") -> urls.ServiceURL:
    """:func:`es_simhash.urls.parse` with its :class:`~es_simhash.urls.BadURL` as :class:`InvalidURL` (see
    :func:`check_url`)."""
    try:
        return urls.parse(url)
    except urls.BadURL as exc:
        text = url if isinstance(url, str) else repr(url)
        shown = mask_url(text)
        hint = ""
        if isinstance(url, str) and not urls.SCHEME.match(url.strip()):
            hint = f", e.g. http://{shown.strip().lstrip('/')}"
        raise InvalidURL(f"invalid {what} URL {shown!r}: {exc}{hint}; set it with {env}") from None


def check_ca_certs(path: str, env: str = "ES_CA_CERTS") -> str:
    """``path`` if it is a readable file holding a PEM certificate; :class:`InvalidSetting` naming the file
    otherwise."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 20)
    except FileNotFoundError:
        raise InvalidSetting(f"CA certificate file not found: {path}; set it with {env}", "ca_certs") from None
    except IsADirectoryError:
        raise InvalidSetting(f"CA certificate {path} is a folder, not a PEM file; set it with {env}",
                             "ca_certs") from None
    except OSError as exc:
        raise InvalidSetting(f"cannot read CA certificate {path}: {exc.strerror or exc}; set it with {env}",
                             "ca_certs") from None
    if b"-----BEGIN CERTIFICATE-----" not in head:
        raise InvalidSetting(f"CA certificate {path} is not a PEM certificate (no BEGIN CERTIFICATE line): give the "
                             f"CA's certificate in PEM form; set it with {env}", "ca_certs")
    return path


@dataclass
class ConnectionSettings:
    """How to reach Elasticsearch. :meth:`from_env` reads the config file, then ``ES_URL``, ``ES_API_KEY``,
    ``ES_USERNAME``, ``ES_PASSWORD``, ``ES_CA_CERTS``, then explicit arguments (each wins over the ones before).

    Each setting comes from the first of the arguments, the environment and the config file that gives it; a user and
    password written in a URL count as given where that URL is given (``--es-url https://elastic:PW@host`` wins over
    ``ES_PASSWORD``), and in one place ``username``/``password`` win over those written in its URL. An API key,
    wherever it is given, is sent ahead of a user and password."""

    url: str = "http://localhost:9200"
    api_key: str | None = None
    username: str | None = None
    password: str | None = None
    ca_certs: str | None = None
    request_timeout: float = 60.0
    max_retries: int = 5
    sources: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    """Where each setting came from: ``"environment"``, ``"argument"`` or a config file's path (:meth:`from_env`
    fills it in; messages name it)."""

    def __post_init__(self) -> None:
        remember(self.password, self.api_key, url_password(self.url) if isinstance(self.url, str) else None)
        self.parsed = parse_url(self.url, env=self.where("url"))
        if self.ca_certs and self.parsed.scheme == "https":  # plain HTTP has no certificate to verify
            check_ca_certs(self.ca_certs, env=self.where("ca_certs"))

    def where(self, key: str, source: str | None = None) -> str:
        """Where the setting ``key`` is set (or would be, in ``source``), for messages: ``ES_URL``, or the config
        file's key and its variable."""
        variable = f"ES_{key.upper()}"
        source = source or self.sources.get(key, "environment")
        if source in ("environment", "argument"):
            return variable
        return f"{key} in the config file {source}, or {variable}"

    @property
    def basic_auth(self) -> tuple[str, str] | None:
        """The user and password of basic auth: ``username``/``password``, else those written in the URL."""
        if self.username:
            return self.username, self.password or ""
        if self.parsed.username is not None:
            return self.parsed.username, self.parsed.password or ""
        return None

    @property
    def credentials(self) -> tuple[str, str | None]:
        """What to tell a user whose credentials a cluster rejects (401), ending with where they are set, and that
        setting (``api_key``, ``password``, ``url``; ``None``: no credentials were given)."""
        if self.api_key:
            return f"check the API key, set with {self.where('api_key')}", "api_key"
        if self.username and "username in url" not in self.sources:
            return (f"check the user and password, set with {self.where('username')} and "
                    f"{self.where('password')}"), "password"
        if self.username or self.parsed.username is not None:
            where = self.where("url", self.sources.get("username in url"))
            return f"check the user and password written in the URL, set with {where}", "url"
        return "the cluster needs credentials: set ES_API_KEY, or ES_USERNAME and ES_PASSWORD", None

    @classmethod
    def from_env(cls, config: str | os.PathLike[str] | None = None, **overrides: Any) -> "ConnectionSettings":
        """Settings from, in increasing priority: a TOML config file (``config``, else ``$ES_SIMHASH_CONFIG``,
        else ``~/.config/es-simhash/config.toml`` if it exists; its ``[elasticsearch]`` table has ``url``,
        ``api_key``, ``username``, ``password``, ``ca_certs``, ``request_timeout``), the environment (``ES_URL``,
        ``ES_API_KEY``, ``ES_USERNAME``, ``ES_PASSWORD``, ``ES_CA_CERTS``), then explicit arguments; credentials
        as the class says."""
        return cls(**cls.values(config, **overrides))

    @staticmethod
    def values(config: str | os.PathLike[str] | None = None, **overrides: Any) -> dict[str, Any]:
        """The settings :meth:`from_env` would use, as a dict of the keys found (not validated, credentials chosen
        as the class says), with ``sources``: where each came from. E.g. Kibana's import takes the credentials and
        CA from it (Kibana accepts Elasticsearch credentials)."""
        layers: list[tuple[str, dict[str, Any]]] = []
        path, explicit = conf.config_path(config)
        if path is not None:
            layers.append((path, conf.read_config(path, explicit)))
        layers.append(("environment", conf.elastic_env()))
        layers.append(("argument", {k: v for k, v in overrides.items() if v is not None}))
        values: dict[str, Any] = {}
        sources: dict[str, str] = {}
        for source, layer in layers:
            found = dict(layer)
            for key, value in _url_credentials(layer.get("url")).items():
                if not layer.get(key):  # (a user or password given apart wins over the URL's, in one place)
                    found[key] = value
                    sources[f"{key} in url"] = source
            for key in ("username", "password"):
                if layer.get(key):
                    sources.pop(f"{key} in url", None)
            values.update(found)
            sources.update(dict.fromkeys(found, source))
        values["sources"] = sources
        return values

    @property
    def safe_url(self) -> str:
        """The URL without any user:password part, query or fragment, for messages."""
        return self.parsed.shown

    def client(self) -> Any:
        """An Elasticsearch client (:class:`~es_simhash.index.elastic.client.ElasticsearchClient`) for these
        settings; :func:`connect` finds out which engine answers."""
        from es_simhash.index.elastic.client import ElasticsearchClient

        kwargs: dict[str, Any] = {
            "request_timeout": self.request_timeout,
            "max_retries": self.max_retries,
            "retry_on_timeout": True,
            "retry_on_status": RETRY_STATUSES,
        }
        if self.api_key:
            kwargs["api_key"] = self.api_key
        elif self.basic_auth is not None:  # (encoded here, in UTF-8: the client encodes a (user, password) as ASCII)
            kwargs["basic_auth"] = self._basic_token()
        if self.ca_certs and self.parsed.scheme == "https":  # plain HTTP has no certificate to verify
            kwargs["ca_certs"] = self.ca_certs
        serializer = _fast_json_serializer()
        if serializer is not None:
            kwargs["serializer"] = serializer
        # (credentials go as basic_auth above, never in the URL the client keeps)
        return ElasticsearchClient(self.parsed.base, **kwargs)

    def opensearch_client(self) -> Any:
        """An OpenSearch client (:class:`~es_simhash.index.elastic.opensearch.OpenSearchClient`) for these settings:
        basic auth (OpenSearch has no API keys: one given is refused in one line), the CA, the timeouts and retries
        of :meth:`client`. ``ImportError`` when opensearch-py is not installed."""
        from opensearchpy import OpenSearch  # (ImportError: opensearch-py is not installed; connect says what to do)

        from es_simhash.index.elastic.opensearch import OpenSearchClient

        if self.api_key:
            raise ElasticError(f"the node at {self.safe_url} is OpenSearch, which takes no API key: give a user and "
                               f"password (ES_USERNAME and ES_PASSWORD) instead of {self.where('api_key')}",
                               "api_key")
        kwargs: dict[str, Any] = {"timeout": self.request_timeout, "max_retries": self.max_retries,
                                  "retry_on_timeout": True, "retry_on_status": RETRY_STATUSES,
                                  "pool_maxsize": 10}  # (as Elasticsearch's client: lookups run in threads)
        if self.basic_auth is not None:  # (in UTF-8, as for Elasticsearch; never in the URL the client keeps)
            kwargs["headers"] = {"authorization": f"Basic {self._basic_token()}"}
        if self.parsed.scheme == "https":
            kwargs["use_ssl"] = True
            kwargs["verify_certs"] = True
            if self.ca_certs:
                kwargs["ca_certs"] = self.ca_certs
        # (every request names its timeout: opensearch-py takes a request's `timeout` URL parameter, e.g. a health
        # check's wait, for the socket's timeout when it has none)
        return OpenSearchClient(OpenSearch(hosts=[self.parsed.base], **kwargs),
                                {"request_timeout": self.request_timeout})

    def _basic_token(self) -> str:
        assert self.basic_auth is not None
        return base64.b64encode(":".join(self.basic_auth).encode("utf-8")).decode("ascii")


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


def connect(settings: ConnectionSettings | None = None, check: bool = True) -> SearchClient:
    """A :class:`~es_simhash.index.elastic.client.SearchClient` for the engine that answers: Elasticsearch's client,
    or OpenSearch's when the node answers without Elasticsearch's product header and its ``GET /`` says
    ``"distribution": "opensearch"``. With ``check`` (the default) it asks the cluster's health first and raises
    :class:`ElasticError` with a one-line, secret-free reason when that fails; without, it asks nothing and returns
    Elasticsearch's client."""
    settings = settings or ConnectionSettings.from_env()
    client = settings.client()
    if check:
        with elastic_errors(settings.safe_url, settings.credentials, settings.where):
            try:
                # not GET /: minimal distributions (Elasticsearch's integ-test zip) leave out the module serving it
                client.cluster.health()
            except Exception as exc:
                # (only an answer that lacks the product header tells another engine: Elasticsearch's refusals of
                # credentials lack it too, so a 401 is Elasticsearch's message whichever engine sent it)
                if failure_kind(exc) != "product":
                    raise
                client.close()
                client = _other_engine(settings, exc)
    return client


def _other_engine(settings: ConnectionSettings, refused: Exception):
    """The client of a node that is not Elasticsearch (``refused``: Elasticsearch's client's product check): an
    OpenSearch client when the node's ``GET /`` says ``"distribution": "opensearch"``; else one line naming the node
    (and, without opensearch-py, how to install it)."""
    where = settings.where("url")
    try:
        os_client = settings.opensearch_client()
    except ImportError:
        raise ElasticError(other_product_message(settings.safe_url, refused, where, client_missing=True),
                           "url") from None
    distribution = None
    with elastic_errors(settings.safe_url, settings.credentials, settings.where):
        try:
            distribution = (os_client.info().get("version") or {}).get("distribution")
        except Exception as exc:
            if failure_kind(exc) in (None, "auth", "forbidden", "tls", "timeout"):
                raise
    if distribution != "opensearch":
        raise ElasticError(other_product_message(settings.safe_url, refused, where), "url")
    with elastic_errors(settings.safe_url, settings.credentials, settings.where):
        os_client.cluster.health()
    return os_client


def server_version(client) -> str:
    """The version of the node answering (e.g. ``"9.5.2"``, or OpenSearch's ``"2.19.6"``: :attr:`engine` says
    which)."""
    nodes = client.nodes.info(node_id="_local", metric="_none", filter_path="nodes.*.version")
    return next(iter(nodes["nodes"].values()))["version"]
