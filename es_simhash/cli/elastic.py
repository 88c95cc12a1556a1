"""The commands that write an Elasticsearch index or look into it by document: ``init``, ``index``, ``check``,
``delete``, ``repair`` and ``migrate``."""


import json
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any, List, Optional

import typer

from es_simhash.defaults import MAX_DISTANCE, SHARED_BATCH_SIZE

from es_simhash.cli.common import (DeadLetters, Limit, Encoding, Html, IdField, Idf, Inputs, MaxDistance, Progress,
                                   Recheck, Report, RunProgress, TextField, TextFile, UserError, Workers, decision_rule,
                                   require_inputs, refuse_unsafe_outputs, err_console, make_fingerprinter,
                                   parse_lookup_keys, print_summary, read_text_arg, make_reader, stderr_is_terminal,
                                   exit_if_undecided, err)
from es_simhash.cli.connection import (ApiKey, CaCerts, CheckpointFile, EsUrl, IndexBatch, IndexName, Lookup,
                                       Password, Resume, Username, run_checkpoint, describe_keys, Elastic,
                                       elastic_message, indexed_line, interrupted_error, hold_checkpoint, maintained_index, ready_index,
                                       resumable_report, stop_after_batch, require_valid_index)


def init(
    index: IndexName = "es-simhash",
    replicas: Annotated[Optional[int], typer.Option("--replicas", min=0, help="Replicas (default: cluster default).",
                                                    show_default=False)] = None,
    idf: Idf = None,
    lookup: Lookup = "tables",
    es_url: EsUrl = None,
    api_key: ApiKey = None,
    username: Username = None,
    password: Password = None,
    ca_certs: CaCerts = None,
) -> None:
    """Install the index template and create the index (safe to run again)."""
    from es_simhash.index.elastic import ensure_index, read_lookup_keys

    keys = parse_lookup_keys(lookup)
    with Elastic(es_url, api_key, username, password, ca_certs, index) as es:
        created = ensure_index(es.client, index, make_fingerprinter(idf).config, replicas=replicas, lookup_keys=keys)
        recorded = read_lookup_keys(es.client, index, es.settings.safe_url)
    kept = "" if created or recorded == keys else f"; it keeps them: --lookup {lookup} applies to new indexes"
    err(f"index {index!r} {'created' if created else 'already exists'} at {es.settings.safe_url} "
        f"(lookup keys: {describe_keys(recorded)}{kept})")

