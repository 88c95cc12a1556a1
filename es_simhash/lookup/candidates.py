"""Which stored documents a lookup returns: the candidate test every backend applies and the engine repeats
where what it knows was gathered in parts (:func:`found_by_lookup`), and its pieces: long-sentence and sketch
hashes less boilerplate, the two-shared-sketch-hashes rule (:data:`MIN_SHARED_SKETCH`)."""

from __future__ import annotations

from collections import Counter
from typing import AbstractSet, Collection, Hashable, Iterable, Mapping, Protocol, Sequence, TypeVar

from es_simhash.fingerprint.model import Fingerprint
from es_simhash.lookup.keys import LookupKeys

__all__ = ["MIN_SHARED_SKETCH", "boilerplate_of", "sharing_sketch", "sentence_candidate",
           "found_by_lookup"]


class HasFingerprint(Protocol):
    """A stored document as the candidate test sees it."""

    @property
    def fingerprint(self) -> Fingerprint: ...


D = TypeVar("D", bound=HasFingerprint)
H = TypeVar("H", bound=Hashable)  # a sentence hash: an int, or its hex string (Elasticsearch)

MIN_SHARED_SKETCH = 2
"""How many shingle-sketch hashes, or fuzzy sentence hashes, a stored document must share with a query (besides
boilerplate) to be its candidate through them. The decision rule never accepts a sketch or fuzzy match on fewer
(``DefaultRule``), so the candidates it leaves out could never be decided duplicates that way; and a text shares
one common character shingle's hash with thousands of unrelated texts (a fuzzy hash is a sentence's least shingle
hash, now and then a common phrase's), each of which would otherwise travel to the client."""


def boilerplate_of(fp: Fingerprint, sentence_df: Mapping[int, int], cap: int,
                   extra: Mapping[int, int] | None = None) -> frozenset[int]:
    """The sentence hashes of ``fp`` held by more than ``cap`` documents: ``sentence_df`` (a lookup's counts)
    plus ``extra``, the counts of every hash of ``fp`` among documents not in the index yet (the batch being
    decided)."""
    if extra:
        return frozenset(h for h in fp.hashes if sentence_df.get(h, 0) + extra[h] > cap)
    return frozenset(h for h in fp.hashes if sentence_df.get(h, 0) > cap)


def sharing_sketch(holders: Sequence[int]) -> list[int]:
    """The documents listed at least :data:`MIN_SHARED_SKETCH` times in ``holders``, the concatenated lists of the
    documents holding each of a query's (non-boilerplate) sketch hashes: its candidates through the sketch."""
    if len(holders) < MIN_SHARED_SKETCH:
        return []
    return [d for d, n in Counter(holders).items() if n >= MIN_SHARED_SKETCH]


def sentence_candidate(sentences: AbstractSet[H], sketch: AbstractSet[H], theirs: Iterable[H]) -> bool:
    """Whether a stored document whose fingerprint holds the hashes ``theirs`` is a candidate of a query through
    the sentence channel: it holds one of the query's (non-boilerplate) long-sentence hashes ``sentences``, or
    at least :data:`MIN_SHARED_SKETCH` of its (non-boilerplate) sketch and fuzzy hashes ``sketch`` (a text has one
    kind or the other)."""
    n_sketch = 0
    for h in theirs:
        if h in sentences:
            return True
        if h in sketch:
            n_sketch += 1
            if n_sketch >= MIN_SHARED_SKETCH:
                return True
    return False


def found_by_lookup(fp: Fingerprint, candidates: Iterable[D], boilerplate: Collection[int],
                    lookup_keys: LookupKeys, max_distance: int) -> list[D]:
    """The ``candidates`` that one lookup of ``fp`` would return with ``boilerplate`` as its boilerplate hashes
    (the candidate test every backend applies, see the module's text): the same content, a shared lookup key
    within ``max_distance`` bits, or sentence hashes shared through :func:`sentence_candidate`. The engine and
    settling use it where what they know was gathered in parts (the index and the batch; or the index now and
    the documents that arrived before a document) whose boilerplate differs from the whole's."""
    masks = lookup_keys.masks.tolist() if fp.n_features else ()
    sentences = set(fp.sentences).difference(boilerplate)
    sketch = set(fp.sketch).union(fp.fuzzy).difference(boilerplate)
    out = []
    for c in candidates:
        o = c.fingerprint
        x = fp.simhash ^ o.simhash
        if ((fp.n_chars and o.content_hash == fp.content_hash)
                or (masks and o.n_features and x.bit_count() <= max_distance and any(x & m == 0 for m in masks))
                or sentence_candidate(sentences, sketch, o.hashes)):
            out.append(c)
    return out
