"""The settings that determine a fingerprint, typed and checked in one place (:class:`FingerprintSettings`), and
their form stored with an Elasticsearch index (:meth:`FingerprintSettings.meta`), by which an index refuses
fingerprints made otherwise. The parameters are described on :class:`~es_simhash.fingerprint.Fingerprinter`."""

from __future__ import annotations

from dataclasses import astuple, dataclass
from typing import Any

from es_simhash.fingerprint.model import FINGERPRINT_VERSION

__all__ = ["FingerprintSettings", "TF_MODES"]

TF_MODES = ("cap:N", "sublinear", "raw")


@dataclass(frozen=True, slots=True)
class FingerprintSettings:
    """Everything besides the IDF table, the stop words and the segmenter that changes a fingerprint; a
    ``ValueError`` naming the bounds when a value is out of them."""

    min_token_len: int = 2
    sentences: int = 5
    min_sentence_chars: int = 8
    short_chars: int = 100
    sketch: int = 12
    sketch_chars: int = 300
    sketch_shingle: tuple[int, int] = (3, 5)
    line_sketch: int = 8
    tf: str = "cap:5"
    fuzzy: int = 16

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