def index_cmd(
    inputs: Inputs,
    index: IndexName = "es-simhash",
    report: Report = None,
    dead_letters: DeadLetters = Path("dead-letters.jsonl"),
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
    retry_for: Annotated[float, typer.Option(
        "--retry-for", min=0, help="Seconds to keep retrying when the cluster is down or overloaded.")] = 300.0,
    checkpoint_file: CheckpointFile = None,
    resume: Resume = False,
    es_url: EsUrl = None,
    api_key: ApiKey = None,
    username: Username = None,
    password: Password = None,
    ca_certs: CaCerts = None,
) -> None:
    """Index crawl output into Elasticsearch, detecting duplicates on ingest.

    Every document is indexed with its fingerprint and duplicate cluster; once every record is decided, the run's
    decisions are taken again with what it saw of site templates (as `dedup` does: the same input gives the same
    clusters; --no-recheck keeps the decisions made on arrival). Re-running the same input changes nothing. If
    the cluster stays unavailable longer than --retry-for, or on Ctrl-C, the command saves a checkpoint and the
    same command with --resume finishes the job. Prints: read, kept, duplicates, dead letters, elapsed.
    """
    from es_simhash.engine.dedup_engine import DedupEngine
    from es_simhash.files.sources import RecordReader
    from es_simhash.pipeline import run_dedup

    from es_simhash.index.elastic import ElasticError, ElasticIndex

    require_inputs(inputs)
    require_valid_index(index)
    keys = parse_lookup_keys(lookup)
    reader = make_reader(text_field, id_field, encoding, html)
    checkpoint = run_checkpoint(checkpoint_file, index, inputs, resume)
    refuse_unsafe_outputs(inputs, ("--report", report), ("--dead-letters", dead_letters),
                   ("--checkpoint", Path(checkpoint.path)))
    fingerprinter = make_fingerprinter(idf)
    with Elastic(es_url, api_key, username, password, ca_certs, index) as es:
        backend = ElasticIndex(es.client, index, url=es.settings.safe_url, retry_for=retry_for)
        start = ready_index(es, index, fingerprinter, keys, k, backend)
        engine = DedupEngine(backend, fingerprinter, decision_rule(k, recheck), batch_size=batch_size,
                             workers=workers)
        with ExitStack() as stack:
            hold_checkpoint(stack, checkpoint)  # before any output is opened
            rep = stack.enter_context(resumable_report(checkpoint, report)) if report else None
            bar = stack.enter_context(RunProgress(RecordReader.total_bytes(inputs), progress, "index"))
            stop = stack.enter_context(stop_after_batch())
            try:
                summary = run_dedup(inputs, engine, reader, report=rep, dead_letters=dead_letters,
                                    on_progress=bar.decided, checkpoint=checkpoint, start=start, stop=stop,
                                    recheck=recheck, on_recheck=bar.rechecked)
            except KeyboardInterrupt:
                raise interrupted_error(checkpoint) from None
            except ElasticError as exc:
                done = sum(checkpoint.done.values())
                raise UserError(
                    f"{elastic_message(exc)}; {done:,} input lines are done and saved in {checkpoint.path}: "
                    "run the same command with --resume to finish",
                    code=4,
                ) from None
            exit_if_undecided(summary)
    print_summary(summary, indexed_line(summary, index))
    if backend.truncated_lookups:
        err(f"warning: {backend.truncated_lookups:,} lookups hit a bucket larger than "
            f"{backend.max_candidates:,} documents and compared only that many candidates")

def check(
    text: Annotated[Optional[str], typer.Argument(help="The text, or - for stdin.", show_default=False)] = None,
    file: TextFile = None,
    index: IndexName = "es-simhash",
    k: MaxDistance = MAX_DISTANCE,
    limit: Limit = 10,
    idf: Idf = None,
    es_url: EsUrl = None,
    api_key: ApiKey = None,
    username: Username = None,
    password: Password = None,
    ca_certs: CaCerts = None,
) -> None:
    """List indexed near duplicates of a text (JSON lines: id, cluster, distance, reason). Exit 0 either way."""
    from es_simhash.engine.dedup_engine import DedupEngine

    text = read_text_arg(text, file, "text to check")
    with Elastic(es_url, api_key, username, password, ca_certs, index) as es:
        backend = maintained_index(es, index)
        engine = DedupEngine(backend, make_fingerprinter(idf), decision_rule(k))
        found = engine.check(text, limit=limit)
    for d in found:
        typer.echo(json.dumps(d.to_dict(), ensure_ascii=False))
    err(f"{len(found)} near duplicate{'s' if len(found) != 1 else ''} in {index!r}")

def print_changes(changes) -> None:
    for c in changes:
        typer.echo(json.dumps(c.to_dict(), ensure_ascii=False))

