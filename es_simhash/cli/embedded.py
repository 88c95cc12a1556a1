"""The commands that need no server: ``fingerprint``, ``dedup`` (the embedded index), ``fit-idf``, ``explain`` and
``evaluate``."""


import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from es_simhash.defaults import BATCH_SIZE, DEAD_LETTERS, MAX_DISTANCE, MIN_DF
from es_simhash.errors import (IndexFileNotFound, LabelError, NoFingerprintSettings, NotAnIndexFile, OldFingerprints,
                               OtherFingerprintSettings, SavedIndexError)

from es_simhash.cli.common import (DeadLetters, Encoding, Html, IdField, Idf, Inputs, MaxDistance, Progress, Recheck,
                                   Report, RunProgress, TextField, TextFile, UserError, Workers, require_inputs,
                                   refuse_unsafe_outputs, make_fingerprinter, parse_lookup_keys, print_summary,
                                   print_table, read_text_arg, make_reader, undecided_error, warn_beyond_keys, err)
from es_simhash.cli.connection import Connection, Elastic, connection_options, maintained_index

if TYPE_CHECKING:
    from es_simhash.fingerprint.model import Fingerprint
    from es_simhash.index.memory import MemoryIndex

FingerprintedText = Annotated[Optional[str], typer.Argument(help="The text, or - to read it from stdin.",
                                                            show_default=False)]
Output = Annotated[Optional[Path], typer.Option(
    "--output", "-o", help="Write the records that are not duplicates (original lines, input order).",
    show_default=False)]
EmbeddedBatch = Annotated[int, typer.Option(
    "--batch-size", min=1, help="Documents fingerprinted per batch (the first batches are smaller: 100, then doubling).")]
SaveIndex = Annotated[Optional[Path], typer.Option(
    "--save-index", help="Save the in-memory index to this file, named as given (numpy .npz format).",
    show_default=False)]
LoadIndex = Annotated[Optional[Path], typer.Option(
    "--load-index", help="Start from a saved index, e.g. yesterday's crawl (it keeps its lookup keys; give "
                          "the --idf it was built with).",
    show_default=False)]
EmbeddedLookup = Annotated[str, typer.Option(
    "--lookup", help="Lookup keys of the in-memory index: 'tables' (20 permutation tables for k <= 3), "
                     "'tables:K:R', or 'segments' (the SimHash's four 16-bit segments as 4 keys).")]
IdfOutput = Annotated[Path, typer.Option("--output", "-o", help="Where to write the IDF table (jieba format).",
                                         show_default=False)]
MinDf = Annotated[int, typer.Option("--min-df", min=1, help="Keep words found in at least this many documents.")]
ExplainedText = Annotated[str, typer.Argument(
    help="A file holding a text, - to read one from stdin, or the text itself; with --index, a document id "
         "instead of a text.", show_default=False)]
ComparedText = Annotated[str, typer.Argument(help="The same, for what A is compared with.", show_default=False)]
ExplainIndex = Annotated[Optional[str], typer.Option(
    "--index", "-i", help="Read A and B that are not files (or -) as ids of documents stored in this index on the "
    "cluster (Elasticsearch or OpenSearch): `explain article.txt rmrb-0000 --index NAME` says why `check` matched "
    "it.",
    show_default=False)]
AsText = Annotated[bool, typer.Option(
    "--text", help="Take A and B as texts, never as files (without it, an argument that looks like a path but "
                   "is no file is refused).")]
ExplainJson = Annotated[bool, typer.Option("--json", help="One JSON object instead of words.")]
Labels = Annotated[Path, typer.Argument(
    metavar="LABELS", help="JSON Lines of labelled pairs ({\"a\", \"b\", \"duplicate\"}) or of documents with a "
    "cluster label ({\"id\", \"content\", \"cluster\"}).", show_default=False)]
NoSweep = Annotated[bool, typer.Option("--no-sweep", help="Only score the current settings.")]
EvaluateJson = Annotated[bool, typer.Option("--json", help="One JSON object instead of tables.")]


