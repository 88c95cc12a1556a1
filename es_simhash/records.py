"""The records es-simhash passes along, in one room at the bottom of the house: a :class:`Document` (one input
record: id, text, the record's fields and where it was read), a :class:`StoredDoc` (a document as an index keeps it:
fingerprint and place in a duplicate cluster), a :class:`Decision` (what a rule found a document to duplicate) and a
:class:`Result` (what happened to one document: a line of the report); and what the fields of a crawl record mean
(where its text, id, title, URL and crawl time are found)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    from es_simhash.fingerprint.model import Fingerprint

__all__ = ["Document", "StoredDoc", "Decision", "Result", "CANONICAL", "DEFAULT_TEXT_FIELDS", "DEFAULT_ID_FIELDS",
           "MAX_ID_BYTES", "TITLE_FIELDS", "URL_FIELDS", "TIME_FIELDS", "first_field", "record_meta"]

CANONICAL = "canonical"
"""The reason of a document that is no one's duplicate (the canonical of its cluster)."""


@dataclass(slots=True)
class Document:
    """One input document: ``id``, ``text`` and ``fields`` (the record, stored alongside by backends that keep
    records). Read from a file, it also says where: ``source`` and ``line``, the original line (``raw``), the
    encoding it was decoded with and whether ``text`` is the text of HTML markup the record carried."""

    id: str
    text: str
    fields: dict[str, Any] | None = None
    source: str = ""
    line: int = 0
    raw: bytes = field(repr=False, default=b"")
    encoding: str = "utf-8"
    html_stripped: bool = False


@dataclass(slots=True)
class StoredDoc:
    """A document as the index keeps it: fingerprint plus its place in a duplicate cluster."""

    id: str
    fingerprint: Fingerprint
    cluster: str
    """Id of the canonical document of this document's cluster (its own id when canonical)."""
    duplicate_of: str | None = None
    """The document it was matched against (``None`` when canonical)."""
    distance: int | None = None
    """Hamming distance to ``duplicate_of`` (``None`` when canonical)."""
    reason: str = CANONICAL
    """``canonical``, ``exact``, ``simhash``, ``sentences`` or ``no-features``."""
    fields: dict[str, Any] | None = field(default=None, repr=False)
    """The input record, for backends that store documents (title, url, crawl time...)."""
    text: str | None = field(default=None, repr=False)
    """The document's text, for backends that store documents."""
    arrival: int = 0
    """When the document was decided, in microseconds since the epoch, and always later than every document it
    was decided against (see :func:`arrival_key`): it orders documents for the cluster rules of concurrent
    writers, updates and deletes. 0 for stored documents with no arrival recorded."""
    version: Any = field(default=None, repr=False, compare=False)
    """The backend's version of the stored document (Elasticsearch: ``(seq_no, primary_term)``), set by
    :meth:`MaintainedIndex.fetch`: a write through :meth:`MaintainedIndex.replace` succeeds only if the stored
    document is still that version."""
    final: bool = field(default=False, repr=False, compare=False)
    """Whether the stored document can no longer be written (Elasticsearch: it is in a partition with a write
    block, ``index.blocks.write``, made read-only by its user or a lifecycle policy): maintenance leaves it as it
    is, and a record with its id and other content is refused (:mod:`es_simhash.clustering.writes`)."""

    @property
    def is_canonical(self) -> bool:
        return self.duplicate_of is None


@dataclass(slots=True)
class Decision:
    """Why a document is a duplicate: of which stored document, how far, and by which rule."""

    of: StoredDoc
    distance: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape ``check`` prints: the stored document's id and cluster, the distance and the reason."""
        return {"id": self.of.id, "cluster": self.of.cluster, "distance": self.distance, "reason": self.reason}


@dataclass(slots=True)
class Result:
    """What happened to one document (one line of the ``--report`` file)."""

    id: str
    cluster: str
    duplicate: bool
    duplicate_of: str | None
    distance: int | None
    reason: str
    already_indexed: bool = False
    fingerprint: Fingerprint | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "cluster": self.cluster,
            "duplicate": self.duplicate,
            "duplicate_of": self.duplicate_of,
            "distance": self.distance,
            "reason": self.reason,
        }

    @classmethod
    def from_stored(cls, doc: StoredDoc, already_indexed: bool = False) -> "Result":
        return cls(
            id=doc.id,
            cluster=doc.cluster,
            duplicate=not doc.is_canonical,
            duplicate_of=doc.duplicate_of,
            distance=doc.distance,
            reason=doc.reason,
            already_indexed=already_indexed,
            fingerprint=doc.fingerprint,
        )


DEFAULT_TEXT_FIELDS: tuple[str, ...] = ("content", "text", "body")
DEFAULT_ID_FIELDS: tuple[str, ...] = ("id", "_id", "doc_id", "url")
MAX_ID_BYTES = 512  # Elasticsearch's limit for _id
TITLE_FIELDS: tuple[str, ...] = ("title", "headline")
URL_FIELDS: tuple[str, ...] = ("url", "link", "uri")
TIME_FIELDS: tuple[str, ...] = ("crawl_time", "crawled_at", "fetch_time", "fetched_at", "timestamp", "date",
                                "published_at")


def first_field(record: dict[str, Any] | None, names: Sequence[str]) -> Any:
    """The value of the first of ``names`` that ``record`` holds and that is neither ``None`` nor empty."""
    if not record:
        return None
    for n in names:
        v = record.get(n)
        if v not in (None, ""):
            return v
    return None


def record_meta(record: dict[str, Any] | None) -> tuple[Any, Any, Any]:
    """``(title, url, crawl time)`` of a crawl record, each from the first of its usual field names
    (:data:`TITLE_FIELDS`, :data:`URL_FIELDS`, :data:`TIME_FIELDS`) the record holds, else ``None``: what the
    Elasticsearch index stores as ``title``, ``url`` and ``crawl_time`` and the report shows."""
    return first_field(record, TITLE_FIELDS), first_field(record, URL_FIELDS), first_field(record, TIME_FIELDS)
