"""What a run reads records with (:class:`RecordSource`): the input files' reader, or a reader of records from
elsewhere."""

from __future__ import annotations

from typing import Iterator, Protocol

from es_simhash.files.sources import DeadLetter
from es_simhash.records import Document


class RecordSource(Protocol):
    """What :func:`run_dedup` reads records with: a :class:`~es_simhash.files.sources.RecordReader`, or any reader of
    records from elsewhere (:func:`~es_simhash.pipeline.migrate.migrate` reads the documents stored in an index)."""

    @property
    def bytes_read(self) -> int:
        """Progress so far (bytes for files; any growing count)."""
        ...

    def read_one(self, path: str, skip_lines: int = 0) -> Iterator[Document | DeadLetter]:
        """The records and dead letters of one input, after its first ``skip_lines`` lines."""
        ...
