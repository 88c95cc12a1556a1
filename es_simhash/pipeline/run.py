"""Source -> fingerprint -> dedup engine -> index, with report, output and dead letters.

:func:`run_dedup` is what ``es-simhash dedup`` (embedded) and ``es-simhash index`` (Elasticsearch) both call;
the only difference between them is the index the engine was given. It picks one of two kinds of run, which share
the reading and the dead letters (:func:`_reading`, :class:`_Run`): :func:`_run_as_set` (every record taken in,
decided once at the end) and :func:`_run_on_arrival` (decided batch by batch, with a checkpoint and the recheck).
"""

from __future__ import annotations

import os
import time
from collections import deque
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import IO, Callable, Iterable, Iterator, Sequence

from es_simhash.defaults import DEAD_LETTERS, MIN_DF
from es_simhash.engine.dedup_engine import DedupEngine
from es_simhash.errors import DuplicateIdError, IndexingError
from es_simhash.engine.decisions import FarMarks
from es_simhash.records import Document, Result, StoredDoc
from es_simhash.files.sources import DeadLetter, DeadLetterWriter, excerpt, RecordReader
from es_simhash.fingerprint.idf import IDFTable
from es_simhash.index.base import PartitionedIndex
from es_simhash.index.memory import MemoryIndex
from es_simhash.clustering.partitions import settle_vanished
from es_simhash.pipeline.checkpoint import Checkpoint
from es_simhash.pipeline.precedence import decide_run, precedence_run, run_documents, set_run
from es_simhash.pipeline.recheck import (RecheckOutcome, Where, correct_outputs, is_rewritable, recheck_run,
                                         rereadable, write_final_output)
from es_simhash.pipeline.source import RecordSource
from es_simhash.pipeline.summary import Summary, count_result, reason_kind, report_line

__all__ = ["run_dedup", "iter_texts", "fit_idf"]


def run_dedup(
    inputs: Sequence[str],
    engine: DedupEngine,
    reader: RecordSource | None = None,
    *,
    report: IO[str] | None = None,
    output: IO[bytes] | None = None,
    dead_letters: str | os.PathLike[str] = DEAD_LETTERS,
    on_progress: Callable[[int, Summary], None] | None = None,
    checkpoint: Checkpoint | None = None,
    recheck: bool = False,
    start: Callable[[], None] | None = None,
    stop: Callable[[], bool] | None = None,
    on_recheck: Callable[[int, int], None] | None = None,
    as_set: bool | None = None,
) -> Summary:
    """Deduplicate the JSON Lines ``inputs`` through ``engine``; the summary counts read = kept + duplicates + dead
    letters.

    ``report``: one JSON line per record in input order (``id, cluster, duplicate, duplicate_of, distance, reason,
    source, line``), with its final cluster. ``output``: the original bytes of every record that is not a duplicate
    in the end, in input order. Malformed records go to the ``dead_letters`` file with their line number and
    reason (created only when needed, put in place when the run ends well; a run that decides no record leaves a
    file already there as it was). ``on_progress(position, summary)``
    after every batch (``position``: bytes of the inputs decided so far); ``start()`` once, before the first record
    goes to the engine (a run that decides no record calls it never; :attr:`Summary.undecided` says why);
    ``stop()`` after every batch: when true, the run stops there with :class:`KeyboardInterrupt`, checkpoint saved.

    ``checkpoint``: lines it records as done are skipped and its counts carried over; it is saved after every batch,
    locked throughout (:class:`CheckpointInUse`) and removed at the end. A resumed run's first batch is the batch
    the interrupted run was writing, so the clusters are those of a run never interrupted.

    ``recheck`` (what ``dedup`` and ``index`` do by default): once every record is decided, the index takes its
    decisions again with what it knows by then (:func:`~es_simhash.clustering.recheck`), and the summary, report
    and output are corrected (:mod:`es_simhash.pipeline.recheck`); ``on_recheck(checked, total)`` is its progress.
    The embedded index decides all its documents again as a set
    (:func:`~es_simhash.pipeline.precedence.precedence_run`: the same clusters, with the same canonicals, in any
    input order); an index that holds nothing but this run's documents decides them so in an embedded mirror and
    writes back what changes (:func:`~es_simhash.pipeline.precedence.set_run`); an index that held others before
    rechecks what this run decided and what that leads to. See docs/how-it-works.md, "The same records give the
    same clusters".

    ``as_set`` picks one of the two kinds of run, which share the reading, the dead letters and the summary: a run
    decided on arrival (batch by batch; the checkpoint, the recheck) or one decided as a set at its end. ``as_set``
    (default: with ``recheck``, an embedded index and no ``checkpoint``; ``dedup`` and ``evaluate`` always): no
    record is decided on arrival; each is fingerprinted and taken in
    (:meth:`DedupEngine.process_batches` with ``decide=False``), and once every record is read the documents are
    decided once, as a set (:func:`~es_simhash.pipeline.precedence.decide_run`), with the recheck or not; the
    report and the output are written then, in input order. ``on_recheck(done, total)`` is the progress of those
    decisions.
    """
    if as_set is None:
        as_set = recheck and isinstance(engine.index, MemoryIndex) and checkpoint is None
    if as_set and checkpoint is not None:
        raise ValueError("run_dedup: a run decided as a set at its end keeps no checkpoint")
    reader = reader or RecordReader()
    if as_set:
        return _run_as_set(inputs, engine, reader, report=report, output=output, dead_letters=dead_letters,
                           on_progress=on_progress, recheck=recheck, start=start, stop=stop, on_recheck=on_recheck)
    return _run_on_arrival(inputs, engine, reader, report=report, output=output, dead_letters=dead_letters,
                           on_progress=on_progress, checkpoint=checkpoint, recheck=recheck, start=start, stop=stop,
                           on_recheck=on_recheck)


