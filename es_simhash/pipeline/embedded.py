"""An embedded run (what ``es-simhash dedup`` makes, no server): :func:`dedup_files` runs the inputs through an
engine over a :class:`~es_simhash.index.memory.MemoryIndex` (:meth:`~es_simhash.index.memory.MemoryIndex.open`
makes one or reads a saved one) and writes the outputs only when the run ends well; :func:`dedup_documents` makes
the same run of documents held in memory and returns their final clusters (what ``evaluate`` scores)."""

from __future__ import annotations

import os
from contextlib import AbstractContextManager, ExitStack
from typing import Any, Callable, Iterator, Sequence

from es_simhash.defaults import DEAD_LETTERS
from es_simhash.engine.dedup_engine import DedupEngine
from es_simhash.index.memory import MemoryIndex
from es_simhash.pipeline.checkpointed import NothingDecided
from es_simhash.pipeline.run import run_dedup
from es_simhash.pipeline.source import RecordSource
from es_simhash.pipeline.summary import Summary
from es_simhash.records import Document

__all__ = ["dedup_files", "dedup_documents"]


def dedup_files(
    inputs: Sequence[str],
    engine: DedupEngine,
    reader: RecordSource,
    *,
    report: str | os.PathLike[str] | None = None,
    output: str | os.PathLike[str] | None = None,
    dead_letters: str | os.PathLike[str] = DEAD_LETTERS,
    save_index: str | os.PathLike[str] | None = None,
    recheck: bool = False,
    on_progress: Callable[[int, Summary], None] | None = None,
    on_recheck: Callable[[int, int], None] | None = None,
    display: AbstractContextManager[Any] | None = None,
) -> Summary:
    """:func:`~es_simhash.pipeline.run_dedup` of ``inputs`` through ``engine`` (whose index is a
    :class:`MemoryIndex`), with ``report`` and ``output`` written beside their paths and put in place only when
    the run ends well (an error or an interrupt leaves earlier files as they were), and the index saved to
    ``save_index`` at the end. ``display`` (a progress bar) is entered once the outputs are open. Raises
    :class:`NothingDecided` (nothing written) when no record could be decided; the other arguments are
    :func:`run_dedup`'s."""
    from es_simhash.files.outputs import AtomicFile

    with ExitStack() as stack:
        rep = stack.enter_context(AtomicFile(report)) if report else None
        out = stack.enter_context(AtomicFile(output, binary=True)) if output else None
        if display is not None:
            stack.enter_context(display)
        summary = run_dedup(inputs, engine, reader, report=rep, output=out, dead_letters=dead_letters,
                            on_progress=on_progress, recheck=recheck, on_recheck=on_recheck, as_set=True)
        if summary.undecided is not None:
            raise NothingDecided(summary)
        if save_index is not None:
            index = engine.index
            if not isinstance(index, MemoryIndex):
                raise TypeError(f"save_index: the engine's index is a {type(index).__name__}, not a MemoryIndex")
            index.save(save_index)
    return summary


class _Held:
    """Documents held in memory, read as the one input of a run (a :class:`RecordSource`)."""

    def __init__(self, docs: Sequence[Document]) -> None:
        self.docs = docs
        self.bytes_read = 0

    def read_one(self, path: str, skip_lines: int = 0) -> Iterator[Document]:
        for n, doc in enumerate(self.docs[skip_lines:], skip_lines + 1):
            self.bytes_read = n
            yield Document(doc.id, doc.text, doc.fields, path, n, doc.raw, doc.encoding, doc.html_stripped)


def dedup_documents(docs: Sequence[Document], engine: DedupEngine, *, recheck: bool = False) -> dict[str, str]:
    """The final cluster of each of ``docs`` (its canonical document's id), in a run of them in this order through
    ``engine`` (whose index is a :class:`MemoryIndex`): :func:`~es_simhash.pipeline.run_dedup`, as
    :func:`dedup_files` runs it (``recheck``: and the recheck at its end), with nothing written. Ids must be
    distinct (``ValueError`` otherwise: a run keeps the first record of an id and makes the others dead letters)."""
    if len({d.id for d in docs}) != len(docs):
        raise ValueError("dedup_documents: two documents with one id")
    index = engine.index
    if not isinstance(index, MemoryIndex):
        raise TypeError(f"dedup_documents: the engine's index is a {type(index).__name__}, not a MemoryIndex")
    run_dedup(["documents"], engine, _Held(docs), dead_letters=os.devnull, recheck=recheck, as_set=True)
    return {i: d.cluster for i, d in index.fetch([d.id for d in docs]).items()}
