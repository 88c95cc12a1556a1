"""Lookup keys: which stored SimHashes a lookup fetches before the exact Hamming re-rank.

Both backends use this module, so they fetch the same candidates.

**Permutation tables** (Manku, Jain and Das Sarma, *Detecting near-duplicates for web crawling*, WWW 2007):
split the 64 bits into ``k + r`` blocks of near-equal width. Two SimHashes within Hamming distance ``k`` differ
in at most ``k`` blocks, so they agree on at least ``r`` of them. For each of the ``C(k + r, r)`` choices of
``r`` blocks ("tables") a document stores one key: those blocks' bits, packed. Two fingerprints within ``k``
bits therefore share at least one key, while two random fingerprints share a given table's key with probability
``2**-key_bits``. Keys are at most 32 bits (a wider key is cut to its low 32 bits, which keeps the guarantee and
costs a little selectivity), so the embedded index stores them as ``uint32``.

* ``LookupKeys(k=3, r=3)`` (the default, :data:`DEFAULT`): 6 blocks of 11/11/11/11/10/10 bits, 20 keys of
  32 bits: about ``20 * N / 2**32`` random candidates per lookup (0.005 at 1M documents, 0.5 at 100M).
* ``LookupKeys(k=3, r=1)`` (:data:`SEGMENTS`): 4 blocks of 16 bits, 4 keys: the four 16-bit segments
  stored as ``seg0``..``seg3``, one term query each, with about ``4 * N / 65,536`` random candidates per lookup.

A *candidate* of a lookup with ``max_distance`` d is a stored document that shares at least one key with the
query **and** is within d bits. For d <= k that is every stored document within d bits (the brute-force set);
above k (short texts are compared at up to 7 bits) it is those that also share a key, in every backend alike.
Documents without features (empty fingerprints) have no keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from math import comb
from typing import TYPE_CHECKING, Any

from es_simhash.errors import InvalidValue

if TYPE_CHECKING:
    import numpy as np


__all__ = ["LookupKeys", "DEFAULT", "SEGMENTS", "MAX_KEY_BITS"]

MAX_KEY_BITS = 32


def _block_widths(n_blocks: int) -> tuple[int, ...]:
    base, extra = divmod(64, n_blocks)
    return tuple(base + 1 if i < extra else base for i in range(n_blocks))


@dataclass(frozen=True)
class LookupKeys:
    """Permutation-table lookup keys guaranteeing every pair within ``k`` bits shares a key (``r`` blocks per key)."""

    k: int = 3
    r: int = 3
    blocks: tuple[tuple[int, int], ...] = field(init=False, repr=False, compare=False)
    """(shift, width) of each of the ``k + r`` blocks, block 0 holding the lowest bits."""
    tables: tuple[tuple[int, ...], ...] = field(init=False, repr=False, compare=False)
    """The blocks of each table, in the order of ``itertools.combinations``."""
    mask_values: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """For each table, the SimHash bits its key keeps: two SimHashes share that table's key exactly when they agree
    on those bits. ``masks``: the same as a ``uint64`` numpy array (made on first use)."""

    def __post_init__(self) -> None:
        if not (0 <= self.k and 1 <= self.r and self.k + self.r <= 64):
            raise ValueError(f"lookup keys need k >= 0, r >= 1 and k + r <= 64 (got k={self.k}, r={self.r})")
        if comb(self.k + self.r, self.r) > 4096:
            raise ValueError(f"k={self.k}, r={self.r} means {comb(self.k + self.r, self.r):,} keys per document")
        shifts, blocks = 0, []
        for width in _block_widths(self.k + self.r):
            blocks.append((shifts, width))
            shifts += width
        object.__setattr__(self, "blocks", tuple(blocks))
        object.__setattr__(self, "tables", tuple(combinations(range(self.k + self.r), self.r)))
        masks = []
        for table in self.tables:  # blocks are packed lowest first, so the cut keeps the lowest 32 of their bits
            bits = [b for blk in table for b in range(self.blocks[blk][0], sum(self.blocks[blk]))][:MAX_KEY_BITS]
            masks.append(sum(1 << b for b in bits))
        object.__setattr__(self, "mask_values", tuple(masks))

    def __getattr__(self, name: str) -> Any:
        # ``masks`` is made on first use: the command fingerprints its first texts before numpy is imported
        if name != "masks":
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        import numpy as np

        masks = np.array(self.mask_values, dtype=np.uint64)
        object.__setattr__(self, "masks", masks)
        return masks

    # -- description ---------------------------------------------------------------------------------------
    @property
    def n_tables(self) -> int:
        return len(self.tables)

    @property
    def key_bits(self) -> tuple[int, ...]:
        """Bits of each table's key (after the cut to :data:`MAX_KEY_BITS`)."""
        return tuple(min(MAX_KEY_BITS, sum(self.blocks[b][1] for b in t)) for t in self.tables)

    @property
    def is_segments(self) -> bool:
        """The four 16-bit segments (stored as ``seg0``..``seg3``) and no permutation tables."""
        return self.k == 3 and self.r == 1

    def expected_random_candidates(self, n_docs: int) -> float:
        """Expected number of stored random (unrelated) fingerprints sharing a key with a query."""
        return float(sum(n_docs / 2.0**b for b in self.key_bits))

    def to_meta(self) -> dict[str, Any]:
        """What an index records about its keys (Elasticsearch mapping ``_meta.lookup``; the memory index file)."""
        return {"scheme": "segments" if self.is_segments else "permutation-tables", "k": self.k, "r": self.r,
                "tables": self.n_tables, "key_bits": MAX_KEY_BITS}

    @classmethod
    def from_meta(cls, meta: dict[str, Any] | None) -> "LookupKeys":
        """The keys an index recorded; an index without a record (made before lookup keys existed) uses segments."""
        if not meta:
            return SEGMENTS
        if meta.get("key_bits", MAX_KEY_BITS) != MAX_KEY_BITS:
            raise ValueError(f"unsupported lookup keys {meta!r}")
        return cls(int(meta["k"]), int(meta["r"]))

    @classmethod
    def parse(cls, spec: str) -> "LookupKeys":
        """``"tables"`` (the default keys), ``"segments"``, or ``"tables:K:R"`` / ``"tables:K"`` (r = 3)."""
        spec = spec.strip().lower()
        if spec == "segments":
            return SEGMENTS
        if spec == "tables":
            return DEFAULT
        parts = spec.split(":")
        if parts[0] == "tables" and 2 <= len(parts) <= 3 and all(p.isdigit() for p in parts[1:]):
            try:
                return cls(int(parts[1]), int(parts[2]) if len(parts) == 3 else 3)
            except ValueError as exc:
                raise InvalidValue(f"{spec!r}: {exc}", "lookup") from None
        raise InvalidValue(f"{spec!r} is not a lookup-key spec; use 'tables', 'tables:K:R' or 'segments'", "lookup")

    # -- keys ----------------------------------------------------------------------------------------------
    def keys(self, simhashes: np.ndarray) -> np.ndarray:
        """The keys of each SimHash: a ``(len(simhashes), n_tables)`` ``uint32`` array (vectorised)."""
        import numpy as np
        sims = np.ascontiguousarray(simhashes, dtype=np.uint64)
        out = np.empty((sims.shape[0], self.n_tables), dtype=np.uint32)
        parts = [(sims >> np.uint64(shift)) & np.uint64((1 << width) - 1) for shift, width in self.blocks]
        for t, table in enumerate(self.tables):
            key = np.zeros_like(sims)
            offset = 0
            for b in table:  # pack the table's blocks, lowest block first
                key |= parts[b] << np.uint64(offset) if offset else parts[b]
                offset += self.blocks[b][1]
            out[:, t] = key.astype(np.uint32) if offset > MAX_KEY_BITS else key  # cut to the low 32 bits
        return out

    def share_a_key(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Whether ``a[i]`` and ``b[i]`` share at least one key (vectorised over pairs; no keys are built)."""
        import numpy as np
        x = np.bitwise_xor(np.asarray(a, dtype=np.uint64), np.asarray(b, dtype=np.uint64))
        return ((x[:, None] & self.masks[None, :]) == 0).any(axis=1)

    def key_one(self, simhash: int) -> list[int]:
        """The keys of one SimHash, as Python ints (same values as :meth:`keys`)."""
        parts = [(simhash >> shift) & ((1 << width) - 1) for shift, width in self.blocks]
        out = []
        for table in self.tables:
            key, offset = 0, 0
            for b in table:
                key |= parts[b] << offset
                offset += self.blocks[b][1]
            out.append(key & 0xFFFFFFFF)
        return out

    def terms(self, simhashes: np.ndarray) -> list[list[str]]:
        """Each SimHash's keys as the strings stored in the Elasticsearch ``lookup_keys`` field: the table
        number in hex, ``:``, the key as 8 hex digits (``"13:0a1b2c3d"``)."""
        keys = self.keys(simhashes)
        n_tables = self.n_tables
        digits = keys.astype(">u4").tobytes().hex()  # every key's 8 hex digits, in one call
        prefixes = [f"{t:x}:" for t in range(n_tables)] * len(keys)
        flat = [p + digits[i:i + 8] for i, p in zip(range(0, len(digits), 8), prefixes)]
        return [flat[i:i + n_tables] for i in range(0, len(flat), n_tables)]

    def segment_terms(self, simhash: int) -> list[str]:
        """For :data:`SEGMENTS`: the 4-hex-digit strings of ``seg0``..``seg3``."""
        return [f"{v:04x}" for v in self.key_one(simhash)]


DEFAULT = LookupKeys(3, 3)
SEGMENTS = LookupKeys(3, 1)
