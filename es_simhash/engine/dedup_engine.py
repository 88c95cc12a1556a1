"""The dedup engine: fingerprints, candidate lookups, duplicate decisions and cluster assignment.

It talks to any :class:`~es_simhash.index.base.FingerprintIndex` (the embedded :class:`MemoryIndex` or
Elasticsearch) and never knows which. Documents flow through in batches: one bulk lookup per batch against the
backend, then each document is decided in input order against the backend's candidates *and* the documents
already decided in the same batch (so duplicates inside one batch are caught), then the batch is written.

:class:`DedupEngine` holds the public API and the order of the stages, and hands each batch to two collaborators
it owns: its :attr:`~DedupEngine.decider` (:class:`~es_simhash.engine.decisions.BatchDecider`: lookups and
decisions) and its :attr:`~DedupEngine.writer` (:class:`~es_simhash.engine.writes.BatchWriter`: writes, conflicts
and settling). :mod:`~es_simhash.engine.pipelining` keeps them busy (fingerprinting ahead, the batch in writing);
the records that go in and come out are :mod:`es_simhash.records`' :class:`Document` and :class:`Result`.
"""

from __future__ import annotations

import logging
import os
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any, Iterable, Iterator, Sequence, TypeVar

from es_simhash.decide.default import DefaultRule
from es_simhash.defaults import BATCH_SIZE, SHARED_BATCH_SIZE
from es_simhash.decide.rule import DecisionRule
from es_simhash.records import Decision, Document, Result, StoredDoc
from es_simhash.engine.decisions import BatchDecider, DecidedBatch, FarMarks, as_maintained
from es_simhash.engine.pipelining import InWriting, fingerprint_pool, read_ahead
from es_simhash.engine.writes import BatchWriter
from es_simhash.errors import DuplicateIdError, IndexingError
from es_simhash.fingerprint.fingerprinter import Fingerprinter
from es_simhash.fingerprint.model import Fingerprint
from es_simhash.index.base import Lookup, FingerprintIndex, MaintainedIndex
from es_simhash.index.memory import MemoryIndex
from es_simhash.lookup.candidates import boilerplate_of

__all__ = ["DedupEngine"]

log = logging.getLogger(__name__)

T = TypeVar("T")


