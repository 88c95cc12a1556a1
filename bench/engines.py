#!/usr/bin/env python
"""The same lookups on Elasticsearch and OpenSearch, in one run on one machine: batched lookups/s and recall.

**What**: ``ElasticIndex.lookup`` (the real backend, permutation-table keys ``LookupKeys(3, 3)``, the shipped
template) answering the same queries over the same ``--size`` (default 1,000,000) stored fingerprints on an
Elasticsearch node and on an OpenSearch node; how many lookups per second each answers in batches of 500, and
its recall at k = 3 against a brute-force scan.

**How**: ``bench/lookup.py``'s own data, loading and ground truth (imported, not copied): uniform random 64-bit
SimHashes plus, for each of ``--queries`` (1,000) random query fingerprints (not stored), one planted neighbour at
each Hamming distance 0..5 (``lookup.make_data``); one index per engine made by ``ensure_index`` (0 replicas, the
node query cache off while it is empty unless ``--query-cache``: the passes replay identical queries;
``lookup.create_index``), loaded in ``ElasticIndex.add``'s layout with the ``lookup_keys`` terms by a pool of
``--load-threads`` threads sending chunks of ``--load-chunk`` documents with ``client.streaming_bulk``, refreshes
off, then a refresh and a force-merge to ``--merge-segments`` segment(s) (``lookup.load``; one engine after the
other, each with the machine to itself); the ground truth is ``lookup.ground_truth`` (numpy popcount over every
stored SimHash, cross-checked with a SWAR popcount). Then ``--warmup`` (2) untimed passes and ``--passes`` (7)
timed passes, interleaved ES, OS, ES, OS, ...: each pass is ``--sweeps`` (3) sweeps of
``index.lookup(queries[i:i + 500], 3)`` over the queries (``lookup.run_batched``); the figure per engine is the
median over its passes. Recall: every query looked up again in batches of 500 at k = 3 and compared with the
brute force (found / true neighbours within 3 bits; anything farther returned is counted too: the neighbours
planted at 4 and 5 bits must not come back). Both must be 1.0 with nothing beyond k (PASS/FAIL lines).

Both nodes run on this machine at once (each idle while the other is measured; they share the two cores with this
client, which also does the client-side matching). The last line is::

    RESULT size=N es_lookups_per_s=X os_lookups_per_s=Y os_vs_es=R es_recall=A os_recall=B os_engine=opensearch-VERSION

with R = Y / X.

**Nodes**: ``--es-url`` / ``--os-url`` name running nodes (neither is read from ``ES_URL``, which may name either
engine; the engine each answers with is checked); a node not named is started privately with
``scripts/es_node.py`` (``--es-version``, ``--os-version``: default that script's pinned 9.5.2 and 2.19.6; heap
``--heap``, 2g) and stopped, its folder removed, at the end, also on an error, Ctrl-C or SIGTERM. The indexes made
are dropped at the end on both.

**Options**: ``--size`` (1,000,000), ``--queries`` (1,000), ``--passes`` (7), ``--warmup`` (2), ``--sweeps``
(3), ``--batch`` (500), ``--merge-segments`` (1), ``--load-chunk`` (5,000), ``--load-threads`` (2),
``--query-cache``, ``--seed``, ``--es-url``, ``--os-url``, ``--es-version``, ``--os-version``, ``--heap``,
``--strict`` (exit 1 when a check fails).

**Run time** on this 2-core machine (24 GB), MEASURED at ``--size 100000`` with both nodes private (Elasticsearch
9.5.2, OpenSearch 2.19.6, heap 2g each): 90 s in all with the machine otherwise quiet (load average 2.9 during the
passes: nodes started in 12 + 8 s, loads 25 + 27 s, passes and recall ~15 s; 4,297 vs 4,239 lookups/s, os_vs_es
0.99), and 164-290 s in five runs while other test runs shared the machine (load average 5-7: loads 50-71 s on
Elasticsearch, 51-87 s on OpenSearch; os_vs_es 0.87-1.14 from run to run, so on a shared machine trust the ratio
only to +-15 %). ``--size 20000`` with ``--os-version 3.3.2``: 50 s, os_vs_es 1.00.

At the default 1,000,000, MEASURED (one run, both nodes private, heap 2g, load average up to 2.5 during the
passes): 355 s in all; loads 138 s (Elasticsearch: bulk 110 s, force-merge 26 s) and 170 s (OpenSearch: bulk 139 s,
force-merge 24 s); 474 and 461 bytes per document; ``RESULT size=1000000 es_lookups_per_s=3003
os_lookups_per_s=3010 os_vs_es=1.00 es_recall=1.0000 os_recall=1.0000 os_engine=opensearch-2.19.6`` (passes
2,541-3,361 and 2,687-3,432 lookups/s). Memory: two 2g heaps plus the index files in the page cache.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import signal
import sys
import time
from typing import Any, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import _es  # noqa: E402
import lookup  # noqa: E402  (bench/lookup.py: data, loading, ground truth, timing, recall)

K = lookup.K
ENGINES = ("es", "os")
WANT = {"es": "elasticsearch", "os": "opensearch"}


def _connect(url: str, key: str):
    """The ``connect`` client of ``url``; exits (in one line) when the node is not the engine expected."""
    client = _es.client_for(url)
    if client.engine != WANT[key]:
        client.close()
        raise SystemExit(f"engines.py: --{key}-url {url} is {client.engine}, not {WANT[key]}")
    return client


def load_engine(key: str, out: dict[str, Any], config: dict, data, args) -> None:
    """Create and load one engine's index: sets ``name`` (as soon as it exists: it is dropped at the end),
    ``index`` and ``load`` in ``out`` (which holds its ``client`` and ``url``)."""
    from es_simhash.index.elastic import ElasticIndex
    from es_simhash.lookup.keys import DEFAULT

    sims, contents = data[0], data[1]
    client, url = out["client"], out["url"]
    out["name"] = lookup.create_index(client, config, len(sims), "tables", args.query_cache)
    index = ElasticIndex(client, out["name"], url=url)
    assert index.lookup_keys == DEFAULT, index.lookup_keys
    out["index"] = index
    out["load"] = ld = lookup.load(client, index, sims, contents, args.load_chunk, args.load_threads,
                                   args.merge_segments)
    print(f"load {key} ({out['name']}): {ld['total_s']:.0f} s = bulk {ld['bulk_s']:.0f} s "
          f"({len(sims) / ld['bulk_s']:,.0f} docs/s, {args.load_threads} threads x {args.load_chunk}, terms "
          f"{ld['terms_s']:.1f} s of it) + refresh {ld['refresh_s']:.1f} s + force-merge to {args.merge_segments} "
          f"segment(s) {ld['merge_s']:.1f} s", flush=True)


def measure(engines: dict[str, dict[str, Any]], queries, truth, args) -> None:
    """Warm-up, interleaved timed passes and recall; the figures go into ``engines[key]``."""
    for p in range(args.warmup):  # warm-up (untimed), interleaved as the timed passes
        rates = [f"{key} {lookup.run_batched(e['index'], queries, args.batch, args.sweeps)[0]:7,.0f}/s"
                 for key, e in engines.items()]
        print(f"  warm-up {p + 1} (untimed): " + ", ".join(rates), flush=True)
    loadavg = os.getloadavg()[0]
    for e in engines.values():
        e["rates"] = []
    for p in range(args.passes):
        line = []
        for key, e in engines.items():
            rate, _, counters = lookup.run_batched(e["index"], queries, args.batch, args.sweeps)
            e["rates"].append(rate)
            e.setdefault("counters", counters)  # (of the first pass: one sweep)
            line.append(f"{key} {rate:7,.0f}/s")
        loadavg = max(loadavg, os.getloadavg()[0])
        print(f"  pass {p + 1}: " + ", ".join(line), flush=True)
    for key, e in engines.items():
        e["rate"] = _es.median(e["rates"])
        e["recall"] = lookup.batched_recall(e["index"], queries, truth, K, args.batch)
        e["store_bytes"], e["segments"], docs = _es.store_stats(e["client"], e["name"])
        assert docs == args.size, (key, docs, args.size)
    engines["es"]["loadavg"] = loadavg


def report(engines: dict[str, dict[str, Any]], versions: dict[str, str], args, n_queries: int,
           t_start: float) -> int:
    es, os_ = engines["es"], engines["os"]
    n = args.size

    def recall(e) -> float:
        expected, found, _ = e["recall"]
        return found / expected if expected else 1.0

    rows = [("metric", "es", "os", "os/es")]

    def row(label: str, fn, fmt, ratio: bool = True) -> None:
        a, b = fn(es), fn(os_)
        rows.append((label, fmt(a), fmt(b), f"{b / a:.2f}x" if ratio and a else ""))

    i0 = lambda v: f"{v:,.0f}"  # noqa: E731
    row("load s (bulk + refresh + force-merge)", lambda e: e["load"]["total_s"], i0)
    row("  bulk docs/s", lambda e: n / e["load"]["bulk_s"], i0)
    row("  force-merge s", lambda e: e["load"]["merge_s"], lambda v: f"{v:.1f}")
    row("index store bytes per doc", lambda e: e["store_bytes"] / n, i0)
    row("  segments", lambda e: e["segments"], i0, False)
    row(f"batched {args.batch}/call lookups/s (median of {args.passes})", lambda e: e["rate"], i0)
    row("  slowest pass", lambda e: min(e["rates"]), i0)
    row("  fastest pass", lambda e: max(e["rates"]), i0)
    row(f"searches per {args.batch}-lookup call", lambda e: e["counters"]["searches"] * args.batch / n_queries,
        lambda v: f"{v:.2f}")
    row("hits read per lookup (before re-rank)", lambda e: e["counters"]["hits_read"] / n_queries,
        lambda v: f"{v:.2f}")
    row(f"recall k={K} (true neighbours {es['recall'][0]:,})", recall, lambda v: f"{v:.4f}", False)
    row(f"returned beyond k={K}", lambda e: e["recall"][2], i0, False)
    print(f"\n== {n:,} fingerprints, {n_queries:,} queries, batches of {args.batch}: es = {versions['es']}, os = "
          f"{versions['os']}; {args.passes} interleaved passes (es, os, es, os, ...) of {args.sweeps} sweeps; load "
          f"average up to {es['loadavg']:.1f} on {os.cpu_count()} CPUs during the passes")
    print(_es.fmt_table(rows))
    for key in ENGINES:
        print(f"{key} passes: {', '.join(f'{x:,.0f}' for x in engines[key]['rates'])}")
    checks = []
    for key in ENGINES:
        expected, found, extra = engines[key]["recall"]
        checks.append((found == expected and extra == 0,
                       f"recall at {n:,}, {versions[key]}, k = {K}: {found:,}/{expected:,} = "
                       f"{recall(engines[key]):.4f}, beyond k {extra}  (target 1.0, 0)"))
    code = _es.verdicts(checks, t_start, args.strict)
    os_version = versions["os"].split()[-1]
    print(f"RESULT size={n} es_lookups_per_s={round(es['rate'])} os_lookups_per_s={round(os_['rate'])} "
          f"os_vs_es={os_['rate'] / es['rate']:.2f} es_recall={recall(es):.4f} os_recall={recall(os_):.4f} "
          f"os_engine=opensearch-{os_version}")
    return code


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="The same ElasticIndex lookups on Elasticsearch and OpenSearch in one run: batched "
        "lookups/s (batches of 500, interleaved passes, median) and recall at k=3 against brute force, over the "
        "same --size synthetic fingerprints (bench/lookup.py's data and loading). Starts the nodes not given by "
        "--es-url / --os-url and stops them at the end.")
    ap.add_argument("--size", type=int, default=1_000_000, help="stored fingerprints (default 1,000,000)")
    ap.add_argument("--passes", type=int, default=7, help="interleaved timed passes per engine (median; default 7)")
    ap.add_argument("--sweeps", type=int, default=3, help="sweeps over the queries per pass (default 3)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed interleaved passes before the timed ones "
                    "(default 2)")
    ap.add_argument("--batch", type=int, default=500, help="lookups per ElasticIndex.lookup call (default 500)")
    lookup.add_load_options(ap)
    ap.add_argument("--es-url", default=None, help="a running Elasticsearch node (default: start a private one)")
    ap.add_argument("--os-url", default=None, help="a running OpenSearch node (default: start a private one)")
    ap.add_argument("--es-version", default=None, help="version of the private Elasticsearch node (default: "
                    "scripts/es_node.py's, 9.5.2)")
    ap.add_argument("--os-version", default=None, help="version of the private OpenSearch node (default: "
                    "scripts/es_node.py's, 2.19.6; 3.3.2 works too)")
    ap.add_argument("--heap", default="2g", help="heap of each private node (default 2g)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a check fails")
    args = ap.parse_args(argv)
    if args.warmup < 0 or min(args.size, args.queries, args.passes, args.sweeps, args.batch, args.merge_segments, args.load_chunk,
           args.load_threads) < 1:
        ap.error("every number must be >= 1")

    def terminated(*_: Any) -> None:  # SIGTERM: unwind, so the indexes are dropped and private nodes stopped
        print("engines.py: terminated by SIGTERM; cleaning up", file=sys.stderr, flush=True)
        sys.exit(143)

    signal.signal(signal.SIGTERM, terminated)

    from es_simhash import Fingerprinter

    t_start = time.perf_counter()
    config = Fingerprinter().config
    rng = np.random.default_rng(args.seed)
    engines: dict[str, dict[str, Any]] = {}
    with contextlib.ExitStack() as stack:
        urls, where, clients = {}, {}, {}
        for key, url, version in (("es", args.es_url, args.es_version), ("os", args.os_url, args.os_version)):
            urls[key], where[key] = stack.enter_context(_es.es_node(url, args.heap, WANT[key], version))
            clients[key] = _connect(urls[key], key)
            stack.callback(clients[key].close)
        versions = {key: _es.server_info(clients[key]) for key in ENGINES}
        print("es-simhash engines benchmark: the same ElasticIndex lookups on Elasticsearch and OpenSearch")
        print(f"python {platform.python_version()}, numpy {np.__version__}, cpus {os.cpu_count()} (shared with both "
              f"nodes and other work: load average {os.getloadavg()[0]:.1f} at start)")
        for key in ENGINES:
            print(f"{key}: {versions[key]}, {where[key]}")
        t_data = time.perf_counter()
        data = lookup.make_data(rng, args.size, args.queries)
        sims, _, query_sim, queries, n_random, n_planted = data
        print(f"{args.size:,} fingerprints ({n_random:,} random + {n_planted:,} planted for {len(queries):,} queries; "
              f"made in {time.perf_counter() - t_data:.1f} s); lookup keys tables = LookupKeys(3,3); force-merge to "
              f"{args.merge_segments} segment(s); query cache {'on' if args.query_cache else 'off'}", flush=True)
        try:
            for key in ENGINES:
                engines[key] = {"client": clients[key], "url": urls[key], "name": None}
                load_engine(key, engines[key], config, data, args)
            truth, brute_s = lookup.ground_truth(sims, query_sim)
            print(f"brute force: {sum(len(t) for t in truth):,} stored SimHashes within {K} bits of the "
                  f"{len(queries):,} queries ({brute_s:.1f} s over {args.size:,})", flush=True)
            measure(engines, queries, truth, args)
            code = report(engines, versions, args, len(queries), t_start)
        finally:
            for e in engines.values():
                if e.get("name"):
                    _es.drop_index(e["client"], e["name"])
    return code


if __name__ == "__main__":
    sys.exit(main())
