#!/usr/bin/env python
"""Lookup keys (``es_simhash.lookup.keys.LookupKeys``): how k, r, tables, key bits and storage trade off.

For k = 3..8 (every pair of SimHashes within k bits must share a key) and r = 1..5 (blocks per key), skipping
configurations with more than ``MAX_TABLES`` (1,000) tables, one row each with:

* ``blocks`` (k + r), ``tables`` (C(k + r, r)), ``distinct`` (tables whose keys are not always equal to another
  table's: after the cut to 32 bits two tables can keep the same bits) and the key widths in bits (min..max,
  after the cut to 32 bits);
* ``N@1cand``: the number of stored documents at which a lookup expects one random candidate;
* expected random candidates per lookup at 1M / 10M / 100M stored documents, analytically:
  ``sum over tables of N / 2**key_bits`` (``LookupKeys.expected_random_candidates``);
* MEASURED random candidates per lookup at ``--n``: ``--n`` uniform random 64-bit SimHashes are stored (each
  table's keys sorted together with their row numbers, as the embedded index does), ``--queries`` random query
  SimHashes are looked up with ``np.searchsorted`` (left/right) per table, and the distinct (query, row) pairs
  are counted (per query; in parentheses, the total over all queries). Only for configurations expecting
  < 5,000 candidates at ``--n`` and with <= 200 tables, else "-";
* recall: for each query, ``--neighbours`` neighbours at Hamming distance exactly k (k random bits flipped); the
  fraction that shares at least one key with its query (must be 1.0: the permutation-table guarantee). Where the
  measurement runs, the planted neighbours are also stored and must come back through the searchsorted lookup;
* keys per document and storage per document: the embedded index (tables x (4-byte key + 4-byte row number)),
  and for Elasticsearch the RAW TERM BYTES of a ``keyword`` field (no doc values) holding each key as a string
  like ``"13:0a1b2c3d"`` (table number in hex, ``:``, 8 hex digits; ``LookupKeys.terms``). Raw term bytes are
  not the on-disk size of the field (Lucene's terms dictionary shares prefixes and compresses, the postings
  add per-document bytes); nothing here is measured on Elasticsearch.

For the default keys (k=3 r=3) and the legacy segments (k=3 r=1) it also prints the share of planted neighbours at
each distance d = 3..8 that share a key with their query: beyond k, a lookup finds only those.

``*`` marks, for each k, the configuration with the fewest tables that expects < 1 random candidate per lookup at
100M documents (a summary line per k follows the table, "none" when no row qualifies).

The last line is machine-readable:
``RESULT default=k3r3 tables=20 measured_candidates_1m=X recall=Z`` (X measured for ``DEFAULT`` at ``--n``).

Run ``python bench/keys_tradeoff.py --help`` for options; ``--quick`` stores 200,000 SimHashes instead of 1M.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from math import comb

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from _common import flip_bits, fmt_table, random_u64  # noqa: E402
from es_simhash.lookup.keys import DEFAULT, MAX_KEY_BITS, SEGMENTS, LookupKeys  # noqa: E402

K_VALUES = range(3, 9)
R_VALUES = range(1, 6)
MAX_TABLES = 1000
MEASURE_MAX_EXPECTED = 5000.0
MEASURE_MAX_TABLES = 200
SIZES = (1_000_000, 10_000_000, 100_000_000)
MARK_SIZE = 100_000_000
BEYOND_MAX = 8  # the default and the legacy keys are also checked at distances k..BEYOND_MAX


# -- formatting ------------------------------------------------------------------------------------------------
def fmt_num(x: float) -> str:
    if x >= 1000:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 0.01:
        return f"{x:.3f}"
    return f"{x:.4f}"


def fmt_size(n: float) -> str:
    for div, unit in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            return f"{n / div:.3g}{unit}"
    return f"{n:.3g}"


def distinct_keys(lk: LookupKeys) -> int:
    """Tables whose keys differ: after the cut to 32 bits two tables can keep exactly the same SimHash bits
    (their keys are then always equal, so the second never brings a candidate the first did not)."""
    kept = set()
    for table in lk.tables:
        bits = [pos for b in table for pos in range(lk.blocks[b][0], lk.blocks[b][0] + lk.blocks[b][1])]
        kept.add(frozenset(bits[:MAX_KEY_BITS]))  # packed lowest block first; the cut keeps the low 32 bits
    return len(kept)


def es_term_bytes(n_tables: int) -> int:
    """Raw bytes of one document's terms ``"<table hex>:<key as 8 hex digits>"`` (as ``LookupKeys.terms``)."""
    return sum(len(f"{t:x}:") + 8 for t in range(n_tables))


