"""The dedup engine: fingerprints, candidate lookups, duplicate decisions and cluster assignment.

It talks to any :class:`~es_simhash.index.base.SegmentIndex` (the embedded :class:`MemoryIndex` or
Elasticsearch) and never knows which. Documents flow through in batches: one bulk lookup per batch against the
backend, then each document is decided in input order against the backend's candidates *and* the documents
already decided in the same batch (so duplicates inside one batch are caught), then the batch is written.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Collection, Iterable, Iterator, Mapping, Sequence, TypeVar, cast

from es_simhash.decide.default import DefaultRule
from es_simhash.decide.rule import NO_FEATURES, Decision, DecisionRule, has_sketch
from es_simhash.engine.documents import Document, Result
from es_simhash.errors import DuplicateIdError, IndexingError
from es_simhash.fingerprint.fingerprinter import Fingerprinter
from es_simhash.fingerprint.model import Fingerprint
from es_simhash.index.base import CANONICAL, Lookup, MaintainedIndex, SegmentIndex, StoredDoc, without_payload, written_state
from es_simhash.lookup.candidates import boilerplate_of, found_by_lookup
from es_simhash.index.memory import MemoryIndex

__all__ = ["Document", "Decision", "Result", "DecisionRule", "DefaultRule", "DedupEngine", "NO_FEATURES", "has_sketch",
           "DuplicateIdError", "IndexingError"]

log = logging.getLogger(__name__)

T = TypeVar("T")
_MAX_WRITE_ATTEMPTS = 20  # conditional writes of one batch that keep meeting other versions before giving up


_WORKER_FINGERPRINTER: Fingerprinter | None = None


def _start_fingerprint_worker(fingerprinter: Fingerprinter) -> None:
    global _WORKER_FINGERPRINTER
    _WORKER_FINGERPRINTER = fingerprinter


def _fingerprint_in_worker(texts: Sequence[str]) -> list[Fingerprint]:
    assert _WORKER_FINGERPRINTER is not None
    return _WORKER_FINGERPRINTER.fingerprint_many(texts)


def _boilerplate(fp: Fingerprint, counts: Sequence[Mapping[int, int]], cap: int) -> tuple[frozenset[int], bool]:
    """The hashes of ``fp`` held by more than ``cap`` documents in all ``counts`` together (each a part's
    document frequencies: the index's lookup, the batch being written, this batch's earlier documents), and
    whether a part under ``cap`` on its own held one of them: that part's lookup then brought candidates through a
    hash one lookup over all the documents would have left out (:meth:`DedupEngine._found_by_lookup`)."""
    out: list[int] = []
    split = False
    if len(counts) == 2:  # (the index and this batch: the common case, written out)
        index, batch = counts
        for h in fp.sentences:
            x, y = index.get(h, 0), batch.get(h, 0)
            if x + y > cap:
                out.append(h)
                split = split or 0 < x <= cap or 0 < y <= cap
        return frozenset(out), split
    for h in fp.sentences:
        n = [c.get(h, 0) for c in counts]
        if sum(n) > cap:
            out.append(h)
            split = split or any(0 < x <= cap for x in n)
    return frozenset(out), split


def _mine(decided: "_Decided", being: Sequence[StoredDoc], mark: dict[str, Any] | None
          ) -> dict[str, tuple[int, str, str | None]]:
    """What this writer writes in a decided batch, or was writing when its mark was taken (``being``), as written;
    for the batch of a resumed run (``decided.resumed``), also what the interrupted run was writing then (``mark``)
    and what it wrote of this batch (found indexed)."""
    mine = {d.id: written_state(d) for d in [*being, *decided.to_store]}
    if not decided.resumed or mark is None:
        return mine
    return {**{i: (a, c, o) for i, (a, c, o) in mark["mine"].items()},
            **{d.id: written_state(d) for d in decided.found}, **mine}


def _same(a: Fingerprint, b: Fingerprint) -> bool:
    """Same fingerprint (the order of sentence hashes does not matter: backends may store them as a set)."""
    return a == b or (
        (a.simhash, a.content_hash, a.n_features, a.n_chars, a.short, a.version, a.word_bag)
        == (b.simhash, b.content_hash, b.n_features, b.n_chars, b.short, b.version, b.word_bag)
        and sorted(a.sentences) == sorted(b.sentences)
    )


@dataclass
class _Decided:
    """One batch looked up and decided, not yet written."""

    results: list[Result | DuplicateIdError | IndexingError] = field(default_factory=list)
    to_store: list[StoredDoc] = field(default_factory=list)
    new_ids: list[str] = field(default_factory=list)
    """Ids this batch marked as seen."""
    departed: list[StoredDoc] = field(default_factory=list)
    """Stored versions of documents this batch re-indexes with other content (their clusters are decided again)."""
    found: list[StoredDoc] = field(default_factory=list)
    """Documents of this batch found already indexed with the same content (settled again after a kill)."""
    resumed: bool = False
    """The batch an interrupted run was writing, decided with the mark that run took (``mark``): its documents
    found indexed were written by that run after the mark, and are settled as this batch's own writes."""
    mark: Any = None
    """The index's visible mark taken before this batch's lookup (backends with ``shared_writers``)."""
    apart: list[str] = field(default_factory=list)
    """Canonicals that one of their candidates alone would have made duplicates: kept apart by what the rule
    looks at over all candidates (a template's holders) or by boilerplate; settling decides one again if a
    candidate is gone by then (deleted: nothing else would tell)."""
    mine: dict[str, tuple[int, str, str | None]] = field(default_factory=dict)
    """What this engine writes in this batch, or was writing when the mark was taken: id -> (arrival, cluster,
    duplicate_of) as written. A document written since the mark in any other state is another writer's (or a
    rewrite), whatever its id."""
    candidates: dict[str, dict[str, int]] = field(default_factory=dict)
    """Each document's candidates when it was decided (id -> arrival; backends with ``shared_writers``): settling
    decides a document again when one of them was rewritten meanwhile, or when its match is gone or is another
    version by the time it is written."""

    def stored(self, refused: dict[str, str]) -> list[Result | DuplicateIdError | IndexingError]:
        """The results once written: documents the backend refused become :class:`IndexingError`."""
        if not refused:
            return self.results
        return [IndexingError(f"refused by the index: {refused[r.id]}")
                if isinstance(r, Result) and r.id in refused and not r.already_indexed else r
                for r in self.results]

    def refers_to(self, ids: dict[str, str]) -> bool:
        return any(d.cluster in ids or d.duplicate_of in ids for d in self.to_store)

    def forget(self, seen: dict[str, None]) -> None:
        for doc_id in self.new_ids:
            seen.pop(doc_id, None)


