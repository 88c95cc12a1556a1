"""What goes into the engine and what comes out: a :class:`Document` (id, text, record) and its :class:`Result`
(its cluster, what it duplicates, how far, why)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from es_simhash.fingerprint.model import Fingerprint
from es_simhash.index.base import StoredDoc

__all__ = ["Document", "Result"]


@dataclass(slots=True)
class Document:
    """One input document. ``fields`` are stored alongside by backends that keep records (Elasticsearch)."""

    id: str
    text: str
    fields: dict[str, Any] | None = None


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
