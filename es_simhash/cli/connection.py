"""What the Elasticsearch commands share: the connection options (flags, environment variables, the config file),
the connection that turns the library's ``ElasticError`` into one line and exit code 3, the index checks, and the
checkpointed run's steps (its checkpoint and lock, the index made ready, Ctrl-C after the batch being written)."""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Callable, Iterator, List, Literal, Optional

import typer

from es_simhash.cli.common import UserError, warn_beyond_keys, err

if TYPE_CHECKING:
    from es_simhash.fingerprint.fingerprinter import Fingerprinter
    from es_simhash.pipeline import Summary

# -- options -------------------------------------------------------------------------------------------------
EsUrl = Annotated[Optional[str], typer.Option(
    "--es-url", envvar="ES_URL", show_envvar=True, help="Elasticsearch URL (default: http://localhost:9200).",
    show_default=False)]
ApiKey = Annotated[Optional[str], typer.Option(
    "--api-key", envvar="ES_API_KEY", show_envvar=True, help="API key (base64 'id:key').", show_default=False)]
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
Lookup = Annotated[str, typer.Option(
    "--lookup",
    help="Lookup keys of a new index: 'tables' (20 permutation-table keys; every neighbour within 3 bits is found "
         "and lookups stay fast as the index grows), 'tables:K:R' (K+R blocks, R per key), or 'segments' (the four "
         "16-bit segments of earlier releases). An existing index keeps the keys it was made with.")]
IndexBatch = Annotated[int, typer.Option(
    "--batch-size", min=1,
    help="Documents per lookup + bulk round trip (the first batches are smaller: 100, then doubling). Each batch "
         "costs the cluster a refresh and a settling whatever its size: bigger batches cost it less per document.")]
CheckpointFile = Annotated[Optional[Path], typer.Option(
    "--checkpoint",
    help="Progress file, saved after every batch (default: es-simhash-INDEX-DIGEST.checkpoint.json in this folder, "
         "DIGEST from the inputs' paths: concurrent runs on other inputs never share one).", show_default=False)]
Resume = Annotated[bool, typer.Option("--resume", help="Continue an interrupted run from its checkpoint.")]


# -- the connection ------------------------------------------------------------------------------------------
class Elastic:
    """Connection settings from flags/environment, and ElasticError -> one line, exit code 3."""

    def __init__(self, url, api_key, username, password, ca_certs, index: str | None = None) -> None:
        from es_simhash.index.elastic import ConnectionSettings

        try:
            self.settings = ConnectionSettings.from_env(
                url=url, api_key=api_key, username=username, password=password, ca_certs=ca_certs
            )
        except ValueError as exc:  # (an InvalidSetting names its setting; an unreadable config file)
            raise UserError(elastic_message(exc)) from None
        if index is not None:
            require_valid_index(index)
        self.index = index
        self._client = None

    @property
    def client(self):
        if self._client is None:
            from es_simhash.index.elastic import connect

            self._client = connect(self.settings)
        return self._client

    def __enter__(self) -> "Elastic":
        return self

    def __exit__(self, exc_type, exc, tb) -> Literal[False]:
        from es_simhash.index.elastic import ElasticError

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

def require_valid_index(name: str) -> None:
    """Refuse an index name Elasticsearch would refuse (one line, exit 1), before anything else."""
    from es_simhash.index.elastic import validate_index_name

    try:
        validate_index_name(name)
    except ValueError as exc:
        raise UserError(str(exc)) from None

def require_managed_index(es: "Elastic", index: str) -> None:
    """Refuse (one line) an index that does not exist or that es-simhash did not make: its documents have none of
    the fields the commands read."""
    from es_simhash.index.elastic import require_index

    require_index(es.client, index, es.settings.safe_url)

def maintained_index(es: "Elastic", index: str):
    """The ``ElasticIndex`` of an existing es-simhash index (one clear error otherwise)."""
    from es_simhash.index.elastic import ElasticIndex

    require_managed_index(es, index)
    return ElasticIndex(es.client, index, url=es.settings.safe_url)

def describe_keys(keys) -> str:
    if keys.is_segments:
        return "four 16-bit segments"
    return f"{keys.n_tables} permutation tables, k = {keys.k}"

