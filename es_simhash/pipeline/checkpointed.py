"""A checkpointed run (what ``es-simhash index`` and ``migrate`` make): :func:`open_checkpoint` finds or starts the
run's checkpoint, :func:`run_checkpointed` makes the run under it (lock, resumable report, a first Ctrl-C that
stops after the batch being written) and turns how it stopped into a named error: :class:`RunInterrupted` (what
was saved, and where), :class:`RunGaveUp` (Elasticsearch gave up: resumable), :class:`NothingDecided`."""

from __future__ import annotations

import os
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Any, Callable, Iterator, Sequence

from es_simhash.defaults import DEAD_LETTERS
from es_simhash.engine.dedup_engine import DedupEngine
from es_simhash.errors import ElasticError, EsSimhashError, NoCheckpoint
from es_simhash.pipeline.checkpoint import Checkpoint
from es_simhash.pipeline.run import run_dedup
from es_simhash.pipeline.source import RecordSource
from es_simhash.pipeline.summary import Summary

__all__ = ["NothingDecided", "RunInterrupted", "RunGaveUp", "open_checkpoint", "run_checkpointed"]


class NothingDecided(EsSimhashError):
    """Records were read and none could be decided (the message: :attr:`Summary.undecided`, the reason); the run
    wrote no index and left its outputs as they were. ``summary``: the run's counts."""

    def __init__(self, summary: Summary) -> None:
        super().__init__(summary.undecided)
        self.summary = summary


class RunInterrupted(EsSimhashError):
    """A checkpointed run stopped by an interrupt, with what its checkpoint holds: ``saved`` (False: it stopped
    before its first batch was saved: start it again), ``lines_done`` (input lines indexed and saved),
    ``written`` (documents this run wrote), ``checkpoint`` (the file to resume from), and ``unreadable`` (why the
    checkpoint cannot be read, if it cannot)."""

    def __init__(self, checkpoint: str, saved: bool, lines_done: int = 0, written: int = 0,
                 unreadable: str | None = None) -> None:
        self.checkpoint, self.saved, self.lines_done, self.written = checkpoint, saved, lines_done, written
        self.unreadable = unreadable
        super().__init__(self.describe("resume from it", "nothing to resume"))

    def describe(self, resume: str, start_again: str) -> str:
        """What the checkpoint holds, in one line ending in what to do: ``resume`` when there is something to
        resume, ``start_again`` when the run stopped before its first batch was saved."""
        if self.unreadable is not None:
            return f"interrupted; the checkpoint cannot be read: {self.unreadable}"
        if not self.saved:
            return f"interrupted before the first batch was saved: {start_again}"
        return (f"interrupted: {self.lines_done:,} input lines are done ({self.written:,} documents written by this "
                f"run) and saved in {self.checkpoint}: {resume}")

    @classmethod
    def of(cls, checkpoint: Checkpoint) -> RunInterrupted:
        """What ``checkpoint``'s file holds now (its run was interrupted)."""
        try:
            saved = Checkpoint.load(checkpoint.path, checkpoint.inputs)
        except NoCheckpoint:
            return cls(checkpoint.path, saved=False)
        except ValueError as exc:
            return cls(checkpoint.path, saved=False, unreadable=str(exc))
        written = saved.summary.indexed - checkpoint.summary.resumed_indexed
        return cls(checkpoint.path, saved=True, lines_done=sum(saved.done.values()), written=written)


class RunGaveUp(EsSimhashError):
    """Elasticsearch stayed unavailable (or refused a write) during a checkpointed run: ``error``, the
    :class:`~es_simhash.errors.ElasticError`; ``lines_done`` input lines are done and saved in ``checkpoint``,
    which a resumed run goes on from."""

    def __init__(self, error: ElasticError, checkpoint: Checkpoint) -> None:
        self.error, self.checkpoint, self.lines_done = error, checkpoint.path, sum(checkpoint.done.values())
        super().__init__(f"{error}; {self.lines_done:,} input lines are done and saved in {self.checkpoint}")


