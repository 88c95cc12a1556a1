#!/usr/bin/env python
"""MemoryIndex at scale: batched lookups/s and recall/precision against a brute-force scan, for the default
lookup keys (permutation tables) and, on the same data, the legacy four 16-bit segments; build/memory/save/load.

The index holds ``--n`` (default 1,000,000) synthetic fingerprints with uniform random 64-bit SimHashes plus
planted neighbours: for each of ``--queries`` (default 2,000) random query fingerprints, one stored document at
each Hamming distance 0..K (K = ``--max-k``, default 3) and one at each distance K+1..K+3 made by flipping
random bits of the query's SimHash. Queries are not stored themselves, their content hashes are unique and
nobody has sentence hashes, so every candidate a lookup returns comes through the lookup-key channel.

Two indexes are built on the same documents, both before any timing:

* ``tables``: ``MemoryIndex()`` with the default keys ``es_simhash.lookup.keys.DEFAULT`` (``LookupKeys(3, 3)``: 20
  permutation tables of 32-bit keys), the design under test;
* ``segments``: ``MemoryIndex(lookup_keys=SEGMENTS)`` (``LookupKeys(3, 1)``: the four 16-bit segments of
  earlier releases), for comparison only.

Each build is ``add()`` in chunks of ``--chunk`` documents followed by one empty ``lookup([])``, which sorts the
added rows into the index's runs (``MemoryIndex`` does that lazily, on the first lookup after writes), so the
build time and the memory figure include the sorted key tables.

Measured:

* batched lookups/s, ``index.lookup(queries[j:j + batch], contract=k)`` with ``--batch`` (default 1,000)
  queries per call, for k = 0..K, for both indexes (the default path: the native core's ``memory_lookup`` when
  ``es_simhash_native`` is installed, else numpy); for the default keys also through the numpy reference path
  (``index.native = False``) on the same index, in the same interleaved rounds, with the ratio native/numpy and a
  check that both paths give identical answers; one-at-a-time lookups/s (one query per call) for the
  default keys only. One warm-up, then ``--repeats`` rounds, every (index, mode, k) timed once per round,
  interleaved; the median round counts. A batched round is ``--batch-passes`` passes over all queries, a
  one-at-a-time round ``--passes`` passes. Before timing, a probe lookup of 64 queries (k = K) measures each
  index's peak memory (tracemalloc, numpy buffers included) and time per query; an index whose lookups do not
  scale as designed gets a smaller batch (so one call stays within ``--mem-budget`` GiB) and shorter rounds
  (about ``--round-s`` seconds: fewer passes, then only the first queries), and a NOTE line says so (at 1M the
  default keys need no cut; the recall check always looks up every query with the full batch size the memory
  budget allows);
* recall and precision for k = 0..K against a brute-force numpy scan (``es_simhash.lookup.hamming.distances`` over
  every stored SimHash), for both indexes: recall must be exactly 1.0 for k <= 3 (every planted *and* every
  accidental neighbour within k) and nothing farther than k may come back;
* consistency: one-at-a-time answers == batched answers, and (unless ``--no-io``) the answers after
  ``save()``/``load()`` == before; for information, whether both indexes give the same answers for k <= 3;
* the ratio of batched lookups/s tables / segments per k (information);
* build time, memory (RSS delta of the process around each build, documents included, in MiB and bytes per
  document; the default index is built first, on a clean process; ``--tracemalloc`` for its Python
  allocations), ``save()`` size and time, ``load()`` time of the default index: information only. The
  segments index is freed before ``save()``/``load()``;
* the load average at the start and the end: every figure is wall-clock time, so other processes competing
  for the cpus lower the lookups/s.

Targets (default keys, at 1M documents): >= 250,000 lookups/s batched (1,000 queries per call) at every k, and
recall 1.0 vs brute force for k = 0..3 with nothing beyond k returned. One-at-a-time lookups/s is information
(each call pays a fixed numpy overhead), as is everything about the segments index.

The last line is machine-readable: ``RESULT size=N lookups_per_s=X recall=Z``, N the number of stored
documents, X the batched lookups/s of the default keys through the default path (native when installed) at the
slowest k (an integer), Z the minimum recall of
the default keys over k = 0..min(K, 3).

Run ``python bench/memory_index.py --help`` for options; ``--quick`` is a small run (100,000 documents).
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from _common import flip_bits, fmt_table, random_u64, verdicts  # noqa: E402
from es_simhash.lookup import hamming  # noqa: E402
from es_simhash.fingerprint import Fingerprint  # noqa: E402
from es_simhash.index.base import Lookup, LookupResult
from es_simhash.records import StoredDoc
from es_simhash.index.memory import MemoryIndex  # noqa: E402
from es_simhash.lookup.keys import DEFAULT, SEGMENTS, LookupKeys  # noqa: E402

TARGET_BATCHED_LOOKUPS_PER_S = 250_000
BEYOND = 3  # planted neighbours at K+1..K+3 that must not come back
PROBE = 64  # queries of the probe lookup that sizes each index's batched rounds
EXACT_K = 3  # both key designs guarantee every neighbour within 3 bits shares a key
DESIGNS: tuple[tuple[str, LookupKeys], ...] = (("tables", DEFAULT), ("segments", SEGMENTS))


def rss_bytes() -> int:
    """Resident set size of this process (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def load_average() -> str:
    """The 1/5/15-minute load averages (Unix), to judge how much other work competed with the timings."""
    try:
        return "/".join(f"{x:.2f}" for x in os.getloadavg())
    except (AttributeError, OSError):
        return "n/a"


def make_fp(simhash: int, content_hash: int) -> Fingerprint:
    return Fingerprint(simhash, content_hash, (), n_features=10, n_chars=500, short=False)


def describe(keys: LookupKeys) -> str:
    bits = sorted(set(keys.key_bits))
    return f"LookupKeys({keys.k}, {keys.r}): {keys.n_tables} keys of {'/'.join(map(str, bits))} bits"


class Timed:
    """One timed system: ``fn`` answers ``n`` lookups per call; ``times`` are the rounds' seconds."""

    def __init__(self, name: str, fn: Callable[[], object], n: int) -> None:
        self.name, self.fn, self.n, self.times, self.cpu = name, fn, n, [], []

    def once(self) -> float:
        c0, t0 = time.process_time(), time.perf_counter()
        self.fn()
        dt = time.perf_counter() - t0
        self.cpu.append(time.process_time() - c0)
        self.times.append(dt)
        return dt

    @property
    def cpu_rate(self) -> float:
        """Lookups per CPU-second of this process in the median round (less sensitive to other processes)."""
        return self.n / statistics.median(self.cpu)

    @property
    def rate(self) -> float:
        """Lookups/s of the median round."""
        return self.n / statistics.median(self.times)

    def spread(self) -> str:
        return f"{self.name}: {self.n / max(self.times):,.0f}..{self.n / min(self.times):,.0f}"


def answer_ids(results: list[LookupResult]) -> list[list[str]]:
    return [[c.id for c in r.candidates] for r in results]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="MemoryIndex batched lookups/s and recall/precision vs brute force, default lookup keys "
        "(permutation tables) vs the legacy 16-bit segments; build/memory/save/load cost "
        "(synthetic random fingerprints with planted neighbours)."
    )
    ap.add_argument("--n", type=int, default=1_000_000, help="random fingerprints in the index (default 1,000,000)")
    ap.add_argument("--queries", type=int, default=2000, help="query fingerprints with planted neighbours (2,000)")
    ap.add_argument("--max-k", type=int, default=3, help="largest max_distance measured (default 3; <= 3 is exact)")
    ap.add_argument("--batch", type=int, default=1000, help="queries per lookup() call when batched (default 1,000)")
    ap.add_argument("--chunk", type=int, default=100_000, help="documents per add() call while building (100,000)")
    ap.add_argument("--repeats", type=int, default=5, help="timed rounds after one warm-up (default 5)")
    ap.add_argument("--passes", type=int, default=3,
                    help="passes over all queries in one timed one-at-a-time round (default 3)")
    ap.add_argument("--batch-passes", type=int, default=30,
                    help="passes over all queries in one timed batched round, so a round outlasts scheduler noise "
                    "(default 30)")
    ap.add_argument("--mem-budget", type=float, default=2.0,
                    help="GiB one batched lookup() call may allocate, as a probe estimates it; a larger batch is cut "
                    "(default 2; only an index that does not scale as designed reaches it)")
    ap.add_argument("--round-s", type=float, default=3.0,
                    help="seconds a batched timed round may take, as a probe estimates it, before its passes (then "
                    "its queries) are cut (default 3; only an index that does not scale as designed reaches it)")
    ap.add_argument("--seed", type=int, default=20240601, help="random seed (default 20240601)")
    ap.add_argument("--no-io", action="store_true", help="skip save()/load()")
    ap.add_argument("--gc-freeze", action="store_true",
                    help="gc.freeze() after the builds: the indexes' millions of objects leave the garbage collector's "
                    "generations, so no full collection (about 1 s here) lands in a timed round")
    ap.add_argument("--tracemalloc", action="store_true", help="also measure Python allocations (slows the build)")
    ap.add_argument("--quick", action="store_true",
                    help="small run (<30 s on an idle machine): --n 100,000 --queries 400, 3 repeats, fewer passes, "
                    "--round-s 0.3")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.queries = min(args.n, 100_000), min(args.queries, 400)
        args.passes, args.batch_passes = min(args.passes, 1), min(args.batch_passes, 10)
        args.repeats, args.round_s = min(args.repeats, 3), min(args.round_s, 0.3)
    if (min(args.n, args.queries, args.batch, args.chunk, args.repeats, args.passes, args.batch_passes) < 1
            or not 0 <= args.max_k <= 60 or min(args.mem_budget, args.round_s) <= 0):
        ap.error("sizes must be >= 1, --mem-budget and --round-s > 0, and 0 <= --max-k <= 60")
    K = args.max_k
    exact_ks = list(range(min(K, EXACT_K) + 1))
    t_start = time.perf_counter()
    rng = np.random.default_rng(args.seed)

    print("es-simhash MemoryIndex benchmark")
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, cpus {os.cpu_count()}; "
        f"n {args.n:,}, queries {args.queries:,}, k 0..{K}, batch {args.batch:,}, seed {args.seed}, "
        f"repeats {args.repeats} (median, interleaved) of {args.batch_passes} (batched) / {args.passes} "
        f"(one at a time) passes over the queries, 1 warm-up each"
    )
    print(f"load average at start {load_average()} (other processes competing for the cpus slow every figure)")
    print("keys: " + "; ".join(f"{name} = {describe(keys)}" for name, keys in DESIGNS))
    native = MemoryIndex.native
    print("default lookup path: " + ("native (es_simhash_native.memory_lookup), numpy timed beside it" if native
                                     else "numpy (es_simhash_native.memory_lookup not available: no native figures)"))

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

    # ---- build both indexes (before any timing, so the timing rounds can interleave) ----------------------
    def build(keys: LookupKeys, trace: bool) -> tuple[MemoryIndex, dict[str, float]]:
        gc.collect()
        if trace:
            tracemalloc.start()
        rss0 = rss_bytes()
        t0 = time.perf_counter()
        index = MemoryIndex(lookup_keys=keys)
        sims, chs = all_sim.tolist(), content[:total].tolist()
        for start in range(0, total, args.chunk):
            stop = min(total, start + args.chunk)
            index.add([StoredDoc(ids[i], make_fp(sims[i], chs[i]), cluster=ids[i]) for i in range(start, stop)])
        t1 = time.perf_counter()
        index.lookup([], contract=0)  # sorts the added rows into runs (done lazily on the first lookup)
        t2 = time.perf_counter()
        del sims, chs
        gc.collect()
        rss1 = rss_bytes()
        info = {"add_s": t1 - t0, "sort_s": t2 - t1, "rss": float(rss1 - rss0)}
        if trace:
            info["traced"] = float(tracemalloc.get_traced_memory()[0])
            tracemalloc.stop()
        assert len(index) == total
        return index, info

    indexes: dict[str, MemoryIndex] = {}
    build_info: dict[str, dict[str, float]] = {}
    for name, keys in DESIGNS:  # the default keys first: their RSS delta is measured on a clean process
        indexes[name], build_info[name] = build(keys, args.tracemalloc and name == "tables")
    mem_rows = [("build (info)", "add() in chunks of " + f"{args.chunk:,}", "first lookup (sort into runs)",
                 "total", "RSS delta (docs + index)")]
    for name, _ in DESIGNS:
        b = build_info[name]
        build_s = b["add_s"] + b["sort_s"]
        mem_rows.append((
            name, f"{b['add_s']:.1f} s", f"{b['sort_s']:.1f} s", f"{build_s:.1f} s ({total / build_s:,.0f} docs/s)",
            f"{b['rss'] / 2**20:,.0f} MiB ({b['rss'] / total:,.0f} B/doc)",
        ))
    print(fmt_table(mem_rows))
    if "traced" in build_info["tables"]:
        traced = build_info["tables"]["traced"]
        print(f"tracemalloc (tables, docs + index): {traced / 2**20:,.0f} MiB ({traced / total:,.0f} B/doc)")
    print(f"(process RSS with both indexes: {rss_bytes() / 2**30:.2f} GiB)")
    if args.gc_freeze:
        gc.collect()
        gc.freeze()
        print(f"gc.freeze(): {gc.get_freeze_count():,} objects moved to the permanent generation")

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
    def single(index: MemoryIndex, k: int) -> Callable[[], list]:
        return lambda: [index.lookup([q], contract=k)[0] for q in lookups]

    def batched(index: MemoryIndex, k: int, batch: int, queries: list[Lookup]) -> Callable[[], list]:
        return lambda: [
            r for j in range(0, len(queries), batch) for r in index.lookup(queries[j : j + batch], contract=k)
        ]

    def batched_numpy(index: MemoryIndex, k: int, batch: int, queries: list[Lookup]) -> Callable[[], list]:
        """The same batched lookups through the numpy reference path (``MemoryLookups.key_pairs``)."""
        fn = batched(index, k, batch, queries)

        def run() -> list:
            index.native = False
            try:
                return fn()
            finally:
                del index.native  # back to the class default

        return run

    def gathers_alone(index: MemoryIndex, k: int, batch: int, queries: list[Lookup]) -> Callable[[], None]:
        """Only the random memory reads a batched lookup makes (directory slots, keys, row numbers, SimHashes),
        their positions worked out beforehand, untimed: the floor of this layout, whatever the code around it."""
        from es_simhash.index.memory import runs as m

        prepared = []
        for j in range(0, len(queries), batch):
            sims = np.array([q.fingerprint.simhash for q in queries[j : j + batch]], dtype=np.uint64)
            qkeys = m.scrambled(index.lookup_keys.keys(sims))
            for run in index.store.runs:
                where = ((qkeys >> np.uint32(m.MAX_KEY_BITS - run.bits)).astype(np.int64)
                         + np.arange(qkeys.shape[1], dtype=np.int64) * (1 << run.bits)).ravel()
                lo = run.offsets[where]
                counts = run.offsets[where + 1] - lo
                nz = np.flatnonzero(counts)
                pos = m.expand(lo[nz], counts[nz])
                match = run.keys[pos] == qkeys.ravel()[np.repeat(nz, counts[nz])]
                prepared.append((run, where, pos, pos[match]))

        def run_gathers() -> None:
            for run, where, pos, matched in prepared:
                run.offsets[where]
                run.offsets[where + 1]
                run.keys[pos]
                index.store.simhash[run.rows[matched]]

        return run_gathers

    def passes(fn: Callable[[], list], n: int) -> Callable[[], None]:
        def run() -> None:
            for _ in range(n):
                fn()

        return run

    def plan(name: str) -> dict[str, float]:
        """Batch size, passes and timed queries of one index's batched rounds. A probe (``PROBE`` queries in one
        call at k = K) measures the peak memory (tracemalloc, numpy included) and time per query; the batch is cut
        so a call stays within ``--mem-budget`` and a round within about ``--round-s`` seconds (fewer passes,
        then the first queries only). For an index that scales as designed nothing is cut."""
        index, probe = indexes[name], lookups[:PROBE]
        index.lookup(probe, contract=K)
        gc.collect()
        tracemalloc.start()
        index.lookup(probe, contract=K)
        peak = tracemalloc.get_traced_memory()[1] / len(probe)
        tracemalloc.stop()
        t0 = time.perf_counter()
        index.lookup(probe, contract=K)
        per_q = (time.perf_counter() - t0) / len(probe)
        batch = max(1, min(args.batch, int(args.mem_budget * 2**30 // max(peak, 1.0))))
        n_passes, n_queries = args.batch_passes, len(lookups)
        if n_passes * n_queries * per_q > args.round_s:
            n_passes = max(1, int(args.round_s / (n_queries * per_q)))
            if n_queries * per_q > args.round_s:
                n_queries = min(len(lookups), max(1, int(args.round_s / per_q)))
        return {"batch": batch, "passes": n_passes, "queries": n_queries, "peak": peak, "per_q": per_q}

    plans = {name: plan(name) for name, _ in DESIGNS}
    for name, _ in DESIGNS:
        pl = plans[name]
        cut = []
        if pl["batch"] < min(args.batch, len(lookups)):
            cut.append(f"batch cut to {pl['batch']:,} queries per call (--mem-budget {args.mem_budget:g} GiB)")
        if pl["passes"] < args.batch_passes or pl["queries"] < len(lookups):
            cut.append(f"timed rounds cut to {pl['passes']} pass(es) over the first {pl['queries']:,} queries, "
                       f"{min(pl['batch'], pl['queries']):,} per call (--round-s {args.round_s:g}; the recall check "
                       f"still looks up all {len(lookups):,})")
        if cut:
            print(f"NOTE {name}: a {min(PROBE, len(lookups))}-query probe lookup at k={K} peaked at "
                  f"{pl['peak'] / 2**20:,.2f} MiB and took {pl['per_q'] * 1e3:,.2f} ms per query: " + "; ".join(cut))

    results: dict[tuple[str, str, int], list[LookupResult]] = {}
    timed: dict[tuple[str, str, int], Timed] = {}
    for k in range(K + 1):
        fn = single(indexes["tables"], k)
        results[("tables", "single", k)] = fn()  # warm-up; its answers are checked below
        timed[("tables", "single", k)] = Timed(f"tables single k={k}", passes(fn, args.passes),
                                               len(lookups) * args.passes)
        for name, _ in DESIGNS:
            pl = plans[name]
            batch, n_passes, n_queries = int(pl["batch"]), int(pl["passes"]), int(pl["queries"])
            results[(name, "batched", k)] = batched(indexes[name], k, batch, lookups)()  # warm-up, checked below
            fn = batched(indexes[name], k, batch, lookups[:n_queries])
            timed[(name, "batched", k)] = Timed(f"{name} batched k={k}", passes(fn, n_passes), n_queries * n_passes)
            if name == "tables" and native:
                results[(name, "numpy", k)] = batched_numpy(indexes[name], k, batch, lookups)()
                fn = batched_numpy(indexes[name], k, batch, lookups[:n_queries])
                timed[(name, "numpy", k)] = Timed(f"{name} numpy batched k={k}", passes(fn, n_passes),
                                                  n_queries * n_passes)
    pt = plans["tables"]
    timed[("tables", "gathers", K)] = Timed(
        f"tables memory reads alone k={K}",
        passes(gathers_alone(indexes["tables"], K, int(pt["batch"]), lookups[: int(pt["queries"])]), int(pt["passes"])),
        int(pt["queries"]) * int(pt["passes"]))
    for _ in range(args.repeats):
        for tm in timed.values():
            tm.once()

    # ---- lookups: correctness ------------------------------------------------------------------------------
    def assess(res: list[LookupResult], k: int) -> dict:
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
        return {
            "want": want, "found": found, "returned": returned, "beyond": beyond,
            "recall": found / want if want else 1.0,
            "precision": (returned - beyond) / returned if returned else 1.0,
            "planted": f"{planted_found:,}/{planted_want:,}",
        }

    quality: dict[tuple[str, int], dict] = {}
    for k in range(K + 1):
        for name, _ in DESIGNS:
            quality[(name, k)] = assess(results[(name, "batched", k)], k)
        quality[("tables", k)]["same"] = (
            answer_ids(results[("tables", "batched", k)]) == answer_ids(results[("tables", "single", k)]))
        quality[("tables", k)]["same_numpy"] = (not native or [
            (r.existing, [c.id for c in r.candidates], r.sentence_df) for r in results[("tables", "batched", k)]] == [
            (r.existing, [c.id for c in r.candidates], r.sentence_df) for r in results[("tables", "numpy", k)]])
        quality[("segments", k)]["same_as_tables"] = (
            answer_ids(results[("segments", "batched", k)]) == answer_ids(results[("tables", "batched", k)]))

    rows = [("k", "batched lookups/s", "numpy path batched/s", "native/numpy", "one-at-a-time lookups/s (info)",
             "recall", "precision", "found/expected", "planted found", "returned > k", "single==batched",
             "native==numpy")]
    for k in range(K + 1):
        qk = quality[("tables", k)]
        rate = timed[("tables", "batched", k)].rate
        np_rate = timed[("tables", "numpy", k)].rate if native else None
        rows.append((
            str(k), f"{rate:,.0f}", f"{np_rate:,.0f}" if np_rate else "-", f"{rate / np_rate:.2f}x" if np_rate else "-",
            f"{timed[('tables', 'single', k)].rate:,.0f}",
            f"{qk['recall']:.6f}", f"{qk['precision']:.6f}", f"{qk['found']:,}/{qk['want']:,}", qk["planted"],
            str(qk["beyond"]), "yes" if qk["same"] else "NO",
            ("yes" if qk["same_numpy"] else "NO") if native else "-",
        ))
    pt = plans["tables"]
    print(f"\n== lookups, default keys (tables; batched: {pt['passes']} x {pt['queries']:,} queries per round, "
          f"{min(pt['batch'], pt['queries']):,} per call; one at a time: {args.passes} x {len(lookups):,} per round)")
    print(fmt_table(rows))

    ps = plans["segments"]
    rows = [("k", "tables batched/s", "segments batched/s", "tables/segments", "segments recall",
             "segments precision", "segments returned > k", "same answers as tables")]
    for k in range(K + 1):
        qs = quality[("segments", k)]
        t_rate, s_rate = timed[("tables", "batched", k)].rate, timed[("segments", "batched", k)].rate
        rows.append((
            str(k), f"{t_rate:,.0f}", f"{s_rate:,.0f}", f"{t_rate / s_rate:.2f}x", f"{qs['recall']:.6f}",
            f"{qs['precision']:.6f}", str(qs["beyond"]), "yes" if qs["same_as_tables"] else "no",
        ))
    print(f"\n== tables vs legacy segments, same data, interleaved rounds (information; segments batched: "
          f"{ps['passes']} x {ps['queries']:,} queries per round, {min(ps['batch'], ps['queries']):,} per call)")
    print(fmt_table(rows))
    print("(per-round range, lookups/s: " + ", ".join(tm.spread() for tm in timed.values()) + ")")

    # the segments index is no longer needed: free it before save()/load() makes a third index
    seg_quality = {k: quality[("segments", k)] for k in range(K + 1)}
    seg_rates = {k: timed[("segments", "batched", k)].rate for k in range(K + 1)}
    index = indexes.pop("tables")
    indexes.clear()
    results = {key: v for key, v in results.items() if key == ("tables", "batched", K)}
    timed_rates = {key: tm.rate for key, tm in timed.items() if key[0] == "tables"}
    cpu_rates = {key: tm.cpu_rate for key, tm in timed.items() if key[0] == "tables"}
    del timed
    gc.collect()

    # ---- save / load ---------------------------------------------------------------------------------------
    io_ok: list[bool] = []
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
        check = loaded.lookup(lookups, contract=K)
        same_after_load = (len(loaded) == total and loaded.lookup_keys == index.lookup_keys
                           and answer_ids(check) == answer_ids(results[("tables", "batched", K)]))
        del loaded, check
        print("\n== persistence, default keys (info only, one run each)")
        print(fmt_table([
            ("operation", "value"),
            ("save() .npz", f"{save_s:.1f} s, {size / 2**20:,.1f} MiB ({size / total:.1f} B/doc)"),
            ("load()", f"{load_s:.1f} s"),
            (f"lookups after load == before (k={K})", "yes" if same_after_load else "NO"),
        ]))
        io_ok.append(same_after_load)

    # ---- verdict -------------------------------------------------------------------------------------------
    batched_rates = {k: timed_rates[("tables", "batched", k)] for k in range(K + 1)}
    slow_k = min(batched_rates, key=batched_rates.__getitem__)
    worst_batched = batched_rates[slow_k]
    worst_single = min(timed_rates[("tables", "single", k)] for k in range(K + 1))
    worst_seg_k = min(seg_rates, key=seg_rates.__getitem__)
    min_recall = min(quality[("tables", k)]["recall"] for k in exact_ks)
    recall_ok = min_recall == 1.0
    precision_ok = all(quality[("tables", k)]["beyond"] == 0 for k in range(K + 1))
    consistent = all(quality[("tables", k)]["same"] for k in range(K + 1)) and all(io_ok)
    native_same = all(quality[("tables", k)]["same_numpy"] for k in range(K + 1))
    seg_recall_ok = all(seg_quality[k]["recall"] == 1.0 for k in exact_ks)
    seg_beyond = sum(seg_quality[k]["beyond"] for k in range(K + 1))
    same_designs = all(seg_quality[k]["same_as_tables"] for k in exact_ks)
    t, s = build_info["tables"], build_info["segments"]
    print("\n== results")
    print(f"INFO build (tables) {t['add_s'] + t['sort_s']:.1f} s for {total:,} docs; RSS delta "
          f"{t['rss'] / 2**20:,.0f} MiB ({t['rss'] / total:,.0f} B/doc); segments: "
          f"{s['add_s'] + s['sort_s']:.1f} s, {s['rss'] / 2**20:,.0f} MiB ({s['rss'] / total:,.0f} B/doc)")
    print(f"INFO load average at the end {load_average()}, cpus {os.cpu_count()}")
    cpu_rate = cpu_rates[("tables", "batched", slow_k)]
    print(f"INFO batched, default keys, per CPU-second of this process (other load on the machine affects it less): "
          f"{cpu_rate:,.0f} lookups/s at k={slow_k}")
    print(f"INFO the random memory reads alone (directory, keys, rows, SimHashes; positions worked out beforehand): "
          f"{cpu_rates[('tables', 'gathers', K)]:,.0f} lookups/s per CPU-second at k={K}, "
          f"{timed_rates[('tables', 'gathers', K)]:,.0f}/s wall: the ceiling of this layout in numpy on this machine")
    if native:
        np_rates = {k: timed_rates[("tables", "numpy", k)] for k in range(K + 1)}
        np_slow = min(np_rates.values())
        print(f"INFO batched, default keys, numpy reference path on the same index, same rounds: {np_slow:,.0f} "
              f"lookups/s at its slowest k ({cpu_rates[('tables', 'numpy', min(np_rates, key=np_rates.__getitem__))]:,.0f} "
              f"per CPU-second); native/numpy "
              + ", ".join(f"{batched_rates[k] / np_rates[k]:.2f}x (k={k})" for k in range(K + 1))
              + f"; at the slowest k: {worst_batched / np_slow:.2f}x")
    print(f"INFO one query per lookup() call (tables): {worst_single:,.0f} lookups/s at the slowest k "
          f"(no target: each call has a fixed numpy overhead)")
    print(f"INFO legacy segments, batched ({min(int(ps['batch']), int(ps['queries'])):,} per call): "
          f"{seg_rates[worst_seg_k]:,.0f} lookups/s at the slowest k (k={worst_seg_k}); "
          f"recall {'1.0' if seg_recall_ok else 'BELOW 1.0'} for k <= {exact_ks[-1]}, {seg_beyond} returned beyond k, "
          f"answers {'identical to' if same_designs else 'DIFFERENT from'} tables for k <= {exact_ks[-1]}")
    print("INFO batched lookups/s tables/segments: "
          + ", ".join(f"{batched_rates[k] / seg_rates[k]:.2f}x (k={k})" for k in range(K + 1))
          + f"; at the slowest k: {worst_batched / seg_rates[worst_seg_k]:.2f}x")
    results_lines = [
        (worst_batched >= TARGET_BATCHED_LOOKUPS_PER_S,
         f"batched ({min(int(pt['batch']), int(pt['queries'])):,} per call), default keys, "
         f"{'native' if native else 'numpy'} path: "
         f"{worst_batched:,.0f} lookups/s at the slowest k (k={slow_k}) with {total:,} documents "
         f"(target >= {TARGET_BATCHED_LOOKUPS_PER_S:,} at 1M)"),
        (recall_ok,
         "recall vs brute force = " + ", ".join(f"{quality[('tables', k)]['recall']:.6f} (k={k})" for k in exact_ks)
         + "  (target 1.0)"),
        (precision_ok,
         "nothing beyond k returned: "
         + ", ".join(f"{quality[('tables', k)]['beyond']} (k={k})" for k in range(K + 1))),
        (consistent, "one-at-a-time == batched answers" + ("" if args.no_io else ", and the same after save()/load()")),
    ]
    if native:
        results_lines.append((native_same, "native == numpy answers (candidates in order, existing, sentence_df), "
                              f"k = 0..{K}"))
    code = verdicts(results_lines, t_start, args.strict)
    print(f"RESULT size={total} lookups_per_s={round(worst_batched)} recall={min_recall}")
    return code


if __name__ == "__main__":
    sys.exit(main())
