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
    arr = np.asarray(values)
    if arr.dtype == np.uint64:
        return arr
    if arr.dtype == np.int64:
        return arr.view(np.uint64)
    if arr.dtype == object or arr.size == 0:
        return np.array([int(v) & 0xFFFFFFFFFFFFFFFF for v in np.ravel(arr)], dtype=np.uint64).reshape(arr.shape)
    return arr.astype(np.uint64)


def popcount(x: np.ndarray) -> np.ndarray:
    """Number of set bits of each element of a uint64 array."""
    x = np.ascontiguousarray(x, dtype=np.uint64)
    if _HAS_BITWISE_COUNT:
        return np.bitwise_count(x)
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
