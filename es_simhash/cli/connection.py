"""What the commands that use a cluster (Elasticsearch or OpenSearch) share: the connection options, declared once
(:func:`connection_options` gives a command --es-url, --api-key, --username, --password and --ca-certs as one
:class:`Connection`), the other options they share, the connection that turns the library's ``ElasticError`` into
one line and exit code 3, the index checks, and the lines a checkpointed run ends with."""

from __future__ import annotations

import functools
import inspect
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Callable, Iterator, Literal, NamedTuple, Optional, Union

import typer

from es_simhash.cli.common import UserError, err, undecided_error
from es_simhash.defaults import RETRY_FOR
from es_simhash.errors import CheckpointInUse, ElasticError, InvalidValue, OutputError

if TYPE_CHECKING:
    from es_simhash.pipeline import RunGaveUp, RunInterrupted, Summary

# -- options -------------------------------------------------------------------------------------------------
EsUrl = Annotated[Optional[str], typer.Option(
    "--es-url", envvar="ES_URL", show_envvar=True,
    help="Elasticsearch or OpenSearch URL (default: http://localhost:9200; the node's answer tells which it is). "
         "Another scheme is a backend plug-in's (index and check only).",
    show_default=False)]
ApiKey = Annotated[Optional[str], typer.Option(
    "--api-key", envvar="ES_API_KEY", show_envvar=True, help="API key (base64 'id:key'; Elasticsearch only).",
    show_default=False)]
Username = Annotated[Optional[str], typer.Option(
    "--username", envvar="ES_USERNAME", show_envvar=True, help="Basic-auth user.", show_default=False)]
Password = Annotated[Optional[str], typer.Option(
    "--password", envvar="ES_PASSWORD", show_envvar=True, help="Basic-auth password (prefer the environment variable).",
    show_default=False)]
CaCerts = Annotated[Optional[str], typer.Option(
    "--ca-certs", envvar="ES_CA_CERTS", show_envvar=True,
    help="CA certificate (PEM) to verify the cluster's TLS certificate.", show_default=False)]
IndexName = Annotated[str, typer.Option("--index", "-i", envvar="ES_SIMHASH_INDEX", show_envvar=True,
                                        help="Index name.")]
DEFAULT_INDEX = "es-simhash"
"""The index of a command not given --index (or ES_SIMHASH_INDEX)."""
Lookup = Annotated[str, typer.Option(
    "--lookup",
    help="Lookup keys of a new index: 'tables' (20 permutation-table keys; every neighbour within 3 bits is found "
         "and lookups stay fast as the index grows), 'tables:K:R' (K+R blocks, R per key), or 'segments' (the "
         "SimHash's four 16-bit segments as 4 keys: more candidates per lookup as the index grows). An existing "
         "index keeps the keys it was made with.")]
IndexBatch = Annotated[int, typer.Option(
    "--batch-size", min=1,
    help="Documents per lookup + bulk round trip (the first batches are smaller: 100, then doubling). Each batch "
         "costs the cluster a refresh and a settling whatever its size: bigger batches cost it less per document.")]
CheckpointFile = Annotated[Optional[Path], typer.Option(
    "--checkpoint",
    help="Progress file, saved after every batch (default: es-simhash-INDEX-DIGEST.checkpoint.json in this folder, "
         "DIGEST from the inputs' paths: concurrent runs on other inputs never share one).", show_default=False)]
Resume = Annotated[bool, typer.Option("--resume", help="Continue an interrupted run from its checkpoint.")]


class Connection(NamedTuple):
    """The connection options a command was given (flags or environment; the config file fills in the rest)."""

    url: Optional[str] = None
    api_key: Optional[str] = None
    username: Optional[str] = None
    password: Optional[str] = None
    ca_certs: Optional[str] = None


_CONNECTION_OPTIONS: dict[str, Any] = {"es_url": EsUrl, "api_key": ApiKey, "username": Username,
                                       "password": Password, "ca_certs": CaCerts}


