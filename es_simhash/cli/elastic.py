"""The commands that write an index on a cluster (Elasticsearch or OpenSearch) or look into it by document:
``init``, ``index``, ``check``, ``delete``, ``repair`` and ``migrate``."""


import json
import sys
from pathlib import Path
from typing import Annotated, List, Optional

import typer

from es_simhash.defaults import DEAD_LETTERS, MAX_DISTANCE, RETRY_FOR, SHARED_BATCH_SIZE
from es_simhash.errors import MaintenanceError

from es_simhash.cli.common import (CountBar, DeadLetters, Limit, Encoding, Html, IdField, Idf, Inputs, MaxDistance,
                                   Progress, Recheck, Report, RunProgress, TextField, TextFile, UserError, Workers,
                                   require_inputs, refuse_unsafe_outputs, make_fingerprinter, parse_lookup_keys,
                                   print_summary, read_text_arg, make_reader, warn_beyond_keys, err,
                                   interrupts_held)
from es_simhash.cli.connection import (DEFAULT_INDEX, CheckpointFile, Connection, Elastic, IndexBatch, IndexName,
                                       Lookup, Resume, connection_options, index_on, describe_keys, elastic_message,
                                       gave_up_message, indexed_line, maintained_index, open_run_checkpoint,
                                       require_valid_index, run_errors, stopping)

Replicas = Annotated[Optional[int], typer.Option("--replicas", min=0, help="Replicas (default: cluster default).",
                                                 show_default=False)]
RetryFor = Annotated[float, typer.Option(
    "--retry-for", min=0, help="Seconds to keep retrying when the cluster is down or overloaded.")]
"""--retry-for: ``ElasticIndex``'s ``retry_for`` default (es_simhash/index/elastic/handle.py)."""
RolloverDocs = Annotated[Optional[int], typer.Option(
    "--rollover-docs", min=1, help="Make --index an alias over partitions (INDEX-000001, INDEX-000002, ...) and roll it "
                                   "over to a new partition once its write index holds this many documents (checked "
                                   "between batches). The other commands read the alias as --index.",
    show_default=False)]
RolloverAge = Annotated[Optional[str], typer.Option(
    "--rollover-age", help="Make --index an alias over partitions, as --rollover-docs does, and roll it over to a new "
                           "partition once its write index is this old: days, hours, minutes or seconds (30d, 12h; "
                           "checked between batches). With --rollover-docs too, whichever comes first.",
    show_default=False)]
Window = Annotated[Optional[str], typer.Option(
    "--window", help="A dedup window over an alias of partitions: look duplicates up in the newest N partitions "
                     "only (3), or in the partitions written into in the last days, hours, minutes or seconds (30d, "
                     "12h): one search still; default: every partition.", show_default=False)]
Ids = Annotated[Optional[List[str]], typer.Argument(help="Ids of the documents to delete.", show_default=False)]
IdsFile = Annotated[Optional[Path], typer.Option("--ids", help="A file of ids, one per line (- for stdin).",
                                                 show_default=False)]
DryRun = Annotated[bool, typer.Option(
    "--dry-run", help="The same run without the writes: print what would change, with the same counts, and leave the "
                      "index as it is.")]
After = Annotated[Optional[str], typer.Option(
    "--after", help="Start after this id (go on with an interrupted repair or dry run: it prints the command).",
    show_default=False)]
Source = Annotated[str, typer.Option("--from", help="The index to read (it is left as it is).", show_default=False)]
Target = Annotated[str, typer.Option("--to", help="The new index (created if needed).", show_default=False)]
Alias = Annotated[Optional[str], typer.Option(
    "--alias", help="When done, point this alias at the new index alone (atomically), so readers switch over.",
    show_default=False)]
CheckedText = Annotated[Optional[str], typer.Argument(help="The text, or - for stdin.", show_default=False)]