def fingerprint(
    text: FingerprintedText = None,
    file: TextFile = None,
    idf: Idf = None,
) -> None:
    """Print the fingerprint of a text as JSON (SimHash, segments, sentence signature, flags)."""
    fp = make_fingerprinter(idf).fingerprint(read_text_arg(text, file, "text to fingerprint"))
    typer.echo(json.dumps(fp.to_dict(), ensure_ascii=False, indent=2))

def dedup(
    inputs: Inputs,
    report: Report = None,
    output: Output = None,
    dead_letters: DeadLetters = Path(DEAD_LETTERS),
    text_field: TextField = None,
    id_field: IdField = None,
    k: MaxDistance = MAX_DISTANCE,
    idf: Idf = None,
    batch_size: EmbeddedBatch = BATCH_SIZE,
    workers: Workers = 0,
    save_index: SaveIndex = None,
    load_index: LoadIndex = None,
    lookup: EmbeddedLookup = "tables",
    encoding: Encoding = "utf-8",
    html: Html = "auto",
    recheck: Recheck = True,
    progress: Progress = True,
) -> None:
    """Find near duplicates in crawl output with no server (embedded in-memory index).

    Prints a summary to stderr: read = kept + duplicates + dead letters.
    """
    from es_simhash.decide.default import DefaultRule
    from es_simhash.engine.dedup_engine import DedupEngine
    from es_simhash.files.sources import RecordReader
    from es_simhash.pipeline import NothingDecided, dedup_files

    require_inputs(inputs)
    loaded = [str(load_index)] if load_index is not None else []
    outputs = (("--report", report), ("--output", output), ("--dead-letters", dead_letters))
    refuse_unsafe_outputs([*inputs, *loaded], *outputs)
    refuse_unsafe_outputs(inputs, *outputs, ("--save-index", save_index))  # (it may be --load-index: read first)
    fingerprinter = make_fingerprinter(idf)
    index = _memory_index(load_index, parse_lookup_keys(lookup), fingerprinter.config)
    engine = DedupEngine.for_run(index, fingerprinter, DefaultRule.for_run(k, recheck), recheck=recheck,
                                 batch_size=batch_size, workers=workers)
    warn_beyond_keys(k, index.lookup_keys)
    reader = make_reader(text_field, id_field, encoding, html)
    bar = RunProgress(RecordReader.total_bytes(inputs), progress, "dedup")
    try:
        summary = dedup_files(inputs, engine, reader, report=report, output=output,
                              dead_letters=dead_letters, save_index=save_index, recheck=recheck,
                              on_progress=bar.decided, on_recheck=bar.rechecked, display=bar)
    except NothingDecided as exc:
        raise undecided_error(exc.summary) from None
    except KeyboardInterrupt:
        raise UserError("interrupted: no output was written (earlier files are as they were): run the command "
                        "again", code=130) from None
    print_summary(summary)

def _memory_index(load_index: Optional[Path], keys, config: dict) -> "MemoryIndex":
    """A new in-memory index with ``keys``, or the one --load-index names, for fingerprints made with ``config``
    (one line when it cannot be used)."""
    from es_simhash.index.memory import MemoryIndex

    try:
        return MemoryIndex.open(load_index, keys, config)
    except IndexFileNotFound as exc:
        raise UserError(f"--load-index: {exc}") from None
    except NotAnIndexFile as exc:
        raise UserError(f"{exc}: give one written by `es-simhash dedup --save-index`") from None
    except OldFingerprints as exc:
        raise UserError(f"{exc} (dedup --save-index)") from None
    except OtherFingerprintSettings as exc:
        raise UserError(f"--load-index: {exc} (--idf FILE, none for jieba's table; a new index: dedup "
                        "--save-index without --load-index)") from None
    except NoFingerprintSettings as exc:
        raise UserError(f"--load-index: {exc} (dedup --save-index)") from None
    except SavedIndexError as exc:  # (UnreadableIndexFile)
        raise UserError(str(exc)) from None

