"""The ``es-simhash`` command line: a thin layer over the public Python API.

Exit codes: 0 success (duplicates and dead letters are results, not failures); 1 an error the user can fix
(missing file, bad option value, unreadable IDF table); 2 a usage error (unknown option); 3 Elasticsearch could
not be reached or refused the request; 130 interrupted.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console

from . import __version__
from .dedup import DedupEngine, DefaultRule
from .fingerprint import Fingerprinter
from .idf import IDFTable
from .index.memory import MemoryIndex
from .pipeline import Summary, iter_texts, run_dedup
from .sources import RecordReader

app = typer.Typer(
    name="es-simhash",
    help=(
        "Find near-duplicate documents in crawled Chinese and English text with SimHash fingerprints.\n\n"
        "Runs embedded (no server) with `dedup`; the same engine indexes into Elasticsearch with `index`."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
err = Console(stderr=True, highlight=False, soft_wrap=True)


class UserError(Exception):
    """An error with a one-line message for the user (exit code 1 unless ``code`` says otherwise)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


# -- shared options ----------------------------------------------------------------------------------------
TextField = typer.Option(None, "--text-field", help="JSON field holding the text (default: content, text, body).")
IdField = typer.Option(None, "--id-field", help="JSON field holding the id (default: id, _id, doc_id, url).")
IdfOption = typer.Option(None, "--idf", help="IDF table in jieba format (from `fit-idf`) (default: jieba's).")
KOption = typer.Option(3, "-k", "--max-distance", min=0, max=16, help="Hamming distance for long texts.")


def _fingerprinter(idf: Optional[Path]) -> Fingerprinter:
    if idf is None:
        return Fingerprinter()
    try:
        return Fingerprinter(IDFTable.load(idf))
    except FileNotFoundError:
        raise UserError(f"IDF table not found: {idf}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read IDF table: {exc}") from None


def _check_inputs(inputs: List[str]) -> None:
    for p in inputs:
        if p != "-" and not os.path.exists(p):
            raise UserError(f"input not found: {p}")
        if p != "-" and os.path.isdir(p):
            raise UserError(f"input is a directory, expected a JSON Lines file: {p}")


