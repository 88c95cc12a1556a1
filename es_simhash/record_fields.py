"""What the fields of a crawl record mean to es-simhash: where its text, id, title, URL and crawl time are found.

Shared by the input reader (:mod:`es_simhash.files.sources`) and what stores or shows records (the Elasticsearch
codec, the report), so that storage never imports the input reader.
"""

from __future__ import annotations

from typing import Any, Sequence

__all__ = ["DEFAULT_TEXT_FIELDS", "DEFAULT_ID_FIELDS", "MAX_ID_BYTES", "TITLE_FIELDS", "URL_FIELDS", "TIME_FIELDS",
           "first_field", "record_meta"]

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
