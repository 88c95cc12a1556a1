"""Comparisons of two fingerprints the decision rule makes: same content, sketch hashes shared, one sketch inside
the other, opposite meanings."""

from __future__ import annotations

from es_simhash.decide.rule import has_sketch
from es_simhash.fingerprint.hashes import contradicting_pair, text_contradicts
from es_simhash.fingerprint.model import Fingerprint


def within(a: Fingerprint, b: Fingerprint, n: int) -> bool:
    """Whether one of two sketched fingerprints has fewer than ``n`` sketch hashes the other lacks while the other
    has ``n`` or more of its own: a text and the same text inside a template (two texts that differ a little
    both ways are not that)."""
    if not (n and has_sketch(a) and has_sketch(b)):
        return False
    sa, sb = set(a.sketch), set(b.sketch)
    own_a, own_b = len(sa - sb), len(sb - sa)
    return own_a < n <= own_b or own_b < n <= own_a


def sketch_support(a: Fingerprint, b: Fingerprint, boilerplate: frozenset[int]) -> int:
    """Sketch hashes two fingerprints share, boilerplate left out."""
    return len({h for h in a.sketch if h not in boilerplate}.intersection(b.sketch))


def opposite(a: Fingerprint, b: Fingerprint) -> bool:
    """Whether two texts say opposite things: by their whole texts, or by a pair of their signature sentences
    (:func:`~es_simhash.fingerprint.text_contradicts`, :func:`~es_simhash.fingerprint.contradicts`)."""
    return text_contradicts(a, b) or contradicting_pair(a.sentences, b.sentences)


def same_content(a: Fingerprint, b: Fingerprint) -> bool:
    """Same letters, digits and ideographs after normalisation (an exact duplicate)."""
    return bool(a.n_chars) and a.content_hash == b.content_hash and a.n_chars == b.n_chars
