"""What every command shares: the one-line error (:class:`UserError`), stderr lines, tables and progress bars (rich
is imported here only, when one is drawn), the options several commands take (declared once, as ``Annotated``
types), and the small steps before a run (inputs and outputs checked, the fingerprinter and the reader made)."""

from __future__ import annotations

import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Iterable, Iterator, List, Optional, Sequence

import typer

from es_simhash.errors import InputError, InvalidValue, OutputError

if TYPE_CHECKING:
    from es_simhash.files.sources import RecordReader
    from es_simhash.fingerprint.fingerprinter import Fingerprinter
    from es_simhash.pipeline import Summary


class UserError(Exception):
    """An error with a one-line message for the user (exit code 1 unless ``code`` says otherwise)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Ctrl-C (SIGINT) held back while the block runs and raised (``KeyboardInterrupt``) once it is done: lines
    printed and the count of them kept agree, so the lines printed after an interrupt are the rest, none twice.
    (Outside the main thread, where no handler can be set, the block runs as it is.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.default_int_handler)
    if held:
        raise KeyboardInterrupt


def err(message: str) -> None:
    """A line on stderr (messages, summaries, warnings; the progress bars draw there too)."""
    print(message, file=sys.stderr, flush=True)

def stderr_is_terminal() -> bool:
    """Whether stderr takes a progress bar (:func:`es_simhash.settings.stderr_is_terminal`)."""
    from es_simhash import settings

    return settings.stderr_is_terminal(sys.stderr)

def err_console():
    """The rich console on stderr that progress bars draw on (rich is imported only when a bar is drawn)."""
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)

def print_table(columns: Sequence[str], rows: Iterable[Sequence[str]]) -> None:
    """A table on stdout (rich is imported only by the commands that print one)."""
    from rich.console import Console
    from rich.table import Table

    table = Table(*columns)
    for row in rows:
        table.add_row(*row)
    Console(soft_wrap=True).print(table)

# -- options several commands take ---------------------------------------------------------------------------
TextField = Annotated[Optional[str], typer.Option(
    "--text-field", help="JSON field holding the text (default: content, text, body).", show_default=False)]
IdField = Annotated[Optional[str], typer.Option(
    "--id-field", help="JSON field holding the id (default: id, _id, doc_id, url).", show_default=False)]
Idf = Annotated[Optional[Path], typer.Option(
    "--idf", help="IDF table in jieba format (from `fit-idf`) (default: jieba's).", show_default=False)]
MaxDistance = Annotated[int, typer.Option("-k", "--max-distance", min=0, max=16, help="Hamming distance for long texts.")]
Inputs = Annotated[List[str], typer.Argument(metavar="INPUTS...", help="JSON Lines files (.gz, .bz2, .xz too), or - for stdin.",
                                            show_default=False)]
Report = Annotated[Optional[Path], typer.Option(
    "--report", "-r", help="Write one JSON line per record: id, cluster, duplicate, distance, reason.",
    show_default=False)]
DeadLetters = Annotated[Path, typer.Option(
    "--dead-letters", help="Where malformed records go (created only if needed).")]
Encoding = Annotated[str, typer.Option(
    "--encoding",
    help="Encoding of the input lines: utf-8, auto (UTF-8, and GB18030 for a line that is not: each such line is "
         "counted in the summary), gb18030, big5, or any Python codec name.")]
Html = Annotated[str, typer.Option(
    "--html",
    help="Markup in the text: auto (a text that carries HTML tags is replaced by the text of that markup, read with "
         "an HTML parser: tags, attributes, scripts and styles dropped, entities decoded; counted in the summary), "
         "strip (every text), keep (as it is).")]
Progress = Annotated[bool, typer.Option("--progress/--no-progress", help="Progress bar on stderr.")]
Workers = Annotated[int, typer.Option(
    "--workers", min=0, max=64,
    help="Workers that fingerprint batches ahead on other cores (0: one thread in this process): threads with "
         "the native core, processes (a second or two each to start) with the pure-Python engine. For big inputs "
         "on a machine with N cores, N-1. Results are the same.")]
Recheck = Annotated[bool, typer.Option(
    "--recheck/--no-recheck",
    help="Once every record is decided, take the decisions again with what the whole run showed of templates (a "
         "site's header and footer, a share line), and correct the counts, the report and the output; the sentence "
         "match reaches further (DefaultRule.rechecked). --no-recheck: the decisions without it (dedup: made as a "
         "set once every record is read; index: made on arrival), which a run with the recheck makes alike before "
         "it: its summary line 'recheck:' counts the records whose report line differs "
         "from the same run's with --no-recheck (duplicates no more, became duplicates, moved to another cluster "
         "or original).")]
AsJson = Annotated[bool, typer.Option("--json", help="JSON lines instead of a table.")]
Limit = Annotated[int, typer.Option("--limit", "-n", min=1, max=10_000, help="At most this many results.")]
TextFile = Annotated[Optional[Path], typer.Option("--file", "-f", help="Read the text from this file (UTF-8).",
                                                  show_default=False)]


def make_fingerprinter(idf: Optional[Path]) -> Fingerprinter:
    """The fingerprinter of a run: with jieba's IDF table, or the one ``--idf`` names (one line when unreadable)."""
    from es_simhash.fingerprint.fingerprinter import Fingerprinter
    from es_simhash.fingerprint.idf import IDFTable

    if idf is None:
        return Fingerprinter()
    try:
        return Fingerprinter(IDFTable.load(idf))
    except FileNotFoundError:
        raise UserError(f"IDF table not found: {idf}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read IDF table: {exc}") from None

