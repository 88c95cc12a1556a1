"""The index as es-simhash lays it out: the shipped template, the fields lookups read, what maintenance leaves out, the
fields an existing index may lack."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

LOOKUP_FIELDS = [  # read from doc values by lookups, never from _source (which holds the text)
    "doc_id",  # the hit's id: with no stored field read (not even _id), no compressed block of _source is opened
    "simhash",
    "content_hash",
    "sentences",
    "n_features",
    "n_chars",
    "short",
    "fingerprint_version",
    "word_bag",
    "number_bag",
    "fuzzy_digests",
    "date_bag",
    "place_bag",
    "dup_cluster",
    "dup_of",
    "dup_distance",
    "dup_reason",
    "arrival",
]
MSEARCH_FILTER = (
    "responses.hits.hits._id,responses.hits.hits._index,responses.hits.hits._seq_no,responses.hits.hits.fields,"
    "responses.hits.hits.sort,"
    "responses.aggregations,responses.error,responses.status"
)


def written_above(seq: int, partition: str | None = None) -> dict[str, Any]:
    """The query of the documents written or rewritten above sequence number ``seq`` (their ``_seq_no``); of
    ``partition`` only, when named (sequence numbers are per shard: those of two partitions cannot be compared)."""
    above: dict[str, Any] = {"range": {"_seq_no": {"gt": seq}}}
    return above if partition is None else {"bool": {"filter": [{"term": {"_index": partition}}, above]}}


def index_template() -> dict[str, Any]:
    """The index template shipped in ``templates/index-template.json`` (a fresh copy)."""
    data = resources.files("es_simhash").joinpath("templates").joinpath("index-template.json").read_text(encoding="utf-8")
    template = json.loads(data)
    template.pop("_comment", None)
    return template


PAYLOAD = ("content", "record")
"""What maintenance reads only to write a document back."""
ADDED_FIELDS = ("arrival", "title_folded", "content_folded", "number_bag", "fuzzy_digests", "date_bag",
                "place_bag")
"""Mapped fields an existing index may lack (``ensure_index`` adds them)."""
