#!/usr/bin/env python
"""MemoryIndex at scale: lookups/s, recall and precision against a brute-force scan, build/save/load cost.

The index holds ``--n`` (default 1,000,000) synthetic fingerprints with uniform random 64-bit SimHashes plus
planted neighbours: for each of ``--queries`` (default 2,000) random query fingerprints, one stored document at
each Hamming distance 0..K (K = ``--max-k``, default 3) and one at each distance K+1..K+3 made by flipping
random bits of the query's SimHash. Queries are not stored themselves, their content hashes are unique and
nobody has sentence hashes, so every candidate a lookup returns comes through the segment channel.

Measured:

* lookups/s of ``index.lookup([Lookup(qid, fp)], max_distance=k)`` one query at a time and batched
  (``--batch`` queries per call) for k = 0..K (one warm-up, then ``--repeats`` interleaved rounds; median);
* recall and precision for k = 0..K against a brute-force numpy scan (``es_simhash.hamming.distances`` over
  every stored SimHash): recall must be exactly 1.0 (every planted *and* every accidental neighbour within k)
  and nothing farther than k may come back;
* build time, memory (RSS delta of the process; ``--tracemalloc`` for Python allocations), ``save()`` size and
  time, ``load()`` time: information only.

Targets: >= 20,000 lookups/s (one at a time and batched, every k) and recall 1.0 for k <= 3.
Run ``python bench/memory_index.py --help`` for options.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import tempfile
import time
import tracemalloc
from typing import Callable, Sequence

import numpy as np

from es_simhash import hamming
from es_simhash.fingerprint import Fingerprint
from es_simhash.index.base import Lookup, StoredDoc
from es_simhash.index.memory import MemoryIndex
from _common import flip_bits, fmt_table, random_u64, verdicts  # noqa: E402

TARGET_LOOKUPS_PER_S = 20_000
BEYOND = 3  # planted neighbours at K+1..K+3 that must not come back


def rss_bytes() -> int:
    """Resident set size of this process (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0




def make_fp(simhash: int, content_hash: int) -> Fingerprint:
    return Fingerprint(simhash, content_hash, (), n_features=10, n_chars=500, short=False)


class Timed:
    def __init__(self, name: str, fn: Callable[[], object]) -> None:
        self.name, self.fn, self.times = name, fn, []

    def once(self) -> float:
        t0 = time.perf_counter()
        self.fn()
        return time.perf_counter() - t0

    @property
    def median(self) -> float:
        return statistics.median(self.times)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="MemoryIndex lookups/s, recall/precision vs brute force, build/save/load cost "
        "(synthetic random fingerprints with planted neighbours)."
    )
    ap.add_argument("--n", type=int, default=1_000_000, help="random fingerprints in the index (default 1,000,000)")
    ap.add_argument("--queries", type=int, default=2000, help="query fingerprints with planted neighbours (2,000)")
    ap.add_argument("--max-k", type=int, default=3, help="largest max_distance measured (default 3; <= 3 is exact)")
    ap.add_argument("--batch", type=int, default=1000, help="queries per lookup() call when batched (default 1,000)")
    ap.add_argument("--chunk", type=int, default=100_000, help="documents per add() call while building (100,000)")
    ap.add_argument("--repeats", type=int, default=3, help="timed rounds after one warm-up (default 3)")
    ap.add_argument("--passes", type=int, default=5,
                    help="passes over all queries in one timed round, so a round outlasts scheduler noise (default 5)")
    ap.add_argument("--seed", type=int, default=20240601, help="random seed (default 20240601)")
    ap.add_argument("--no-io", action="store_true", help="skip save()/load()")
    ap.add_argument("--tracemalloc", action="store_true", help="also measure Python allocations (slows the build)")
    ap.add_argument("--quick", action="store_true", help="small run (<30 s): --n 100,000 --queries 500")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.queries, args.passes = min(args.n, 100_000), min(args.queries, 500), min(args.passes, 2)
    if min(args.n, args.queries, args.batch, args.chunk, args.repeats, args.passes) < 1 or not 0 <= args.max_k <= 60:
        ap.error("sizes must be >= 1 and 0 <= --max-k <= 60")
    K = args.max_k
    t_start = time.perf_counter()
    rng = np.random.default_rng(args.seed)

    print("es-simhash MemoryIndex benchmark")
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, cpus {os.cpu_count()}; "
        f"n {args.n:,}, queries {args.queries:,}, k 0..{K}, batch {args.batch:,}, seed {args.seed}, "
        f"repeats {args.repeats} (median) of {args.passes} passes over the queries, 1 warm-up each"
    )

    # ---- data ----------------------------------------------------------------------------------------------
    base_sim = random_u64(rng, args.n)
    query_sim = random_u64(rng, args.queries)
    planted_sim, planted_dist, planted_query = [], [], []
    for qi, q in enumerate(query_sim.tolist()):
        for d in range(K + BEYOND + 1):
            planted_sim.append(flip_bits(rng, q, d))
            planted_dist.append(d)
            planted_query.append(qi)
    n_planted = len(planted_sim)
    all_sim = np.concatenate([base_sim, np.array(planted_sim, dtype=np.uint64)])
    total = len(all_sim)
    # unique content hashes (queries included): no candidate can come through the content channel
    content = random_u64(rng, total + args.queries)
    while len(np.unique(content)) != len(content):  # astronomically unlikely
        content = random_u64(rng, total + args.queries)
    ids = [f"r{i}" for i in range(args.n)] + [f"p{qi}.{d}" for qi, d in zip(planted_query, planted_dist)]
    pos_of = {doc_id: i for i, doc_id in enumerate(ids)}
    lookups = [
        Lookup(f"q{qi}", make_fp(s, c))
        for qi, (s, c) in enumerate(zip(query_sim.tolist(), content[total:].tolist()))
    ]
    print(f"\n== data: {args.n:,} random + {n_planted:,} planted ({K + BEYOND + 1} per query at distances "
          f"0..{K + BEYOND}) = {total:,} stored documents")

    # ---- build ---------------------------------------------------------------------------------------------
    gc.collect()
    if args.tracemalloc:
        tracemalloc.start()
    rss0 = rss_bytes()
    t0 = time.perf_counter()
    index = MemoryIndex()
    sims, chs = all_sim.tolist(), content[:total].tolist()
    for start in range(0, total, args.chunk):
        stop = min(total, start + args.chunk)
        index.add([StoredDoc(ids[i], make_fp(sims[i], chs[i]), cluster=ids[i]) for i in range(start, stop)])
    build_s = time.perf_counter() - t0
    del sims, chs
    gc.collect()
    rss1 = rss_bytes()
    traced = None
    if args.tracemalloc:
        traced = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
    assert len(index) == total
    mem_rows = [("build (info)", "value")]
    mem_rows.append(("add() in chunks of " + f"{args.chunk:,}", f"{build_s:.1f} s  ({total / build_s:,.0f} docs/s)"))
    mem_rows.append(("RSS delta (docs + index)", f"{(rss1 - rss0) / 2**20:,.0f} MiB  ({(rss1 - rss0) / total:,.0f} B/doc)"))
    if traced is not None:
        mem_rows.append(("tracemalloc (docs + index)", f"{traced / 2**20:,.0f} MiB  ({traced / total:,.0f} B/doc)"))
    print(fmt_table(mem_rows))

    # ---- brute force truth ---------------------------------------------------------------------------------
    t0 = time.perf_counter()
    truth: list[dict[int, int]] = []  # per query: position -> distance, for distance <= K
    for q in query_sim.tolist():
        d = hamming.distances(q, all_sim)
        hits = np.flatnonzero(d <= K)
        truth.append(dict(zip(hits.tolist(), d[hits].tolist())))
    brute_s = time.perf_counter() - t0
    accidental = sum(1 for qt in truth for p in qt if p < args.n)
    print(f"\n== brute force: {args.queries:,} full scans of {total:,} SimHashes in {brute_s:.1f} s "
          f"({args.queries / brute_s:,.0f} queries/s); neighbours within {K}: "
          f"{sum(map(len, truth)):,} ({accidental} accidental, not planted)")

    # ---- lookups: timing -----------------------------------------------------------------------------------
    def single(k: int) -> Callable[[], list]:
        return lambda: [index.lookup([q], max_distance=k)[0] for q in lookups]

    def batched(k: int) -> Callable[[], list]:
        return lambda: [
            r for j in range(0, len(lookups), args.batch) for r in index.lookup(lookups[j : j + args.batch], max_distance=k)
        ]

    def passes(fn: Callable[[], list]) -> Callable[[], None]:
        def run() -> None:
            for _ in range(args.passes):
                fn()

        return run

    results: dict[tuple[str, int], list] = {}
    systems: list[tuple[str, int, Timed]] = []
    for k in range(K + 1):
        for mode, make in (("single", single), ("batched", batched)):
            fn = make(k)
            tm = Timed(f"{mode} k={k}", passes(fn))
            results[(mode, k)] = fn()  # warm-up; its answers are checked below
            systems.append((mode, k, tm))
    for _ in range(args.repeats):
        for _, _, tm in systems:
            tm.times.append(tm.once())

    # ---- lookups: correctness ------------------------------------------------------------------------------
    quality: dict[int, dict[str, float]] = {}
    for k in range(K + 1):
        res = results[("batched", k)]
        same = [[c.id for c in r.candidates] for r in res] == [[c.id for c in r.candidates] for r in results[("single", k)]]
        want = found = returned = beyond = planted_want = planted_found = 0
        for qi, (r, q) in enumerate(zip(res, query_sim.tolist())):
            expected = {p for p, d in truth[qi].items() if d <= k}
            got = set()
            for c in r.candidates:
                returned += 1
                if (c.fingerprint.simhash ^ q).bit_count() > k:
                    beyond += 1
                got.add(pos_of[c.id])
            if r.existing is not None:
                beyond += 1  # queries are not stored: nothing may claim their id
            want += len(expected)
            found += len(expected & got)
            planted_want += sum(1 for p in expected if p >= args.n)
            planted_found += sum(1 for p in expected & got if p >= args.n)
        quality[k] = {
            "want": want, "found": found, "returned": returned, "beyond": beyond,
            "recall": found / want if want else 1.0,
            "precision": (returned - beyond) / returned if returned else 1.0,
            "planted": f"{planted_found:,}/{planted_want:,}", "same": same,
        }

    n_timed = len(lookups) * args.passes
    rows = [("k", "single lookups/s", "batched lookups/s", "recall", "precision", "found/expected",
             "planted found", "returned > k", "single==batched")]
    for k in range(K + 1):
        s = next(t for m, kk, t in systems if m == "single" and kk == k)
        b = next(t for m, kk, t in systems if m == "batched" and kk == k)
        qk = quality[k]
        rows.append((
            str(k), f"{n_timed / s.median:,.0f}", f"{n_timed / b.median:,.0f}",
            f"{qk['recall']:.6f}", f"{qk['precision']:.6f}", f"{qk['found']:,}/{qk['want']:,}", qk["planted"],
            str(qk["beyond"]), "yes" if qk["same"] else "NO",
        ))
    print(f"\n== lookups ({args.passes} x {len(lookups):,} queries per round; batched = {args.batch:,} per call)")
    print(fmt_table(rows))
    spread = ", ".join(
        f"{tm.name}: {n_timed / max(tm.times):,.0f}..{n_timed / min(tm.times):,.0f}" for _, _, tm in systems
    )
    print(f"(per-round range, lookups/s: {spread})")

    # ---- save / load ---------------------------------------------------------------------------------------
    io_rows = []
    if not args.no_io:
        with tempfile.TemporaryDirectory(prefix="es-simhash-bench-") as tmp:
            path = os.path.join(tmp, "index.npz")
            t0 = time.perf_counter()
            index.save(path)
            save_s = time.perf_counter() - t0
            size = os.path.getsize(path)
            t0 = time.perf_counter()
            loaded = MemoryIndex.load(path)
            load_s = time.perf_counter() - t0
        check = loaded.lookup(lookups, max_distance=K)
        same_after_load = len(loaded) == total and [[c.id for c in r.candidates] for r in check] == [
            [c.id for c in r.candidates] for r in results[("batched", K)]
        ]
        del loaded, check
        print("\n== persistence (info only, one run each)")
        print(fmt_table([
            ("operation", "value"),
            ("save() .npz", f"{save_s:.1f} s, {size / 2**20:,.1f} MiB ({size / total:.1f} B/doc)"),
            ("load()", f"{load_s:.1f} s"),
            (f"lookups after load == before (k={K})", "yes" if same_after_load else "NO"),
        ]))
        io_rows.append(same_after_load)

    # ---- verdict -------------------------------------------------------------------------------------------
    worst_single = min(n_timed / t.median for m, _, t in systems if m == "single")
    worst_batched = min(n_timed / t.median for m, _, t in systems if m == "batched")
    exact_ks = [k for k in range(K + 1) if k <= 3]
    recall_ok = all(quality[k]["recall"] == 1.0 for k in exact_ks)
    precision_ok = all(quality[k]["beyond"] == 0 for k in range(K + 1))
    consistent = all(quality[k]["same"] for k in range(K + 1)) and all(io_rows)
    print("\n== results")
    print(f"INFO build {build_s:.1f} s for {total:,} docs; RSS delta {(rss1 - rss0) / 2**20:,.0f} MiB")
    results_lines = [
        (worst_single >= TARGET_LOOKUPS_PER_S,
         f"one query per lookup() call: {worst_single:,.0f} lookups/s at the slowest k (target >= {TARGET_LOOKUPS_PER_S:,})"),
        (worst_batched >= TARGET_LOOKUPS_PER_S,
         f"batched ({args.batch:,} per call): {worst_batched:,.0f} lookups/s at the slowest k (target >= {TARGET_LOOKUPS_PER_S:,})"),
        (recall_ok,
         "recall vs brute force = " + ", ".join(f"{quality[k]['recall']:.6f} (k={k})" for k in exact_ks) + "  (target 1.0)"),
        (precision_ok,
         "nothing beyond k returned: " + ", ".join(f"{quality[k]['beyond']} (k={k})" for k in range(K + 1))),
        (consistent, "single == batched answers" + ("" if args.no_io else ", and the same after save()/load()")),
    ]
    return verdicts(results_lines, t_start, args.strict)


if __name__ == "__main__":
    sys.exit(main())