class DedupEngine:
    """Finds near duplicates on ingest and assigns each document to a duplicate cluster: batches are decided by
    its :attr:`decider` and written by its :attr:`writer`, both on its :attr:`index` with its :attr:`rule`.

    >>> engine = DedupEngine()                      # embedded: in-memory index
    >>> [r.reason for r in engine.process([Document("a", "x" * 200), Document("b", "x" * 200)])]
    ['canonical', 'exact']
    """

    def __init__(
        self,
        index: FingerprintIndex | None = None,
        fingerprinter: Fingerprinter | None = None,
        rule: DecisionRule | None = None,
        batch_size: int | None = None,
        workers: int = 0,
        worker_threads: bool | None = None,
        recheck_rule: DecisionRule | None = None,
    ) -> None:
        if workers < 0:
            raise ValueError("workers >= 0")
        self.worker_threads = worker_threads
        index = MemoryIndex() if index is None else index
        rule = rule or DefaultRule()
        self.fingerprinter = fingerprinter or Fingerprinter()
        self.decider = BatchDecider(index, rule, recheck_rule)
        """Looks up and decides each batch (and remembers the ids seen in this run)."""
        self.writer = BatchWriter(index, rule)
        """Writes each decided batch and settles it."""
        self.far_marks = FarMarks()
        """The canonicals this engine decided that :attr:`recheck_rule` would have made duplicates, and whether
        they cover every document it wrote (:class:`~es_simhash.engine.decisions.FarMarks`): the canonicals the
        recheck settles."""
        if batch_size is None:
            batch_size = SHARED_BATCH_SIZE if index.shared_writers else BATCH_SIZE
        self.batch_size = batch_size
        """Documents per batch (default :data:`SHARED_BATCH_SIZE` with an index that shares writers, else
        :data:`BATCH_SIZE`)."""
        self.workers = workers
        self.held: list[StoredDoc] = []
        """The documents :meth:`process_batches` took in without deciding them (``decide=False``), in input order:
        fingerprints, each its own canonical until the run decides them as a set."""
        self.next_mark: dict[str, Any] | None = None
        """When :meth:`process_batches` yields a batch's results: what the next batch was decided with, if it is
        decided already (None otherwise; JSON): the index's visible mark, and the written state of each document
        this writer was writing or about to write then (``{"mark": ..., "mine": {id: [arrival, cluster,
        duplicate_of]}}``). A checkpoint saved then keeps it for a resumed run (``process_batches(resumed=True,
        mark=...)``), whose first batch is that next batch."""

    @property
    def index(self) -> FingerprintIndex:
        """The backend documents are looked up in and written to (the :attr:`decider`'s and the :attr:`writer`'s)."""
        return self.decider.index

    @index.setter
    def index(self, index: FingerprintIndex) -> None:
        self.decider.index = self.writer.index = index

    @property
    def recheck_rule(self) -> DecisionRule:
        """The rule the recheck at the end of a run takes the decisions again with
        (:func:`~es_simhash.pipeline.run_dedup` with ``recheck``; default: :attr:`rule`). ``es-simhash dedup`` and
        ``index`` decide on arrival with ``DefaultRule.rechecked(k=K).on_arrival()`` and recheck with
        ``DefaultRule.rechecked(k=K)`` (:meth:`DefaultRule.on_arrival`)."""
        return self.decider.recheck_rule

    @recheck_rule.setter
    def recheck_rule(self, rule: DecisionRule) -> None:
        self.decider.recheck_rule = rule

    @property
    def rule(self) -> DecisionRule:
        """The rule documents are decided and settled with (the :attr:`decider`'s and the :attr:`writer`'s)."""
        return self.decider.rule

    @rule.setter
    def rule(self, rule: DecisionRule) -> None:
        self.decider.rule = self.writer.rule = rule

    # -- public API ----------------------------------------------------------------------------------------
    def process(self, docs: Iterable[Document]) -> Iterator[Result]:
        """Decide and index ``docs``; yields one :class:`Result` per document, in input order.

        A document whose id was already seen in this engine's run raises :class:`DuplicateIdError` *in place of*
        its result (callers that want to go on use :meth:`process_batches` or :meth:`process_batch`).
        """

        def batches() -> Iterator[tuple[list[Document], None]]:
            batch: list[Document] = []
            for doc in docs:
                batch.append(doc)
                if len(batch) >= self.batch_size:
                    yield batch, None
                    batch = []
            if batch:
                yield batch, None

        for _, results in self.process_batches(batches()):
            yield from self._raise_errors(results)

    def process_batches(
        self, batches: Iterable[tuple[Sequence[Document], T]], resumed: bool = False, mark: Any = None,
        decide: bool = True,
    ) -> Iterator[tuple[T, list[Result | DuplicateIdError | IndexingError]]]:
        """:meth:`process_batch` over ``(documents, context)`` pairs, yielding ``(context, results)`` in order.

        ``decide=False`` (a run that decides its documents at its end as a set,
        :func:`~es_simhash.pipeline.precedence.decide_run`; the index a :class:`MemoryIndex`): each batch is only
        fingerprinted and taken in (:meth:`BatchDecider.hold_batch`: no lookup, no decision, nothing written),
        its documents appended to :attr:`held`, and each result is provisional (its own canonical; a
        :class:`DuplicateIdError`, or found already indexed, as when deciding).

        ``resumed``: the first batch is the one an interrupted run of the same input was writing when it stopped
        (:func:`~es_simhash.pipeline.run_dedup` resuming from a checkpoint cuts it so): the documents of it found
        already indexed were written by that run, so each other document of it is decided as that run would have
        decided it, against the ones before it in the batch and not the ones after it (the clusters are those of
        a run that was never interrupted). ``mark``: the visible mark that run decided the batch with
        (:attr:`next_mark` when its checkpoint was saved): the batch is settled as that run would have settled it,
        with the documents it wrote as the batch's own.

        Batches N+1 and N+2 are fingerprinted in a worker thread while batch N is looked up, decided and written
        (:func:`~es_simhash.engine.pipelining.fingerprint_pool`), and the worker goes on while a batch takes longer
        to decide. One worker, so the pure-Python fingerprinter (whose vocabulary is not thread-safe) is only ever
        used by one thread at a time. With ``workers`` > 0, that many workers fingerprint up to ``workers + 2``
        batches ahead on other cores: threads when the fingerprinter uses the native core (it releases the GIL and
        is thread-safe; ``worker_threads`` forces one kind), else processes, each with a copy of the fingerprinter.
        Fingerprints are deterministic, so the results are the same either way.

        With a backend that allows it (``overlapping_writes``: Elasticsearch), batch N is written in another
        thread while batch N+1 is looked up and decided. That lookup leaves batch N's stored versions out
        (``exclude``) and batch N+1 is compared with batch N's decided documents in memory instead, so the
        answer is the one a sequential run gives whether or not the write is visible yet. A batch's results are
        yielded once its write has finished, so a checkpoint saved after a yield only ever covers written
        documents.
        """
        workers = self.workers
        if not decide and not workers and getattr(self.fingerprinter, "engine", "python") == "native":
            # (nothing is decided meanwhile: the cores this thread leaves idle fingerprint too)
            workers = min(os.cpu_count() or 1, 4)
        pool, fingerprint, depth = fingerprint_pool(self.fingerprinter, workers, self.worker_threads)
        write_thread = (ThreadPoolExecutor(max_workers=1, thread_name_prefix="write")
                        if self.index.overlapping_writes else None)
        try:
            fingerprinted = read_ahead(batches, pool, fingerprint, depth)
            self.next_mark = None
            if not decide:
                self.held = []
                self.index.require_settings(self.fingerprinter.config)
                for docs, context, fps in fingerprinted:
                    results, held = self.decider.hold_batch(docs, fps) if docs else ([], [])
                    self.held.extend(held)
                    yield context, results
            elif write_thread is None:
                in_order = resumed
                for docs, context, fps in fingerprinted:
                    yield context, (self._process(docs, fps, in_order, mark) if docs else [])
                    in_order = in_order and not docs
            else:
                yield from self._overlapped(fingerprinted, write_thread, resumed, mark)
        finally:  # also on an interrupt or an error downstream: do not wait for batches nobody will read
            pool.shutdown(wait=True, cancel_futures=True)
            if write_thread is not None:
                write_thread.shutdown(wait=True)

    def _overlapped(self, batches, write_thread: Executor, resumed: bool = False, mark: Any = None):
        """Decide batch N+1 while batch N is written (see :meth:`process_batches`)."""
        writing: InWriting | None = None
        in_order = resumed
        for docs, context, fps in batches:
            if not docs:  # (dead letters only: nothing to look up, decide or write)
                self.next_mark = None
                if writing is not None:
                    results = writing.finish()
                    yield writing.context, results
                    writing = None
                yield context, []
                continue
            decided = self._decide_batch(docs, fps, writing.memory if writing is not None else None, in_order,
                                         mark)
            in_order = False
            self.next_mark = None if decided.mark is None else {
                "mark": decided.mark, "mine": {i: list(state) for i, state in decided.mine.items()}}
            if writing is not None:
                results = writing.finish()
                yield writing.context, results
                if writing.refused and decided.refers_to(writing.refused):  # decided against a refused document
                    self.decider.forget(decided)
                    decided = self._decide_batch(docs, fps)
            writing = InWriting(context, decided, write_thread.submit(self._store, decided) if decided.results
                             else None, self.index.max_sentence_df, self.index.lookup_keys)
        if writing is not None:
            yield writing.context, writing.finish()

    @staticmethod
    def _raise_errors(results: list[Result | DuplicateIdError | IndexingError]) -> Iterator[Result]:
        for r in results:
            if isinstance(r, Exception):
                raise r
            yield r

    def process_batch(
        self, docs: Sequence[Document], fingerprints: Sequence[Fingerprint] | None = None
    ) -> list[Result | DuplicateIdError | IndexingError]:
        """Decide and index one batch. Returns a :class:`Result` per document, or a :class:`DuplicateIdError`
        for a document whose id was already seen in this run (that document is not indexed).

        ``fingerprints`` may be computed ahead (e.g. in another thread while the previous batch is written)."""
        fps = fingerprints if fingerprints is not None else self.fingerprinter.fingerprint_many([d.text for d in docs])
        return self._process(docs, fps)

    def _process(self, docs: Sequence[Document], fps: Sequence[Fingerprint], in_order: bool = False,
                 mark: Any = None) -> list[Result | DuplicateIdError | IndexingError]:
        decided = self._decide_batch(docs, fps, in_order=in_order, mark=mark)
        return decided.stored(self._store(decided))

    # -- the collaborators' steps, as the engine takes them (one place to time or call each) -----------------
    def _decide_batch(self, docs: Sequence[Document], fps: Sequence[Fingerprint], writing: MemoryIndex | None = None,
                      in_order: bool = False, mark: Any = None) -> DecidedBatch:
        """Look up and decide one batch, nothing written (:meth:`BatchDecider.decide_batch`)."""
        self.index.require_settings(self.fingerprinter.config)
        return self.decider.decide_batch(docs, fps, writing, in_order, mark)

    def _store(self, decided: DecidedBatch) -> dict[str, str]:
        """Write and settle a decided batch; the refused ids with their reasons (:meth:`BatchWriter.store`)."""
        refused = self.writer.store(decided)
        self.far_marks.add(decided)
        return refused

    @classmethod
    def for_run(cls, index: FingerprintIndex, fingerprinter: Fingerprinter, rule: DefaultRule, *,
                recheck: bool = True, batch_size: int | None = None, workers: int = 0) -> "DedupEngine":
        """The engine of a run as ``es-simhash dedup``, ``index`` and ``migrate`` make it: with ``recheck`` (the
        recheck at the end of the run, :func:`~es_simhash.pipeline.run_dedup`), it decides on arrival with
        ``rule.on_arrival()`` (the decisions the same run with ``--no-recheck`` makes) and rechecks with ``rule``
        (``DefaultRule.for_run(K)``, i.e. ``DefaultRule.rechecked(k=K)``, for the commands); without it, with ``rule``
        (``DefaultRule.for_run(K, recheck=False)``, i.e. ``DefaultRule(k=K)``). So a script makes the engine a command
        makes with ``DedupEngine.for_run(index, fingerprinter, DefaultRule.for_run(k, recheck), recheck=recheck)``."""
        return cls(index, fingerprinter, rule.on_arrival() if recheck else rule, batch_size=batch_size,
                   workers=workers, recheck_rule=rule)

    def maintained(self) -> MaintainedIndex:
        """The :attr:`index` as a :class:`~es_simhash.index.base.MaintainedIndex`, or a :class:`TypeError`
        (:func:`~es_simhash.engine.decisions.as_maintained`)."""
        return as_maintained(self.index)

    def check(self, text: str, limit: int = 10) -> list[Decision]:
        """Near duplicates of ``text`` among indexed documents (nothing is written), the one ingest would pick
        first: decided as ingesting ``text`` would decide it (:meth:`DefaultRule.matches`), so ``check`` reports
        nothing exactly when ``process`` would make the text canonical."""
        self.index.require_settings(self.fingerprinter.config)
        fp = self.fingerprinter.fingerprint(text)
        res = self.index.lookup([Lookup("\x00check", fp)], self.rule.candidate_contract)[0]
        cap = self.index.max_sentence_df
        boilerplate = boilerplate_of(fp, res.sentence_df, cap)
        return self.rule.matches(fp, res.candidates, boilerplate)[:limit]  # (the decision ingest makes, every match)

    def explain(self, a: str | Fingerprint, b: str | Fingerprint) -> dict[str, Any]:
        """Why ``a`` is, or is not, a near duplicate of ``b`` (texts or fingerprints): the distance, what they
        share, each test of the rule in words, and the meaning guard's veto (see :meth:`DefaultRule.explain`).
        Boilerplate is not known for two texts alone: nothing counts as boilerplate."""
        fa = a if isinstance(a, Fingerprint) else self.fingerprinter.fingerprint(a)
        fb = b if isinstance(b, Fingerprint) else self.fingerprinter.fingerprint(b)
        return self.rule.explain(fa, fb)