def fit_idf(
    inputs: Inputs,
    output: IdfOutput,
    min_df: MinDf = MIN_DF,
    text_field: TextField = None,
    encoding: Encoding = "utf-8",
) -> None:
    """Learn an IDF table from your own crawl (use it with --idf)."""
    from es_simhash.pipeline import fit_idf

    require_inputs(inputs)
    refuse_unsafe_outputs(inputs, ("--output", output))
    reader = make_reader(text_field, None, encoding)
    try:
        table = fit_idf(inputs, reader, min_df=min_df)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    table.save(output)
    err(f"wrote {len(table):,} words to {output} (unknown words get {table.default:.3f})")

@connection_options
def explain(
    a: ExplainedText,
    b: ComparedText,
    index: ExplainIndex = None,
    as_text: AsText = False,
    as_json: ExplainJson = False,
    k: MaxDistance = MAX_DISTANCE,
    idf: Idf = None,
    *, connection: Connection,
) -> None:
    """Why A is, or is not, a near duplicate of B: the distance, what they share, each test of the rule, and the
    meaning guard's veto. Exit 0 either way."""
    from es_simhash.decide.default import DefaultRule
    from es_simhash.engine.dedup_engine import DedupEngine
    from es_simhash.index.memory import MemoryIndex

    if a == "-" and b == "-":
        raise UserError("A and B are both - (stdin): read one of them from a file", code=2)
    fingerprinter = make_fingerprinter(idf)
    engine = DedupEngine(MemoryIndex(), fingerprinter, DefaultRule.for_run(k))
    given = [_explained(x, name, as_text, index is not None) for x, name in ((a, "A"), (b, "B"))]
    ids = [x for x, t in zip((a, b), given) if t is None]
    found = {}
    if ids:
        with Elastic(connection, index) as es:
            stored = maintained_index(es, str(index))
            stored.require_settings(fingerprinter.config)  # (what `check` would match with other settings: refused)
            found = stored.fetch(ids)
        missing = [x for x in ids if x not in found]
        if missing:
            raise UserError(f"no document {missing[0]!r} in index {index!r}, and no such file")
    texts: list[str | Fingerprint] = [t if t is not None else found[x].text or found[x].fingerprint
                                      for x, t in zip((a, b), given)]
    out = engine.explain(texts[0], texts[1])
    if as_json:
        typer.echo(json.dumps(out, ensure_ascii=False))
    else:
        _print_explained(out)

def _print_explained(out: dict) -> None:
    """``explain``'s answer in words."""

    def side(name: str, s: dict) -> str:
        kind = "short" if s["short"] else "long"
        return (f"{name}: {kind}, {s['letters']:,} letters/ideographs, {s['features']:,} weighted words, "
                f"{s['long_sentences']} long sentences, {s['sketch']} sketch hashes")

    verdict = f"yes ({out['reason']})" if out["duplicate"] else "no"
    typer.echo(f"A duplicates B: {verdict}; SimHash distance {out['distance']} bits")
    if "a" in out:
        typer.echo(side("A", out["a"]))
        typer.echo(side("B", out["b"]))
        typer.echo(f"shared: {out['shared_segments']} of 4 segments, {out['shared_sentences']} long sentences, "
                   f"{out['shared_sketch']} sketch hashes{', same content' if out['exact'] else ''}")
    for line in out["why"]:
        typer.echo(f"- {line}")

