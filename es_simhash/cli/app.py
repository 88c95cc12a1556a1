"""The ``es-simhash`` command line: a thin layer over the public Python API.

Exit codes: 0 success (duplicates and dead letters are results, not failures); 1 an error the user can fix
(missing file, bad option value, unreadable IDF table, a URL without scheme or with a bad port); 2 a usage error
(unknown option, `check` without a text); 3 Elasticsearch (or Kibana) could not be reached, refused the request,
is not what the URL should point at, or the index was not made by es-simhash; 4 an ingest gave up after retrying
and can be resumed (--resume); 5 records were read but none could be decided (every one a dead letter: the line
says why; no index is created); 130 interrupted (`index`/`migrate`: with what was saved and how to resume).
"""

from __future__ import annotations

import gc
import json
import os
import re
import sys
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Callable, Iterator, List, Literal, Optional

import click

from es_simhash import __version__
from es_simhash.engine.engine import DedupEngine, DefaultRule
from es_simhash.fingerprint.fingerprinter import Fingerprinter
from es_simhash.fingerprint.model import FINGERPRINT_VERSION
from es_simhash.fingerprint.idf import IDFTable
from es_simhash.index.memory import MemoryIndex
from es_simhash.pipeline import Summary, iter_texts, run_dedup
from es_simhash.files.sources import RecordReader