class _Write:
    """A batch being written in another thread, with its documents in memory for the next batch's decisions."""

    def __init__(self, context, decided: _Decided, future: Future | None, max_sentence_df: int, lookup_keys) -> None:
        self.context, self.decided, self.future = context, decided, future
        self.memory = MemoryIndex(max_sentence_df, lookup_keys)
        self.memory.add(decided.to_store)
        self.refused: dict[str, str] = {}

    def finish(self) -> list[Result | DuplicateIdError | IndexingError]:
        self.refused = self.future.result() if self.future is not None else {}
        return self.decided.stored(self.refused)


class DedupEngine:
    """Finds near duplicates on ingest and assigns each document to a duplicate cluster.

    >>> engine = DedupEngine()                      # embedded: in-memory index
    >>> [r.reason for r in engine.process([Document("a", "x" * 200), Document("b", "x" * 200)])]
    ['canonical', 'exact']
    """

    def __init__(
        self,
        index: SegmentIndex | None = None,
        fingerprinter: Fingerprinter | None = None,
        rule: DecisionRule | None = None,
        batch_size: int = 500,
        workers: int = 0,
        worker_threads: bool | None = None,
    ) -> None:
        if workers < 0:
            raise ValueError("workers >= 0")
        self.worker_threads = worker_threads
        self.index: SegmentIndex = MemoryIndex() if index is None else index
        self.fingerprinter = fingerprinter or Fingerprinter()
        self.rule: DecisionRule = rule or DefaultRule()
        self.batch_size = batch_size
        self.workers = workers
        self._seen: dict[str, None] = {}
        self._last_arrival = 0
        self.next_mark: dict[str, Any] | None = None
        """When :meth:`process_batches` yields a batch's results: what the next batch was decided with, if it is
        decided already (None otherwise; JSON): the index's visible mark, and the written state of each document
        this writer was writing or about to write then (``{"mark": ..., "mine": {id: [arrival, cluster,
        duplicate_of]}}``). A checkpoint saved then keeps it for a resumed run (``process_batches(resumed=True,
        mark=...)``), whose first batch is that next batch."""

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
        self, batches: Iterable[tuple[Sequence[Document], T]], resumed: bool = False, mark: Any = None
    ) -> Iterator[tuple[T, list[Result | DuplicateIdError | IndexingError]]]:
        """:meth:`process_batch` over ``(documents, context)`` pairs, yielding ``(context, results)`` in order.

        ``resumed``: the first batch is the one an interrupted run of the same input was writing when it stopped
        (:func:`~es_simhash.pipeline.run_dedup` resuming from a checkpoint cuts it so): the documents of it found
        already indexed were written by that run, so each other document of it is decided as that run would have
        decided it, against the ones before it in the batch and not the ones after it (the clusters are those of
        a run that was never interrupted). ``mark``: the visible mark that run decided the batch with
        (:attr:`next_mark` when its checkpoint was saved): the batch is settled as that run would have settled it,
        with the documents it wrote as the batch's own.

        Batches N+1 and N+2 are fingerprinted in a worker thread while batch N is looked up, decided and written:
        the CPU work of fingerprinting overlaps deciding and the wait on the index, and the worker goes on while a
        batch takes longer to decide (the first one imports numpy; two batches ahead measured ~10% faster than
        one on bench/cli.py's whole dedup, 15 alternated runs). One worker, so the pure-Python fingerprinter (whose
        vocabulary is not thread-safe) is only ever used by one thread at a time. With ``workers`` > 0, that many
        workers fingerprint up to ``workers + 2`` batches ahead on other cores: threads when the fingerprinter uses the
        native core (it releases the GIL and is thread-safe; ``worker_threads`` forces one kind), else
        *processes*, each with a copy of the fingerprinter (the Python engine holds the GIL); fingerprints are
        deterministic, so the results are the same.

        With a backend that allows it (``overlapping_writes``: Elasticsearch), batch N is written in another
        thread while batch N+1 is looked up and decided. That lookup leaves batch N's stored versions out
        (``exclude``) and batch N+1 is compared with batch N's decided documents in memory instead, so the
        answer is the one a sequential run gives whether or not the write is visible yet. A batch's results are
        yielded once its write has finished, so a checkpoint saved after a yield only ever covers written
        documents.
        """
        pool: Executor
        threads = self.worker_threads
        if threads is None:  # the native core releases the GIL while it works: threads, no process start-up
            threads = getattr(self.fingerprinter, "engine", "python") == "native"
        if self.workers and threads:
            pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="fingerprint")
            fingerprint, depth = self.fingerprinter.fingerprint_many, self.workers + 2
        elif self.workers:
            import multiprocessing  # (only here: worker processes are for the pure-Python engine)
            from concurrent.futures import ProcessPoolExecutor

            pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                       initializer=_start_fingerprint_worker, initargs=(self.fingerprinter,))
            fingerprint, depth = _fingerprint_in_worker, self.workers + 2
        else:
            pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fingerprint")
            fingerprint, depth = self.fingerprinter.fingerprint_many, 2
        writer = (ThreadPoolExecutor(max_workers=1, thread_name_prefix="write")
                  if self.index.overlapping_writes else None)
        try:
            ahead: deque[tuple[Sequence[Document], T, Future | None]] = deque()
            it = iter(batches)

            def submit() -> None:  # read the next batch (if any) and start fingerprinting it
                for docs, context in it:
                    texts = [d.text for d in docs]
                    ahead.append((docs, context, pool.submit(fingerprint, texts) if texts else None))
                    return

            def fingerprinted() -> Iterator[tuple[Sequence[Document], T, Sequence[Fingerprint]]]:
                for _ in range(depth):
                    submit()
                while ahead:
                    docs, context, future = ahead.popleft()
                    submit()
                    yield docs, context, (future.result() if future is not None else [])

            self.next_mark = None
            if writer is None:
                in_order = resumed
                for docs, context, fps in fingerprinted():
                    yield context, (self._process(docs, fps, in_order, mark) if docs else [])
                    in_order = in_order and not docs
            else:
                yield from self._overlapped(fingerprinted(), writer, resumed, mark)
        finally:  # also on an interrupt or an error downstream: do not wait for batches nobody will read
            pool.shutdown(wait=True, cancel_futures=True)
            if writer is not None:
                writer.shutdown(wait=True)

    def _overlapped(self, batches, writer: Executor, resumed: bool = False, mark: Any = None):
        """Decide batch N+1 while batch N is written (see :meth:`process_batches`)."""
        writing: _Write | None = None
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
                    decided.forget(self._seen)
                    decided = self._decide_batch(docs, fps)
            writing = _Write(context, decided, writer.submit(self._store, decided) if decided.results
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

    def _store(self, decided: "_Decided") -> dict[str, str]:
        """Write a decided batch (:meth:`_write`), then settle it (:meth:`_settle`). Returns the refused ids with
        their reasons; the results of documents that settling moved to another cluster are updated."""
        refused = self._write(decided)
        self._settle(decided, refused)
        return refused

    def _write(self, decided: "_Decided") -> dict[str, str]:
        """Write a decided batch; returns the ids the backend refused, with their reasons.

        With other writers (``shared_writers``) each document is written only over the version it replaces:
        created if no document has its id, else over the stored version found, which becomes one of
        ``decided.departed`` (its cluster is decided again without it when the batch is settled). A version that
        another writer wrote or rewrote meanwhile (a page two crawlers index at once, each with its own content;
        or a re-indexed document merged by another writer's settling) is found by the conflict, fetched, and
        written over in turn: nothing is overwritten unseen, and the content written last stays. A version another
        writer wrote with the same content (two crawlers indexing one input) is left as it is: the document counts
        as found already indexed (its result, and settling, take that version)."""
        if not decided.to_store:
            return {}
        if not self.index.shared_writers:
            return self.index.add(decided.to_store)
        index = self.maintained()
        ours = {d.id: d for d in decided.to_store}
        # a re-indexed document's stored version, read now: its write then usually goes through at the first try
        departed = index.fetch([d.id for d in decided.departed], whole=False) if decided.departed else {}
        refused: dict[str, str] = {}
        theirs: dict[str, StoredDoc] = {}  # the same content, written by another writer meanwhile
        todo = [replace(d, version=departed[d.id].version if d.id in departed else None) for d in decided.to_store]
        for _ in range(_MAX_WRITE_ATTEMPTS):
            if not todo:
                break
            more_refused, conflicts = index.add_conditional(todo)
            refused.update(more_refused)
            for doc_id in more_refused:  # (not written: the version found stays where it is)
                departed.pop(doc_id, None)
            if not conflicts:
                break
            current = index.fetch(conflicts, whole=False)
            todo = []
            for doc_id in conflicts:
                stored, mine = current.get(doc_id), ours[doc_id]
                if stored is None:  # (deleted meanwhile: whoever deleted it decided its cluster again)
                    departed.pop(doc_id, None)
                    todo.append(replace(mine, version=None))
                elif (stored.arrival, stored.fingerprint.content_hash) == (mine.arrival, mine.fingerprint.content_hash):
                    pass  # (this very write, landed by a retried request)
                elif _same(stored.fingerprint, mine.fingerprint):
                    departed.pop(doc_id, None)
                    theirs[doc_id] = stored
                else:
                    departed[doc_id] = stored
                    todo.append(replace(mine, version=stored.version))
        else:
            from es_simhash.errors import MaintenanceError

            decided.departed = list(departed.values())
            raise MaintenanceError(f"{len(todo)} documents kept changing while being written; run again")
        decided.departed = list(departed.values())
        if theirs:
            decided.to_store = [d for d in decided.to_store if d.id not in theirs]
            decided.found.extend(theirs.values())
            decided.results = [Result.from_stored(theirs[r.id], already_indexed=True)
                               if isinstance(r, Result) and r.id in theirs else r for r in decided.results]
        return refused

    def _settle(self, decided: "_Decided", refused: dict[str, str]) -> None:
        """Settle a written batch (:func:`es_simhash.cluster.settle`) when other processes may write into the
        index too, or when it re-indexes documents with other content."""
        shared = self.index.shared_writers
        if shared or decided.departed:
            from es_simhash.cluster.settle import settle

            if shared:
                docs = [d for d in decided.to_store if d.id not in refused]
                if decided.resumed:
                    docs += decided.found
            else:  # (a re-indexed document may now duplicate an older one)
                gone = {d.id for d in decided.departed}
                docs = [d for d in decided.to_store if d.id in gone]
            latest = settle(self.maintained(), self.rule, docs, decided.departed, since=decided.mark, mine=decided.mine,
                                        found=decided.found if shared and not decided.resumed else (),
                                        candidates=decided.candidates if shared else {},
                                        apart=decided.apart if shared else ()).latest()
            if latest:
                decided.results = [Result.from_stored(latest[r.id], r.already_indexed)
                                   if isinstance(r, Result) and r.id in latest else r for r in decided.results]

    def _decide_batch(self, docs: Sequence[Document], fps: Sequence[Fingerprint],
                      writing: MemoryIndex | None = None, in_order: bool = False, mark: Any = None) -> "_Decided":
        """Look up and decide one batch (nothing is written). ``writing``: the documents of the batch still being
        written, in memory; the backend's stored versions of them are left out of the lookup. ``in_order``: the
        documents of the batch found already indexed are decided around as members of the batch at their places,
        and with ``mark`` settled as the batch's own (see :meth:`process_batches`' ``resumed``)."""
        queries = [Lookup(d.id, fp) for d, fp in zip(docs, fps)]
        d_max = self.rule.candidate_distance
        decided = _Decided()
        being = writing.docs() if writing is not None else []  # (the batch before, being written)
        being_written = [doc.id for doc in being]
        if self.index.shared_writers:  # what is visible now: settling looks at what came after
            decided.resumed = in_order and mark is not None
            decided.mark = mark["mark"] if decided.resumed else self.maintained().visible_mark()
        if writing is not None:
            found = self.index.lookup(queries, d_max, exclude=being_written)
            in_writing = writing.lookup(queries, d_max)
        else:
            found = self.index.lookup(queries, d_max)
            in_writing = None
        results: list[Result | DuplicateIdError | IndexingError | None] = [None] * len(docs)
        todo: list[int] = []  # the documents this batch decides, in input order
        for i, (doc, fp, res) in enumerate(zip(docs, fps, found)):
            if doc.id in self._seen:
                results[i] = DuplicateIdError(f"duplicate id {doc.id!r}: already seen earlier in this input")
                continue
            self._seen[doc.id] = None
            decided.new_ids.append(doc.id)
            if res.existing is not None and _same(res.existing.fingerprint, fp):
                results[i] = Result.from_stored(res.existing, already_indexed=True)
                decided.found.append(res.existing)
                continue
            if res.existing is not None:  # re-indexed with other content: its former cluster is decided again
                decided.departed.append(res.existing)
            todo.append(i)
        try:
            # Each document is decided against the index and the documents this batch decided before it: one
            # lookup in an index of the batch, where each sees only the documents before it (their candidates and
            # sentence counts)
            batch_decided: dict[str, StoredDoc] = {}  # the documents this batch decided so far
            members = todo
            if in_order and todo and decided.found:  # (looked up again without them: they are batch members)
                placed = {d.id: without_payload(d) for d in decided.found}
                found = self.index.lookup(queries, d_max, exclude=[*being_written, *placed])
                batch_decided.update(placed)
                members = sorted(todo + [i for i, r in enumerate(results) if isinstance(r, Result)])
            batch = MemoryIndex(self.index.max_sentence_df, self.index.lookup_keys)
            batch.add([batch_decided.get(docs[i].id) or StoredDoc(docs[i].id, fps[i], docs[i].id) for i in members])
            place = {i: n for n, i in enumerate(members)}
            earlier = batch.lookup([queries[i] for i in todo], d_max, before=[place[i] for i in todo])
            cap = self.index.max_sentence_df
            for i, before in zip(todo, earlier):
                doc, fp, res = docs[i], fps[i], found[i]
                # never a duplicate of a document decided relative to this one (possible after an interrupted write)
                candidates = [c for c in res.candidates
                              if c.id not in batch_decided and c.cluster != doc.id and c.duplicate_of != doc.id]
                counts = [res.sentence_df, before.sentence_df]
                if in_writing is not None:
                    other = in_writing[i]
                    candidates += [c for c in other.candidates if c.id not in batch_decided
                                   and c.cluster != doc.id and c.duplicate_of != doc.id]
                    counts.append(other.sentence_df)
                candidates += [batch_decided[c.id] for c in before.candidates]
                boilerplate, split = _boilerplate(fp, counts, cap)
                if split:  # a part under the bound brought candidates through a hash that is over it in all parts
                    candidates = self._found_by_lookup(fp, candidates, boilerplate)
                stored = self._decide(doc, fp, candidates, boilerplate)
                if decided.mark is not None and candidates:
                    decided.candidates[doc.id] = {c.id: c.arrival for c in candidates}
                    if stored.duplicate_of is None and any(self.rule.decide(fp, [c]) is not None for c in candidates):
                        decided.apart.append(doc.id)
                batch_decided[doc.id] = without_payload(stored)  # (as an index keeps it: no text, no record)
                decided.to_store.append(stored)
                results[i] = Result.from_stored(stored)
        except BaseException:  # (a rule that raised, Ctrl-C: nothing of this batch was decided, so nothing seen)
            decided.forget(self._seen)
            raise
        decided.results = cast("list[Result | DuplicateIdError | IndexingError]", results)  # (every slot is filled)
        if decided.mark is not None:
            decided.mine = _mine(decided, being, mark)
        return decided

    def _found_by_lookup(self, fp: Fingerprint, candidates: list[StoredDoc], boilerplate: Collection[int]
                         ) -> list[StoredDoc]:
        """The candidates one lookup against all of them would have returned (:func:`found_by_lookup`): a hash can
        be under the boilerplate bound in each part a lookup was split into, and over it in all of them together."""
        return found_by_lookup(fp, candidates, boilerplate, self.index.lookup_keys, self.rule.candidate_distance)

    def check(self, text: str, limit: int = 10) -> list[Decision]:
        """Near duplicates of ``text`` among indexed documents (nothing is written), the one ingest would pick
        first: decided as ingesting ``text`` would decide it (:meth:`DefaultRule.matches`), so ``check`` reports
        nothing exactly when ``process`` would make the text canonical."""
        fp = self.fingerprinter.fingerprint(text)
        res = self.index.lookup([Lookup("\x00check", fp)], self.rule.candidate_distance)[0]
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

    # -- internals -----------------------------------------------------------------------------------------
    def maintained(self) -> MaintainedIndex:
        """The backend as a :class:`~es_simhash.index.base.MaintainedIndex`: one that shares writers, or that a
        batch re-indexes a document of with other content (settled after its write), must be one."""
        if not isinstance(self.index, MaintainedIndex):
            raise TypeError(f"{type(self.index).__name__} is not a MaintainedIndex: it can neither share writers nor "
                            "take a document re-indexed with other content")
        return self.index

    def _arrival(self, candidates: Sequence[StoredDoc]) -> int:
        """Now (microseconds), but later than every candidate and every document this engine decided before: a
        document always arrives after what it was decided against, even across machines whose clocks differ."""
        now = max(time.time_ns() // 1000, self._last_arrival + 1)
        for c in candidates:
            if c.arrival >= now:
                now = c.arrival + 1
        self._last_arrival = now
        return now

    def _decide(
        self, doc: Document, fp: Fingerprint, candidates: Sequence[StoredDoc], boilerplate: frozenset[int]
    ) -> StoredDoc:
        decision = self.rule.decide(fp, candidates, boilerplate)
        arrival = self._arrival(candidates)
        if decision is None:
            reason = NO_FEATURES if fp.empty else CANONICAL
            return StoredDoc(doc.id, fp, cluster=doc.id, reason=reason, fields=doc.fields, text=doc.text,
                             arrival=arrival)
        return StoredDoc(
            doc.id,
            fp,
            cluster=decision.of.cluster,
            duplicate_of=decision.of.id,
            distance=decision.distance,
            reason=decision.reason,
            fields=doc.fields,
            text=doc.text,
            arrival=arrival,
        )