# -- measurement -----------------------------------------------------------------------------------------------
def lookup_pairs(lk: LookupKeys, stored: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Distinct (query, row) pairs sharing at least one key, as ``query * len(stored) + row`` (int64, sorted).

    Per table: the stored keys are sorted together with their row numbers (one uint64 sort of key << 32 | row),
    each query key is located with ``searchsorted`` left and right, and the matching rows are expanded."""
    n = len(stored)
    if n >= 1 << 32:
        raise ValueError("row numbers must fit in 32 bits")
    skeys = lk.keys(stored)
    qkeys = lk.keys(queries)
    rows = np.arange(n, dtype=np.uint64)
    qidx = np.arange(len(queries), dtype=np.int64)
    found = []
    for t in range(lk.n_tables):
        packed = np.sort((skeys[:, t].astype(np.uint64) << np.uint64(32)) | rows)
        keys_sorted = (packed >> np.uint64(32)).astype(np.uint32)
        lo = np.searchsorted(keys_sorted, qkeys[:, t], side="left")
        hi = np.searchsorted(keys_sorted, qkeys[:, t], side="right")
        counts = hi - lo
        total = int(counts.sum())
        if not total:
            continue
        ends = np.cumsum(counts)
        pos = np.repeat(lo - ends + counts, counts) + np.arange(total)
        hit_rows = (packed[pos] & np.uint64(0xFFFFFFFF)).astype(np.int64)
        found.append(np.repeat(qidx, counts) * n + hit_rows)
    if not found:
        return np.empty(0, dtype=np.int64)
    return np.unique(np.concatenate(found))


def key_recall(lk: LookupKeys, queries: np.ndarray, neighbours: np.ndarray, m: int) -> float:
    """Fraction of planted neighbours (``m`` per query, query-major) sharing at least one key with their query."""
    qk = np.repeat(lk.keys(queries), m, axis=0)
    nk = lk.keys(neighbours)
    return float((qk == nk).any(axis=1).mean())


# -- main ------------------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000, help="stored random SimHashes for the measurement")
    ap.add_argument("--queries", type=int, default=2000, help="random query SimHashes")
    ap.add_argument("--neighbours", type=int, default=5, help="planted neighbours at distance k per query")
    ap.add_argument("--seed", type=int, default=20070508)
    ap.add_argument("--quick", action="store_true", help="store 200,000 SimHashes instead of --n")
    args = ap.parse_args(argv)
    n = 200_000 if args.quick else args.n
    t_start = time.perf_counter()

    print(f"python {platform.python_version()} ({platform.python_implementation()}), numpy {np.__version__}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs")
    print(f"parameters: n={n:,} stored random SimHashes, queries={args.queries:,}, "
          f"neighbours={args.neighbours} per query at distance exactly k, seed={args.seed}, "
          f"k={K_VALUES.start}..{K_VALUES.stop - 1}, r={R_VALUES.start}..{R_VALUES.stop - 1}, "
          f"tables <= {MAX_TABLES:,}, keys cut to {MAX_KEY_BITS} bits")
    print(f"measured only where expected candidates at n < {MEASURE_MAX_EXPECTED:,.0f} and tables <= "
          f"{MEASURE_MAX_TABLES}")
    print()

    rng = np.random.default_rng(args.seed)
    stored = random_u64(rng, n)
    queries = random_u64(rng, args.queries)
    m = args.neighbours
    qlist = queries.tolist()

    header = ["k", "r", "blocks", "tables", "distinct", "key bits", "N@1cand"]
    header += [f"exp@{fmt_size(s)}" for s in SIZES]
    if n not in SIZES:
        header.append(f"exp@{fmt_size(n)}")
    header += [f"MEASURED@{fmt_size(n)}", "recall", "keys/doc", "embedded B/doc", "ES raw term B/doc", "<1@100M"]
    rows = [header]
    marks: dict[int, str] = {}
    default_measured: float | None = None
    default_recall: float | None = None
    lookup_found = lookup_planted = 0
    min_recall = 1.0
    skipped = []

    for k in K_VALUES:
        neighbours = np.array([flip_bits(rng, q, k) for q in qlist for _ in range(m)], dtype=np.uint64)
        configs = []
        for r in R_VALUES:
            if comb(k + r, r) > MAX_TABLES:
                skipped.append(f"k={k} r={r} ({comb(k + r, r):,} tables)")
                continue
            configs.append(LookupKeys(k, r))
        qualifying = [lk for lk in configs if lk.expected_random_candidates(MARK_SIZE) < 1.0]
        best = min(qualifying, key=lambda lk: lk.n_tables) if qualifying else None
        marks[k] = (f"k={k}: r={best.r}, {best.n_tables} tables "
                    f"({fmt_num(best.expected_random_candidates(MARK_SIZE))} expected at 100M)" if best
                    else f"k={k}: none (no r <= {R_VALUES.stop - 1} with <= {MAX_TABLES:,} tables)")
        for lk in configs:
            t0 = time.perf_counter()
            bits = lk.key_bits
            exp_n = lk.expected_random_candidates(n)
            recall = key_recall(lk, queries, neighbours, m)
            min_recall = min(min_recall, recall)
            measured = "-"
            if exp_n < MEASURE_MAX_EXPECTED and lk.n_tables <= MEASURE_MAX_TABLES:
                # the planted neighbours are stored after the random rows and must come back by lookup
                pairs = lookup_pairs(lk, np.concatenate((stored, neighbours)), queries)
                total = n + len(neighbours)
                q_of, row_of = pairs // total, pairs % total
                random_hits = int((row_of < n).sum())
                own = (row_of >= n) & ((row_of - n) // m == q_of)
                lookup_found += int(own.sum())
                lookup_planted += len(neighbours)
                value = random_hits / len(queries)
                measured = f"{fmt_num(value)} ({random_hits:,})"
                if lk == DEFAULT:
                    default_measured = value
            if lk == DEFAULT:
                default_recall = recall
            row = [str(k), str(lk.r), str(k + lk.r), f"{lk.n_tables:,}", f"{distinct_keys(lk):,}",
                   f"{min(bits)}..{max(bits)}" if min(bits) != max(bits) else str(bits[0]),
                   fmt_size(1.0 / sum(2.0 ** -b for b in bits))]
            row += [fmt_num(lk.expected_random_candidates(s)) for s in SIZES]
            if n not in SIZES:
                row.append(fmt_num(exp_n))
            row += [measured, f"{recall:.4f}".rstrip("0").rstrip(".") if recall < 1 else "1.0",
                    f"{lk.n_tables:,}", f"{lk.n_tables * 8:,}", f"{es_term_bytes(lk.n_tables):,}",
                    "*" if lk is best else ""]
            rows.append(row)
            print(f"  k={k} r={lk.r}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)

    print(fmt_table(rows))
    print()
    print("k: every pair within k bits shares a key; r: blocks per key; tables = C(k+r, r) = keys per document.")
    print("distinct: tables whose keys are not always equal to another table's (after the cut to 32 bits).")
    print("key bits: width of each table's key after the cut to 32 bits; N@1cand: stored documents at which a "
          "lookup expects 1 random candidate.")
    print("exp@N: expected random candidates per lookup, sum over tables of N / 2**key_bits; MEASURED: stored "
          "random rows sharing >= 1 key with a random query, per query (in parentheses: distinct (query, row) "
          "pairs found over all queries). exp@N counts every table (a union bound); where distinct < tables, "
          "the repeated tables add to exp@N but never to MEASURED.")
    print("recall: planted neighbours at distance exactly k sharing >= 1 key with their query.")
    print("embedded B/doc: tables x (4-byte uint32 key + 4-byte row number), sorted per table.")
    print("ES raw term B/doc: tables x len('<table hex>:<8 hex digits>') -- raw term bytes of a keyword field, "
          "NOT a measured on-disk size. (The legacy k=3 r=1 segments are stored as seg0..seg3, 4 hex digits "
          "each: 16 raw term bytes.)")
    print(f"Keys have at most {MAX_KEY_BITS} bits, so each table adds at least 100M / 2**{MAX_KEY_BITS} = "
          f"{MARK_SIZE / 2 ** MAX_KEY_BITS:.4f} expected random candidates at 100M: < 1 is impossible with more "
          f"than {int((2 ** MAX_KEY_BITS - 1) // MARK_SIZE)} tables.")
    print("* fewest tables with < 1 expected random candidate per lookup at 100M documents, per k:")
    for k in K_VALUES:
        print(f"    {marks[k]}")
    if skipped:
        print(f"skipped (> {MAX_TABLES:,} tables): {', '.join(skipped)}")
    if lookup_planted:
        print(f"lookup path: {lookup_found:,} of {lookup_planted:,} planted neighbours (stored alongside the "
              f"random rows in the measured configs) came back by searchsorted lookup")
    beyond = range(DEFAULT.k, BEYOND_MAX + 1)
    print(f"share of planted neighbours at distance d sharing >= 1 key with their query ({len(qlist) * m:,} per d; "
          f"beyond k a lookup finds only these):")
    brow = [["keys"] + [f"d={d}" for d in beyond]]
    planted = {d: np.array([flip_bits(rng, q, d) for q in qlist for _ in range(m)], dtype=np.uint64) for d in beyond}
    for name, lk in (("default k=3 r=3", DEFAULT), ("segments k=3 r=1", SEGMENTS)):
        brow.append([name] + [f"{key_recall(lk, queries, planted[d], m):.3f}" for d in beyond])
    print(fmt_table(brow))
    print(f"(total run time {time.perf_counter() - t_start:.0f} s)")
    print(f"recall over all configs: min {min_recall}; lookup path recall "
          f"{lookup_found / max(lookup_planted, 1)}")
    ok = min_recall == 1.0 and lookup_found == lookup_planted
    x = "nan" if default_measured is None else f"{default_measured:.4f}"
    print(f"RESULT default=k{DEFAULT.k}r{DEFAULT.r} tables={DEFAULT.n_tables} measured_candidates_1m={x} "
          f"recall={default_recall}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