def _progress(total: int | None, enabled: bool, label: str):
    """A rich progress bar over input bytes on stderr (disabled when stderr is not a terminal)."""
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TextColumn("{task.fields[docs]} docs, {task.fields[dups]} dups, {task.fields[dead]} dead"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=not enabled or not err.is_terminal,
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
    err.print(line)
    if s.already_indexed:
        err.print(f"{s.already_indexed:,} were already indexed with the same content (left as they were)")
    if s.dead_letter_path:
        err.print(f"dead letters written to {s.dead_letter_path}")
    if not s.reconciles:  # pragma: no cover - an internal invariant; say so loudly if it ever breaks
        raise UserError("internal error: read != kept + duplicates + dead letters", code=1)


# -- commands ----------------------------------------------------------------------------------------------
@app.command()
def fingerprint(
    text: Optional[str] = typer.Argument(None, help="The text, or - to read it from stdin."),
    file: Optional[Path] = typer.Option(None, "--file", "-f", help="Read the text from this file (UTF-8)."),
    idf: Optional[Path] = IdfOption,
) -> None:
    """Print the fingerprint of a text as JSON (SimHash, segments, sentence signature, flags)."""
    if file is not None:
        try:
            text = file.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise UserError(f"file not found: {file}") from None
        except UnicodeDecodeError as exc:
            raise UserError(f"{file} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    elif text is None or text == "-":
        text = sys.stdin.read()
    fp = _fingerprinter(idf).fingerprint(text)
    typer.echo(json.dumps(fp.to_dict(), ensure_ascii=False, indent=2))


@app.command()
def dedup(
    inputs: List[str] = typer.Argument(..., help="JSON Lines files (.gz too), or - for stdin."),
    report: Optional[Path] = typer.Option(
        None, "--report", "-r", help="Write one JSON line per record: id, cluster, duplicate, distance, reason."
    ),
    output: Optional[Path] = typer.Option(
        None, "--output", "-o", help="Write the records that are not duplicates (original lines, input order)."
    ),
    dead_letters: Path = typer.Option(
        Path("dead-letters.jsonl"), "--dead-letters", help="Where malformed records go (created only if needed)."
    ),
    text_field: Optional[str] = TextField,
    id_field: Optional[str] = IdField,
    k: int = KOption,
    idf: Optional[Path] = IdfOption,
    batch_size: int = typer.Option(1000, "--batch-size", min=1, help="Documents fingerprinted per batch."),
    save_index: Optional[Path] = typer.Option(None, "--save-index", help="Save the in-memory index (.npz)."),
    load_index: Optional[Path] = typer.Option(
        None, "--load-index", help="Start from a saved index, e.g. yesterday's crawl."
    ),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar on stderr."),
) -> None:
    """Find near duplicates in crawl output with no server (embedded in-memory index).

    Prints a summary to stderr: read = kept + duplicates + dead letters.
    """
    _check_inputs(inputs)
    index = MemoryIndex()
    if load_index is not None:
        try:
            index = MemoryIndex.load(load_index)
        except FileNotFoundError:
            raise UserError(f"index file not found: {load_index}") from None
        except (ValueError, OSError, KeyError) as exc:
            raise UserError(f"cannot load index {load_index}: {exc}") from None
    engine = DedupEngine(index, _fingerprinter(idf), DefaultRule(k=k), batch_size=batch_size)
    reader = RecordReader(text_field, id_field)
    bar, update = _progress(RecordReader.total_bytes(inputs), progress, "dedup")
    with ExitStack() as stack:
        rep = stack.enter_context(open(report, "w", encoding="utf-8")) if report else None
        out = stack.enter_context(open(output, "wb")) if output else None
        stack.enter_context(bar)
        summary = run_dedup(
            inputs, engine, reader, report=rep, output=out, dead_letters=dead_letters, on_progress=update
        )
    if save_index is not None:
        index.save(save_index)
    _print_summary(summary)


@app.command("fit-idf")
def fit_idf(
    inputs: List[str] = typer.Argument(..., help="JSON Lines crawl output (.gz too), or - for stdin."),
    output: Path = typer.Option(..., "--output", "-o", help="Where to write the IDF table (jieba format)."),
    min_df: int = typer.Option(2, "--min-df", min=1, help="Keep words found in at least this many documents."),
    text_field: Optional[str] = TextField,
) -> None:
    """Learn an IDF table from your own crawl (use it with --idf)."""
    _check_inputs(inputs)
    try:
        table = IDFTable.fit(iter_texts(inputs, RecordReader(text_field)), min_df=min_df)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    table.save(output)
    err.print(f"wrote {len(table):,} words to {output} (unknown words get {table.default:.3f})")


@app.command()
def version() -> None:
    """Print the version."""
    typer.echo(__version__)


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point: runs the app, turning known errors into one line and an exit code."""
    try:
        app(args=argv, prog_name="es-simhash")  # standalone: click prints usage errors itself (exit 2)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except UserError as exc:
        err.print(f"es-simhash: error: {exc}", markup=False)
        return exc.code
    except KeyboardInterrupt:
        err.print("es-simhash: interrupted")
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:
        where = f": {exc.filename}" if exc.filename else ""
        err.print(f"es-simhash: error: {exc.strerror or exc}{where}", markup=False)
        return 1
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, never a traceback
        if os.environ.get("ES_SIMHASH_DEBUG"):
            raise
        err.print(
            f"es-simhash: unexpected error: {type(exc).__name__}: {exc} (set ES_SIMHASH_DEBUG=1 for a traceback)",
            markup=False,
        )
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