def _run_as_set(inputs: Sequence[str], engine: DedupEngine, reader: RecordSource, *, report: IO[str] | None,
                output: IO[bytes] | None, dead_letters: str | os.PathLike[str],
                on_progress: Callable[[int, Summary], None] | None, recheck: bool, start: Callable[[], None] | None,
                stop: Callable[[], bool] | None, on_recheck: Callable[[int, int], None] | None) -> Summary:
    """A run decided as a set (:func:`run_dedup` with ``as_set``): every record is fingerprinted and taken in, none
    decided on arrival; once every one is read, the documents are decided once
    (:func:`~es_simhash.pipeline.precedence.decide_run`, with the recheck or not), and the report and the output
    are written then, in input order (:func:`_write_at_end`)."""
    with _reading(inputs, engine, reader, dead_letters, on_progress) as run:
        run.keep_where(inputs, report, output, at_end=True, recheck=recheck, held_back=False)
        run.read(inputs, engine, start, stop, decide=False)
        if run.summary.kept or run.summary.duplicates:
            final = decide_run(engine, run.summary, recheck, on_page=on_recheck)
            _write_at_end(final, inputs, reader, report, output, run.where or {})
    return run.summary


def _run_on_arrival(inputs: Sequence[str], engine: DedupEngine, reader: RecordSource, *, report: IO[str] | None,
                    output: IO[bytes] | None, dead_letters: str | os.PathLike[str],
                    on_progress: Callable[[int, Summary], None] | None, checkpoint: Checkpoint | None, recheck: bool,
                    start: Callable[[], None] | None, stop: Callable[[], bool] | None,
                    on_recheck: Callable[[int, int], None] | None) -> Summary:
    """A run decided on arrival (:func:`run_dedup` without ``as_set``): each batch is decided as it comes, its
    report lines and output written then (an output that cannot be rewritten, with the recheck: held back to the
    end, as the recheck decides it) and the ``checkpoint`` saved; with ``recheck``, the decisions are taken again
    once every record is decided (:func:`_final_decisions`) and the summary, the report and the output corrected
    (:func:`~es_simhash.pipeline.recheck.correct_outputs`)."""
    held_back = recheck and output is not None and not is_rewritable(output)  # (a stream: written at the end)
    with _reading(inputs, engine, reader, dead_letters, on_progress, report, None if held_back else output,
                  checkpoint) as run:
        run.keep_where(inputs, report, output, at_end=False, recheck=recheck, held_back=held_back)
        run.read(inputs, engine, start, stop, decide=True)
        if isinstance(engine.index, PartitionedIndex):  # (partitions deleted by someone else: no pointer left)
            settle_vanished(engine.index, engine.rule)
        if recheck and (run.summary.kept or run.summary.duplicates):
            outcome = _final_decisions(engine, run.summary, run.since, checkpoint, on_recheck)
            correct_outputs(outcome, inputs, reader, report, output, run.where or {},
                            run.duplicate_ids if held_back else None)
    return run.summary


