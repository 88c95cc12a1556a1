"""The settings that determine a fingerprint, typed and checked in one place (:class:`FingerprintSettings`), and
their form stored with an index (:meth:`FingerprintSettings.meta`: in an Elasticsearch index's mapping, in a saved
embedded index), by which an index refuses fingerprints made otherwise (:func:`settings_difference`, the one
comparison both indexes make)."""

from __future__ import annotations

import json
from dataclasses import astuple, dataclass
from typing import Any, Mapping

from es_simhash.fingerprint.model import FINGERPRINT_VERSION

__all__ = ["DEFAULTS", "FingerprintSettings", "TF_MODES", "settings_difference"]

TF_MODES = ("cap:N", "sublinear", "raw")


@dataclass(frozen=True, slots=True)
class FingerprintSettings:
    """Everything besides the IDF table, the stop words and the segmenter that changes a fingerprint; a
    ``ValueError`` naming the bounds when a value is out of them. The defaults here are the library's
    (:data:`DEFAULTS`; :class:`~es_simhash.fingerprint.Fingerprinter` takes its own from them); the measurements
    behind them are in ``docs/accuracy.md`` (the dev split of ``bench/accuracy.py``)."""

    min_token_len: int = 2
    """Tokens shorter than this (in characters) carry no weight: single characters are mostly function words in
    Chinese and noise in English."""
    sentences: int = 5
    """How many longest sentences make the sentence signature."""
    min_sentence_chars: int = 8
    """A sentence needs at least this many letters/ideographs to enter the signature."""
    short_chars: int = 100
    """Texts with fewer letters/ideographs than this are ``short``: SimHash is weak on them and the sentence
    signature decides."""
    sketch: int = 12
    """For texts of fewer than ``sketch_chars`` letters/ideographs, how many character-shingle hashes (the smallest
    of the text's shingle hashes: a bottom-k MinHash sketch) join the sentence signature (0: none). A prefix, a
    typo or a cut tail changes the only sentence or two of a short text but few of its shingles. Sketch hashes have
    the top bit set (:data:`~es_simhash.fingerprint.model.SKETCH_BIT`), sentence hashes clear."""
    sketch_chars: int = 300
    """Texts with fewer letters/ideographs than this get the sketch (longer texts have enough long sentences)."""
    sketch_shingle: tuple[int, int] = (3, 5)
    """Shingle length in characters of the content key for the sketch, ``(cjk, other)``: 3 characters for texts
    with Chinese characters, 5 letters/digits for the rest (spaces removed)."""
    line_sketch: int = 8
    """In a text with a sketch and at least two lines of at least ``min_sentence_chars`` letters/ideographs (twice
    that without Chinese), each such line adds its ``line_sketch`` smallest shingle hashes to the sketch (0: the
    whole text's only): a templated post keeps its body's shingles in the sketch."""
    tf: str = "cap:5"
    """How a token's count in the text scales its weight: ``"cap:N"`` (``min(tf, N)``), ``"sublinear"``
    (``1 + ln tf``) or ``"raw"`` (``tf``: one repeated term can take over the fingerprint)."""
    fuzzy: int = 16
    """For texts without a sketch, how many of their longest sentences each add a fuzzy hash
    (:attr:`~es_simhash.fingerprint.model.Fingerprint.fuzzy`; at most 16, 0: none)."""

    def __post_init__(self) -> None:
        if self.sentences < 0 or self.min_token_len < 1 or self.min_sentence_chars < 1 or self.short_chars < 0 \
                or self.sketch < 0 or self.sketch_chars < 0 or self.line_sketch < 0 or not 0 <= self.fuzzy <= 16:
            raise ValueError("sentences >= 0, min_token_len >= 1, min_sentence_chars >= 1, short_chars >= 0, "
                             "sketch >= 0, sketch_chars >= 0, line_sketch >= 0, 0 <= fuzzy <= 16")
        if len(self.sketch_shingle) != 2 or min(self.sketch_shingle) < 1:
            raise ValueError("sketch_shingle is (cjk, other), both >= 1")
        object.__setattr__(self, "sketch_shingle", (int(self.sketch_shingle[0]), int(self.sketch_shingle[1])))
        tf = self.tf
        if tf != "raw" and tf != "sublinear" and not (tf.startswith("cap:") and tf[4:].isdigit() and int(tf[4:]) > 0):
            raise ValueError(f"tf is 'sublinear', 'raw' or 'cap:N', not {tf!r}")

    def as_tuple(self) -> tuple:
        """The values in field order (what the native core is made from, besides the tables)."""
        return astuple(self)

    def meta(self, idf_checksum: str) -> dict[str, Any]:
        """What an index records of the fingerprints it holds (``_meta.fingerprint``): the version, the IDF table's
        checksum and every setting."""
        return {
            "fingerprint_version": FINGERPRINT_VERSION,
            "idf": idf_checksum,
            "min_token_len": self.min_token_len,
            "sentences": self.sentences,
            "min_sentence_chars": self.min_sentence_chars,
            "short_chars": self.short_chars,
            "sketch": self.sketch,
            "sketch_chars": self.sketch_chars,
            "sketch_shingle": list(self.sketch_shingle),
            "line_sketch": self.line_sketch,
            "tf": self.tf,
            "fuzzy": self.fuzzy,
        }


DEFAULTS = FingerprintSettings()
"""The default fingerprint settings, the one place they are defined."""


_SETTING_NAMES = {"idf": "IDF table checksum", "fingerprint_version": "fingerprint version"}


def settings_difference(stored: Mapping[str, Any] | None, current: Mapping[str, Any]) -> str:
    """The settings in which ``stored`` (what an index records of its fingerprints, :meth:`FingerprintSettings.meta`;
    None: nothing recorded) and ``current`` (what this run fingerprints with) differ, in words, each with both
    values: ``'IDF table checksum "3f1a..." (this run: "b07c...")'``, joined by ``"; "``. Empty when they are the
    same: fingerprints made with the two are comparable only then."""
    stored = stored or {}
    keys = [*current, *(k for k in stored if k not in current)]
    return "; ".join(f"{_SETTING_NAMES.get(k, k)} {_shown(stored.get(k))} (this run: {_shown(current.get(k))})"
                     for k in keys if stored.get(k) != current.get(k))


def _shown(value: Any) -> str:
    """A fingerprint setting in a message: as JSON, a missing one as "none"."""
    return "none" if value is None else json.dumps(value)