def read_text_arg(text: Optional[str], file: Optional[Path], what: str = "text") -> str:
    """The text of a command that takes one: the argument, ``-`` (stdin) or ``--file`` (neither: exit 2)."""
    if text is None and file is None:
        raise UserError(f"no {what}: give the text, - to read it from stdin, or --file FILE", code=2)
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

def make_reader(text_field: Optional[str], id_field: Optional[str], encoding: str, html: str = "keep") -> RecordReader:
    """The input reader of a run (an invalid ``--encoding`` or ``--html``: one line, exit 2)."""
    from es_simhash.files.sources import RecordReader

    try:
        return RecordReader(text_field, id_field, encoding=encoding, html=html)
    except InvalidValue as exc:
        raise invalid_value(exc) from None

def require_inputs(inputs: List[str]) -> None:
    from es_simhash.files.sources import check_inputs

    try:
        check_inputs(inputs)
    except InputError as exc:
        raise UserError(str(exc)) from None

def refuse_unsafe_outputs(inputs: List[str], *outputs: tuple[str, Optional[Path]], input_name: str = "input") -> None:
    """Refuse (one line naming the option, exit 1) an output that is an input or another output, or that cannot
    be written, before anything is read or written (:func:`es_simhash.files.outputs.check_outputs`)."""
    from es_simhash.files.outputs import Output, check_outputs

    try:
        check_outputs(inputs, [Output(option, path) for option, path in outputs], input_name)
    except OutputError as exc:
        raise UserError(str(exc)) from None

def undecided_error(summary: Summary) -> UserError:
    """Exit 5 (one line with the reason): records were read and none could be decided (a misspelt --text-field,
    an input that is not what it should be; :class:`es_simhash.pipeline.NothingDecided`)."""
    where = f"; every reason is in {summary.dead_letter_path}" if summary.dead_letter_path else ""
    return UserError(f"{summary.undecided}{where}", code=5)

def parse_lookup_keys(spec: str):
    """The lookup keys --lookup names (a spec it does not take: one line, exit 2)."""
    from es_simhash.lookup.keys import LookupKeys

    try:
        return LookupKeys.parse(spec)
    except InvalidValue as exc:
        raise invalid_value(exc) from None

def invalid_value(exc: InvalidValue) -> UserError:
    """A value an option does not take: a usage error (exit 2) naming the option (the library names the setting,
    the option is spelt the same) and what it takes."""
    return UserError(f"invalid value for --{exc.setting}: {exc}", code=2)