@contextmanager
def _reading(inputs: Sequence[str], engine: DedupEngine, reader: RecordSource, dead_letters: str | os.PathLike[str],
             on_progress: Callable[[int, Summary], None] | None, report: IO[str] | None = None,
             output: IO[bytes] | None = None, checkpoint: Checkpoint | None = None) -> Iterator[_Run]:
    """What both kinds of run share around their reading: the run's start (a resumed run keeps the one of the run it
    resumes) and the engine's far marks from it, the ``checkpoint`` locked (its counts carried over), the dead
    letters' file open, and the :class:`_Run` that reads the batches and writes each one's outcome to ``report``
    and ``output`` (``None``: written at the end). When the block ends well: a file of dead letters already there
    is left as it was by a run that decided no record, the summary gets its dead letters' path and its time, the
    checkpoint is removed and ``on_progress`` told where the run got to."""
    summary = checkpoint.summary if checkpoint is not None else Summary()
    resuming = checkpoint is not None and bool(checkpoint.done)
    since = checkpoint.since if checkpoint is not None and resuming and checkpoint.since else time.time_ns() // 1000
    if checkpoint is not None:
        checkpoint.since = since
    engine.far_marks = _far_marks(since, checkpoint if resuming else None)
    with ExitStack() as stack:
        if checkpoint is not None:
            stack.enter_context(checkpoint.lock())
            checkpoint.output("dead_letters", "--dead-letters", dead_letters)
        dlw = stack.enter_context(DeadLetterWriter(dead_letters, resumable=checkpoint is not None,
                                                   keep_lines=summary.dead_letters if resuming else 0))
        run = _Run(summary, reader, dlw, report, output, checkpoint, on_progress, since=since, resuming=resuming)
        yield run
        _keep_earlier_dead_letters(dlw, summary)
    summary.dead_letter_path = dlw.path if dlw.written else None
    summary.elapsed = run.elapsed()
    if checkpoint is not None:
        checkpoint.remove()
    if on_progress is not None:
        on_progress(run.read_to, summary)


def _write_at_end(final: dict[str, StoredDoc], inputs: Sequence[str], reader: RecordSource, report: IO[str] | None,
                  output: IO[bytes] | None, where: Where) -> None:
    """The report (a line per record of ``where``, in input order) and the output (every record that is not a
    duplicate in ``final``, in input order) of a run decided as a set."""
    if report is not None:
        write = report.write
        for doc_id, (source, line, _) in where.items():
            write(report_line(Result.from_stored(final[doc_id]), source, line))
    if output is not None:
        write_final_output(output, inputs, reader, lambda i: final[i].is_canonical, where)


def _final_decisions(engine: DedupEngine, summary: Summary, since: int, checkpoint: Checkpoint | None,
                     on_page: Callable[[int, int], None] | None) -> RecheckOutcome:
    """The decisions of a run taken again at its end: as a set (the same clusters in any input order) for an
    embedded index (:func:`~es_simhash.pipeline.precedence.precedence_run`) and for an index that holds nothing but
    the run's documents (:func:`~es_simhash.pipeline.precedence.set_run`); any other index rechecks what this run
    decided (:func:`~es_simhash.pipeline.recheck.recheck_run`)."""
    if isinstance(engine.index, MemoryIndex):
        return precedence_run(engine, summary, since, on_page=on_page)
    docs = run_documents(engine, since, summary.kept + summary.duplicates)
    if docs is not None:
        outcome = set_run(engine, summary, since, docs, checkpoint, on_page=on_page)
        if len(engine.maintained()) == len(docs):
            return outcome
        # another writer wrote while the set was decided, against the run's documents as they stood then: the run's
        # decisions are rechecked as those of a run into a shared index are
        return outcome.then(recheck_run(engine, summary, since, scope=since, on_page=on_page))
    return recheck_run(engine, summary, since, scope=since if engine.index.shared_writers else None,
                       checkpoint=checkpoint, on_page=on_page)