@connection_options
def init(
    index: IndexName = DEFAULT_INDEX,
    replicas: Replicas = None,
    idf: Idf = None,
    lookup: Lookup = "tables",
    *, connection: Connection,
) -> None:
    """Install the index template and create the index (safe to run again)."""
    from es_simhash.index.elastic import ensure_index, read_lookup_keys

    keys, fingerprinter = parse_lookup_keys(lookup), make_fingerprinter(idf)
    with Elastic(connection, index) as es:
        created = ensure_index(es.client, index, fingerprinter.config, replicas=replicas,
                               lookup_keys=keys)
        recorded = read_lookup_keys(es.client, index, es.settings.safe_url)
    kept = "" if created or recorded == keys else f"; it keeps them: --lookup {lookup} applies to new indexes"
    err(f"index {index!r} {'created' if created else 'already exists'} at {es.settings.safe_url} "
        f"(lookup keys: {describe_keys(recorded)}{kept})")

@connection_options
def index_cmd(
    inputs: Inputs,
    index: IndexName = DEFAULT_INDEX,
    report: Report = None,
    dead_letters: DeadLetters = Path(DEAD_LETTERS),
    text_field: TextField = None,
    id_field: IdField = None,
    k: MaxDistance = MAX_DISTANCE,
    idf: Idf = None,
    batch_size: IndexBatch = SHARED_BATCH_SIZE,
    workers: Workers = 0,
    lookup: Lookup = "tables",
    encoding: Encoding = "utf-8",
    html: Html = "auto",
    recheck: Recheck = True,
    progress: Progress = True,
    retry_for: RetryFor = RETRY_FOR,
    checkpoint_file: CheckpointFile = None,
    resume: Resume = False,
    rollover_docs: RolloverDocs = None,
    rollover_age: RolloverAge = None,
    window: Window = None,
    *, connection: Connection,
) -> None:
    """Index crawl output into Elasticsearch or OpenSearch, detecting duplicates on ingest.

    Every document is indexed with its fingerprint and duplicate cluster; once every record is decided, the run's
    decisions are taken again with what it saw of site templates (as `dedup` does: the same input gives the same
    clusters; --no-recheck keeps the decisions made on arrival). Re-running the same input changes nothing. If
    the cluster stays unavailable longer than --retry-for, or on Ctrl-C, the command saves a checkpoint and the
    same command with --resume finishes the job. Prints: read, kept, duplicates, dead letters, elapsed.
    """
    from es_simhash.files.sources import RecordReader
    from es_simhash.index.plugins import can_recheck
    from es_simhash.index.elastic.admin import age_seconds
    from es_simhash.pipeline import run_checkpointed

    require_inputs(inputs)
    require_valid_index(index)
    if rollover_age is not None:
        try:
            age_seconds(rollover_age)
        except ValueError as exc:
            raise UserError(f"invalid value for --rollover-age: {exc}", code=2) from None
    lookups_in = _window(window)
    keys = parse_lookup_keys(lookup)
    reader = make_reader(text_field, id_field, encoding, html)
    checkpoint = open_run_checkpoint(checkpoint_file, index, inputs, resume)
    refuse_unsafe_outputs(inputs, ("--report", report), ("--dead-letters", dead_letters),
                          ("--checkpoint", Path(checkpoint.path)))
    fingerprinter = make_fingerprinter(idf)
    with index_on(connection, index, retry_for=retry_for, rollover_docs=rollover_docs,
                  rollover_age=rollover_age, window=lookups_in) as backend:
        if recheck and not can_recheck(backend):
            raise UserError("the backend of --es-url cannot rewrite what it stored (it is no MaintainedIndex), so the "
                            "run cannot take its decisions again at its end: add --no-recheck", code=2)
        engine, start = _engine_into(backend, fingerprinter, keys, k, recheck, batch_size, workers)
        bar = RunProgress(RecordReader.total_bytes(inputs), progress, "index")
        with run_errors(gave_up_message):
            summary = run_checkpointed(
                inputs, engine, reader, checkpoint, report=report, dead_letters=dead_letters, start=start,
                recheck=recheck, on_progress=bar.decided, on_recheck=bar.rechecked, display=bar, on_stopping=stopping)
    print_summary(summary, indexed_line(summary, index))
    if getattr(backend, "truncated_lookups", 0):  # (an ElasticIndex's count)
        err(f"warning: {backend.truncated_lookups:,} lookups hit a bucket larger than "
            f"{backend.max_candidates:,} documents and compared only that many candidates")

