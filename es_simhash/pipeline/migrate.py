"""Migration to a new fingerprint version: every document stored in an Elasticsearch index indexed again
through a new engine, from its stored text, the earliest first (:func:`migrate`), as a resumable run."""

from __future__ import annotations

from typing import Iterator

from es_simhash.defaults import DEAD_LETTERS
from es_simhash.files.sources import DeadLetter
from es_simhash.records import Document
from es_simhash.pipeline.source import RecordSource


class _StoredRecords:
    """A record reader (as :func:`es_simhash.pipeline.run_dedup` takes) over the documents stored in an index:
    each is one "line" of the input named after the index, in the order they arrived; ``bytes_read`` counts
    documents (for progress)."""

    def __init__(self, source) -> None:
        self.source = source
        self.bytes_read = 0

    def read_one(self, path: str, skip_lines: int = 0) -> Iterator[Document | DeadLetter]:

        for n, (doc_id, text, record) in enumerate(self.source.records(), 1):
            self.bytes_read = n
            if n <= skip_lines:
                continue
            if not isinstance(text, str) or not text:
                yield DeadLetter(path, n, "no stored text to fingerprint again", doc_id)
            else:
                yield Document(doc_id, text, record, path, n)


def migrate(source, engine, *, dead_letters: str = DEAD_LETTERS, checkpoint=None, report=None,
            on_progress=None, start=None, stop=None, recheck: bool = False, on_recheck=None):
    """Index every document stored in ``source`` (an :class:`~es_simhash.index.elastic.ElasticIndex`) again
    through ``engine`` (whose index is the new one), from its stored text and record, the earliest first: each is
    fingerprinted with the engine's fingerprinter and decided afresh (so clusters follow the new fingerprint).
    Client-side (no reindex module needed). A document without stored text is a dead letter (its "line" is its
    position in arrival order). With a ``checkpoint`` (inputs: ``[migration_input(source)]``) an interrupted
    migration goes on where it stopped. ``start`` and ``stop``: as :func:`~es_simhash.pipeline.run_dedup` takes
    them (create the new index before the first document; stop after a batch), and so are ``recheck`` and
    ``on_recheck`` (the decisions taken again at the end). Returns the :class:`~es_simhash.pipeline.Summary`."""
    from es_simhash.pipeline.run import run_dedup

    return run_dedup([migration_input(source)], engine, _StoredRecords(source), report=report,
                     dead_letters=dead_letters, on_progress=on_progress, checkpoint=checkpoint, start=start,
                     stop=stop, recheck=recheck, on_recheck=on_recheck)


def migration_input(source) -> str:
    """The name a migration gives its input (in dead letters, reports and checkpoints); ``source``: the index, or
    its name."""
    return f"index:{source if isinstance(source, str) else source.index}"


def migration_reader(source) -> RecordSource:
    """The record reader of a migration from ``source`` (an index's documents as the "lines" of
    :func:`migration_input`), for :func:`~es_simhash.pipeline.run_dedup` or
    :func:`~es_simhash.pipeline.run_checkpointed`."""
    return _StoredRecords(source)
