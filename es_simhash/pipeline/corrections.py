"""After the recheck: the report and ``--output`` files corrected for the decisions it took again, each rewritten
beside itself and put in place at the end."""

from __future__ import annotations

import json
import os
import shutil
from contextlib import contextmanager
from typing import IO, Iterator, Mapping, Sequence

from es_simhash.engine.engine import DedupEngine, Result
from es_simhash.files.sources import Record
from es_simhash.index.base import StoredDoc
from es_simhash.pipeline.source import RecordSource
from es_simhash.pipeline.summary import Summary, report_line


def recheck_outputs(inputs: Sequence[str], engine: DedupEngine, reader: RecordSource, summary: Summary,
                     report: IO[str] | None, output: IO[bytes] | None,
                     duplicates_at: Mapping[str, tuple[str, int, bytes | None]]) -> None:
    """:func:`run_dedup`'s final recheck: the index's decisions taken again, the counts and files corrected.
    ``duplicates_at``: where this run's duplicates were read (source, line, and their raw bytes when the inputs
    cannot be read again): only they can change (a recheck takes back or moves duplicates, and re-points
    duplicates), and only they are this run's (an index loaded from an earlier run has documents of its own)."""
    from es_simhash.cluster.recheck import recheck

    first: dict[str, tuple[str | None, str]] = {}  # id -> (duplicate_of, reason) before the recheck
    final: dict[str, StoredDoc] = {}
    earlier: set[str] = set()  # documents of a loaded index: saved with it, not reported
    for change in recheck(engine.maintained(), engine.rule, repeat=True).changes:
        if change.id not in duplicates_at:
            earlier.add(change.id)
            continue
        first.setdefault(change.id, (change.before[1], change.was_reason or ""))
        if change.doc is not None:
            final[change.id] = change.doc
    summary.rechecked_earlier = len(earlier)
    if not final:
        return
    taken_back: set[str] = set()
    for doc_id, doc in final.items():
        was_duplicate_of, was_reason = first[doc_id]
        if was_duplicate_of is not None and doc.is_canonical:
            taken_back.add(doc_id)
        summary.reasons[was_reason] = summary.reasons.get(was_reason, 0) - 1
        summary.reasons[doc.reason] = summary.reasons.get(doc.reason, 0) + 1
    summary.reasons = {r: n for r, n in summary.reasons.items() if n}
    summary.rechecked = len(final)
    summary.taken_back = len(taken_back)
    summary.duplicates -= len(taken_back)
    summary.kept += len(taken_back)
    if report is not None:
        _correct_report(report, final, duplicates_at)
    if output is not None and taken_back:
        _correct_output(output, inputs, reader, taken_back, duplicates_at)


def _rewritable(fh: IO) -> str | None:
    """The real path of ``fh`` (symbolic links followed) when it is a regular file that can be written again
    whole, else None."""
    name = getattr(fh, "name", None)
    if not isinstance(name, str) or not os.path.isfile(name):
        return None
    try:
        return os.path.realpath(name) if fh.seekable() else None
    except (OSError, ValueError):
        return None


@contextmanager
def _replacing(path: str, mode: str) -> Iterator[IO]:
    """A new version of the file ``path``, written beside it and put in its place (with its permissions) only
    when the block ends without an error; otherwise the file is left as it was and the new version removed."""
    tmp = path + ".recheck"
    try:
        with open(tmp, mode, encoding=None if "b" in mode else "utf-8") as dst:
            yield dst
        shutil.copymode(path, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _correct_report(report: IO[str], final: Mapping[str, StoredDoc],
                    duplicates_at: Mapping[str, tuple[str, int, bytes | None]]) -> None:
    report.flush()
    path = _rewritable(report)
    if path is None:  # (a pipe: the corrected lines follow; a later line of an id replaces its earlier one)
        for doc_id, doc in final.items():
            source, line, _ = duplicates_at[doc_id]
            report.write(report_line(Result.from_stored(doc), source, line))
        return
    with open(path, encoding="utf-8") as src, _replacing(path, "w") as dst:
        for text in src:
            row = json.loads(text)
            now = final.get(row["id"])
            dst.write(text if now is None else report_line(Result.from_stored(now), row["source"], row["line"]))


def _correct_output(output: IO[bytes], inputs: Sequence[str], reader: RecordSource, unique: set[str],
                    duplicates_at: Mapping[str, tuple[str, int, bytes | None]]) -> None:
    """Add the records of ``unique`` (duplicates no more) to ``output``: in input order when it is a file and
    the inputs are files (the records it holds are the others that are not duplicates, in input order: each is met
    again in the inputs), else at its end."""
    output.flush()
    kept_raw = [raw for raw in (duplicates_at[i][2] for i in unique) if raw is not None]
    if kept_raw:  # (inputs that cannot be read again, e.g. standard input: their raw bytes were kept)
        for raw in kept_raw:
            output.write(raw + b"\n")
        return
    unique = set(unique)  # (each record is written once: an id's later records are dead letters)
    path = _rewritable(output)
    if path is None:
        for records in (reader.read_one(p) for p in inputs):
            for rec in records:
                if isinstance(rec, Record) and rec.id in unique:
                    output.write(rec.raw + b"\n")
                    unique.discard(rec.id)
        return
    with open(path, "rb") as src, _replacing(path, "wb") as dst:
        kept = src.readline()
        for records in (reader.read_one(p) for p in inputs):
            for rec in records:
                if not isinstance(rec, Record):
                    continue
                line = rec.raw + b"\n"
                if kept and line == kept:
                    dst.write(kept)
                    kept = src.readline()
                elif rec.id in unique:
                    dst.write(line)
                    unique.discard(rec.id)
        while kept:  # (never expected: what the inputs no longer hold is kept, not lost)
            dst.write(kept)
            kept = src.readline()


def rereadable(inputs: Sequence[str]) -> bool:
    """Whether every input is a regular file (read again by a recheck), not standard input or a pipe."""
    return all(p != "-" and os.path.isfile(p) for p in inputs)