def _window(window: str | None) -> int | str | None:
    """``--window``: a number of partitions (``3``) or an age (``30d``, as ``ElasticIndex(window=...)`` takes
    them); a one-line error naming the option for anything else."""
    from es_simhash.index.elastic.admin import age_seconds

    if window is None:
        return None
    if window.isdigit() and int(window) >= 1:
        return int(window)
    try:
        age_seconds(window)
    except ValueError:
        raise UserError(f"invalid value for --window: {window!r} is neither a number of partitions (3) nor an age "
                        "(30d, 12h, 90m, 45s)", code=2) from None
    return window

def _engine_into(backend, fingerprinter, keys, k: int, recheck: bool, batch_size: int, workers: int):
    """The engine of a run into ``backend``, and for an ``ElasticIndex`` the function that creates its index before
    the first record if it does not exist yet (:meth:`ElasticIndex.prepare`: an existing one is checked now; a
    backend of one's own is ready as opened)."""
    from es_simhash.decide.default import DefaultRule
    from es_simhash.engine.dedup_engine import DedupEngine
    from es_simhash.index.elastic import ElasticIndex

    start = None
    if isinstance(backend, ElasticIndex):
        start = backend.prepare(fingerprinter.config, keys, on_ready=lambda recorded: warn_beyond_keys(k, recorded))
    engine = DedupEngine.for_run(backend, fingerprinter, DefaultRule.for_run(k, recheck), recheck=recheck,
                                 batch_size=batch_size, workers=workers)
    return engine, start

@connection_options
def check(
    text: CheckedText = None,
    file: TextFile = None,
    index: IndexName = DEFAULT_INDEX,
    k: MaxDistance = MAX_DISTANCE,
    limit: Limit = 10,
    idf: Idf = None,
    *, connection: Connection,
) -> None:
    """List indexed near duplicates of a text (JSON lines: id, cluster, distance, reason). Exit 0 either way."""
    from es_simhash.decide.default import DefaultRule
    from es_simhash.engine.dedup_engine import DedupEngine

    text = read_text_arg(text, file, "text to check")
    with index_on(connection, index, existing=True) as backend:
        engine = DedupEngine(backend, make_fingerprinter(idf), DefaultRule.for_run(k))
        found = engine.check(text, limit=limit)
    for d in found:
        typer.echo(json.dumps(d.to_dict(), ensure_ascii=False))
    err(f"{len(found)} near duplicate{'s' if len(found) != 1 else ''} in {index!r}")

def print_changes(changes) -> None:
    for c in changes:
        typer.echo(json.dumps(c.to_dict(), ensure_ascii=False))

@connection_options
def delete(
    ids: Ids = None,
    ids_file: IdsFile = None,
    index: IndexName = DEFAULT_INDEX,
    k: MaxDistance = MAX_DISTANCE,
    *, connection: Connection,
) -> None:
    """Delete documents and keep their clusters whole.

    The rest of a deleted document's cluster is decided again in the order its documents arrived: the earliest
    remaining member becomes the canonical, members no longer within the rule of anyone in the cluster are
    decided afresh, and no document is left pointing at a deleted one; what changed, and the documents near the
    deleted ones, are then decided again as `repair` decides, so a repair right after finds nothing. Prints one
    JSON line per change (deleted, re-decided, re-pointed, merged, split, moved); ids not found are reported and
    are not an error (exit 0).
    """
    from es_simhash.clustering import delete as delete_documents
    from es_simhash.decide.default import DefaultRule

    wanted = list(ids or []) + (_read_ids(ids_file) if ids_file is not None else [])
    if not wanted:
        raise UserError("no ids given: pass ids as arguments or --ids FILE", code=2)
    with Elastic(connection, index) as es:
        backend = maintained_index(es, index)
        try:
            deleted, missing, settled = delete_documents(backend, DefaultRule.for_run(k), wanted)
        except MaintenanceError as exc:
            raise UserError(str(exc)) from None
    print_changes(settled.changes)
    moved = len({c.id for c in settled.changes if c.why != "deleted"})
    err(f"deleted {len(deleted):,} of {len(wanted):,} documents from {index!r}"
        f"{f' ({len(missing):,} not found)' if missing else ''}; {moved:,} other documents changed cluster")