# -- a checkpointed run ----------------------------------------------------------------------------------------
def run_checkpoint(path: Optional[Path], index: str, inputs: List[str], resume: bool):
    """The run's checkpoint; with ``resume``, the saved one, or (none saved: the run it resumes stopped before its
    first batch, or finished) a new one, with a note: the run starts from the top (re-indexing what is already
    there changes nothing)."""
    from es_simhash.pipeline import Checkpoint, NoCheckpoint

    path = path or Path(Checkpoint.default_path(index, inputs))
    if not resume:
        return Checkpoint(path, inputs)
    try:
        return Checkpoint.load(path, inputs)
    except NoCheckpoint:
        err(f"note: no checkpoint at {path} (the earlier run stopped before its first batch was saved, or "
            "finished): starting from the top; documents already indexed are left as they are")
        return Checkpoint(path, inputs)
    except ValueError as exc:
        raise UserError(str(exc)) from None

def hold_checkpoint(stack: ExitStack, checkpoint) -> None:
    """Hold the run's checkpoint (one line, exit 1, when another run holds it)."""
    from es_simhash.pipeline import CheckpointInUse

    try:
        stack.enter_context(checkpoint.lock())
    except CheckpointInUse as exc:
        raise UserError(f"{exc} (option --checkpoint FILE)") from None

def interrupted_error(checkpoint) -> UserError:
    """Ctrl-C during a checkpointed run: one line with what was saved and how to go on (exit 130)."""
    from es_simhash.pipeline import Checkpoint, NoCheckpoint

    try:
        saved = Checkpoint.load(checkpoint.path, checkpoint.inputs)
    except NoCheckpoint:
        return UserError("interrupted before the first batch was saved: run the same command again (with --resume "
                         "it also starts from the top)", code=130)
    except ValueError as exc:
        return UserError(f"interrupted; the checkpoint cannot be read: {exc}", code=130)
    s = saved.summary
    before = checkpoint.summary.resumed_indexed
    return UserError(
        f"interrupted: {sum(saved.done.values()):,} input lines are done ({s.indexed - before:,} documents written "
        f"by this run) and saved in {checkpoint.path}: run the same command with --resume to go on", code=130)

def ready_index(es: "Elastic", index: str, fingerprinter: Fingerprinter, keys, k: int, backend,
            ) -> Optional[Callable[[], None]]:
    """Make the index ready for ``backend``: an existing one is checked now (its fingerprint settings must be this
    run's: one line otherwise, before any input is read); a new one is created by the function returned, which
    ``run_dedup`` calls before its first record (a run whose every record is a dead letter creates none)."""
    from es_simhash.index.elastic import elastic_errors, ensure_index, index_exists

    url = es.settings.safe_url

    def create() -> None:
        with elastic_errors(url):
            ensure_index(es.client, index, fingerprinter.config, lookup_keys=keys)
        warn_beyond_keys(k, backend.lookup_keys)

    if not index_exists(es.client, index, url):
        return create
    create()
    return None

def resumable_report(checkpoint, report: Path):
    from es_simhash.files.outputs import OutputError

    try:
        return checkpoint.open_report(report)
    except OutputError as exc:
        raise UserError(str(exc)) from None

@contextmanager
def stop_after_batch() -> Iterator[Callable[[], bool]]:
    """Ctrl-C during a checkpointed run: the run stops once the batch being written is written and saved in the
    checkpoint (the counts of the message then are exact); a second Ctrl-C stops it at once."""
    import signal

    asked: list[bool] = []

    def on_interrupt(signum, frame) -> None:
        if asked:
            raise KeyboardInterrupt
        asked.append(True)
        err("es-simhash: stopping once the batch being written is saved (Ctrl-C again to stop at once)")

    try:
        previous = signal.signal(signal.SIGINT, on_interrupt)
    except ValueError:  # (not the main thread: Ctrl-C is not ours to catch)
        yield lambda: False
        return
    try:
        yield lambda: bool(asked)
    finally:
        signal.signal(signal.SIGINT, previous)

def indexed_line(summary: Summary, index: str) -> str:
    """What this run wrote and how fast; after a resume, what the runs it resumed wrote too, so that the documents
    of the input add up: written by this run + by the runs it resumed + found already indexed."""
    s = summary
    line = f"indexed {s.indexed_this_run:,} into {index!r}"
    if s.resumed_indexed or s.resumed_elapsed:
        line += f" (and {s.resumed_indexed:,} by the run it resumed)"
    return f"{line}, {s.rate_this_run:,.0f} docs/s"
