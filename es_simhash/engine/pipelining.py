"""Keeping the engine busy: batches fingerprinted ahead (a thread, or several workers: threads for the native
core, processes for the Python engine) while earlier ones are decided and written; the batch being written held
in memory for the next batch's decisions (:class:`InWriting`)."""

from __future__ import annotations

from collections import deque
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Callable, Iterable, Iterator, Sequence, TypeVar

from es_simhash.engine.decisions import DecidedBatch
from es_simhash.records import Document, Result
from es_simhash.errors import DuplicateIdError, IndexingError
from es_simhash.fingerprint.fingerprinter import Fingerprinter
from es_simhash.fingerprint.model import Fingerprint
from es_simhash.index.memory import MemoryIndex

T = TypeVar("T")

_WORKER_FINGERPRINTER: Fingerprinter | None = None


def start_fingerprint_worker(fingerprinter: Fingerprinter) -> None:
    global _WORKER_FINGERPRINTER
    _WORKER_FINGERPRINTER = fingerprinter


def fingerprint_in_worker(texts: Sequence[str]) -> list[Fingerprint]:
    assert _WORKER_FINGERPRINTER is not None
    return _WORKER_FINGERPRINTER.fingerprint_many(texts)


class InWriting:
    """A batch being written in another thread, with its documents in memory for the next batch's decisions."""

    def __init__(self, context, decided: DecidedBatch, future: Future | None, max_sentence_df: int, lookup_keys) -> None:
        self.context, self.decided, self.future = context, decided, future
        self.memory = MemoryIndex(max_sentence_df, lookup_keys)
        self.memory.add(decided.to_store)
        self.refused: dict[str, str] = {}

    def finish(self) -> list[Result | DuplicateIdError | IndexingError]:
        self.refused = self.future.result() if self.future is not None else {}
        return self.decided.stored(self.refused)


def fingerprint_pool(fingerprinter: Fingerprinter, workers: int, worker_threads: bool | None
                     ) -> tuple[Executor, Callable[[Sequence[str]], list[Fingerprint]], int]:
    """``(pool, fingerprint, depth)``: where batches are fingerprinted, the function that does it there, and how many
    batches go ahead (see :meth:`~es_simhash.engine.DedupEngine.process_batches`)."""
    pool: Executor
    threads = worker_threads
    if threads is None:  # the native core releases the GIL while it works: threads, no process start-up
        threads = getattr(fingerprinter, "engine", "python") == "native"
    if workers and threads:
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fingerprint")
        return pool, fingerprinter.fingerprint_many, workers + 2
    if workers:
        import multiprocessing  # (only here: worker processes are for the pure-Python engine)
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=start_fingerprint_worker, initargs=(fingerprinter,))
        return pool, fingerprint_in_worker, workers + 2
    # one thread, two batches ahead: the pure-Python fingerprinter is not thread-safe, and two ahead is ~10% faster
    # than one on bench/cli.py's whole dedup (the first batch decided also imports numpy)
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fingerprint")
    return pool, fingerprinter.fingerprint_many, 2


def read_ahead(batches: Iterable[tuple[Sequence[Document], T]], pool: Executor,
               fingerprint: Callable[[Sequence[str]], list[Fingerprint]], depth: int
               ) -> Iterator[tuple[Sequence[Document], T, Sequence[Fingerprint]]]:
    """``(documents, context, fingerprints)`` of each batch in order, ``depth`` batches being fingerprinted in
    ``pool`` ahead of the one yielded."""
    ahead: deque[tuple[Sequence[Document], T, Future | None]] = deque()
    it = iter(batches)

    def submit() -> None:  # read the next batch (if any) and start fingerprinting it
        for docs, context in it:
            texts = [d.text for d in docs]
            ahead.append((docs, context, pool.submit(fingerprint, texts) if texts else None))
            return

    for _ in range(depth):
        submit()
    while ahead:
        docs, context, future = ahead.popleft()
        submit()
        yield docs, context, (future.result() if future is not None else [])
