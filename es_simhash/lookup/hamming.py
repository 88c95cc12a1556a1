"""Vectorised Hamming distances over 64-bit fingerprints.

``numpy.bitwise_count`` (numpy >= 2.0) is a native popcount; older numpy falls back to an 8-bit lookup table
over the bytes of the array. Either way there is no per-bit or per-element Python loop.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["popcount", "distances", "within", "as_uint64", "to_signed", "to_unsigned"]

_BYTE_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)
_HAS_BITWISE_COUNT = hasattr(np, "bitwise_count")


def as_uint64(values: Sequence[int] | np.ndarray) -> np.ndarray:
    """An array of unsigned 64-bit fingerprints (accepts Python ints, signed int64 views or uint64)."""
    if not isinstance(values, np.ndarray):
        return np.fromiter((int(v) & 0xFFFFFFFFFFFFFFFF for v in values), dtype=np.uint64)
    if values.dtype == np.uint64:
        return values
    if values.dtype == np.int64:
        return values.view(np.uint64)
    if values.dtype.kind in "iub":
        return values.astype(np.uint64)
    raise TypeError(f"expected integer fingerprints, got an array of {values.dtype}")


def popcount(x: np.ndarray) -> np.ndarray:
    """Number of set bits of each element of a uint64 array."""
    if _HAS_BITWISE_COUNT:  # any layout works; skip the conversion call when it would be a no-op
        return np.bitwise_count(x if isinstance(x, np.ndarray) and x.dtype == np.uint64 else np.asarray(x, np.uint64))
    x = np.ascontiguousarray(x, dtype=np.uint64)
    return _BYTE_POPCOUNT[x.view(np.uint8)].reshape(*x.shape, 8).sum(axis=-1, dtype=np.uint8)


def distances(query: int, candidates: np.ndarray) -> np.ndarray:
    """Hamming distance from one fingerprint to each of ``candidates`` (uint64 array)."""
    return popcount(np.bitwise_xor(candidates, np.uint64(query)))


def within(query: int, candidates: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the candidates within distance ``k`` of ``query``, nearest first, and their distances."""
    d = distances(query, candidates)
    hits = np.flatnonzero(d <= k)
    order = np.argsort(d[hits], kind="stable")
    hits = hits[order]
    return hits, d[hits]


def to_signed(value: int) -> int:
    """The two's-complement signed view of an unsigned 64-bit value (for Elasticsearch ``long`` fields)."""
    return value - (1 << 64) if value >= (1 << 63) else value


def to_unsigned(value: int) -> int:
    return value & 0xFFFFFFFFFFFFFFFF