def connection_options(command: Optional[Callable[..., Any]] = None, *, url: bool = True) -> Any:
    """A command's connection options, declared here once: the command's keyword parameter ``connection:
    Connection`` becomes --es-url (not with ``url=False``), --api-key, --username, --password and --ca-certs, last
    among its options, and the command is called with them as one :class:`Connection`."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        names = [name for name in _CONNECTION_OPTIONS if url or name != "es_url"]
        signature = inspect.signature(fn, eval_str=True)
        params = [p for p in signature.parameters.values() if p.name != "connection"]
        params += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None,
                                     annotation=_CONNECTION_OPTIONS[name]) for name in names]
        params.append(inspect.Parameter("connection_context", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context))

        @functools.wraps(fn)
        def with_connection(*args: Any, **kwargs: Any) -> Any:
            given = {name: kwargs.pop(name, None) for name in names}
            context = kwargs.pop("connection_context")
            for name in names:  # the environment's values are the library's to read, below the options
                source = context.get_parameter_source(name)
                if source is not None and source.name == "ENVIRONMENT":
                    given[name] = None
            connection = Connection(given.get("es_url"), given["api_key"], given["username"], given["password"],
                                    given["ca_certs"])
            return fn(*args, connection=connection, **kwargs)

        with_connection.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        with_connection.__annotations__ = {p.name: p.annotation for p in params}
        return with_connection

    return decorate(command) if command is not None else decorate


# -- the connection ------------------------------------------------------------------------------------------
class Elastic:
    """Connection settings from flags/environment, and ElasticError -> one line, exit code 3."""

    def __init__(self, connection: Connection, index: str | None = None) -> None:
        from es_simhash.index.elastic import ConnectionSettings

        c = connection
        try:
            self.settings = ConnectionSettings.from_env(
                url=c.url, api_key=c.api_key, username=c.username, password=c.password, ca_certs=c.ca_certs)
        except ValueError as exc:  # (an InvalidSetting names its setting; an unreadable config file)
            refuse_plugin_url(connection)  # (a URL of another scheme than http(s): a plug-in's, said so)
            raise UserError(elastic_message(exc)) from None
        if index is not None:
            require_valid_index(index)
        self.index = index
        self._client = None

    @property
    def client(self):
        from es_simhash.index.elastic import connect

        if self._client is None:
            self._client = connect(self.settings)
        return self._client

    def __enter__(self) -> "Elastic":
        return self

    def __exit__(self, exc_type, exc, tb) -> Literal[False]:
        if isinstance(exc, ElasticError):
            raise UserError(elastic_message(exc), code=3) from None
        return False

_SETTING_OPTIONS = {"url": "--es-url", "ca_certs": "--ca-certs", "api_key": "--api-key",
                    "password": "--username and --password"}

def elastic_message(exc: Exception) -> str:
    """An ``ElasticError``'s (or ``InvalidSetting``'s) line, with the option that sets the connection setting it
    names (if any): the library's message ends with its environment variable ("... with ES_URL"), the option
    follows ("or --es-url")."""
    option = _SETTING_OPTIONS.get(getattr(exc, "setting", None) or "")
    return f"{exc} or {option}" if option else str(exc)

def require_valid_index(name: str, option: str = "--index") -> None:
    """Refuse an index name Elasticsearch would refuse (a usage error: one line naming ``option``, exit 2), before
    anything else."""
    from es_simhash.index.elastic import validate_index_name

    try:
        validate_index_name(name)
    except InvalidValue as exc:
        raise UserError(f"invalid value for {option}: {exc}", code=2) from None

def require_managed_index(es: "Elastic", index: str) -> None:
    """Refuse (one line) an index that does not exist or that es-simhash did not make: its documents have none of
    the fields the commands read."""
    from es_simhash.index.elastic import require_index

    require_index(es.client, index, es.settings.safe_url)

def maintained_index(es: "Elastic", index: str):
    """The ``ElasticIndex`` of an existing es-simhash index (:meth:`ElasticIndex.existing`; one clear error
    otherwise)."""
    from es_simhash.index.elastic import ElasticIndex

    return ElasticIndex.existing(es.client, index, url=es.settings.safe_url)

# -- a backend of one's own -------------------------------------------------------------------------------------
PLUGIN_COMMANDS = ("index", "check")
"""The commands a backend of one's own serves (:mod:`es_simhash.index.plugins`): the others read or rewrite an index
by document, on Elasticsearch or OpenSearch."""


def given_url(connection: Connection) -> Optional[str]:
    """The URL a command was given: --es-url, else ``ES_URL``, else the config file's (the library's order)."""
    from es_simhash.index.elastic import ConnectionSettings

    try:
        return ConnectionSettings.values(url=connection.url).get("url")
    except ValueError as exc:  # (an unreadable config file)
        raise UserError(elastic_message(exc)) from None


def plugin_scheme(url: Optional[str]) -> Optional[str]:
    """The scheme of ``url`` (:func:`given_url`) when a backend of one's own serves it (``None``: Elasticsearch or
    OpenSearch); a scheme no installed backend serves is one line, exit 1, as any URL that cannot be used."""
    from es_simhash.index.plugins import UnknownBackend, served_scheme

    try:
        return served_scheme(url, where="--es-url or ES_URL")
    except UnknownBackend as exc:
        raise UserError(f"invalid value for --es-url: {exc}") from None


def refuse_plugin_url(connection: Connection) -> None:
    """A command that needs Elasticsearch or OpenSearch, given a backend of one's own: one line, exit 1."""
    scheme = plugin_scheme(given_url(connection))
    if scheme is not None:
        raise UserError(f"invalid value for --es-url: {scheme}:// is a backend of one's own, which serves only "
                        f"{' and '.join(PLUGIN_COMMANDS)}; the other commands need Elasticsearch or OpenSearch: give "
                        "their http(s) URL with --es-url or ES_URL")