def delete(
    ids: Annotated[Optional[List[str]], typer.Argument(help="Ids of the documents to delete.",
                                                       show_default=False)] = None,
    ids_file: Annotated[Optional[Path], typer.Option("--ids", help="A file of ids, one per line (- for stdin).",
                                                     show_default=False)] = None,
    index: IndexName = "es-simhash",
    k: MaxDistance = MAX_DISTANCE,
    es_url: EsUrl = None,
    api_key: ApiKey = None,
    username: Username = None,
    password: Password = None,
    ca_certs: CaCerts = None,
) -> None:
    """Delete documents and keep their clusters whole.

    The rest of a deleted document's cluster is decided again in the order its documents arrived: the earliest
    remaining member becomes the canonical, members no longer within the rule of anyone in the cluster are
    decided afresh, and no document is left pointing at a deleted one. Prints one JSON line per document
    changed (deleted, re-decided, re-pointed); ids not found are reported and are not an error (exit 0).
    """
    from es_simhash import clustering

    wanted = list(ids or [])
    if ids_file is not None:
        try:
            fh = sys.stdin if str(ids_file) == "-" else open(ids_file, encoding="utf-8")  # noqa: SIM115
        except FileNotFoundError:
            raise UserError(f"ids file not found: {ids_file}") from None
        with fh:
            wanted += list(clustering.iter_ids(fh))
    if not wanted:
        raise UserError("no ids given: pass ids as arguments or --ids FILE", code=2)
    with Elastic(es_url, api_key, username, password, ca_certs, index) as es:
        backend = maintained_index(es, index)
        try:
            deleted, missing, settled = clustering.delete(backend, decision_rule(k), wanted)
        except clustering.MaintenanceError as exc:
            raise UserError(str(exc)) from None
    print_changes(settled.changes)
    moved = len({c.id for c in settled.changes if c.why != "deleted"})
    err(f"deleted {len(deleted):,} of {len(wanted):,} documents from {index!r}"
        f"{f' ({len(missing):,} not found)' if missing else ''}; {moved:,} other documents changed cluster")