def _far_marks(since: int, resumed: Checkpoint | None) -> FarMarks:
    """The marks of a run that began at ``since`` (the canonicals its recheck settles), carried on from the run it
    resumes (``resumed``: that run's checkpoint)."""
    marks = FarMarks(since)
    if resumed is not None:
        marks.restore(resumed.far)
    return marks


FIRST_BATCH = 100
"""Records in the first batch :func:`run_dedup` reads (see :meth:`_Run.batches`)."""


@dataclass
class _Batch:
    """A batch of records as :meth:`_Run.batches` cuts it."""

    records: list[Document]
    letters: list[tuple[int, DeadLetter]]
    """The dead letters read since the previous batch, each with the number of this batch's records read before
    it (its place among them: dead letters are written in line order)."""
    position: dict[str, int]
    """Lines read per input up to the batch's last record (what a checkpoint saved after it records as done)."""
    read_to: int = 0
    """The reader's position after the batch's last line (its ``bytes_read`` then): the progress made once the batch
    is decided."""
    next_size: list[int] = field(default_factory=list)
    """The size of the batch cut after this one, once it is cut (a checkpoint saves it: a resumed run's first batch
    is then the one this run decides after this one)."""


class _Run:
    """The state of one :func:`run_dedup`: where each batch's outcome goes."""

    MAX_DEAD_REASONS = 20
    """Distinct dead-letter reasons counted one by one (:attr:`Summary.dead_reasons`); the others together."""

    def __init__(self, summary: Summary, reader: RecordSource, dlw: DeadLetterWriter, report: IO[str] | None,
                 output: IO[bytes] | None, checkpoint: Checkpoint | None,
                 on_progress: Callable[[int, Summary], None] | None, *, since: int, resuming: bool) -> None:
        self.summary, self.reader, self.dlw = summary, reader, dlw
        self.report, self.output, self.checkpoint, self.on_progress = report, output, checkpoint, on_progress
        self.since = since
        """When the run began (microseconds since the epoch; a resumed run: the one it resumes): its far marks and
        its recheck start there."""
        self.resuming = resuming
        """Whether the run goes on from its checkpoint (lines it records as done are skipped)."""
        self.read_to = 0
        """The reader's position once every batch is decided (a recheck reads the inputs again: the progress stays
        where the run got to)."""
        self.started = time.perf_counter()
        self.elapsed_before = summary.elapsed  # the runs this one resumes
        self.where: dict[str, tuple[str, int, bytes | None]] | None = None
        """Where each record was read (and its raw bytes, with ``keep_raw``), for the recheck's corrections of
        outputs that cannot be rewritten (:data:`~es_simhash.pipeline.recheck.Where`)."""
        self.keep_raw = False
        self.duplicate_ids: set[str] | None = None
        """The records decided as duplicates, for an output written after the recheck."""
        self.kinds = {reason_kind(r): r for r in summary.dead_reasons}  # kind -> its first reason

    def keep_where(self, inputs: Sequence[str], report: IO[str] | None, output: IO[bytes] | None, at_end: bool,
                   recheck: bool, held_back: bool) -> None:
        """Keep what the end of the run needs of each record: where it was read for a report and an output written
        at the end (``at_end``) or corrected by the recheck where a file cannot be rewritten, with its raw bytes
        when the inputs cannot be read again; the records decided as duplicates when the output is ``held_back``."""
        from_memory = output is not None and not rereadable(inputs)  # (the output is written from raw lines)
        if at_end or (recheck and (from_memory or (report is not None and not is_rewritable(report)))):
            self.where = {}
            self.keep_raw = from_memory
        if recheck and held_back and not at_end:
            self.duplicate_ids = set()

    def elapsed(self) -> float:
        return self.elapsed_before + time.perf_counter() - self.started

    def read(self, inputs: Sequence[str], engine: DedupEngine, start: Callable[[], None] | None,
             stop: Callable[[], bool] | None, decide: bool) -> None:
        """Every record of ``inputs`` through ``engine``, batch by batch (:meth:`batches`; with ``decide``, each
        decided on arrival, else only fingerprinted and taken in), each batch's outcome written (:meth:`flush`) with
        the engine's marks in the checkpoint; ``start()`` before the first record goes to the engine, ``stop()``
        after every batch: when true, :class:`KeyboardInterrupt` (the checkpoint saved)."""
        checkpoint = self.checkpoint

        def documents() -> Iterator[tuple[list[Document], _Batch]]:
            waiting = start
            for batch in self.batches(inputs, engine.batch_size):
                if waiting is not None and batch.records:
                    waiting()
                    waiting = None
                yield batch.records, batch

        mark = checkpoint.mark if checkpoint is not None and self.resuming else None
        for batch, results in engine.process_batches(documents(), resumed=self.resuming, mark=mark, decide=decide):
            if checkpoint is not None:
                checkpoint.mark = engine.next_mark
                checkpoint.far = engine.far_marks.saved()
            self.flush(batch, results)
            if stop is not None and stop():
                raise KeyboardInterrupt
        self.read_to = self.reader.bytes_read

    def dead(self, letter: DeadLetter) -> None:
        self.dlw.write(letter)
        s = self.summary
        s.read += 1
        s.dead_letters += 1
        kind = reason_kind(letter.reason)
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
            count_result(summary, res)
            if self.where is not None:
                self.where[res.id] = (rec.source, rec.line, rec.raw if self.keep_raw else None)
            if self.duplicate_ids is not None and res.duplicate:
                self.duplicate_ids.add(res.id)
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
            self.on_progress(batch.read_to, summary)

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
        ahead: deque[tuple[str, Document | DeadLetter, int]] = deque()  # read, not yet in a batch: (input, item,
        # the reader's position after it)
        n_ahead = 0  # records in ``ahead``
        position: dict[str, int] = {}
        last: list[_Batch] = []

        def take(n: int) -> _Batch:
            """The next ``n`` records, the dead letters read before the last of them, and the lines read up to it
            (with ``n`` = all records ahead: every dead letter left too)."""
            nonlocal n_ahead
            records: list[Document] = []
            letters: list[tuple[int, DeadLetter]] = []
            everything = n >= n_ahead
            read_to = self.reader.bytes_read
            while ahead and (everything or len(records) < n):
                src, item, read_to = ahead.popleft()
                position[src] = item.line
                if isinstance(item, DeadLetter):
                    letters.append((len(records), item))
                else:
                    records.append(item)
            n_ahead -= len(records)
            batch = _Batch(records, letters, dict(position), read_to)
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
                ahead.append((src, item, self.reader.bytes_read))
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


