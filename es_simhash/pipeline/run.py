"""Source -> fingerprint -> dedup engine -> index, with report, output and dead letters.

:func:`run_dedup` is what ``es-simhash dedup`` (embedded) and ``es-simhash index`` (Elasticsearch) both call;
the only difference between them is the index the engine was given.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import time
from collections import deque
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from json.encoder import encode_basestring as _json_str  # (what json.dumps(..., ensure_ascii=False) writes)
from typing import IO, Any, Callable, Iterable, Iterator, Mapping, Protocol, Sequence

from es_simhash.engine.engine import DedupEngine, Document, DuplicateIdError, IndexingError, Result
from es_simhash.index.base import StoredDoc
from es_simhash.files.outputs import AtomicFile, OutputError
from es_simhash.files.sources import DeadLetter, DeadLetterWriter, Record, RecordReader, excerpt
from es_simhash.errors import CheckpointInUse, NoCheckpoint

__all__ = ["Summary", "Checkpoint", "CheckpointInUse", "NoCheckpoint", "RecordSource", "run_dedup"]


class RecordSource(Protocol):
    """What :func:`run_dedup` reads records with: a :class:`~es_simhash.sources.RecordReader`, or any reader of
    records from elsewhere (:func:`~es_simhash.pipeline.migrate.migrate` reads the documents stored in an index)."""

    @property
    def bytes_read(self) -> int:
        """Progress so far (bytes for files; any growing count)."""
        ...

    def read_one(self, path: str, skip_lines: int = 0) -> Iterator[Record | DeadLetter]:
        """The records and dead letters of one input, after its first ``skip_lines`` lines."""
        ...


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
    """Seconds of work, summed over resumed runs."""
    dead_letter_path: str | None = None
    reasons: dict[str, int] = field(default_factory=dict)
    encoding_fallbacks: int = 0
    """Records that were not UTF-8 and were decoded as GB18030 (``RecordReader(encoding="auto")``)."""
    html_stripped: int = 0
    """Records whose text was HTML, replaced by the text of that markup (``RecordReader(html=...)``)."""
    resumed_indexed: int = 0
    """Of :attr:`indexed`: documents written by the earlier runs this one resumed (from the checkpoint)."""
    resumed_elapsed: float = 0.0
    """Of :attr:`elapsed`: seconds of the earlier runs this one resumed."""
    resumed_already: int = 0
    """Of :attr:`already_indexed`: found by the earlier runs this one resumed."""
    rechecked: int = 0
    """Records whose cluster the final recheck changed (``run_dedup(recheck=True)``); of them,
    :attr:`taken_back` are duplicates no more."""
    taken_back: int = 0
    rechecked_earlier: int = 0
    """Documents of an index loaded from an earlier run whose cluster the recheck changed (not records of this
    run: they are in the index, not in the report)."""
    dead_reasons: dict[str, int] = field(default_factory=dict)
    """How many dead letters had each kind of reason (reasons that differ in their numbers alone are one kind),
    under the first reason of that kind."""

    @property
    def undecided(self) -> str | None:
        """When records were read but none could be decided (every one a dead letter): one line saying so, with the
        most common reason; else ``None``. ``es-simhash`` then exits with code 5 and creates no index."""
        if not self.read or self.kept or self.duplicates:
            return None
        reason, n = max(self.dead_reasons.items(), key=lambda kv: (kv[1], kv[0]), default=("unknown", 0))
        which = "" if n == self.read else f"; the most common reason ({n:,} of them)"
        return f"none of the {self.read:,} records read could be indexed{which}: {reason}"

    @property
    def reconciles(self) -> bool:
        return self.read == self.kept + self.duplicates + self.dead_letters

    @property
    def indexed(self) -> int:
        """Documents written into the index (over resumed runs too): the decided ones not already there."""
        return self.kept + self.duplicates - self.already_indexed

    @property
    def indexed_this_run(self) -> int:
        return self.indexed - self.resumed_indexed

    @property
    def elapsed_this_run(self) -> float:
        return max(self.elapsed - self.resumed_elapsed, 0.0)

    @property
    def rate_this_run(self) -> float:
        """Documents written per second by this run alone (not counting the runs it resumed)."""
        return self.indexed_this_run / self.elapsed_this_run if self.elapsed_this_run else 0.0

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
            "encoding_fallbacks": self.encoding_fallbacks,
            "html_stripped": self.html_stripped,
            "rechecked": self.rechecked,
            "taken_back": self.taken_back,
            "rechecked_earlier": self.rechecked_earlier,
            "dead_reasons": dict(sorted(self.dead_reasons.items())),
        }


class Checkpoint:
    """Where a run got to, saved atomically after every batch, so an interrupted ``index`` can ``--resume``.

    Everything up to ``done[source]`` lines of each input has been indexed, reported and dead-lettered; the
    saved ``summary`` counts exactly those lines. A run holds the checkpoint's lock (:meth:`lock`, a
    ``.lock`` file beside it naming the process) while it works, so a second run given the same checkpoint
    stops with :class:`CheckpointInUse` before it reads or writes anything; a lock left by a killed process
    (no such process on this host any more) is taken over.

    The run's report and dead letters are written as partial files beside their paths
    (:data:`~es_simhash.outputs.PARTIAL_SUFFIX`) and put in place when it finishes: an earlier report is never
    cut into, and a resumed run appends to the partial files of the run it resumes (the checkpoint records their
    paths, so a resume that names others is refused). ``batch_size`` is the size of the next batch, so a resumed
    run cuts its batches where the interrupted one did: the first batch it decides is the one that run was writing
    when it stopped (:meth:`DedupEngine.process_batches`' ``resumed``).
    """

    FORMAT = "es-simhash-checkpoint/1"

    def __init__(self, path: str | os.PathLike[str], inputs: Sequence[str]) -> None:
        self.path = os.fspath(path)
        self.inputs = [os.path.abspath(p) if p != "-" else p for p in inputs]
        self.done: dict[str, int] = {}
        self.summary = Summary()
        self.batch_size: int | None = None
        """The size of the next batch (saved, so a resumed run cuts its batches where this one did)."""
        self.mark: Any = None
        """The visible mark the next batch was decided with (:attr:`DedupEngine.next_mark`; JSON)."""
        self.outputs: dict[str, str] = {}
        """The run's resumable outputs: ``report`` and ``dead_letters``, absolute paths."""
        self._locks = 0

    @staticmethod
    def default_path(index: str, inputs: Sequence[str]) -> str:
        """The checkpoint of a run of ``inputs`` into ``index`` when none is named: in the current folder, named
        after the index and a digest of the inputs' absolute paths, so runs on other inputs (concurrent writers
        into one index) never share one, and the same command finds its own again with ``--resume``."""
        import hashlib

        names = "\n".join(os.path.abspath(p) if p != "-" else p for p in inputs)
        return f"es-simhash-{index}-{hashlib.sha1(names.encode('utf-8')).hexdigest()[:10]}.checkpoint.json"

    @property
    def lock_path(self) -> str:
        return f"{self.path}.lock"

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the checkpoint for this run (re-entrant); raises :class:`CheckpointInUse` when a live process holds
        it."""
        if self._locks == 0:
            self._acquire()
        self._locks += 1
        try:
            yield
        finally:
            self._locks -= 1
            if self._locks == 0:
                try:
                    os.remove(self.lock_path)
                except FileNotFoundError:
                    pass

    def _acquire(self) -> None:
        me = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%dT%H:%M:%S")}
        for _ in range(2):
            try:
                fd = os.open(self.lock_path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                holder = self._holder()
                if holder is not None and not _alive(holder):
                    os.remove(self.lock_path)  # left by a process that was killed: take it over
                    continue
                who = (f"process {holder.get('pid')} on {holder.get('host')} since {holder.get('since')}"
                       if holder else "another process")
                raise CheckpointInUse(
                    f"checkpoint {self.path} is in use by {who}: give each concurrent run its own checkpoint"
                ) from None
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(me, fh)
            return
        raise CheckpointInUse(f"checkpoint {self.path} is in use by another process")

    def _holder(self) -> dict | None:
        try:
            with open(self.lock_path, encoding="utf-8") as fh:
                data = json.load(fh)
            return data if isinstance(data, dict) else None
        except (OSError, ValueError):
            return None

    @classmethod
    def load(cls, path: str | os.PathLike[str], inputs: Sequence[str]) -> "Checkpoint":
        cp = cls(path, inputs)
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except FileNotFoundError:
            raise NoCheckpoint(f"no checkpoint at {path}: nothing to resume") from None
        except (OSError, ValueError) as exc:
            raise ValueError(f"unreadable checkpoint {path}: {exc}") from None
        if data.get("format") != cls.FORMAT:
            raise ValueError(f"{path} is not an es-simhash checkpoint")
        if data["inputs"] != cp.inputs:
            raise ValueError(f"checkpoint {path} is for other inputs: {', '.join(data['inputs'])}")
        cp.done = {k: int(v) for k, v in data["done"].items()}
        s = data["summary"]
        cp.summary = Summary(
            read=s["read"], kept=s["kept"], duplicates=s["duplicates"], dead_letters=s["dead_letters"],
            already_indexed=s["already_indexed"], reasons=dict(s["reasons"]),
            encoding_fallbacks=int(s.get("encoding_fallbacks", 0)), html_stripped=int(s.get("html_stripped", 0)),
            elapsed=float(s.get("elapsed_seconds", 0.0)), dead_reasons=dict(s.get("dead_reasons", {})),
        )
        cp.summary.resumed_indexed = cp.summary.indexed
        cp.summary.resumed_already = cp.summary.already_indexed
        cp.summary.resumed_elapsed = cp.summary.elapsed
        cp.batch_size = data.get("batch_size")
        cp.mark = data.get("mark")
        cp.outputs = dict(data.get("outputs", {}))
        return cp

    def save(self, summary: Summary) -> None:
        tmp = f"{self.path}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({"format": self.FORMAT, "inputs": self.inputs, "done": self.done, "batch_size": self.batch_size,
                       "mark": self.mark,
                       "outputs": self.outputs, "summary": summary.to_dict()}, fh, ensure_ascii=False)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)

    def output(self, name: str, option: str, path: str | os.PathLike[str] | None) -> None:
        """Record the run's output ``name`` (``report``, ``dead_letters``) at ``path``; a resumed run must name the
        same file the interrupted run wrote (:class:`~es_simhash.outputs.OutputError` otherwise: its partial file
        is beside that one)."""
        real = None if path is None else os.path.realpath(path)
        if self.done:
            was = self.outputs.get(name)
            if was != real:
                said = f"{option} {was}" if was else f"no {option}"
                raise OutputError(f"{option}: the interrupted run was given {said}: resume with the same, or start "
                                  "the run anew instead of resuming it")
        if real is None:
            self.outputs.pop(name, None)
        else:
            self.outputs[name] = real

    def open_report(self, path: str | os.PathLike[str]) -> AtomicFile:
        """The run's ``report`` file for :func:`run_dedup`, as a context manager giving the file to write: written
        as a partial file beside ``path`` and put in place when the block ends well (an earlier report stays as it
        was until then); a resumed run cuts the partial file of the run it resumes back to the lines this checkpoint
        accounts for (a batch written after the last save goes: the run writes it again) and appends. Take
        :meth:`lock` first, so a run that holds the checkpoint is never cut into."""
        self.output("report", "--report", path)
        report = AtomicFile(path, resumable=True)
        report.open(self.summary.kept + self.summary.duplicates if self.done else None)
        return report

    def remove(self) -> None:
        for p in (self.path, f"{self.path}.tmp"):
            if os.path.exists(p):
                os.remove(p)


def _alive(holder: dict) -> bool:
    """Whether the process named by a lock file may still be running (always assumed on another host)."""
    if holder.get("host") != socket.gethostname():
        return True
    try:
        os.kill(int(holder["pid"]), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, KeyError, ValueError, TypeError):
        return True
    return True


def run_dedup(
    inputs: Sequence[str],
    engine: DedupEngine,
    reader: RecordSource | None = None,
    *,
    report: IO[str] | None = None,
    output: IO[bytes] | None = None,
    dead_letters: str | os.PathLike[str] = "dead-letters.jsonl",
    on_progress: Callable[[int, Summary], None] | None = None,
    checkpoint: Checkpoint | None = None,
    recheck: bool = False,
    start: Callable[[], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> Summary:
    """Deduplicate the JSON Lines ``inputs`` through ``engine``.

    ``report`` receives one JSON line per record in input order (``id, cluster, duplicate, duplicate_of,
    distance, reason, source, line``); ``output`` receives the original bytes of every record that is not a
    duplicate; malformed records go to the ``dead_letters`` file with their line number and reason, in line
    order (created only when needed, written beside its path and put in place when the run ends well:
    :class:`~es_simhash.sources.DeadLetterWriter`). ``on_progress(bytes_read, summary)`` is called after every
    batch. ``start()`` is called once, before the first record goes to the engine (``es-simhash index`` creates
    its index there: a run whose every record is a dead letter creates none; :attr:`Summary.undecided` then says
    why). ``stop()`` is asked after every batch: when it says so, the run stops there with
    :class:`KeyboardInterrupt` (its checkpoint saved: ``es-simhash index`` stops so on a first Ctrl-C).

    With a ``checkpoint``, lines it records as done are skipped, its counts are carried over, and it is saved
    after every batch and removed at the end; the dead letters are resumable (their partial file is appended to
    by a resumed run), and so should the report be (:meth:`Checkpoint.open_report`). The run holds the
    checkpoint's lock throughout (:class:`CheckpointInUse` if another process holds it; a caller that opens
    outputs first should take ``checkpoint.lock()`` before it). A resumed run's first batch is the batch the
    interrupted run was writing when it stopped, and the documents of it found in the index are decided around in
    input order, so the clusters are those of a run that was never interrupted.

    ``recheck`` (what ``es-simhash dedup`` does; not with a checkpoint): once every record is decided, the index
    takes its near-duplicate decisions again with what it knows by then (:func:`~es_simhash.cluster.recheck`:
    a template's second post, put with the first before the template was known, leaves its cluster), and the
    ``report`` and ``output`` files are corrected: a report line per record still, in input order, with its
    final cluster, and every record that is not a duplicate in the end in ``output``, in input order (read again
    from ``inputs``). A report or output that is not a regular file (a pipe) gets the corrected report lines, and
    the records that stopped being duplicates, appended at its end instead; so does ``output`` when an input is
    not a regular file (standard input: the raw bytes of the run's duplicates are kept in memory for it). Only
    this run's records are counted and reported (the documents of an index loaded from an earlier run that change
    are counted in ``Summary.rechecked_earlier``).
    """
    if recheck and checkpoint is not None:
        raise ValueError("run_dedup: recheck=True is not available with a checkpoint")
    reader = reader or RecordReader()
    summary = checkpoint.summary if checkpoint is not None else Summary()
    resuming = checkpoint is not None and bool(checkpoint.done)
    with ExitStack() as stack:
        if checkpoint is not None:
            stack.enter_context(checkpoint.lock())
            checkpoint.output("dead_letters", "--dead-letters", dead_letters)
        dlw = stack.enter_context(DeadLetterWriter(dead_letters, resumable=checkpoint is not None,
                                                   keep_lines=summary.dead_letters if resuming else 0))
        run = _Run(summary, reader, dlw, report, output, checkpoint, on_progress)
        if recheck:
            run.duplicates_at = {}
            run.keep_raw = output is not None and not _rereadable(inputs)

        def documents() -> Iterator[tuple[list[Document], _Batch]]:
            waiting = start
            for batch in run.batches(inputs, engine.batch_size):
                if waiting is not None and batch.records:
                    waiting()
                    waiting = None
                yield [Document(r.id, r.text, r.fields) for r in batch.records], batch

        mark = checkpoint.mark if checkpoint is not None and resuming else None
        for batch, results in engine.process_batches(documents(), resumed=resuming, mark=mark):
            if checkpoint is not None:
                checkpoint.mark = engine.next_mark
            run.flush(batch, results)
            if stop is not None and stop():
                raise KeyboardInterrupt
        read_to = reader.bytes_read  # (a recheck reads the inputs again: progress stays where the run got to)
        if recheck:
            _recheck_outputs(inputs, engine, reader, summary, report, output, run.duplicates_at or {})
    summary.dead_letter_path = dlw.path if dlw.written else None
    summary.elapsed = run.elapsed()
    if checkpoint is not None:
        checkpoint.remove()
    if on_progress is not None:
        on_progress(read_to, summary)
    return summary


def _recheck_outputs(inputs: Sequence[str], engine: DedupEngine, reader: RecordSource, summary: Summary,
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


def _rereadable(inputs: Sequence[str]) -> bool:
    """Whether every input is a regular file (read again by a recheck), not standard input or a pipe."""
    return all(p != "-" and os.path.isfile(p) for p in inputs)


FIRST_BATCH = 100
"""Records in the first batch :func:`run_dedup` reads (see :meth:`_Run.batches`)."""


@dataclass
class _Batch:
    """A batch of records as :meth:`_Run.batches` cuts it."""

    records: list[Record]
    letters: list[tuple[int, DeadLetter]]
    """The dead letters read since the previous batch, each with the number of this batch's records read before
    it (its place among them: dead letters are written in line order)."""
    position: dict[str, int]
    """Lines read per input up to the batch's last record (what a checkpoint saved after it records as done)."""
    next_size: list[int] = field(default_factory=list)
    """The size of the batch cut after this one, once it is cut (a checkpoint saves it: a resumed run's first batch
    is then the one this run decides after this one)."""


class _Run:
    """The state of one :func:`run_dedup`: where each batch's outcome goes."""

    MAX_DEAD_REASONS = 20
    """Distinct dead-letter reasons counted one by one (:attr:`Summary.dead_reasons`); the others together."""

    def __init__(self, summary: Summary, reader: RecordSource, dlw: DeadLetterWriter, report: IO[str] | None,
                 output: IO[bytes] | None, checkpoint: Checkpoint | None,
                 on_progress: Callable[[int, Summary], None] | None) -> None:
        self.summary, self.reader, self.dlw = summary, reader, dlw
        self.report, self.output, self.checkpoint, self.on_progress = report, output, checkpoint, on_progress
        self.started = time.perf_counter()
        self.elapsed_before = summary.elapsed  # the runs this one resumes
        self.duplicates_at: dict[str, tuple[str, int, bytes | None]] | None = None  # (for a recheck)
        self.keep_raw = False
        self.kinds = {_reason_kind(r): r for r in summary.dead_reasons}  # kind -> its first reason

    def elapsed(self) -> float:
        return self.elapsed_before + time.perf_counter() - self.started

    def dead(self, letter: DeadLetter) -> None:
        self.dlw.write(letter)
        s = self.summary
        s.read += 1
        s.dead_letters += 1
        kind = _reason_kind(letter.reason)
        reason = self.kinds.get(kind)
        if reason is None and len(self.kinds) < self.MAX_DEAD_REASONS:
            reason = self.kinds[kind] = letter.reason
        reason = reason or "other reasons"
        s.dead_reasons[reason] = s.dead_reasons.get(reason, 0) + 1

    def flush(self, batch: _Batch, results: list) -> None:
        """Write one batch's outcome: its report/output lines and dead letters (in line order), then the checkpoint
        at the batch's position (lines done per input)."""
        summary, report = self.summary, self.report
        letters = iter(batch.letters)
        letter = next(letters, None)
        for j, (rec, res) in enumerate(zip(batch.records, results)):
            while letter is not None and letter[0] <= j:
                self.dead(letter[1])
                letter = next(letters, None)
            if rec.encoding != "utf-8":
                summary.encoding_fallbacks += 1
            if rec.html_stripped:
                summary.html_stripped += 1
            if isinstance(res, (DuplicateIdError, IndexingError)):
                self.dead(DeadLetter(rec.source, rec.line, str(res), excerpt(rec.raw)))
                continue
            _count(summary, res)
            if self.duplicates_at is not None and res.duplicate:
                self.duplicates_at[res.id] = (rec.source, rec.line, rec.raw if self.keep_raw else None)
            if report is not None:
                report.write(report_line(res, rec.source, rec.line))
            if self.output is not None and not res.duplicate:
                self.output.write(rec.raw + b"\n")
        while letter is not None:
            self.dead(letter[1])
            letter = next(letters, None)
        if self.checkpoint is not None:
            if report is not None:
                report.flush()
            self.dlw.flush()
            self.checkpoint.done.update(batch.position)
            self.checkpoint.batch_size = batch.next_size[0] if batch.next_size else None
            summary.elapsed = self.elapsed()
            self.checkpoint.save(summary)
        if self.on_progress is not None:
            self.on_progress(self.reader.bytes_read, summary)

    def batches(self, inputs: Sequence[str], size: int) -> Iterator[_Batch]:
        """Full batches of records, with the dead letters read since the previous batch and a snapshot of the
        lines read per input (batches are fingerprinted ahead, so the snapshot must not move).

        The first batches are smaller (:data:`FIRST_BATCH` records, then twice as many each time, up to ``size``):
        the engine decides a batch while the next one is fingerprinted, and nothing overlaps the first batch's
        fingerprints, so a small one starts the pipeline sooner. So are the last ones: a batch is handed on once
        as many records again have been read after it, so when the input ends the records left (fewer than two
        batches) go in batches of half of them each time, down to :data:`FIRST_BATCH`: nothing overlaps the last
        batch's decisions either. A resumed run's first batch has the size its checkpoint saved (the batch the
        interrupted run cut next). Decisions do not depend on batch sizes."""
        checkpoint = self.checkpoint
        ahead: deque[tuple[str, Record | DeadLetter]] = deque()  # read, not yet in a batch: (input, item)
        n_ahead = 0  # records in ``ahead``
        position: dict[str, int] = {}
        last: list[_Batch] = []

        def take(n: int) -> _Batch:
            """The next ``n`` records, the dead letters read before the last of them, and the lines read up to it
            (with ``n`` = all records ahead: every dead letter left too)."""
            nonlocal n_ahead
            records: list[Record] = []
            letters: list[tuple[int, DeadLetter]] = []
            everything = n >= n_ahead
            while ahead and (everything or len(records) < n):
                src, item = ahead.popleft()
                position[src] = item.line
                if isinstance(item, DeadLetter):
                    letters.append((len(records), item))
                else:
                    records.append(item)
            n_ahead -= len(records)
            batch = _Batch(records, letters, dict(position))
            if last:
                last[0].next_size.append(len(records))
                last[0] = batch
            else:
                last.append(batch)
            return batch

        target = min(size, FIRST_BATCH)
        exact = checkpoint.batch_size if checkpoint is not None and checkpoint.done else None
        for path, src in zip(inputs, checkpoint.inputs if checkpoint else inputs):
            skip = checkpoint.done.get(src, 0) if checkpoint is not None else 0
            for item in self.reader.read_one(path, skip_lines=skip):
                ahead.append((src, item))
                if isinstance(item, DeadLetter):
                    continue
                n_ahead += 1
                if exact is not None:
                    if n_ahead >= exact:
                        yield take(exact)
                        exact = None
                elif n_ahead >= 2 * target:
                    yield take(target)
                    target = min(size, 2 * target)
        if exact is not None and n_ahead > exact:
            yield take(exact)
        smallest = min(size, FIRST_BATCH)
        while n_ahead > smallest:  # (never more than ``size``: a batch is also one bulk request)
            yield take(min(size, max(-(-n_ahead // 2), smallest)))
        yield take(n_ahead)


_NUMBERS = re.compile(r"0x[0-9a-fA-F]+|\d+")


def _reason_kind(reason: str) -> str:
    """A dead letter's reason with its numbers (a byte, an offset, a column) left out: its kind."""
    return _NUMBERS.sub("#", reason)


def report_line(res: Result, source: str, line: int) -> str:
    """The ``--report`` line of one result: ``json.dumps({**res.to_dict(), "source": source, "line": line},
    ensure_ascii=False)`` and a newline, written out field by field (a third of the time, on every record)."""
    dup_of = "null" if res.duplicate_of is None else _json_str(res.duplicate_of)
    distance = "null" if res.distance is None else int(res.distance)
    return (f'{{"id": {_json_str(res.id)}, "cluster": {_json_str(res.cluster)}, '
            f'"duplicate": {"true" if res.duplicate else "false"}, "duplicate_of": {dup_of}, "distance": {distance}, '
            f'"reason": {_json_str(res.reason)}, "source": {_json_str(source)}, "line": {int(line)}}}\n')


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
