"""The fingerprint of a text (:class:`Fingerprint`) and the constants that define it: the version, the weight
scale, the four 16-bit segments, the top bit that marks a shingle-sketch hash."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

FINGERPRINT_VERSION = 6
WEIGHT_SCALE = 1024
N_SEGMENTS = 4
SEGMENT_BITS = 16
_MASK64 = 0xFFFFFFFFFFFFFFFF


def hash64(s: str) -> int:
    """Stable, well-mixed unsigned 64-bit hash of a string (BLAKE2b, 8-byte digest, little-endian)."""
    return int.from_bytes(hashlib.blake2b(s.encode("utf-8"), digest_size=8).digest(), "little")


SKETCH_BIT = 1 << 63  # set in shingle-sketch hashes, clear in sentence hashes: the two kinds share one field


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
    Elasticsearch): a joined tuple given as ``sentences`` (as storage and earlier releases hand it back) is split
    into the two. A fingerprint with no usable features (``empty``) has no segments, so it can never be found
    through the segment buckets. ``word_bag`` (version 3, texts with a shingle sketch only, else 0): the sum mod
    2^64 of the hashes of the text's words, whatever their order: equal for two texts with the same words in
    another order.
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

    def __post_init__(self) -> None:
        joined = self.sentences
        if joined and max(joined) >= SKETCH_BIT:  # (sentence and sketch hashes joined, as storage keeps them)
            object.__setattr__(self, "sentences", tuple(h for h in joined if h < SKETCH_BIT))
            object.__setattr__(self, "sketch", tuple(self.sketch) + tuple(h for h in joined if h >= SKETCH_BIT))

    @property
    def hashes(self) -> tuple[int, ...]:
        """The sentence hashes, then the sketch hashes: both kinds as lookups and storage take them (a sketch hash
        has the top bit set, :func:`is_sketch`)."""
        return self.sentences + self.sketch if self.sketch else self.sentences

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
            "content_hash": hex64(self.content_hash),
            "n_features": self.n_features,
            "n_chars": self.n_chars,
            "short": self.short,
            "empty": self.empty,
            "word_bag": hex64(self.word_bag),
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
        )