def open_checkpoint(index: str, inputs: Sequence[str], path: str | os.PathLike[str] | None = None,
                    resume: bool = False) -> Checkpoint:
    """The checkpoint of a run of ``inputs`` into ``index``, at ``path`` (default:
    :meth:`Checkpoint.default_path`): a new one, or with ``resume`` the saved one. With ``resume`` and none saved
    (the run it resumes stopped before its first batch, or finished), a new one whose ``started_over`` is True:
    the run starts from the top (re-indexing what is already there changes nothing). A checkpoint that cannot be
    read, or is for other inputs: ``ValueError``."""
    path = os.fspath(path) if path is not None else Checkpoint.default_path(index, inputs)
    if not resume:
        return Checkpoint(path, inputs)
    try:
        return Checkpoint.load(path, inputs)
    except NoCheckpoint:
        checkpoint = Checkpoint(path, inputs)
        checkpoint.started_over = True
        return checkpoint


def run_checkpointed(
    inputs: Sequence[str],
    engine: DedupEngine,
    reader: RecordSource,
    checkpoint: Checkpoint,
    *,
    report: str | os.PathLike[str] | None = None,
    dead_letters: str | os.PathLike[str] = DEAD_LETTERS,
    start: Callable[[], None] | None = None,
    recheck: bool = False,
    on_progress: Callable[[int, Summary], None] | None = None,
    on_recheck: Callable[[int, int], None] | None = None,
    display: AbstractContextManager[Any] | None = None,
    on_stopping: Callable[[], None] | None = None,
) -> Summary:
    """:func:`~es_simhash.pipeline.run_dedup` under ``checkpoint`` (from :func:`open_checkpoint`): the checkpoint
    held first (:class:`~es_simhash.errors.CheckpointInUse`), then the ``report`` opened to resume
    (:meth:`Checkpoint.open_report`; :class:`~es_simhash.errors.OutputError`), ``display`` entered (a progress
    bar) and, in the main thread, a first Ctrl-C made to stop the run once the batch being written is saved
    (``on_stopping()`` is called then; a second one stops it at once). Raises :class:`RunInterrupted` on an
    interrupt, :class:`RunGaveUp` when Elasticsearch gives up, :class:`NothingDecided` when no record could be
    decided (the outputs are left as they were then); the other arguments are :func:`run_dedup`'s."""
    with ExitStack() as stack:
        stack.enter_context(checkpoint.lock())  # (before any output is opened)
        report_file = checkpoint.open_report(report) if report is not None else None
        rep = stack.enter_context(report_file) if report_file is not None else None
        if display is not None:
            stack.enter_context(display)
        stop = stack.enter_context(_stop_after_batch(on_stopping))
        try:
            summary = run_dedup(inputs, engine, reader, report=rep, dead_letters=dead_letters,
                                on_progress=on_progress, checkpoint=checkpoint, start=start, stop=stop,
                                recheck=recheck, on_recheck=on_recheck)
        except KeyboardInterrupt:
            raise RunInterrupted.of(checkpoint) from None
        except ElasticError as exc:
            raise RunGaveUp(exc, checkpoint) from exc
        if summary.undecided is not None:
            if report_file is not None:
                report_file.discard()  # (the run is over: no partial file is left for a --resume)
            raise NothingDecided(summary)
    return summary


@contextmanager
def _stop_after_batch(on_stopping: Callable[[], None] | None) -> Iterator[Callable[[], bool]]:
    """A first Ctrl-C asks the run to stop once the batch being written is written and saved in the checkpoint
    (the counts of :class:`RunInterrupted` are then exact); a second one stops it at once. Outside the main thread
    Ctrl-C is not ours to catch: the run is never asked to stop."""
    import signal

    asked: list[bool] = []

    def on_interrupt(signum, frame) -> None:
        if asked:
            raise KeyboardInterrupt
        asked.append(True)
        if on_stopping is not None:
            on_stopping()

    try:
        previous = signal.signal(signal.SIGINT, on_interrupt)
    except ValueError:  # (not the main thread)
        yield lambda: False
        return
    try:
        yield lambda: bool(asked)
    finally:
        signal.signal(signal.SIGINT, previous)