Partition = Annotated[str, typer.Argument(
    help="The partition to drop: ALIAS-NNNNNN, as `index --rollover-docs` names them.", show_default=False)]


@connection_options
def drop_partition(
    partition: Partition,
    index: IndexName = DEFAULT_INDEX,
    k: MaxDistance = MAX_DISTANCE,
    *, connection: Connection,
) -> None:
    """Drop a partition of a crawl stored in partitions, and keep the clusters of the others whole.

    For an --index that `index --rollover-docs` made an alias over partitions: the partition is taken out of the
    alias, what its documents leave behind in the other partitions is decided again as `delete` decides it (the
    members of a cluster whose canonical it held keep together under the earliest remaining member; no document is
    left pointing at a dropped one), and the partition is deleted. Prints one JSON line per document of the other
    partitions that changed. The partition the alias writes into is refused. Interrupted, run it again: it finishes
    the drop.
    """
    from es_simhash.clustering import drop_partition as drop
    from es_simhash.decide.default import DefaultRule

    with Elastic(connection, index) as es:
        backend = maintained_index(es, index)
        try:
            dropped, settled = drop(backend, DefaultRule.for_run(k), partition)
        except MaintenanceError as exc:
            raise UserError(str(exc)) from None
    print_changes(settled.changes)
    err(f"dropped {partition!r} ({dropped:,} documents) from {index!r}; "
        f"{len({c.id for c in settled.changes}):,} documents of the other partitions changed cluster")


def _read_ids(ids_file: Path) -> list[str]:
    """The ids of an --ids file (``-``: stdin)."""
    from es_simhash.clustering import iter_ids

    try:
        fh = sys.stdin if str(ids_file) == "-" else open(ids_file, encoding="utf-8")  # noqa: SIM115
    except FileNotFoundError:
        raise UserError(f"ids file not found: {ids_file}") from None
    with fh:
        return list(iter_ids(fh))

@connection_options
def repair(
    index: IndexName = DEFAULT_INDEX,
    k: MaxDistance = MAX_DISTANCE,
    dry_run: DryRun = False,
    after: After = None,
    progress: Progress = True,
    *, connection: Connection,
) -> None:
    """Decide the whole index again with what it knows now, and fix what killed runs or other tools left.

    Its main use: decisions taken before a site template was known (a template's second post put with the first,
    in an earlier run or by another writer) are taken again as `index` takes its own run's decisions at its end,
    with the same rule; run it after a crawl, or on a schedule. It also fixes canonicals that duplicate an older
    document (two writers, a kill), clusters whose canonical joined another cluster or is missing, documents
    pointing at missing documents, and contradictory flags. Then it decides the whole index again as a set, as
    `dedup` decides its records (up to 2,000,000 documents, held in memory): the same documents give the same
    clusters whatever order, runs and writers brought them. Prints one JSON line per change and a summary; a second
    repair changes nothing. Safe to interrupt: it prints how to go on.
    """
    from es_simhash.clustering import RepairInterrupted
    from es_simhash.decide.default import DefaultRule
    from es_simhash.pipeline import repair_index

    with Elastic(connection, index) as es:
        backend = maintained_index(es, index)
        bar = CountBar("repair", len(backend), progress)
        printed = 0

        def on_page(report) -> None:
            nonlocal printed
            with interrupts_held():  # (an interrupt here would print these lines again below)
                print_changes(report.changes[printed:])
                printed = len(report.changes)
            bar.update(report.checked)

        def on_set(done: int, total: int) -> None:
            bar.stage("deciding as a set", total)
            bar.update(done)

        try:
            with bar:
                report = repair_index(backend, DefaultRule.for_run(k), dry_run=dry_run, after=after,
                                      on_page=on_page, on_set=on_set)
        except RepairInterrupted as exc:
            print_changes(exc.report.changes[printed:])
            raise UserError(_repair_interrupted(exc, index, k, after), code=130) from None
        except MaintenanceError as exc:
            raise UserError(str(exc)) from None
    print_changes(report.changes[printed:])
    counts = ", ".join(f"{n:,} {why}" for why, n in sorted(report.counts().items()))
    verb = "would change" if dry_run else "changed"
    err(f"checked {report.checked:,} documents in {index!r}: " + (f"{verb} {counts}" if counts else "nothing to fix"))

