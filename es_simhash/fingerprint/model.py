"""The fingerprint of a text (:class:`Fingerprint`) and the constants that define it: the version, the weight
scale, the four 16-bit segments, the top bit that marks a shingle-sketch hash."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

FINGERPRINT_VERSION = 15
WEIGHT_SCALE = 1024
N_SEGMENTS = 4
SEGMENT_BITS = 16
_MASK64 = 0xFFFFFFFFFFFFFFFF


def hash64(s: str) -> int:
    """Stable, well-mixed unsigned 64-bit hash of a string (BLAKE2b, 8-byte digest, little-endian)."""
    return int.from_bytes(hashlib.blake2b(s.encode("utf-8"), digest_size=8).digest(), "little")


SKETCH_BIT = 1 << 63  # set in shingle-sketch hashes, clear in sentence hashes: the two kinds share one field


FUZZY_MARK = ((1 << 32) - 1) << 30
"""Set in a fuzzy sentence hash: all 32 bits where a sentence hash keeps its character bag. A fuzzy hash
has the top bit clear, like a sentence hash, but brings a candidate only when two are shared, like sketch hashes."""


def is_fuzzy(h: int) -> bool:
    """Whether a hash of :attr:`Fingerprint.hashes` is a fuzzy sentence hash (:attr:`Fingerprint.fuzzy`)."""
    return h < SKETCH_BIT and h & FUZZY_MARK == FUZZY_MARK


def is_sentence(h: int) -> bool:
    """Whether a hash of :attr:`Fingerprint.hashes` is a long-sentence hash (:attr:`Fingerprint.sentences`): one
    shared brings a candidate, where sketch and fuzzy hashes need two."""
    return h < SKETCH_BIT and h & FUZZY_MARK != FUZZY_MARK


def is_sketch(h: int) -> bool:
    """Whether a hash of :attr:`Fingerprint.hashes` (the two kinds joined, as storage keeps them) is a shingle-sketch
    hash (else a sentence hash)."""
    return h >= SKETCH_BIT


def hex64(value: int) -> str:
    """A 64-bit hash as 16 hex digits (how fingerprints are written to Elasticsearch and JSON)."""
    return f"{value:016x}"


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """What es-simhash stores and compares for one document.

    ``simhash``, ``content_hash`` and the hashes are unsigned 64-bit integers. ``sentences``: the long-sentence
    signature (top bit clear); ``sketch``: the shingle sketch of a shorter text (top bit set, :data:`SKETCH_BIT`;
    ``()`` for longer texts). Storage keeps the two joined (:attr:`hashes`, one ``sentences`` field in
    Elasticsearch): a joined tuple given as ``sentences`` (as storage hands it back) is split
    into the two. A fingerprint with no usable features (``empty``) has no segments, so it can never be found
    through the segment buckets. ``word_bag`` (texts with a shingle sketch only, else 0): the sum mod
    2^64 of the hashes of the text's words, whatever their order: equal for two texts with the same words in
    another order. ``fuzzy`` (texts without a sketch): one hash for each of their longest sentences, the
    least hash of its character shingles, so that a sentence with a word or two replaced (a "伪原创" copy) keeps it
    more often than not (:data:`FUZZY_MARK`); ``fuzzy_digests``: 4 bits of each of those sentences' own hash, in the
    ascending order of ``fuzzy`` (storage may give the hashes back as a set), which tell a sentence rewritten from
    one repeated word for word (a site's line). ``number_bag``: the set of numbers the body gives
    (dates, figures) as a 64-bit bitmap (:func:`~es_simhash.fingerprint.hashes.number_bag`); two reports of one
    template about different events give other numbers. ``date_bag`` and ``place_bag``: the dates and the places
    its sentences give, and the places its datelines name (:mod:`~es_simhash.fingerprint.events`), which name the
    event a text reports.
    """

    simhash: int
    content_hash: int
    sentences: tuple[int, ...]
    n_features: int
    n_chars: int
    short: bool
    version: int = FINGERPRINT_VERSION
    word_bag: int = 0
    sketch: tuple[int, ...] = ()
    number_bag: int = 0
    fuzzy: tuple[int, ...] = ()
    fuzzy_digests: int = 0
    date_bag: int = 0
    place_bag: int = 0
    hashes: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """The sentence hashes, the fuzzy ones, then the sketch hashes: every kind as lookups and storage take them (a
    sketch hash has the top bit set, :func:`is_sketch`; a fuzzy one :data:`FUZZY_MARK`, :func:`is_fuzzy`)."""

    def __post_init__(self) -> None:
        joined = self.sentences
        # (sentence, fuzzy and sketch hashes joined, as storage keeps them)
        if joined and not all(map(is_sentence, joined)):
            object.__setattr__(self, "sentences", tuple(h for h in joined if is_sentence(h)))
            object.__setattr__(self, "fuzzy", tuple(self.fuzzy) + tuple(h for h in joined if is_fuzzy(h)))
            object.__setattr__(self, "sketch", tuple(self.sketch) + tuple(h for h in joined if h >= SKETCH_BIT))
        object.__setattr__(self, "hashes", self.sentences + self.fuzzy + self.sketch if self.sketch or self.fuzzy
                           else self.sentences)

    def rewritten(self, other: "Fingerprint", shared: "set[int]") -> int:
        """How many of the fuzzy hashes ``shared`` with ``other`` stand for sentences that differ (their digests
        differ): sentences rewritten, not repeated word for word. A hash past the first 16 counts as repeated."""
        mine = {h: j for j, h in enumerate(sorted(self.fuzzy)[:16])}
        theirs = {h: j for j, h in enumerate(sorted(other.fuzzy)[:16])}
        return sum(1 for h in shared if h in mine and h in theirs
                   and (self.fuzzy_digests >> (4 * mine[h])) & 0xF != (other.fuzzy_digests >> (4 * theirs[h])) & 0xF)

    @property
    def empty(self) -> bool:
        """No usable features: empty, all punctuation, or only stop words."""
        return self.n_features == 0

    @property
    def segments(self) -> tuple[int, ...]:
        """The four 16-bit segments (``()`` for an empty fingerprint)."""
        if self.empty:
            return ()
        return tuple((self.simhash >> (SEGMENT_BITS * i)) & 0xFFFF for i in range(N_SEGMENTS))

    def segment_keys(self) -> tuple[str, ...]:
        """Segments as the 4-hex-digit strings stored in the ``seg0``..``seg3`` keyword fields."""
        return tuple(f"{s:04x}" for s in self.segments)

    def distance(self, other: "Fingerprint") -> int:
        return (self.simhash ^ other.simhash).bit_count()

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form (hex strings for the 64-bit values)."""
        return {
            "fingerprint_version": self.version,
            "simhash": hex64(self.simhash),
            "segments": list(self.segment_keys()),
            "sentences": [hex64(h) for h in self.sentences],
            "sketch": [hex64(h) for h in self.sketch],
            "fuzzy": [hex64(h) for h in self.fuzzy],
            "content_hash": hex64(self.content_hash),
            "n_features": self.n_features,
            "n_chars": self.n_chars,
            "short": self.short,
            "empty": self.empty,
            "word_bag": hex64(self.word_bag),
            "number_bag": hex64(self.number_bag),
            "fuzzy_digests": hex64(self.fuzzy_digests),
            "date_bag": hex64(self.date_bag),
            "place_bag": hex64(self.place_bag),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Fingerprint":
        """From :meth:`to_dict`'s form, or a stored document's (whose ``sentences`` holds both kinds, joined)."""
        return cls(
            simhash=int(d["simhash"], 16),
            content_hash=int(d["content_hash"], 16),
            sentences=tuple(int(h, 16) for h in d.get("sentences", ())),
            n_features=int(d["n_features"]),
            n_chars=int(d["n_chars"]),
            short=bool(d["short"]),
            version=int(d.get("fingerprint_version", FINGERPRINT_VERSION)),
            word_bag=int(d.get("word_bag") or "0", 16),
            sketch=tuple(int(h, 16) for h in d.get("sketch", ())),
            number_bag=int(d.get("number_bag") or "0", 16),
            fuzzy=tuple(int(h, 16) for h in d.get("fuzzy", ())),
            fuzzy_digests=int(d.get("fuzzy_digests") or "0", 16),
            date_bag=int(d.get("date_bag") or "0", 16),
            place_bag=int(d.get("place_bag") or "0", 16),
        )
