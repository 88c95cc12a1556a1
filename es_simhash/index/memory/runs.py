"""Runs of the embedded index: each table's keys sorted with their rows and a direct-address directory over the
keys' top bits, made from the tail and merged by size as in a log-structured merge tree; a batch of queries
probes a run with a few vectorised gathers (:func:`run_pairs`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from es_simhash.lookup.keys import MAX_KEY_BITS, LookupKeys

if TYPE_CHECKING:
    import numpy as np


@dataclass(slots=True)
class Run:
    """Rows sorted by each table's (scrambled) key, tables one after another: ``keys`` (uint32) ascending within a table,
    ``rows`` (int32) in the same order, and a direct-address directory over the keys' top ``bits`` bits:
    the entries of table ``t`` whose key starts with ``b`` are ``offsets[t * 2**bits + b]`` up to the next offset.
    A lookup is then a gather of offsets and an equality test over the few entries between them, no search."""

    keys: np.ndarray
    rows: np.ndarray
    offsets: np.ndarray
    bits: int
    size: int


_SCRAMBLE = 0x9E3779B1  # odd: multiplying by it modulo 2**32 is a bijection on 32-bit keys
_UNSCRAMBLE = pow(_SCRAMBLE, -1, 2**32)  # its inverse modulo 2**32


def scrambled(keys: np.ndarray) -> np.ndarray:
    """Keys multiplied by an odd constant modulo 2**32: equal exactly when the keys are, and with well-spread top
    bits even for narrow keys (the 16-bit segments), which the directory needs."""
    import numpy as np

    return keys * np.uint32(_SCRAMBLE)


def directory_bits(size: int) -> int:
    """At most about one row per directory slot on average (2**bits >= size)."""
    return min(max(1, size.bit_length()), MAX_KEY_BITS)


def make_run(n_tables: int, keys: np.ndarray, rows: np.ndarray) -> Run:
    """A run from ``keys`` (``(n_tables, size)`` uint32) of ``rows`` (``(n_tables, size)``, the same row numbers
    in every table)."""
    import numpy as np
    size = keys.shape[1]
    keys = scrambled(keys)
    order = np.argsort(keys, axis=1, kind="stable")
    keys = np.take_along_axis(keys, order, axis=1)
    rows = np.take_along_axis(rows, order, axis=1).astype(np.int32)
    bits = directory_bits(size)
    slots = np.int64(1) << bits
    where = (keys >> np.uint32(MAX_KEY_BITS - bits)).astype(np.int64) + (np.arange(n_tables, dtype=np.int64) * slots)[:, None]
    offsets = np.zeros(n_tables * slots + 1, dtype=np.int32 if keys.size < 2**31 else np.int64)
    np.cumsum(np.bincount(where.ravel(), minlength=n_tables * slots), out=offsets[1:])
    return Run(keys.ravel(), rows.ravel(), offsets, bits, size)


def new_run(lookup_keys: LookupKeys, rows: np.ndarray, sims: np.ndarray) -> Run:
    import numpy as np
    keys = np.ascontiguousarray(lookup_keys.keys(sims).T)
    return make_run(lookup_keys.n_tables, keys, np.broadcast_to(rows, keys.shape))


def merge_runs(n_tables: int, a: Run, b: Run) -> Run:
    import numpy as np
    keys = np.concatenate((a.keys.reshape(n_tables, -1), b.keys.reshape(n_tables, -1)), axis=1)
    rows = np.concatenate((a.rows.reshape(n_tables, -1), b.rows.reshape(n_tables, -1)), axis=1)
    return make_run(n_tables, keys * np.uint32(_UNSCRAMBLE), rows)


def run_pairs(run: Run, qkeys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(query number, row) for every entry of ``run`` whose key equals one of the query's keys in that table.
    ``qkeys``: the queries' keys, scrambled as the run stores them."""
    import numpy as np
    n_q, n_tables = qkeys.shape
    slots = np.int64(1) << run.bits
    where = (qkeys >> np.uint32(MAX_KEY_BITS - run.bits)).astype(np.int64) + np.arange(n_tables, dtype=np.int64) * slots
    lo = run.offsets[where].ravel()
    counts = run.offsets[where + 1].ravel() - lo
    nonzero = np.flatnonzero(counts)
    counts = counts[nonzero]
    pos = expand(lo[nonzero], counts)
    flat = np.repeat(nonzero, counts)  # query * n_tables + table
    match = run.keys[pos] == qkeys.ravel()[flat]
    return flat[match] // n_tables, run.rows[pos[match]]


def expand(lo: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``concatenate([arange(l, l + c) for l, c in zip(lo, counts)])`` without a Python loop."""
    import numpy as np
    total = int(counts.sum())
    ends = np.cumsum(counts)
    return np.repeat(lo - ends + counts, counts) + np.arange(total)