def _repair_interrupted(exc, index: str, k: int, after: str | None) -> str:
    """The line of an interrupted ``repair``: the library's account of it with the commands that go on."""
    command = f"es-simhash repair --index {index}" + (f" -k {k}" if k != MAX_DISTANCE else "")
    dry = " --dry-run" if exc.dry_run else ""
    return exc.describe(go_on=f"run `{command}{dry} --after {exc.report.last_id}` to go on"
                        + (" with the dry run" if exc.dry_run else ""),
                        again=f"run `{command}{dry}{f' --after {after}' if after else ''}` again",
                        real=f"`{command}`")

@connection_options
def migrate(
    source: Source,
    target: Target,
    alias: Alias = None,
    report: Report = None,
    dead_letters: DeadLetters = Path(DEAD_LETTERS),
    k: MaxDistance = MAX_DISTANCE,
    idf: Idf = None,
    batch_size: IndexBatch = SHARED_BATCH_SIZE,
    workers: Workers = 0,
    lookup: Lookup = "tables",
    recheck: Recheck = True,
    progress: Progress = True,
    checkpoint_file: CheckpointFile = None,
    resume: Resume = False,
    *, connection: Connection,
) -> None:
    """Copy an index into a new one with the current fingerprint and lookup keys (e.g. after an upgrade).

    Every document is fingerprinted again from its stored text and decided afresh, the earliest first, on this
    machine (no reindex module needed); one without stored text is a dead letter. Interrupted? The same
    command with --resume goes on. The old index is not changed; --alias switches readers over at the end.
    """
    from es_simhash.index.elastic import ElasticIndex
    from es_simhash.pipeline import run_checkpointed
    from es_simhash.pipeline.migrate import migration_input, migration_reader

    if source == target:
        raise UserError("--from and --to are the same index: migrate into a new one", code=2)
    require_valid_index(source, "--from")
    require_valid_index(target, "--to")
    keys = parse_lookup_keys(lookup)
    inputs = [migration_input(source)]
    checkpoint = open_run_checkpoint(checkpoint_file, target, inputs, resume)
    refuse_unsafe_outputs([], ("--report", report), ("--dead-letters", dead_letters),
                          ("--checkpoint", Path(checkpoint.path)))
    fingerprinter = make_fingerprinter(idf)
    with Elastic(connection, target) as es:
        old = maintained_index(es, source)
        backend = ElasticIndex(es.client, target, url=es.settings.safe_url)
        engine, start = _engine_into(backend, fingerprinter, keys, k, recheck, batch_size, workers)
        bar = RunProgress(len(old), progress, "migrate", unit="docs")
        with run_errors(lambda exc: f"{elastic_message(exc.error)}; the same command with --resume goes on"):
            summary = run_checkpointed(
                inputs, engine, migration_reader(old), checkpoint, report=report,
                dead_letters=str(dead_letters), start=start, recheck=recheck, on_progress=bar.decided,
                on_recheck=bar.rechecked, display=bar, on_stopping=stopping)
        switched = _switch_alias(es, alias, target) if alias else ""
    print_summary(summary, f"into {target!r}{switched}")

def _switch_alias(es: Elastic, alias: str, target: str) -> str:
    """Point ``alias`` at ``target`` alone; what the summary line says of it."""
    from es_simhash.index.elastic import switch_alias

    before = switch_alias(es.client, alias, target, es.settings.safe_url)
    return f"; alias {alias!r} now points at {target!r}" + (f" (was {', '.join(before)})" if before else "")