def evaluate(
    labels_file: Labels,
    no_sweep: NoSweep = False,
    as_json: EvaluateJson = False,
    k: MaxDistance = MAX_DISTANCE,
    idf: Idf = None,
    recheck: Recheck = True,
    lookup: EmbeddedLookup = "tables",
    html: Html = "auto",
) -> None:
    """Precision, recall and F1 of `dedup` with the current settings on your own labelled data, and a sweep over k
    and the rule's bounds with the setting that maximises F1 (then use it: -k, or DefaultRule(...) in Python).

    Every score is of a whole `dedup` run of the labelled texts with those settings (the recheck at its end
    included): a predicted pair is two documents in one of its final clusters, those of `dedup --report`
    (labelled pairs: each pair a run of its own, B then A, predicted when the two end in one cluster). A k beyond
    what the lookup keys guarantee is swept with --lookup tables:K:3, as `dedup` advises for it.
    """
    from es_simhash.decide.default import DefaultRule
    from es_simhash.results import evaluate as ev

    keys = parse_lookup_keys(lookup)
    try:
        with open(labels_file, encoding="utf-8") as fh:
            labels = ev.load_labels(fh, str(labels_file), html)
    except FileNotFoundError:
        raise UserError(f"labels file not found: {labels_file}") from None
    except (LabelError, UnicodeDecodeError) as exc:
        raise UserError(str(exc)) from None
    except ValueError as exc:  # (--html)
        raise UserError(f"--html: {exc}", code=2) from None
    fingerprinter, rule = make_fingerprinter(idf), DefaultRule.for_run(k, recheck)
    warn_beyond_keys(k, keys)
    if no_sweep:
        sc = ev.score(labels, fingerprinter, rule, recheck=recheck, lookup_keys=keys)
        if as_json:
            typer.echo(json.dumps({"current": sc.to_dict()}))
        else:
            typer.echo(f"precision {sc.precision:.3f}  recall {sc.recall:.3f}  F1 {sc.f1:.3f}  "
                       f"({sc.true_pairs:,} labelled duplicate pairs, {sc.predicted_pairs:,} predicted)")
        return
    res = ev.sweep(labels, fingerprinter, rule, recheck=recheck, lookup_keys=keys)
    if as_json:
        typer.echo(json.dumps(res.to_dict()))
    else:
        _print_sweep(labels.kind, res)

def _print_sweep(kind: str, res) -> None:
    """``evaluate``'s sweep as a table, between the current settings' scores and the best's."""
    c = res.current
    typer.echo(f"{kind}: current settings: precision {c.precision:.3f}  recall {c.recall:.3f}  F1 {c.f1:.3f}"
               f"  ({c.true_pairs:,} labelled duplicate pairs, {c.predicted_pairs:,} predicted)")
    print_table(("setting", "value", "precision", "recall", "F1"),
                ((setting, f"{value}{' *' if value == res.best[setting] else ''}"
                  f"{f' (--lookup {res.lookups[value]})' if setting == 'k' and value in res.lookups else ''}",
                  f"{sc.precision:.3f}",
                  f"{sc.recall:.3f}", f"{sc.f1:.3f}") for setting, value, sc in res.rows))
    b = res.best_score
    settings = ", ".join(f"{k_}={v}" for k_, v in res.best.items())
    if res.best_lookup:
        settings += f"; --lookup {res.best_lookup}"
    typer.echo(f"best of each together ({settings}): precision {b.precision:.3f}  recall {b.recall:.3f}  "
               f"F1 {b.f1:.3f}")

_PATH_LIKE = re.compile(r"^[^\s]*(?:[/\\][^\s]*|\.[A-Za-z0-9]{1,5})$")
"""An ``explain`` argument written as a path (a folder separator, or a file extension, and no space)."""

def _explained(arg: str, name: str, as_text: bool, with_index: bool) -> Optional[str]:
    """The text an ``explain`` argument stands for (``None``: a document id, read from the index)."""
    if arg == "-":
        return sys.stdin.read()
    if not as_text:
        if os.path.isfile(arg):
            return read_text_arg(None, Path(arg))
        if os.path.isdir(arg):
            raise UserError(f"{name}: {arg} is a folder, not a file")
    if with_index:
        return None
    if not as_text and _PATH_LIKE.match(arg):
        raise UserError(f"{name}: no such file {arg} (to compare it as a text, give --text)")
    return arg