@contextmanager
def index_on(connection: Connection, index: str, *, existing: bool = False, retry_for: Optional[float] = None,
             rollover_docs: Optional[int] = None, rollover_age: Optional[str] = None,
             window: Optional[Union[int, str]] = None) -> Iterator[Any]:
    """The index a command runs on: a backend of one's own when the URL's scheme is a plug-in's
    (:func:`~es_simhash.index.plugins.open_plugin_index`), else the ``ElasticIndex`` ``index`` on the cluster
    (``existing``: one that must exist already, :meth:`ElasticIndex.existing`; ``rollover_docs``,
    ``rollover_age``: an alias over partitions it rolls over; ``window``: lookups in its newest partitions only:
    ``ElasticIndex``'s options). The library's errors
    become one line: a URL that cannot be used exit 1, the cluster's errors exit 3."""
    from es_simhash.index.plugins import UnknownBackend, open_plugin_index

    url = given_url(connection)
    if plugin_scheme(url) is None:
        from es_simhash.index.elastic import ElasticIndex

        with Elastic(connection, index) as es:
            if existing:
                yield maintained_index(es, index)
            else:
                yield ElasticIndex(es.client, index, url=es.settings.safe_url,
                                   retry_for=RETRY_FOR if retry_for is None else retry_for,
                                   rollover_docs=rollover_docs, rollover_age=rollover_age, window=window)
        return
    for option, value in (("--rollover-docs", rollover_docs), ("--rollover-age", rollover_age), ("--window", window)):
        if value is not None:
            raise UserError(f"invalid value for {option}: a backend of one's own (--es-url) has no partitions: "
                            f"leave {option} out", code=2)
    try:
        backend = open_plugin_index(url, index, where="--es-url or ES_URL")  # type: ignore[arg-type]
    except UnknownBackend as exc:
        raise UserError(f"invalid value for --es-url: {exc}") from None
    yield backend


def describe_keys(keys) -> str:
    if keys.is_segments:
        return "four 16-bit segments"
    return f"{keys.n_tables} permutation tables, k = {keys.k}"

# -- a checkpointed run ----------------------------------------------------------------------------------------
def open_run_checkpoint(path: Optional[Path], index: str, inputs: list[str], resume: bool):
    """The run's checkpoint (:func:`es_simhash.pipeline.open_checkpoint`); with --resume and none saved, a note:
    the run starts from the top."""
    from es_simhash.pipeline import open_checkpoint

    try:
        checkpoint = open_checkpoint(index, inputs, path, resume)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if checkpoint.started_over:
        err(f"note: no checkpoint at {checkpoint.path} (the earlier run stopped before its first batch was saved, "
            "or finished): starting from the top; documents already indexed are left as they are")
    return checkpoint

@contextmanager
def run_errors(gave_up: Callable[[RunGaveUp], str]) -> Iterator[None]:
    """The named ways a checkpointed run stops (:func:`es_simhash.pipeline.run_checkpointed`), each one line:
    another run holds the checkpoint (exit 1), a report it cannot resume (1), Elasticsearch gave up (4: the line
    ``gave_up`` makes), nothing decided (5), Ctrl-C (130: what was saved and how to go on)."""
    from es_simhash.pipeline import NothingDecided, RunGaveUp, RunInterrupted

    try:
        yield
    except CheckpointInUse as exc:
        raise UserError(f"{exc} (option --checkpoint FILE)") from None
    except OutputError as exc:
        raise UserError(str(exc)) from None
    except RunGaveUp as exc:
        raise UserError(gave_up(exc), code=4) from None
    except NothingDecided as exc:
        raise undecided_error(exc.summary) from None
    except RunInterrupted as exc:
        raise UserError(interrupted_message(exc), code=130) from None

def interrupted_message(exc: RunInterrupted) -> str:
    return exc.describe("run the same command with --resume to go on",
                        "run the same command again (with --resume it also starts from the top)")

def gave_up_message(exc: RunGaveUp) -> str:
    """Elasticsearch gave up during ``index``: how much is saved, and how to finish."""
    return (f"{elastic_message(exc.error)}; {exc.lines_done:,} input lines are done and saved in {exc.checkpoint}: "
            "run the same command with --resume to finish")

def stopping() -> None:
    err("es-simhash: stopping once the batch being written is saved (Ctrl-C again to stop at once)")

def indexed_line(summary: Summary, index: str) -> str:
    """What this run wrote and how fast; after a resume, what the runs it resumed wrote too, so that the documents
    of the input add up: written by this run + by the runs it resumed + found already indexed."""
    s = summary
    line = f"indexed {s.indexed_this_run:,} into {index!r}"
    if s.resumed_indexed or s.resumed_elapsed:
        line += f" (and {s.resumed_indexed:,} by the run it resumed)"
    return f"{line}, {s.rate_this_run:,.0f} docs/s"