def iter_texts(inputs: Iterable[str], reader: RecordReader | None = None) -> Iterable[str]:
    """The texts of the valid records of ``inputs`` (dead letters skipped), e.g. for ``IDFTable.fit``."""
    reader = reader or RecordReader()
    for item in reader.read(list(inputs)):
        if isinstance(item, Document):
            yield item.text


def _keep_earlier_dead_letters(dlw: DeadLetterWriter, summary: Summary) -> None:
    """A run that decided no record leaves a file of dead letters already at the path as it was."""
    if not (summary.kept or summary.duplicates) and os.path.lexists(dlw.path):
        dlw.discard()


def fit_idf(inputs: Iterable[str], reader: RecordReader | None = None, min_df: int = MIN_DF) -> IDFTable:
    """``IDFTable.fit`` over the texts of the valid records of ``inputs`` (dead letters skipped). When no record has
    a text, a ``ValueError`` says why: the input holds no records, or the first record's reason for being a dead
    letter (a misspelt text field: the fields the record has)."""
    reader = reader or RecordReader()
    letters: list[DeadLetter] = []
    documents = [0]

    def texts() -> Iterator[str]:
        for item in reader.read(list(inputs)):
            if isinstance(item, Document):
                documents[0] += 1
                yield item.text
            elif not letters:  # (the first dead letter: it says why)
                letters.append(item)

    try:
        return IDFTable.fit(texts(), min_df=min_df)
    except ValueError:
        if documents[0]:
            raise
        if not letters:
            raise ValueError("the input holds no records (it is empty, or only blank lines): there is nothing to "
                             "learn from") from None
        raise ValueError(f"no record has a text to learn from: {letters[0].reason} ({letters[0].source}, line "
                         f"{letters[0].line})") from None