def warn_beyond_keys(k: int, keys) -> None:
    if k > keys.k:
        err(f"warning: -k {k} is beyond the {keys.k} bits the lookup keys guarantee: a neighbour farther "
            f"than {keys.k} bits is found only when it shares a lookup key (or a sentence); for a guarantee "
            f"use a new index with --lookup tables:{k}:3")

class RunProgress:
    """A run's progress on stderr (nothing when disabled or stderr is not a terminal: rich is not even imported): the
    records decided (the bar follows how far into the inputs they go, bytes, or documents with ``unit="docs"``;
    read-ahead does not count), then the final recheck's documents on a bar of their own."""

    def __init__(self, total: int | None, enabled: bool, label: str, unit: str = "bytes") -> None:
        self.label = label
        self.bar: Any = None
        self.task: Any = None
        self.recheck_task: Any = None
        if not enabled or not stderr_is_terminal():
            return
        from rich.progress import (BarColumn, DownloadColumn, MofNCompleteColumn, Progress, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn, TransferSpeedColumn)

        self.bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            *((DownloadColumn(), TransferSpeedColumn()) if unit == "bytes" else (MofNCompleteColumn(),)),
            TextColumn("{task.fields[what]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=err_console(),
            transient=False,
        )
        self.task = self.bar.add_task(label, total=total, what="0 records decided")

    def __enter__(self) -> "RunProgress":
        if self.bar is not None:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def decided(self, position: int, s: Summary) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=position,
                            what=f"{s.read:,} records decided, {s.duplicates:,} dups, {s.dead_letters:,} dead")

    def rechecked(self, checked: int, total: int) -> None:
        if self.bar is None:
            return
        if self.recheck_task is None:
            self.recheck_task = self.bar.add_task("recheck", total=total, what="documents decided again")
        self.bar.update(self.recheck_task, completed=checked, total=total,
                        what=f"{checked:,} of {total:,} documents decided again")


def print_summary(summary: Summary, extra: str = "") -> None:
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
        other = s.rechecked - s.taken_back - s.became - s.moved
        err(f"recheck: once the input's templates were known, {s.rechecked:,} records were decided otherwise than "
            f"with --no-recheck: {s.taken_back:,} duplicates no more, {s.became:,} became duplicates, {s.moved:,} "
            "moved to another cluster or original" + (f", {other:,} with another reason or distance" if other else "")
            + " (the counts above are after it)")
    if s.rechecked_earlier:
        err(f"recheck: {s.rechecked_earlier:,} documents indexed before this run changed cluster too (they are in "
            "the index, not in this run's counts or report)")
    if s.html_stripped:
        err(f"{s.html_stripped:,} records carried HTML: their text was read from the markup (--html)")
    if s.encoding_fallbacks:
        err(f"{s.encoding_fallbacks:,} records were not UTF-8 and were read as GB18030 (--encoding auto)")
    if s.dead_letter_path:
        err(f"dead letters written to {s.dead_letter_path}")
    if not s.reconciles:  # pragma: no cover - an internal invariant; say so loudly if it ever breaks
        raise UserError("internal error: read != kept + duplicates + dead letters", code=1)


class CountBar:
    """A bar of documents counted on stderr (``repair``: documents checked), off when disabled or when stderr is not a
    terminal."""

    def __init__(self, label: str, total: int, enabled: bool) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(),
                            console=err_console(), disable=not enabled or not stderr_is_terminal())
        self.task = self.bar.add_task(label, total=total)
        self.stage_label: str | None = None  # (the second stage's, once begun: :meth:`stage`)

    def __enter__(self) -> "CountBar":
        self.bar.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.bar.__exit__(*exc)

    def update(self, completed: int) -> None:
        self.bar.update(self.task, completed=completed)

    def stage(self, label: str, total: int) -> None:
        """A second stage of the work, on a line of its own under the first (once; later calls keep it)."""
        if self.stage_label != label:
            self.stage_label = label
            self.task = self.bar.add_task(label, total=total)