class _Argument(click.Argument):
    """A positional argument with a help text (click's had none before 8.5): its command's help lists it, once
    (kept apart from the ``help`` click 8.5 reads and lists itself)."""

    def __init__(self, *args, help: str | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.text = help


def _short_help(self: click.Command, limit: int = 45) -> str:
    """The first paragraph of the help in full (the list of commands wraps it), not cut at ``limit``."""
    return self.short_help or " ".join((self.help or "").split("\n\n")[0].split())


class _Command(click.Command):
    """A command whose help lists its arguments (name, help, [required]) before its options."""

    get_short_help_str = _short_help

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for param in self.get_params(ctx):
            if isinstance(param, _Argument):
                name = param.human_readable_name + ("..." if param.nargs == -1 else "")
                rows.append((name, (param.text or "") + ("  [required]" if param.required else "")))
        if rows:
            with formatter.section("Arguments"):
                formatter.write_dl(rows)
        super().format_options(ctx, formatter)


class _Group(click.Group):
    """Commands listed in the order they were added (subgroups last); no arguments: the help and exit 2; an unknown
    command suggests the nearest; Ctrl-C is exit 130 (``main`` says so), not click's "Aborted!"."""

    command_class = _Command
    group_class = type  # (its subgroup, kibana, is one too)
    get_short_help_str = _short_help

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args and self.no_args_is_help and not ctx.resilient_parsing:  # the help, on stdout, and exit 2
            click.echo(ctx.get_help(), color=ctx.color)
            ctx.exit(2)
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The commands in the order they were added, and then the subgroups."""
        return sorted(self.commands, key=lambda name: isinstance(self.commands[name], click.Group))

    def resolve_command(self, ctx: click.Context, args: list[str]):
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            if args and self.commands and not hasattr(exc, "possibilities"):  # (newer clicks suggest themselves)
                from difflib import get_close_matches

                matches = get_close_matches(args[0], list(self.commands))
                if matches:
                    exc.message = f"{exc.message.rstrip('.')}. Did you mean {', '.join(map(repr, matches))}?"
            raise

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise click.exceptions.Exit(130) from None


@click.group(
    "es-simhash",
    cls=_Group,
    context_settings={"help_option_names": ["-h", "--help"], "show_default": True},
)
def app() -> None:
    """Find near-duplicate documents in crawled Chinese and English text with SimHash fingerprints.

    Runs embedded (no server) with `dedup`; the same engine indexes into Elasticsearch with `index`.
    """


def err(message: str) -> None:
    """A line on stderr (messages, summaries, warnings; the progress bars draw there too)."""
    print(message, file=sys.stderr, flush=True)


def _stderr_is_terminal() -> bool:
    """Whether stderr takes a progress bar (:func:`es_simhash.settings.stderr_is_terminal`)."""
    from es_simhash import settings

    return settings.stderr_is_terminal(sys.stderr)


def _err_console():
    """The rich console on stderr that progress bars draw on (rich is imported only when a bar is drawn)."""
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def _print_table(table) -> None:
    """A rich table on stdout (rich is imported only by the commands that print one)."""
    from rich.console import Console

    Console(soft_wrap=True).print(table)


class UserError(Exception):
    """An error with a one-line message for the user (exit code 1 unless ``code`` says otherwise)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def _options(*decorators):
    """One decorator applying several (the first given is the first listed)."""

    def apply(f):
        for decorator in reversed(decorators):
            f = decorator(f)
        return f

    return apply


# -- shared options ----------------------------------------------------------------------------------------
PATH = click.Path(path_type=Path)
TextField = click.option("--text-field", help="JSON field holding the text (default: content, text, body).")
IdField = click.option("--id-field", help="JSON field holding the id (default: id, _id, doc_id, url).")
IdfOption = click.option("--idf", type=PATH, help="IDF table in jieba format (from `fit-idf`) (default: jieba's).")
KOption = click.option("-k", "--max-distance", "k", type=click.IntRange(0, 16), default=3,
                       help="Hamming distance for long texts.")
InputsArg = click.argument("inputs", nargs=-1, required=True, cls=_Argument, callback=lambda ctx, param, v: list(v),
                           help="JSON Lines files (.gz too), or - for stdin.")
ReportOption = click.option(
    "--report", "-r", type=PATH, help="Write one JSON line per record: id, cluster, duplicate, distance, reason."
)
DeadLettersOption = click.option(
    "--dead-letters", type=PATH, default=Path("dead-letters.jsonl"),
    help="Where malformed records go (created only if needed).",
)
EncodingOption = click.option(
    "--encoding", default="utf-8",
    help="Encoding of the input lines: utf-8, auto (UTF-8, and GB18030 for a line that is not: each such line is "
         "counted in the summary), gb18030, big5, or any Python codec name.")
HtmlOption = click.option(
    "--html", default="auto",
    help="Markup in the text: auto (a text that carries HTML tags is replaced by the text of that markup, read with "
         "an HTML parser: tags, attributes, scripts and styles dropped, entities decoded; counted in the summary), "
         "strip (every text), keep (as it is).")
ProgressOption = click.option("--progress/--no-progress", default=True, help="Progress bar on stderr.")
LookupOption = click.option(
    "--lookup", default="tables",
    help="Lookup keys of a new index: 'tables' (20 permutation-table keys; every neighbour within 3 bits is "
    "found and lookups stay fast as the index grows), 'tables:K:R' (K+R blocks, R per key), or 'segments' (the "
    "four 16-bit segments of earlier releases). An existing index keeps the keys it was made with.",
)
WorkersOption = click.option(
    "--workers", type=click.IntRange(0, 64), default=0,
    help="Workers that fingerprint batches ahead on other cores (0: one thread in this process): threads with "
         "the native core, processes (a second or two each to start) with the pure-Python engine. For big inputs "
         "on a machine with N cores, N-1. Results are the same.")


def _fingerprinter(idf: Optional[Path]) -> Fingerprinter:
    if idf is None:
        return Fingerprinter()
    try:
        return Fingerprinter(IDFTable.load(idf))
    except FileNotFoundError:
        raise UserError(f"IDF table not found: {idf}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read IDF table: {exc}") from None


def _read_text_arg(text: Optional[str], file: Optional[Path]) -> str:
    if file is not None:
        try:
            return file.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise UserError(f"file not found: {file}") from None
        except UnicodeDecodeError as exc:
            raise UserError(f"{file} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if text is None or text == "-":
        return sys.stdin.read()
    return text


def _reader(text_field: Optional[str], id_field: Optional[str], encoding: str, html: str = "keep") -> RecordReader:
    try:
        return RecordReader(text_field, id_field, encoding=encoding, html=html)
    except ValueError as exc:
        raise UserError(str(exc), code=2) from None


def _check_inputs(inputs: List[str]) -> None:
    from es_simhash.files.sources import InputError, check_inputs

    try:
        check_inputs(inputs)
    except InputError as exc:
        raise UserError(str(exc)) from None


def _check_outputs(inputs: List[str], *outputs: tuple[str, Optional[Path]], input_name: str = "input") -> None:
    """Refuse (one line naming the option, exit 1) an output that is an input or another output, or that cannot
    be written, before anything is read or written (:func:`es_simhash.outputs.check_outputs`)."""
    from es_simhash.files.outputs import Output, OutputError, check_outputs

    try:
        check_outputs(inputs, [Output(option, path) for option, path in outputs], input_name)
    except OutputError as exc:
        raise UserError(str(exc)) from None


def _undecided(summary: Summary) -> None:
    """Exit 5 (one line with the reason) when records were read and none could be decided: a misspelt
    --text-field, an input that is not what it should be."""
    if summary.undecided is None:
        return
    where = f"; every reason is in {summary.dead_letter_path}" if summary.dead_letter_path else ""
    raise UserError(f"{summary.undecided}{where}", code=5)


def _progress(total: int | None, enabled: bool, label: str, unit: str = "bytes"):
    """A rich progress bar over input bytes (``unit="docs"``: documents) on stderr (disabled when stderr is not a
    terminal)."""
    if not enabled or not _stderr_is_terminal():  # (no bar: rich is not even imported)
        from contextlib import nullcontext

        return nullcontext(), lambda bytes_read, s: None
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        *((DownloadColumn(), TransferSpeedColumn()) if unit == "bytes" else (MofNCompleteColumn(),)),
        TextColumn("{task.fields[docs]} docs, {task.fields[dups]} dups, {task.fields[dead]} dead"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=_err_console(),
        disable=not enabled or not _stderr_is_terminal(),
        transient=False,
    )
    task = progress.add_task(label, total=total, docs=0, dups=0, dead=0)

    def update(bytes_read: int, s: Summary) -> None:
        progress.update(task, completed=bytes_read, docs=s.read, dups=s.duplicates, dead=s.dead_letters)

    return progress, update


def _print_summary(summary: Summary, extra: str = "") -> None:
    s = summary
    line = (
        f"read {s.read:,}  kept {s.kept:,}  duplicates {s.duplicates:,}  dead letters {s.dead_letters:,}"
        f"  ({s.elapsed:.1f}s{', ' + extra if extra else ''})"
    )
    err(line)
    if s.already_indexed:
        parts = [f"{s.indexed_this_run:,} written by this run"]
        if s.resumed_indexed:
            parts.append(f"{s.resumed_indexed:,} by the run it resumed")
        parts.append(f"{s.already_indexed:,} already there")
        err(f"{s.already_indexed:,} were already indexed with the same content (left as they were): "
            f"{' + '.join(parts)} = {s.kept + s.duplicates:,} documents decided")
    if s.rechecked:
        err(f"recheck: {s.rechecked:,} decisions taken again once the input's templates were known, "
            f"{s.taken_back:,} duplicates no more (--no-recheck: the decisions made on arrival)")
    if s.rechecked_earlier:
        err(f"recheck: {s.rechecked_earlier:,} documents of the loaded index changed cluster too (they are in the "
            "index, not in this run's report)")
    if s.html_stripped:
        err(f"{s.html_stripped:,} records carried HTML: their text was read from the markup (--html)")
    if s.encoding_fallbacks:
        err(f"{s.encoding_fallbacks:,} records were not UTF-8 and were read as GB18030 (--encoding auto)")
    if s.dead_letter_path:
        err(f"dead letters written to {s.dead_letter_path}")
    if not s.reconciles:  # pragma: no cover - an internal invariant; say so loudly if it ever breaks
        raise UserError("internal error: read != kept + duplicates + dead letters", code=1)


# -- commands ----------------------------------------------------------------------------------------------
@app.command()
@click.argument("text", required=False, cls=_Argument, help="The text, or - to read it from stdin.")
@click.option("--file", "-f", type=PATH, help="Read the text from this file (UTF-8).")
@IdfOption
def fingerprint(text: Optional[str], file: Optional[Path], idf: Optional[Path]) -> None:
    """Print the fingerprint of a text as JSON (SimHash, segments, sentence signature, flags)."""
    fp = _fingerprinter(idf).fingerprint(_read_text_arg(text, file))
    click.echo(json.dumps(fp.to_dict(), ensure_ascii=False, indent=2))


@app.command()
@InputsArg
@ReportOption
@click.option("--output", "-o", type=PATH,
              help="Write the records that are not duplicates (original lines, input order).")
@DeadLettersOption
@TextField
@IdField
@KOption
@IdfOption
@click.option("--batch-size", type=click.IntRange(min=1), default=1000,
              help="Documents fingerprinted per batch (the first batches are smaller: 100, then doubling).")
@WorkersOption
@click.option("--save-index", type=PATH, help="Save the in-memory index (.npz).")
@click.option("--load-index", type=PATH,
              help="Start from a saved index, e.g. yesterday's crawl (it keeps its lookup keys).")
@click.option("--lookup", default="tables", help="Lookup keys of the in-memory index: 'tables' (20 permutation "
              "tables for k <= 3), 'tables:K:R', or 'segments' (earlier releases).")
@EncodingOption
@HtmlOption
@click.option("--recheck/--no-recheck", default=True, show_default=True,
              help="Once every record is decided, take the near-duplicate decisions again with what the whole "
              "input showed of templates (a site header, a share line), and correct the report and output; the "
              "sentence match then reaches further (DefaultRule.rechecked). --no-recheck: the decisions made on "
              "arrival, as `index` makes them.")
@ProgressOption
def dedup(
    inputs: List[str], report: Optional[Path], output: Optional[Path], dead_letters: Path,
    text_field: Optional[str], id_field: Optional[str], k: int, idf: Optional[Path], batch_size: int, workers: int,
    save_index: Optional[Path], load_index: Optional[Path], lookup: str, encoding: str, html: str, recheck: bool,
    progress: bool,
) -> None:
    """Find near duplicates in crawl output with no server (embedded in-memory index).

    Prints a summary to stderr: read = kept + duplicates + dead letters.
    """
    _check_inputs(inputs)
    if save_index is not None and not str(save_index).endswith(".npz") and str(save_index) not in ("-", os.devnull):
        save_index = Path(f"{save_index}.npz")  # (what numpy names it)
    loaded = [str(load_index)] if load_index is not None else []
    _check_outputs([*inputs, *loaded], ("--report", report), ("--output", output), ("--dead-letters", dead_letters))
    _check_outputs(inputs, ("--report", report), ("--output", output), ("--dead-letters", dead_letters),
                   ("--save-index", save_index))  # (--save-index may be --load-index: it is read whole first)
    index = MemoryIndex(lookup_keys=_lookup_keys(lookup))
    if load_index is not None:
        from es_simhash.index.memory import IndexFileError

        try:
            index = MemoryIndex.load(load_index)
        except FileNotFoundError:
            raise UserError(f"index file not found: {load_index}") from None
        except IndexFileError:
            raise UserError(f"{load_index} is not an es-simhash index file: give one written by "
                            "`es-simhash dedup --save-index`") from None
        except (ValueError, OSError, KeyError) as exc:
            raise UserError(f"cannot load index {load_index}: {exc}") from None
        old = index.fingerprint_versions() - {FINGERPRINT_VERSION}
        if old:
            raise UserError(f"{load_index} holds fingerprints of version {', '.join(map(str, sorted(old)))}, not "
                            f"{FINGERPRINT_VERSION}: they would never match new ones; build it again from its input "
                            "(dedup --save-index)")
    from es_simhash.files.outputs import AtomicFile

    rule = DefaultRule.rechecked(k=k) if recheck else DefaultRule(k=k)
    engine = DedupEngine(index, _fingerprinter(idf), rule, batch_size=batch_size, workers=workers)
    _warn_beyond_keys(k, index.lookup_keys)
    reader = _reader(text_field, id_field, encoding, html)
    bar, update = _progress(RecordReader.total_bytes(inputs), progress, "dedup")
    try:
        with ExitStack() as stack:  # (the outputs are put in place when the block ends well, else left as they were)
            rep = stack.enter_context(AtomicFile(report)) if report else None
            out = stack.enter_context(AtomicFile(output, binary=True)) if output else None
            stack.enter_context(bar)
            summary = run_dedup(
                inputs, engine, reader, report=rep, output=out, dead_letters=dead_letters, on_progress=update,
                recheck=recheck,
            )
            _undecided(summary)
            if save_index is not None:
                index.save(save_index)
    except KeyboardInterrupt:
        raise UserError("interrupted: no output was written (earlier files are as they were): run the command "
                        "again", code=130) from None
    _print_summary(summary)


@app.command("fit-idf")
@InputsArg
@click.option("--output", "-o", type=PATH, required=True, help="Where to write the IDF table (jieba format).")
@click.option("--min-df", type=click.IntRange(min=1), default=2,
              help="Keep words found in at least this many documents.")
@TextField
@EncodingOption
def fit_idf(inputs: List[str], output: Path, min_df: int, text_field: Optional[str], encoding: str) -> None:
    """Learn an IDF table from your own crawl (use it with --idf)."""
    _check_inputs(inputs)
    _check_outputs(inputs, ("--output", output))
    reader = _reader(text_field, None, encoding)
    try:
        table = IDFTable.fit(iter_texts(inputs, reader), min_df=min_df)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    table.save(output)
    err(f"wrote {len(table):,} words to {output} (unknown words get {table.default:.3f})")


# -- Elasticsearch -----------------------------------------------------------------------------------------
EsUrl = click.option("--es-url", envvar="ES_URL", show_envvar=True,
                     help="Elasticsearch URL (default: http://localhost:9200).")
ApiKey = click.option("--api-key", envvar="ES_API_KEY", show_envvar=True, help="API key (base64 'id:key').")
Username = click.option("--username", envvar="ES_USERNAME", show_envvar=True, help="Basic-auth user.")
Password = click.option("--password", envvar="ES_PASSWORD", show_envvar=True,
                        help="Basic-auth password (prefer the environment variable).")
CaCerts = click.option("--ca-certs", envvar="ES_CA_CERTS", show_envvar=True,
                       help="CA certificate (PEM) to verify the cluster's TLS certificate.")
IndexName = click.option("--index", "-i", default="es-simhash", envvar="ES_SIMHASH_INDEX", show_envvar=True,
                         help="Index name.")
ElasticOptions = _options(EsUrl, ApiKey, Username, Password, CaCerts)  # (es_url, api_key, username, password, ca_certs)


class _Elastic:
    """Connection settings from flags/environment, and ElasticError -> one line, exit code 3."""

    def __init__(self, url, api_key, username, password, ca_certs, index: str | None = None) -> None:
        from es_simhash.index.elastic import ConnectionSettings

        try:
            self.settings = ConnectionSettings.from_env(
                url=url, api_key=api_key, username=username, password=password, ca_certs=ca_certs
            )
        except ValueError as exc:
            raise UserError(str(exc)) from None
        if index is not None:
            _valid_index(index)
        self.index = index
        self._client = None

    @property
    def client(self):
        if self._client is None:
            from es_simhash.index.elastic import connect

            self._client = connect(self.settings)
        return self._client

    def __enter__(self) -> "_Elastic":
        return self

    def __exit__(self, exc_type, exc, tb) -> Literal[False]:
        from es_simhash.index.elastic import ElasticError

        if isinstance(exc, ElasticError):
            raise UserError(_elastic_message(exc), code=3) from None
        return False


_SETTING_OPTIONS = {"url": "--es-url", "ca_certs": "--ca-certs"}


def _elastic_message(exc: Exception) -> str:
    """An ``ElasticError``'s line, with the option that sets the connection setting it names (if any): the
    library's message ends with its environment variable ("... with ES_URL"), the option follows ("or --es-url")."""
    option = _SETTING_OPTIONS.get(getattr(exc, "setting", None) or "")
    return f"{exc} or {option}" if option else str(exc)


def _valid_index(name: str) -> None:
    """Refuse an index name Elasticsearch would refuse (one line, exit 1), before anything else."""
    from es_simhash.index.elastic import validate_index_name

    try:
        validate_index_name(name)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def _lookup_keys(spec: str):
    from es_simhash.lookup.keys import LookupKeys

    try:
        return LookupKeys.parse(spec)
    except ValueError as exc:
        raise UserError(str(exc), code=2) from None


def _warn_beyond_keys(k: int, keys) -> None:
    if k > keys.k:
        err(f"warning: -k {k} is beyond the {keys.k} bits the lookup keys guarantee: a neighbour farther "
            f"than {keys.k} bits is found only when it shares a lookup key (or a sentence); for a guarantee "
            f"use a new index with --lookup tables:{k}:3")


IndexBatchOption = click.option("--batch-size", type=click.IntRange(min=1), default=500,
                                help="Documents per lookup + bulk round trip (the first batches are smaller: "
                                     "100, then doubling).")
CheckpointOption = click.option(
    "--checkpoint", "checkpoint_file", type=PATH,
    help="Progress file, saved after every batch (default: es-simhash-INDEX-DIGEST.checkpoint.json in this folder, "
         "DIGEST from the inputs' paths: concurrent runs on other inputs never share one).")
ResumeOption = click.option("--resume", is_flag=True, help="Continue an interrupted run from its checkpoint.")


def _checkpoint(path: Optional[Path], index: str, inputs: List[str], resume: bool):
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


def _lock(stack: ExitStack, checkpoint) -> None:
    """Hold the run's checkpoint (one line, exit 1, when another run holds it)."""
    from es_simhash.pipeline import CheckpointInUse

    try:
        stack.enter_context(checkpoint.lock())
    except CheckpointInUse as exc:
        raise UserError(f"{exc} (option --checkpoint FILE)") from None


def _interrupted(checkpoint) -> UserError:
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


def _describe_keys(keys) -> str:
    if keys.is_segments:
        return "four 16-bit segments"
    return f"{keys.n_tables} permutation tables, k = {keys.k}"


@app.command()
@IndexName
@click.option("--replicas", type=click.IntRange(min=0), help="Replicas (default: cluster default).")
@IdfOption
@LookupOption
@ElasticOptions
def init(
    index: str, replicas: Optional[int], idf: Optional[Path], lookup: str,
    es_url: Optional[str], api_key: Optional[str], username: Optional[str], password: Optional[str],
    ca_certs: Optional[str],
) -> None:
    """Install the index template and create the index (safe to run again)."""
    from es_simhash.index.elastic import ensure_index, read_lookup_keys

    keys = _lookup_keys(lookup)
    with _Elastic(es_url, api_key, username, password, ca_certs, index) as es:
        created = ensure_index(es.client, index, _fingerprinter(idf).config, replicas=replicas, lookup_keys=keys)
        recorded = read_lookup_keys(es.client, index, es.settings.safe_url)
    kept = "" if created or recorded == keys else f"; it keeps them: --lookup {lookup} applies to new indexes"
    err(f"index {index!r} {'created' if created else 'already exists'} at {es.settings.safe_url} "
        f"(lookup keys: {_describe_keys(recorded)}{kept})")


@app.command("index")
@InputsArg
@IndexName
@ReportOption
@DeadLettersOption
@TextField
@IdField
@KOption
@IdfOption
@IndexBatchOption
@WorkersOption
@LookupOption
@EncodingOption
@HtmlOption
@ProgressOption
@click.option("--retry-for", type=click.FloatRange(min=0), default=300.0,
              help="Seconds to keep retrying when the cluster is down or overloaded.")
@CheckpointOption
@ResumeOption
@ElasticOptions
def index_cmd(
    inputs: List[str], index: str, report: Optional[Path], dead_letters: Path, text_field: Optional[str],
    id_field: Optional[str], k: int, idf: Optional[Path], batch_size: int, workers: int, lookup: str, encoding: str,
    html: str, progress: bool, retry_for: float, checkpoint_file: Optional[Path], resume: bool,
    es_url: Optional[str], api_key: Optional[str], username: Optional[str], password: Optional[str],
    ca_certs: Optional[str],
) -> None:
    """Index crawl output into Elasticsearch, detecting duplicates on ingest.

    Every document is indexed with its fingerprint and duplicate cluster; re-running the same input changes
    nothing. If the cluster stays unavailable longer than --retry-for, the command exits with code 4 and the
    same command with --resume finishes the job. Prints: read, indexed, duplicates, dead letters, elapsed.
    """
    from es_simhash.index.elastic import ElasticError, ElasticIndex

    _check_inputs(inputs)
    _valid_index(index)
    keys = _lookup_keys(lookup)
    reader = _reader(text_field, id_field, encoding, html)
    checkpoint = _checkpoint(checkpoint_file, index, inputs, resume)
    _check_outputs(inputs, ("--report", report), ("--dead-letters", dead_letters),
                   ("--checkpoint", Path(checkpoint.path)))
    fingerprinter = _fingerprinter(idf)
    with _Elastic(es_url, api_key, username, password, ca_certs, index) as es:
        backend = ElasticIndex(es.client, index, url=es.settings.safe_url, retry_for=retry_for)
        start = _opened(es, index, fingerprinter, keys, k, backend)
        engine = DedupEngine(backend, fingerprinter, DefaultRule(k=k), batch_size=batch_size, workers=workers)
        bar, update = _progress(RecordReader.total_bytes(inputs), progress, "index")
        with ExitStack() as stack:
            _lock(stack, checkpoint)  # before any output is opened
            rep = stack.enter_context(_resumable_report(checkpoint, report)) if report else None
            stack.enter_context(bar)
            stop = stack.enter_context(_stop_after_batch())
            try:
                summary = run_dedup(inputs, engine, reader, report=rep, dead_letters=dead_letters,
                                    on_progress=update, checkpoint=checkpoint, start=start, stop=stop)
            except KeyboardInterrupt:
                raise _interrupted(checkpoint) from None
            except ElasticError as exc:
                done = sum(checkpoint.done.values())
                raise UserError(
                    f"{_elastic_message(exc)}; {done:,} input lines are done and saved in {checkpoint.path}: "
                    "run the same command with --resume to finish",
                    code=4,
                ) from None
            _undecided(summary)
    _print_summary(summary, _indexed_line(summary, index))
    if backend.truncated_lookups:
        err(f"warning: {backend.truncated_lookups:,} lookups hit a bucket larger than "
            f"{backend.max_candidates:,} documents and compared only that many candidates")


def _opened(es: "_Elastic", index: str, fingerprinter: Fingerprinter, keys, k: int, backend,
            ) -> Optional[Callable[[], None]]:
    """Make the index ready for ``backend``: an existing one is checked now (its fingerprint settings must be this
    run's: one line otherwise, before any input is read); a new one is created by the function returned, which
    ``run_dedup`` calls before its first record (a run whose every record is a dead letter creates none)."""
    from es_simhash.index.elastic import elastic_errors, ensure_index, index_exists

    url = es.settings.safe_url

    def create() -> None:
        with elastic_errors(url):
            ensure_index(es.client, index, fingerprinter.config, lookup_keys=keys)
        _warn_beyond_keys(k, backend.lookup_keys)

    if not index_exists(es.client, index, url):
        return create
    create()
    return None


def _resumable_report(checkpoint, report: Path):
    from es_simhash.files.outputs import OutputError

    try:
        return checkpoint.open_report(report)
    except OutputError as exc:
        raise UserError(str(exc)) from None


@contextmanager
def _stop_after_batch() -> Iterator[Callable[[], bool]]:
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


def _indexed_line(summary: Summary, index: str) -> str:
    """What this run wrote and how fast; after a resume, what the runs it resumed wrote too, so that the documents
    of the input add up: written by this run + by the runs it resumed + found already indexed."""
    s = summary
    line = f"indexed {s.indexed_this_run:,} into {index!r}"
    if s.resumed_indexed or s.resumed_elapsed:
        line += f" (and {s.resumed_indexed:,} by the run it resumed)"
    return f"{line}, {s.rate_this_run:,.0f} docs/s"


@app.command()
@click.argument("text", required=False, cls=_Argument, help="The text, or - for stdin.")
@click.option("--file", "-f", type=PATH, help="Read the text from this file.")
@IndexName
@KOption
@click.option("--limit", "-n", type=click.IntRange(min=1), default=10, help="At most this many matches.")
@IdfOption
@ElasticOptions
def check(
    text: Optional[str], file: Optional[Path], index: str, k: int, limit: int, idf: Optional[Path],
    es_url: Optional[str], api_key: Optional[str], username: Optional[str], password: Optional[str],
    ca_certs: Optional[str],
) -> None:
    """List indexed near duplicates of a text (JSON lines: id, cluster, distance, reason). Exit 0 either way."""
    if text is None and file is None:
        raise UserError("no text to check: give the text, - to read it from stdin, or --file FILE", code=2)
    text = _read_text_arg(text, file)
    with _Elastic(es_url, api_key, username, password, ca_certs, index) as es:
        backend = _maintained(es, index)
        engine = DedupEngine(backend, _fingerprinter(idf), DefaultRule(k=k))
        found = engine.check(text, limit=limit)
    for d in found:
        click.echo(json.dumps(d.to_dict(), ensure_ascii=False))
    err(f"{len(found)} near duplicate{'s' if len(found) != 1 else ''} in {index!r}")


@app.command("search")
@click.argument("query", cls=_Argument, help="Words to search for in title and content.")
@IndexName
@click.option("--size", "-n", type=click.IntRange(1, 10_000), default=10, help="Number of hits.")
@click.option("--all", "show_all", is_flag=True, help="Show duplicates too (no collapsing).")
@click.option("--json", "as_json", is_flag=True, help="JSON lines instead of a table.")
@ElasticOptions
def search_cmd(
    query: str, index: str, size: int, show_all: bool, as_json: bool,
    es_url: Optional[str], api_key: Optional[str], username: Optional[str], password: Optional[str],
    ca_certs: Optional[str],
) -> None:
    """Full-text search with one hit per duplicate cluster (and each cluster's size)."""
    from es_simhash.readside.search import MAX_QUERY_CHARS, search

    if len(query) > MAX_QUERY_CHARS:
        err(f"note: the query is {len(query):,} characters long; "
            f"searching with its first {MAX_QUERY_CHARS:,}")
    with _Elastic(es_url, api_key, username, password, ca_certs, index) as es:
        _require(es, index)
        hits = search(es.client, index, query, size=size, collapse=not show_all, url=es.settings.safe_url)
    if as_json:
        for h in hits:
            click.echo(json.dumps(h.to_dict(), ensure_ascii=False))
        return
    from rich.table import Table

    table = Table("score", "id", "title", "cluster size", "duplicate of")
    for h in hits:
        table.add_row(f"{h.score or 0:.2f}", h.id, (h.title or "")[:60], str(h.cluster_size), h.duplicate_of or "")
    _print_table(table)


@app.command()
@IndexName
@click.option("--top", "-n", type=click.IntRange(1, 10_000), default=10, help="How many clusters.")
@click.option("--json", "as_json", is_flag=True, help="JSON lines instead of a table.")
@ElasticOptions
def clusters(
    index: str, top: int, as_json: bool,
    es_url: Optional[str], api_key: Optional[str], username: Optional[str], password: Optional[str],
    ca_certs: Optional[str],
) -> None:
    """The largest duplicate clusters, with their canonical document's title and url."""
    from es_simhash.readside.search import top_clusters

    with _Elastic(es_url, api_key, username, password, ca_certs, index) as es:
        _require(es, index)
        rows = top_clusters(es.client, index, top=top, url=es.settings.safe_url)
    if as_json:
        for r in rows:
            click.echo(json.dumps(r.to_dict(), ensure_ascii=False))
        return
    from rich.table import Table

    table = Table("size", "cluster", "title", "url")
    for r in rows:
        table.add_row(str(r.size), r.cluster, (r.title or "")[:60], r.url or "")
    _print_table(table)


@app.command("report")
@click.option("--output", "-o", type=PATH, default=Path("report.html"), help="Where to write the HTML page.")
@IndexName
@click.option("--from-dedup", type=PATH,
              help="Report on a `dedup --report` file instead of an index (no server).")
@click.option("--input", "inputs", multiple=True, callback=lambda ctx, param, v: list(v),
              help="With --from-dedup: the crawl input it read, for titles, urls and crawl times.")
@IdField
@click.option("--top", "-n", type=click.IntRange(0, 1000), default=20,
              help="How many of the largest clusters to list.")
@click.option("-k", "--max-distance", "k", type=click.IntRange(0, 16), default=3,
              help="The -k the documents were decided with (the page states the rule's limits).")
@ElasticOptions
def report_cmd(
    output: Path, index: str, from_dedup: Optional[Path], inputs: List[str], id_field: Optional[str], top: int,
    k: int,
    es_url: Optional[str], api_key: Optional[str], username: Optional[str], password: Optional[str],
    ca_certs: Optional[str],
) -> None:
    """Write a self-contained HTML report: cluster sizes, top clusters, duplicate rate over time, distances."""
    from es_simhash.readside import report

    read = [*([str(from_dedup)] if from_dedup is not None else []), *inputs]
    _check_outputs(read, ("--output", output))
    try:
        if from_dedup is not None:
            data = report.from_dedup_report(str(from_dedup), inputs, top=top, id_field=id_field)
        else:
            with _Elastic(es_url, api_key, username, password, ca_certs, index) as es:
                _require(es, index)
                data = report.from_index(es.client, index, top=top, url=es.settings.safe_url)
        size = report.write_report(data, str(output), rule=DefaultRule(k=k))
    except report.ReportError as exc:
        raise UserError(str(exc)) from None
    err(f"report written to {output} ({size / 1024:,.0f} KiB): {data.documents:,} documents, "
        f"{data.duplicates:,} duplicates in {data.clusters_with_duplicates:,} clusters")


@app.group("kibana")
def kibana_app() -> None:
    """Kibana saved objects: a data view, saved searches and a dashboard."""


@kibana_app.command("import")
@click.option("--kibana-url", envvar="KIBANA_URL", show_envvar=True,
              help="Kibana URL (default: http://localhost:5601).")
@click.option("--index", "-i", default="es-simhash*", envvar="ES_SIMHASH_INDEX", show_envvar=True,
              help="Index name or pattern the data view covers.")
@click.option("--space", help="Kibana space id (default: the default space).")
@ApiKey
@Username
@Password
@CaCerts
def kibana_import(
    kibana_url: Optional[str], index: str, space: Optional[str], api_key: Optional[str], username: Optional[str],
    password: Optional[str], ca_certs: Optional[str],
) -> None:
    """Load the data view, saved searches and dashboard into Kibana (overwrites earlier imports)."""
    from es_simhash.readside.kibana import InvalidKibanaURL, KibanaError, import_saved_objects

    try:
        result = import_saved_objects(kibana_url, index_pattern=index, space=space, api_key=api_key,
                                      username=username, password=password, ca_certs=ca_certs)
    except (InvalidKibanaURL, ValueError) as exc:  # a bad URL, an unreadable config file
        raise UserError(str(exc)) from None
    except KibanaError as exc:
        raise UserError(str(exc), code=3) from None
    err(result)


@kibana_app.command("export")
@click.option("--index-pattern", "-p", default="es-simhash*", envvar="ES_SIMHASH_INDEX", show_envvar=True,
              help="Index name or pattern the data view covers.")
@click.option("--output", "-o", type=PATH, default=Path("es-simhash-kibana.ndjson"),
              help="Where to write the ndjson file (- for stdout).")
def kibana_export(index_pattern: str, output: Path) -> None:
    """Write the saved objects for any index pattern to a file, to import in Kibana by hand (Stack Management >
    Saved objects > Import) when no Kibana is at hand here."""
    from es_simhash.readside.kibana import export_saved_objects

    _check_outputs([], ("--output", output))
    n = export_saved_objects(output, index_pattern)
    err(f"wrote {n} saved objects for {index_pattern!r} to {'stdout' if str(output) == '-' else output}")


@app.command()
@click.argument("a", cls=_Argument, help="A file holding a text, - to read one from stdin, or the text itself; with "
                "--index, a document id instead of a text.")
@click.argument("b", cls=_Argument, help="The same, for what A is compared with.")
@click.option("--index", "-i", help="Read A and B that are not files (or -) as ids of documents stored in this "
              "Elasticsearch index: `explain article.txt rmrb-0000 --index NAME` says why `check` matched it.")
@click.option("--text", "as_text", is_flag=True, help="Take A and B as texts, never as files (without it, an "
              "argument that looks like a path but is no file is refused).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of words.")
@KOption
@IdfOption
@ElasticOptions
def explain(
    a: str, b: str, index: Optional[str], as_text: bool, as_json: bool, k: int, idf: Optional[Path],
    es_url: Optional[str], api_key: Optional[str], username: Optional[str], password: Optional[str],
    ca_certs: Optional[str],
) -> None:
    """Why A is, or is not, a near duplicate of B: the distance, what they share, each test of the rule, and the
    meaning guard's veto. Exit 0 either way."""
    from es_simhash.fingerprint.model import Fingerprint

    if a == "-" and b == "-":
        raise UserError("A and B are both - (stdin): read one of them from a file", code=2)
    engine = DedupEngine(MemoryIndex(), _fingerprinter(idf), DefaultRule(k=k))
    given = [_explained(x, name, as_text, index is not None) for x, name in ((a, "A"), (b, "B"))]
    ids = [x for x, t in zip((a, b), given) if t is None]
    found = {}
    if ids:
        with _Elastic(es_url, api_key, username, password, ca_certs, index) as es:
            found = _maintained(es, str(index)).fetch(ids)
        missing = [x for x in ids if x not in found]
        if missing:
            raise UserError(f"no document {missing[0]!r} in index {index!r}, and no such file")
    texts: list[str | Fingerprint] = [t if t is not None else found[x].text or found[x].fingerprint
                                      for x, t in zip((a, b), given)]
    out = engine.explain(texts[0], texts[1])
    if as_json:
        click.echo(json.dumps(out, ensure_ascii=False))
        return

    def side(name: str, s: dict) -> str:
        kind = "short" if s["short"] else "long"
        return (f"{name}: {kind}, {s['letters']:,} letters/ideographs, {s['features']:,} weighted words, "
                f"{s['long_sentences']} long sentences, {s['sketch']} sketch hashes")

    verdict = f"yes ({out['reason']})" if out["duplicate"] else "no"
    click.echo(f"A duplicates B: {verdict}; SimHash distance {out['distance']} bits")
    if "a" in out:
        click.echo(side("A", out["a"]))
        click.echo(side("B", out["b"]))
        click.echo(f"shared: {out['shared_segments']} of 4 segments, {out['shared_sentences']} long sentences, "
                   f"{out['shared_sketch']} sketch hashes{', same content' if out['exact'] else ''}")
    for line in out["why"]:
        click.echo(f"- {line}")


@app.command()
@click.argument("labels_file", metavar="LABELS", type=PATH, cls=_Argument,
                help="JSON Lines of labelled pairs ({\"a\", \"b\", \"duplicate\"}) or of documents with a cluster "
                "label ({\"id\", \"content\", \"cluster\"}).")
@click.option("--no-sweep", is_flag=True, help="Only score the current settings.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of tables.")
@KOption
@IdfOption
def evaluate(labels_file: Path, no_sweep: bool, as_json: bool, k: int, idf: Optional[Path]) -> None:
    """Precision, recall and F1 of the current settings on your own labelled data, and a sweep over k and the
    rule's bounds with the setting that maximises F1 (then use it: -k, or DefaultRule(...) in Python)."""
    from es_simhash.readside.evaluate import LabelError, load_labels, score, sweep

    try:
        with open(labels_file, encoding="utf-8") as fh:
            labels = load_labels(fh, str(labels_file))
    except FileNotFoundError:
        raise UserError(f"labels file not found: {labels_file}") from None
    except (LabelError, UnicodeDecodeError) as exc:
        raise UserError(str(exc)) from None
    fingerprinter, rule = _fingerprinter(idf), DefaultRule(k=k)
    if no_sweep:
        sc = score(labels, fingerprinter, rule)
        if as_json:
            click.echo(json.dumps({"current": sc.to_dict()}))
        else:
            click.echo(f"precision {sc.precision:.3f}  recall {sc.recall:.3f}  F1 {sc.f1:.3f}  "
                       f"({sc.true_pairs:,} labelled duplicate pairs, {sc.predicted_pairs:,} predicted)")
        return
    res = sweep(labels, fingerprinter, rule)
    if as_json:
        click.echo(json.dumps(res.to_dict()))
        return
    c = res.current
    click.echo(f"{labels.kind}: current settings: precision {c.precision:.3f}  recall {c.recall:.3f}  F1 {c.f1:.3f}"
               f"  ({c.true_pairs:,} labelled duplicate pairs, {c.predicted_pairs:,} predicted)")
    from rich.table import Table

    table = Table("setting", "value", "precision", "recall", "F1")
    for setting, value, sc in res.rows:
        mark = " *" if value == res.best[setting] else ""
        table.add_row(setting, f"{value}{mark}", f"{sc.precision:.3f}", f"{sc.recall:.3f}", f"{sc.f1:.3f}")
    _print_table(table)
    b = res.best_score
    settings = ", ".join(f"{k_}={v}" for k_, v in res.best.items())
    click.echo(f"best of each together ({settings}): precision {b.precision:.3f}  recall {b.recall:.3f}  "
               f"F1 {b.f1:.3f}")


_PATH_LIKE = re.compile(r"^[^\s]*(?:[/\\][^\s]*|\.[A-Za-z0-9]{1,5})$")
"""An ``explain`` argument written as a path (a folder separator, or a file extension, and no space)."""


def _explained(arg: str, name: str, as_text: bool, with_index: bool) -> Optional[str]:
    """The text an ``explain`` argument stands for (``None``: a document id, read from the index)."""
    if arg == "-":
        return sys.stdin.read()
    if not as_text:
        if os.path.isfile(arg):
            return _read_text_arg(None, Path(arg))
        if os.path.isdir(arg):
            raise UserError(f"{name}: {arg} is a folder, not a file")
    if with_index:
        return None
    if not as_text and _PATH_LIKE.match(arg):
        raise UserError(f"{name}: no such file {arg} (to compare it as a text, give --text)")
    return arg


def _require(es: "_Elastic", index: str) -> None:
    """Refuse (one line) an index that does not exist or that es-simhash did not make: its documents have none of
    the fields the commands read."""
    from es_simhash.index.elastic import require_index

    require_index(es.client, index, es.settings.safe_url)


def _maintained(es: "_Elastic", index: str):
    """The ``ElasticIndex`` of an existing es-simhash index (one clear error otherwise)."""
    from es_simhash.index.elastic import ElasticIndex

    _require(es, index)
    return ElasticIndex(es.client, index, url=es.settings.safe_url)


def _print_changes(changes) -> None:
    for c in changes:
        click.echo(json.dumps(c.to_dict(), ensure_ascii=False))


@app.command()
@click.argument("ids", nargs=-1, cls=_Argument, callback=lambda ctx, param, v: list(v),
                help="Ids of the documents to delete.")
@click.option("--ids", "ids_file", type=PATH, help="A file of ids, one per line (- for stdin).")
@IndexName
@KOption
@ElasticOptions
def delete(
    ids: Optional[List[str]], ids_file: Optional[Path], index: str, k: int,
    es_url: Optional[str], api_key: Optional[str], username: Optional[str], password: Optional[str],
    ca_certs: Optional[str],
) -> None:
    """Delete documents and keep their clusters whole.

    The rest of a deleted document's cluster is decided again in the order its documents arrived: the earliest
    remaining member becomes the canonical, members no longer within the rule of anyone in the cluster are
    decided afresh, and no document is left pointing at a deleted one. Prints one JSON line per document
    changed (deleted, re-decided, re-pointed); ids not found are reported and are not an error (exit 0).
    """
    from es_simhash import cluster

    wanted = list(ids or [])
    if ids_file is not None:
        try:
            fh = sys.stdin if str(ids_file) == "-" else open(ids_file, encoding="utf-8")  # noqa: SIM115
        except FileNotFoundError:
            raise UserError(f"ids file not found: {ids_file}") from None
        with fh:
            wanted += list(cluster.iter_ids(fh))
    if not wanted:
        raise UserError("no ids given: pass ids as arguments or --ids FILE", code=2)
    with _Elastic(es_url, api_key, username, password, ca_certs, index) as es:
        backend = _maintained(es, index)
        try:
            deleted, missing, settled = cluster.delete(backend, DefaultRule(k=k), wanted)
        except cluster.MaintenanceError as exc:
            raise UserError(str(exc)) from None
    _print_changes(settled.changes)
    moved = len({c.id for c in settled.changes if c.why != "deleted"})
    err(f"deleted {len(deleted):,} of {len(wanted):,} documents from {index!r}"
        f"{f' ({len(missing):,} not found)' if missing else ''}; {moved:,} other documents changed cluster")


@app.command()
@IndexName
@KOption
@click.option("--dry-run", is_flag=True, help="Only print what would change (first-order changes).")
@click.option("--after", help="Start after this id (go on with an interrupted repair: it prints the id).")
@ProgressOption
@ElasticOptions
def repair(
    index: str, k: int, dry_run: bool, after: Optional[str], progress: bool,
    es_url: Optional[str], api_key: Optional[str], username: Optional[str], password: Optional[str],
    ca_certs: Optional[str],
) -> None:
    """Find and fix inconsistent clusters that older runs or other tools left.

    Canonicals that duplicate an older document join its cluster, clusters whose canonical joined another
    cluster or is missing are re-pointed, documents pointing at missing documents are decided again, and
    contradictory flags are fixed. Prints one JSON line per change and a summary; a second repair changes
    nothing. Safe to interrupt: it prints how to go on.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from es_simhash import cluster

    with _Elastic(es_url, api_key, username, password, ca_certs, index) as es:
        backend = _maintained(es, index)
        total = len(backend)
        bar = Progress(TextColumn("[bold]repair"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                       console=_err_console(), disable=not progress or not _stderr_is_terminal())
        task = bar.add_task("repair", total=total)
        state = {"checked": 0, "last": after, "printed": 0}

        def on_page(report) -> None:
            _print_changes(report.changes[state["printed"]:])
            state.update(checked=report.checked, last=report.last_id, printed=len(report.changes))
            bar.update(task, completed=report.checked)

        try:
            with bar:
                report = cluster.repair(backend, DefaultRule(k=k), dry_run=dry_run, after=after, on_page=on_page)
        except KeyboardInterrupt:
            resume = f" --after {state['last']}" if state["last"] else ""
            raise UserError(f"interrupted after checking {state['checked']:,} documents; everything checked so far "
                            f"is fixed: run `es-simhash repair --index {index}{resume}` to go on", code=130) from None
        except cluster.MaintenanceError as exc:
            raise UserError(str(exc)) from None
    counts = ", ".join(f"{n:,} {why}" for why, n in sorted(report.counts().items()))
    verb = "would change" if dry_run else "changed"
    err(f"checked {report.checked:,} documents in {index!r}: " + (f"{verb} {counts}" if counts else "nothing to fix"))


@app.command()
@click.option("--from", "source", required=True, help="The index to read (it is left as it is).")
@click.option("--to", "target", required=True, help="The new index (created if needed).")
@click.option("--alias", help="When done, point this alias at the new index alone (atomically), so readers switch "
              "over.")
@ReportOption
@DeadLettersOption
@KOption
@IdfOption
@IndexBatchOption
@WorkersOption
@LookupOption
@ProgressOption
@CheckpointOption
@ResumeOption
@ElasticOptions
def migrate(
    source: str, target: str, alias: Optional[str], report: Optional[Path], dead_letters: Path, k: int,
    idf: Optional[Path], batch_size: int, workers: int, lookup: str, progress: bool, checkpoint_file: Optional[Path],
    resume: bool,
    es_url: Optional[str], api_key: Optional[str], username: Optional[str], password: Optional[str],
    ca_certs: Optional[str],
) -> None:
    """Copy an index into a new one with the current fingerprint and lookup keys (e.g. after an upgrade).

    Every document is fingerprinted again from its stored text and decided afresh, the earliest first, on this
    machine (no reindex module needed); one without stored text is a dead letter. Interrupted? The same
    command with --resume goes on. The old index is not changed; --alias switches readers over at the end.
    """
    from es_simhash.pipeline.migrate import migrate
    from es_simhash.index.elastic import ElasticError, ElasticIndex, require_index, switch_alias

    if source == target:
        raise UserError("--from and --to are the same index: migrate into a new one", code=2)
    _valid_index(source)
    _valid_index(target)
    keys = _lookup_keys(lookup)
    checkpoint = _checkpoint(checkpoint_file, target, [f"index:{source}"], resume)
    _check_outputs([], ("--report", report), ("--dead-letters", dead_letters), ("--checkpoint", Path(checkpoint.path)))
    fingerprinter = _fingerprinter(idf)
    with _Elastic(es_url, api_key, username, password, ca_certs, target) as es:
        require_index(es.client, source, es.settings.safe_url)
        old = ElasticIndex(es.client, source, url=es.settings.safe_url)
        backend = ElasticIndex(es.client, target, url=es.settings.safe_url)
        start = _opened(es, target, fingerprinter, keys, k, backend)
        engine = DedupEngine(backend, fingerprinter, DefaultRule(k=k), batch_size=batch_size, workers=workers)
        bar, update = _progress(len(old), progress, "migrate", unit="docs")
        with ExitStack() as stack:
            _lock(stack, checkpoint)
            rep = stack.enter_context(_resumable_report(checkpoint, report)) if report else None
            stack.enter_context(bar)
            stop = stack.enter_context(_stop_after_batch())
            try:
                summary = migrate(old, engine, dead_letters=str(dead_letters), checkpoint=checkpoint,
                                              report=rep, on_progress=update, start=start, stop=stop)
            except KeyboardInterrupt:
                raise _interrupted(checkpoint) from None
            except ElasticError as exc:
                raise UserError(f"{_elastic_message(exc)}; the same command with --resume goes on", code=4) from None
            _undecided(summary)
        switched = ""
        if alias:
            before = switch_alias(es.client, alias, target, es.settings.safe_url)
            switched = f"; alias {alias!r} now points at {target!r}" + (f" (was {', '.join(before)})" if before else "")
    _print_summary(summary, f"into {target!r}{switched}")


@app.command()
def version() -> None:
    """Print the version."""
    click.echo(__version__)


def main(argv: list[str] | None = None) -> int:
    """Runs the app, turning known errors into one line and an exit code (the ``es-simhash`` command is
    :func:`es_simhash.__main__.main`, which starts the native segmenter first for the commands that segment)."""
    # The objects of the imports (modules, classes, functions) live as long as the process: out of the garbage
    # collector's scans (a full collection walks every object), and young collections every 10,000 allocations
    # rather than 700: a run allocates a few objects per document, and almost none of them form cycles.
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)
    try:
        app(args=argv, prog_name="es-simhash")  # standalone: click prints usage errors itself (exit 2)
    except SystemExit as exc:
        if exc.code == 130:  # Ctrl-C is a silent exit 130 (_Group.invoke): say so
            err("es-simhash: interrupted")
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except UserError as exc:
        err(f"es-simhash: error: {exc}")
        return exc.code
    except KeyboardInterrupt:
        err("es-simhash: interrupted")
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:
        where = f": {exc.filename}" if exc.filename else ""
        err(f"es-simhash: error: {exc.strerror or exc}{where}")
        return 1
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, never a traceback
        from es_simhash import settings

        if settings.debug():
            raise
        err(f"es-simhash: unexpected error: {type(exc).__name__}: {exc} (set ES_SIMHASH_DEBUG=1 for a traceback)")
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