def repair(
    index: IndexName = "es-simhash",
    k: MaxDistance = MAX_DISTANCE,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="The same run without the writes: print what would change, with the same counts, and "
                          "leave the index as it is.")] = False,
    after: Annotated[Optional[str], typer.Option(
        "--after", help="Start after this id (go on with an interrupted repair: it prints the id).",
        show_default=False)] = None,
    progress: Progress = True,
    es_url: EsUrl = None,
    api_key: ApiKey = None,
    username: Username = None,
    password: Password = None,
    ca_certs: CaCerts = None,
) -> None:
    """Decide the whole index again with what it knows now, and fix what killed runs or other tools left.

    Its main use: decisions taken before a site template was known (a template's second post put with the first,
    in an earlier run or by another writer) are taken again as `index` takes its own run's decisions at its end,
    with the same rule; run it after a crawl, or on a schedule. It also fixes canonicals that duplicate an older
    document (two writers, a kill), clusters whose canonical joined another cluster or is missing, documents
    pointing at missing documents, and contradictory flags. Prints one JSON line per change and a summary; a
    second repair changes nothing. Safe to interrupt: it prints how to go on.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from es_simhash import clustering

    with Elastic(es_url, api_key, username, password, ca_certs, index) as es:
        backend = maintained_index(es, index)
        total = len(backend)
        bar = Progress(TextColumn("[bold]repair"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                       console=err_console(), disable=not progress or not stderr_is_terminal())
        task = bar.add_task("repair", total=total)
        state: dict[str, Any] = {"checked": 0, "last": after, "printed": 0}

        def on_page(report) -> None:
            print_changes(report.changes[state["printed"]:])
            state.update(checked=report.checked, last=report.last_id, printed=len(report.changes))
            bar.update(task, completed=report.checked)

        try:
            with bar:
                report = clustering.repair(backend, decision_rule(k), dry_run=dry_run, after=after, on_page=on_page)
        except KeyboardInterrupt:
            resume = f" --after {state['last']}" if state["last"] else ""
            raise UserError(f"interrupted after checking {state['checked']:,} documents; everything checked so far "
                            f"is fixed: run `es-simhash repair --index {index}{resume}` to go on", code=130) from None
        except clustering.MaintenanceError as exc:
            raise UserError(str(exc)) from None
    print_changes(report.changes[state["printed"]:])
    counts = ", ".join(f"{n:,} {why}" for why, n in sorted(report.counts().items()))
    verb = "would change" if dry_run else "changed"
    err(f"checked {report.checked:,} documents in {index!r}: " + (f"{verb} {counts}" if counts else "nothing to fix"))

def migrate(
    source: Annotated[str, typer.Option("--from", help="The index to read (it is left as it is).",
                                        show_default=False)],
    target: Annotated[str, typer.Option("--to", help="The new index (created if needed).", show_default=False)],
    alias: Annotated[Optional[str], typer.Option(
        "--alias", help="When done, point this alias at the new index alone (atomically), so readers switch over.",
        show_default=False)] = None,
    report: Report = None,
    dead_letters: DeadLetters = Path("dead-letters.jsonl"),
    k: MaxDistance = MAX_DISTANCE,
    idf: Idf = None,
    batch_size: IndexBatch = SHARED_BATCH_SIZE,
    workers: Workers = 0,
    lookup: Lookup = "tables",
    recheck: Recheck = True,
    progress: Progress = True,
    checkpoint_file: CheckpointFile = None,
    resume: Resume = False,
    es_url: EsUrl = None,
    api_key: ApiKey = None,
    username: Username = None,
    password: Password = None,
    ca_certs: CaCerts = None,
) -> None:
    """Copy an index into a new one with the current fingerprint and lookup keys (e.g. after an upgrade).

    Every document is fingerprinted again from its stored text and decided afresh, the earliest first, on this
    machine (no reindex module needed); one without stored text is a dead letter. Interrupted? The same
    command with --resume goes on. The old index is not changed; --alias switches readers over at the end.
    """
    from es_simhash.engine.dedup_engine import DedupEngine

    from es_simhash.pipeline.migrate import migrate
    from es_simhash.index.elastic import ElasticError, ElasticIndex, require_index, switch_alias

    if source == target:
        raise UserError("--from and --to are the same index: migrate into a new one", code=2)
    require_valid_index(source)
    require_valid_index(target)
    keys = parse_lookup_keys(lookup)
    checkpoint = run_checkpoint(checkpoint_file, target, [f"index:{source}"], resume)
    refuse_unsafe_outputs([], ("--report", report), ("--dead-letters", dead_letters), ("--checkpoint", Path(checkpoint.path)))
    fingerprinter = make_fingerprinter(idf)
    with Elastic(es_url, api_key, username, password, ca_certs, target) as es:
        require_index(es.client, source, es.settings.safe_url)
        old = ElasticIndex(es.client, source, url=es.settings.safe_url)
        backend = ElasticIndex(es.client, target, url=es.settings.safe_url)
        start = ready_index(es, target, fingerprinter, keys, k, backend)
        engine = DedupEngine(backend, fingerprinter, decision_rule(k, recheck), batch_size=batch_size,
                             workers=workers)
        with ExitStack() as stack:
            hold_checkpoint(stack, checkpoint)
            rep = stack.enter_context(resumable_report(checkpoint, report)) if report else None
            bar = stack.enter_context(RunProgress(len(old), progress, "migrate", unit="docs"))
            stop = stack.enter_context(stop_after_batch())
            try:
                summary = migrate(old, engine, dead_letters=str(dead_letters), checkpoint=checkpoint,
                                  report=rep, on_progress=bar.decided, start=start, stop=stop, recheck=recheck,
                                  on_recheck=bar.rechecked)
            except KeyboardInterrupt:
                raise interrupted_error(checkpoint) from None
            except ElasticError as exc:
                raise UserError(f"{elastic_message(exc)}; the same command with --resume goes on", code=4) from None
            exit_if_undecided(summary)
        switched = ""
        if alias:
            before = switch_alias(es.client, alias, target, es.settings.safe_url)
            switched = f"; alias {alias!r} now points at {target!r}" + (f" (was {', '.join(before)})" if before else "")
    print_summary(summary, f"into {target!r}{switched}")
