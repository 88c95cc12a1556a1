"""Documents to and from Elasticsearch: a :class:`~es_simhash.index.base.StoredDoc` as the ``_source`` written, hits
read back (doc values in bulk for lookups, ``_source`` for maintenance)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Collection, Sequence

import numpy as np

from es_simhash.fingerprint.fold import fold_text
from es_simhash.fingerprint.model import Fingerprint, hex64
from es_simhash.records import record_meta, StoredDoc
from es_simhash.lookup import hamming


def to_source(doc: StoredDoc, now: str, lookup_keys: list[str] | None = None) -> dict[str, Any]:
    """The ``_source`` written for ``doc`` (``now``: its ``indexed_at`` when it has no arrival; ``lookup_keys``: its
    permutation-table keys, left out for an index with segments only)."""
    fp = doc.fingerprint
    src: dict[str, Any] = {
        "doc_id": doc.id,
        "fingerprint_version": fp.version,
        "simhash": hex64(fp.simhash),
        "simhash_long": hamming.to_signed(fp.simhash),
        "sentences": [hex64(h) for h in fp.hashes],  # (both kinds in one field)
        "n_features": fp.n_features,
        "n_chars": fp.n_chars,
        "short": fp.short,
        "dup_cluster": doc.cluster,
        "dup_of": doc.duplicate_of,
        "dup_distance": doc.distance,
        "dup_reason": doc.reason,
        "is_canonical": doc.is_canonical,
        "indexed_at": (datetime.fromtimestamp(doc.arrival / 1e6, timezone.utc).isoformat(timespec="seconds")
                       if doc.arrival else now),
        "arrival": doc.arrival,
    }
    if fp.n_chars:
        src["content_hash"] = hex64(fp.content_hash)
    if fp.word_bag:
        src["word_bag"] = hex64(fp.word_bag)
    if fp.number_bag:
        src["number_bag"] = hex64(fp.number_bag)
    if fp.fuzzy_digests:
        src["fuzzy_digests"] = hex64(fp.fuzzy_digests)
    if fp.date_bag:
        src["date_bag"] = hex64(fp.date_bag)
    if fp.place_bag:
        src["place_bag"] = hex64(fp.place_bag)
    for i, key in enumerate(fp.segment_keys()):
        src[f"seg{i}"] = key
    if lookup_keys:
        src["lookup_keys"] = lookup_keys
    record = doc.fields or {}
    if doc.text is not None:
        src["content"] = doc.text
        src["content_folded"] = fold_text(doc.text)
    for name, value in zip(("title", "url", "crawl_time"), record_meta(record)):
        if value is not None and not isinstance(value, (dict, list)):
            src[name] = value if name == "crawl_time" else str(value)
    if "title" in src:
        src["title_folded"] = fold_text(src["title"])
    rest = {k: v for k, v in record.items() if doc.text is None or v is not doc.text}
    if rest:
        src["record"] = rest
    return src


def from_docvalues(fields: dict[str, list[Any]]) -> dict[str, Any]:
    """A hit's ``fields`` (doc values: lists) as a flat dict like ``_source``; doc values are read without
    parsing the stored ``_source`` (which holds the whole text), which makes lookups much cheaper."""
    out: dict[str, Any] = {k: (v if k == "sentences" else v[0]) for k, v in fields.items() if v}
    out.setdefault("sentences", [])
    return out


def parse_hex64(values: Sequence[str]) -> list[int]:
    """16-digit hex strings as ints, all at once (one ``bytes.fromhex`` instead of an ``int(x, 16)`` each)."""
    if not values:
        return []
    return np.frombuffer(bytes.fromhex("".join(values)), dtype=">u8").tolist()


class Hits:
    """The hits of a lookup search as columns, their hex fields parsed in bulk; StoredDocs built on demand."""

    def __init__(self, hits: list[dict[str, Any]]) -> None:
        self.ids = [h["_id"] for h in hits]
        self.srcs = srcs = [h["_source"] for h in hits]
        self.simhash = parse_hex64([s["simhash"] for s in srcs])
        self.content = parse_hex64([s.get("content_hash") or "0000000000000000" for s in srcs])
        self.word_bag = parse_hex64([s.get("word_bag") or "0000000000000000" for s in srcs])
        self.number_bag = parse_hex64([s.get("number_bag") or "0000000000000000" for s in srcs])
        self.fuzzy_digests = parse_hex64([s.get("fuzzy_digests") or "0000000000000000" for s in srcs])
        self.date_bag = parse_hex64([s.get("date_bag") or "0000000000000000" for s in srcs])
        self.place_bag = parse_hex64([s.get("place_bag") or "0000000000000000" for s in srcs])
        hex_sentences = [s.get("sentences") or () for s in srcs]
        flat = parse_hex64([x for sentences in hex_sentences for x in sentences])
        self.sentence_ints: list[tuple[int, ...]] = []
        start = 0
        for sentences in hex_sentences:
            end = start + len(sentences)
            self.sentence_ints.append(tuple(flat[start:end]))
            start = end
        self._docs: dict[int, StoredDoc] = {}

    def doc(self, j: int) -> StoredDoc:
        d = self._docs.get(j)
        if d is None:
            src = self.srcs[j]
            fp = Fingerprint(self.simhash[j], self.content[j], self.sentence_ints[j], int(src["n_features"]),
                             int(src["n_chars"]), bool(src["short"]), int(src["fingerprint_version"]), self.word_bag[j],
                             number_bag=self.number_bag[j], fuzzy_digests=self.fuzzy_digests[j],
                             date_bag=self.date_bag[j], place_bag=self.place_bag[j])
            d = self._docs[j] = StoredDoc(self.ids[j], fp, cluster=src["dup_cluster"], duplicate_of=src.get("dup_of"),
                                          distance=src.get("dup_distance"), reason=src.get("dup_reason", "canonical"),
                                          arrival=int(src.get("arrival") or 0))
        return d


def stored_doc(hit: dict[str, Any], read_only: Collection[str] = ()) -> StoredDoc:
    """A whole stored document (``_source``, as fetched by maintenance) with its version; ``final`` when the index
    holding it (``_index``) is one of ``read_only``."""
    src = hit["_source"]
    fp = Fingerprint.from_dict({**src, "content_hash": src.get("content_hash") or "0"})
    return StoredDoc(hit["_id"], fp, cluster=src["dup_cluster"], duplicate_of=src.get("dup_of"),
                     distance=src.get("dup_distance"), reason=src.get("dup_reason", "canonical"),
                     fields=src.get("record") or {}, text=src.get("content"), arrival=int(src.get("arrival") or 0),
                     version=(hit["_seq_no"], hit["_primary_term"]),
                     final=bool(read_only) and hit.get("_index") in read_only)
