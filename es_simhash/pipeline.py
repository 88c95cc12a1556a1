"""Source -> fingerprint -> dedup engine -> index, with report, output and dead letters.

:func:`run_dedup` is what ``es-simhash dedup`` (embedded) and ``es-simhash index`` (Elasticsearch) both call;
the only difference between them is the index the engine was given.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import IO, Callable, Iterable, Sequence

from .dedup import DedupEngine, Document, DuplicateIdError, IndexingError, Result
from .sources import DeadLetter, DeadLetterWriter, Record, RecordReader

__all__ = ["Summary", "run_dedup"]


@dataclass
class Summary:
    """Counts of one run. ``read == kept + duplicates + dead_letters`` always holds."""

    read: int = 0
    kept: int = 0
    """Records that are not duplicates (canonical documents, including ones without usable features)."""
    duplicates: int = 0
    dead_letters: int = 0
    already_indexed: int = 0
    """Of ``kept + duplicates``: records found already indexed with the same content (idempotent re-run)."""
    elapsed: float = 0.0
    dead_letter_path: str | None = None
    reasons: dict[str, int] = field(default_factory=dict)

    @property
    def reconciles(self) -> bool:
        return self.read == self.kept + self.duplicates + self.dead_letters

    def to_dict(self) -> dict:
        return {
            "read": self.read,
            "kept": self.kept,
            "duplicates": self.duplicates,
            "dead_letters": self.dead_letters,
            "already_indexed": self.already_indexed,
            "reasons": dict(sorted(self.reasons.items())),
            "elapsed_seconds": round(self.elapsed, 3),
            "dead_letter_file": self.dead_letter_path,
        }


def run_dedup(
    inputs: Sequence[str],
    engine: DedupEngine,
    reader: RecordReader | None = None,
    *,
    report: IO[str] | None = None,
    output: IO[bytes] | None = None,
    dead_letters: str | os.PathLike[str] = "dead-letters.jsonl",
    on_progress: Callable[[int, Summary], None] | None = None,
) -> Summary:
    """Deduplicate the JSON Lines ``inputs`` through ``engine``.

    ``report`` receives one JSON line per record in input order (``id, cluster, duplicate, duplicate_of,
    distance, reason, source, line``); ``output`` receives the original bytes of every record that is not a
    duplicate; malformed records go to the ``dead_letters`` file (created only when needed) with their line
    number and reason. ``on_progress(bytes_read, summary)`` is called after every batch.
    """
    reader = reader or RecordReader()
    summary = Summary()
    started = time.perf_counter()
    with DeadLetterWriter(dead_letters) as dlw:

        def dead(letter: DeadLetter) -> None:
            dlw.write(letter)
            summary.read += 1
            summary.dead_letters += 1

        def flush(batch: list[Record]) -> None:
            if not batch:
                return
            results = engine.process_batch([Document(r.id, r.text, r.fields) for r in batch])
            for rec, res in zip(batch, results):
                if isinstance(res, (DuplicateIdError, IndexingError)):
                    dead(DeadLetter(rec.source, rec.line, str(res), rec.raw[:200].decode("utf-8", "replace")))
                    continue
                _count(summary, res)
                if report is not None:
                    line = res.to_dict()
                    line["source"], line["line"] = rec.source, rec.line
                    report.write(json.dumps(line, ensure_ascii=False) + "\n")
                if output is not None and not res.duplicate:
                    output.write(rec.raw + b"\n")
            if on_progress is not None:
                on_progress(reader.bytes_read, summary)

        batch: list[Record] = []
        for item in reader.read(inputs):
            if isinstance(item, DeadLetter):
                dead(item)
                continue
            batch.append(item)
            if len(batch) >= engine.batch_size:
                flush(batch)
                batch = []
        flush(batch)
        summary.dead_letter_path = dlw.path if dlw.count else None
    summary.elapsed = time.perf_counter() - started
    if on_progress is not None:
        on_progress(reader.bytes_read, summary)
    return summary


def _count(summary: Summary, res: Result) -> None:
    summary.read += 1
    if res.duplicate:
        summary.duplicates += 1
    else:
        summary.kept += 1
    if res.already_indexed:
        summary.already_indexed += 1
    summary.reasons[res.reason] = summary.reasons.get(res.reason, 0) + 1


def iter_texts(inputs: Iterable[str], reader: RecordReader | None = None) -> Iterable[str]:
    """The texts of the valid records of ``inputs`` (dead letters skipped), e.g. for ``IDFTable.fit``."""
    reader = reader or RecordReader()
    for item in reader.read(list(inputs)):
        if isinstance(item, Record):
            yield item.text
