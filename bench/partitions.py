#!/usr/bin/env python
"""The same lookups on one index and on an alias over partitions, in one run: batched lookups/s, latency, recall.

**What**: ``ElasticIndex.lookup`` (the real backend, permutation-table keys ``LookupKeys(3, 3)``) answering the
same queries over the same ``--size`` (default 1,000,000) stored fingerprints kept in two layouts on one node:

* ``one``: one index made by ``ensure_index`` (the shipped template, 0 replicas; ``lookup.create_index``), as
  ``bench/lookup.py``'s tables design;
* ``partitioned``: ``--partitions`` (10) partitions of ``--size / --partitions`` documents behind an alias, made as
  ``es-simhash index FILE --index NAME --rollover-docs N`` makes them: ``ensure_partitioned`` creates the alias
  and its first partition ``NAME-000001`` (the write index, the template's settings and mapping, ``_meta`` with the
  fingerprint settings and lookup keys, 0 replicas), each next partition is made by ``roll_over`` (one rollover
  request with ``conditions.max_docs``, carrying the write index's mapping and shard settings) once the write
  index holds its share. Lookups go through ``ElasticIndex(client, NAME)``, which reads its keys through the alias
  and searches every partition (``handle.is_alias()`` is checked).

**How**: ``bench/lookup.py``'s own data, loading and ground truth (imported, not copied, as ``bench/engines.py``
does): uniform random 64-bit SimHashes plus, for each of ``--queries`` (1,000) random query fingerprints (not
stored), one planted neighbour at each Hamming distance 0..5 (``lookup.make_data``). The documents are shuffled
once (``--no-shuffle``: keep make_data's order, where the planted neighbours come last, so all of them land in
the last partition) and loaded in that same order, with the same ids ``d0``..``dN-1``, into both layouts in
``ElasticIndex.add``'s layout (``lookup.load``: ``--load-threads`` threads x ``--load-chunk`` documents,
refreshes off, then a refresh and a force-merge to ``--merge-segments`` segment(s): of the one index, and of each
partition after its share is loaded, so one segment per partition by default). The node query cache is off on
every index of both layouts (set while each is empty; ``--query-cache`` keeps it on): the passes replay identical
queries. The alias is searched as ``ElasticIndex`` searches it, with partition term filters (each partition but the
newest asked only for the terms it holds: ``es_simhash.index.elastic.keyfilter``; made before the warm-up, their
time and size printed; ``--no-filters``: every partition asked for every term). The ground truth is
``lookup.ground_truth`` (numpy popcount over every stored SimHash, cross-checked with
a SWAR popcount), the same for both.

Then one untimed pass per layout (warm-up; it also captures the requests sent, for the replay below) and
``--passes`` (5) timed passes, interleaved one, partitioned, one, partitioned, ...; each pass measures, as
``bench/lookup.py`` does, ``--sweeps`` (3) sweeps of ``index.lookup(queries[i:i + 500], 3)`` and of 100 per call
(``lookup.run_batched``), and single lookups one at a time (p50 / p99, ``lookup.run_single``). The figures per
layout are the medians over its passes; lookups/s is ``bench/lookup.py``'s: the better of the 500/call and
100/call medians. Recall: every query looked up again at k = 0..3 in batches of 500 and once at k = 3 one at a
time, compared with the brute force (found / true neighbours within k; anything farther returned is counted too:
the neighbours planted at 4 and 5 bits must not come back). Both must be 1.0 with nothing beyond k.

**Why partitions cost what they cost**, measured after the passes: the client-side profile of one 500-lookup
call (``lookup.profile``: ``client.msearch`` round trip, doc values, the matching), and the captured requests
replayed with ``urllib`` (``lookup.replay``: raw round trip, the server's ``took``, and the profile API's query
and fetch phase times summed over the shards searched, with the number of shards); then (``--no-diagnose`` leaves
it out) the first captured 500-lookup search replayed on both layouts as sent and cut down, one cost left out at a
time (no doc values fetched; a page of 3,000 instead of 10,000; only the ``lookup_keys`` clause; only the ``ids``
clause; only the ``content_hash`` clause), ``took`` the median of 5, and the profile API's breakdown of that search
summed over the shards (query phase by step, Lucene rewrite, collector, fetch by sub-phase).

The last line is::

    RESULT size=N partitions=P one_index_lookups_per_s=X partitioned_lookups_per_s=Y ratio=R one_index_recall=A partitioned_recall=B

with R = Y / X (target: R >= 0.8 at 1M documents in 10 partitions, both recalls 1.0; PASS/FAIL lines before it,
``--strict``: exit 1 when one fails).

**MEASURED** on this 2-core machine (Elasticsearch 9.5.2, heap 2g, a private node started by the script, the
machine shared with other work, load average 1-2 during the passes), ``--size 1000000 --passes 3``, 419 s (filters:
9 made in 45-47 s, 187 MB):

* ratio **0.87** (one index 3,927 lookups/s, 10 partitions 3,399; 500 per call 0.87, 100 per call 0.72), recall 1.0
  for both: the target 0.8 is met. Single-lookup p50 1.67x the one index's. A second run with the test suite
  running beside it (load average 3-4): 0.82 (2,796 against 2,299).
* Where it goes: Elasticsearch's own time (``took``) for the first 500-lookup request is 37 ms over the 10
  partitions (its longest search; summed over its searches, which run side by side and each count the time they
  share the cores, 105 ms a request: the replay table) against 33 ms on the one index (30): the search of the
  alias (newest partition, every term) and 9 single-shard searches of the filtered partitions for the terms they
  hold. Sent as one search over
  the 10 shards with a clause per partition on ``_index`` (what a batch with sketch hashes still sends), the same
  lookups took 46-59 ms against 29-31 (ratio 0.71-0.76): each shard of a search over several pays a query request
  and a fetch request (the fetch phase 103-150 ms summed over the 10 shards against 12-16 on one). Without filters
  (every partition asked for every term, as ``--no-filters`` sends them) 138-148 ms, ratio 0.46-0.71. What is left:
  a search request per filtered partition holding terms (100 lookups per call pay it most: 0.72), and the client's
  routing (about 10 ms a 500-lookup call).
* ``--partitions 3`` without filters gave 0.82; ``--size 100000`` (10 partitions of 10,000) 0.66 without filters.

**Node**: ``--es-url`` / ``ES_URL`` names a running Elasticsearch or OpenSearch node; else a private
Elasticsearch node is started (``--heap``, 2g) and stopped at the end. The indexes made are dropped at the end,
also on an error, Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import signal
import sys
import time
import urllib.parse
import urllib.request
from typing import Any, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import _es  # noqa: E402
import lookup  # noqa: E402  (bench/lookup.py: data, loading, ground truth, timing, recall, profile, replay)

K = lookup.K
LAYOUTS = ("one", "partitioned")
TARGET_RATIO = 0.8
MODES = (("b500", 500), ("b100", 100), ("single", 1))


def _no_query_cache(client, name: str) -> None:
    """Switch the node query cache off on ``name`` (a static setting: set while the index is empty, closing it is
    instant then), as ``lookup.create_index`` does for its indexes."""
    client.indices.close(index=name)
    client.indices.put_settings(index=name, settings={"index": {"queries": {"cache": {"enabled": False}}}})
    client.indices.open(index=name)
    client.cluster.health(index=name, wait_for_status="green", timeout="60s")


def _print_load(what: str, ld: dict[str, float], n: int, args) -> None:
    print(f"load {what}: {ld['total_s']:.0f} s = bulk {ld['bulk_s']:.0f} s ({n / ld['bulk_s']:,.0f} docs/s, "
          f"{args.load_threads} threads x {args.load_chunk}, terms {ld['terms_s']:.1f} s of it) + refresh "
          f"{ld['refresh_s']:.1f} s + force-merge to {args.merge_segments} segment(s) {ld['merge_s']:.1f} s",
          flush=True)


def load_one(client, url: str, config: dict, sims, contents, args, made: list[str]):
    """The one index, loaded: ``(ElasticIndex, load timings)``."""
    from es_simhash.index.elastic import ElasticIndex
    from es_simhash.lookup.keys import DEFAULT

    name = lookup.create_index(client, config, len(sims), "tables", args.query_cache)
    made.append(name)
    index = ElasticIndex(client, name, url=url)
    assert index.lookup_keys == DEFAULT and not index.handle.is_alias(), name
    ld = lookup.load(client, index, sims, contents, args.load_chunk, args.load_threads, args.merge_segments)
    _print_load(f"one index ({name})", ld, len(sims), args)
    return index, ld


def load_partitioned(client, url: str, config: dict, sims, contents, args, made: list[str]):
    """The alias over ``args.partitions`` partitions, made by ``ensure_partitioned`` and ``roll_over`` and loaded
    share by share (ids continuing across them): ``(ElasticIndex on the alias, load timings summed)``."""
    from es_simhash.index.elastic import ElasticIndex, ensure_partitioned, roll_over
    from es_simhash.index.elastic.admin import partition_name, partitions, write_index
    from es_simhash.lookup.keys import DEFAULT

    alias = _es.unique_name(f"partitions-{len(sims)}")
    made.append(partition_name(alias, 1))  # (before it exists: dropped at the end whatever happens)
    assert ensure_partitioned(client, alias, config, replicas=0, lookup_keys=DEFAULT), alias
    bounds = np.linspace(0, len(sims), args.partitions + 1).round().astype(int).tolist()
    total: dict[str, float] = {}
    t0 = time.perf_counter()
    for p in range(args.partitions):
        if p:  # the write index holds its share: roll over as ElasticIndex.add does before its next batch
            held = bounds[p] - bounds[p - 1]
            new = roll_over(client, alias, held)
            assert new == partition_name(alias, p + 1), (new, p)
            made.append(new)
        current = write_index(client, alias)
        if not args.query_cache:
            _no_query_cache(client, current)
        lo, hi = bounds[p], bounds[p + 1]
        ld = lookup.load(client, ElasticIndex(client, current, url=url), sims[lo:hi], contents[lo:hi],
                         args.load_chunk, args.load_threads, args.merge_segments, first_id=lo)
        for k, v in ld.items():
            total[k] = total.get(k, 0.0) + v
    total["wall_s"] = time.perf_counter() - t0
    index = ElasticIndex(client, alias, url=url, filter_partitions=not args.no_filters)
    assert index.lookup_keys == DEFAULT and index.handle.is_alias(), alias
    parts = partitions(client, alias)
    assert parts == [partition_name(alias, p + 1) for p in range(args.partitions)], parts
    _print_load(f"partitioned ({alias}, {len(parts)} partitions {parts[0]}..{parts[-1]}, "
                f"{bounds[1] - bounds[0]:,} docs each; wall {total['wall_s']:.0f} s incl. rollovers)",
                total, len(sims), args)
    return index, total


def one_pass(index, queries, sweeps: int) -> dict[str, Any]:
    """One timed pass, as ``bench/lookup.py``'s: 500/call and 100/call lookups/s, single-lookup latencies."""
    rate500, res500, c500 = lookup.run_batched(index, queries, 500, sweeps)
    rate100, _, c100 = lookup.run_batched(index, queries, 100, sweeps)
    lat, res1, c1 = lookup.run_single(index, queries)
    return {"b500": rate500, "b100": rate100, "p50": 1000 * _es.percentile(lat, 50),
            "p99": 1000 * _es.percentile(lat, 99), "c500": c500, "c1": c1, "res1": res1,
            "after500": float(np.mean([len(x.candidates) for x in res500]))}


def measure(layouts: dict[str, dict[str, Any]], queries, truth, url: str, args) -> float:
    """Warm-up (capturing the requests), interleaved timed passes, recall, profile and replay; the figures go into
    ``layouts[key]``. Returns the highest load average seen during the passes."""
    part = layouts["partitioned"]["index"]
    t0 = time.perf_counter()
    part.partition_filters.route()  # (made by the first lookup otherwise: the warm-up)
    pf = part.partition_filters
    print(f"partition term filters: {pf.built} made in {time.perf_counter() - t0:.1f} s (reading the partitions "
          f"{pf.build_seconds:.1f} s), {pf.nbytes / 2**20:,.0f} MB" if pf.enabled else "partition term filters: off",
          flush=True)
    for key, e in layouts.items():  # warm-up, untimed: what ElasticIndex sends, replayed later
        e["captured"], e["targets"] = {}, {}
        for mode, b in MODES:
            cap = lookup.Capture(e["index"])
            try:
                for i in range(0, len(queries), b):
                    e["index"].lookup(queries[i:i + b], K)
            finally:
                cap.close()
            e["captured"][mode] = cap.calls
            e["targets"][mode] = cap.targets
    loadavg = os.getloadavg()[0]
    for e in layouts.values():
        e["passes"] = {"b500": [], "b100": [], "p50": [], "p99": []}
    for p in range(args.passes):
        line = []
        for key, e in layouts.items():
            r = one_pass(e["index"], queries, args.sweeps)
            for m in e["passes"]:
                e["passes"][m].append(r[m])
            if p == 0:
                e["c500"], e["c1"], e["after500"] = r["c500"], r["c1"], r["after500"]
                e["single_recall"] = lookup.recall_of(r["res1"], truth, K)
            line.append(f"{key} 500/call {r['b500']:6,.0f}/s 100/call {r['b100']:6,.0f}/s p50 {r['p50']:.2f} ms")
        loadavg = max(loadavg, os.getloadavg()[0])
        print(f"  pass {p + 1}: " + "; ".join(line), flush=True)
    for key, e in layouts.items():
        ps = e["passes"]
        e["b500"], e["b100"] = _es.median(ps["b500"]), _es.median(ps["b100"])
        e["best"] = max(e["b500"], e["b100"])
        e["p50"], e["p99"] = _es.median(ps["p50"]), _es.median(ps["p99"])
        rows = [(k, *lookup.batched_recall(e["index"], queries, truth, k)) for k in range(K + 1)]
        e["recall"] = rows
        e["min_recall"] = min(f / x if x else 1.0 for _, x, f, _ in rows)
        e["beyond"] = sum(x for *_, x in rows)
        e1, f1, x1 = e["single_recall"]
        e["recall_ok"] = e["min_recall"] == 1.0 and e["beyond"] == 0 and f1 == e1 and x1 == 0
        e["min_recall"] = min(e["min_recall"], f1 / e1 if e1 else 1.0)
        e["truncated"], e["crowded"] = e["index"].truncated_lookups, e["index"].crowded_batches
        e["profile"] = lookup.profile(e["index"], queries, 500, args.sweeps)
        e["replay"] = {mode: lookup.replay(url, e["index"].index, calls, targets=e["targets"][mode])
                       for mode, calls in e["captured"].items()}
        e["shards"] = _shards_searched(e["index"], queries[:500])
    return loadavg


def _shards_searched(index, queries) -> int:
    """The shards one batched search of ``queries`` ran on (``_shards.total`` of the search ElasticIndex sends)."""
    cap = lookup.Capture(index)
    try:
        index.lookup(queries, K)
    finally:
        cap.close()
    return sum(int(index.client.search(index=target or index.index, body=body, filter_path="_shards",
                                       ignore_unavailable=True)["_shards"]["total"])
               for body, target in zip(cap.calls[0], cap.targets[0]))


def _send(url: str, index_name: str, body: dict[str, Any] | list[tuple[dict[str, Any], str | None]],
          filter_path: str) -> dict[str, Any]:
    """One search in an ``_msearch`` request (as ElasticIndex sends it), with urllib; or the searches of one
    ``_msearch`` (body, partitions named or ``None``), as a routed lookup sends them: their longest ``took``
    (they run side by side) and every shard's profile."""
    lines = [(body, None)] if isinstance(body, dict) else body
    data = lookup.msearch_ndjson(index_name, lines, allow_partial_search_results=False)
    req = urllib.request.Request(f"{url}/_msearch?filter_path={urllib.parse.quote(filter_path, safe=',._*')}",
                                 data=data, headers={"Content-Type": "application/x-ndjson"}, method="POST")
    with urllib.request.urlopen(req, timeout=300) as resp:
        responses = json.loads(resp.read())["responses"]
    if len(responses) == 1:
        return responses[0]
    return {"took": max(r.get("took", 0) for r in responses),
            "profile": {"shards": [sh for r in responses for sh in r.get("profile", {}).get("shards", [])]}}


def variants(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The captured batched search and the same search cut down, each variant leaving one cost out: which
    clause (ids, content hashes, lookup keys) and which phase (the fetch of doc values, the page size) the time
    goes to."""
    should = body["query"]["bool"]["filter"]["bool"]["should"]

    def only(kind: str, field: str | None = None) -> dict[str, Any]:
        keep = [c for c in should if kind in c and (field is None or field in c[kind])]
        return {**body, "query": {"bool": {"filter": {"bool": {"should": keep, "minimum_should_match": 1}}}}}

    return {"as sent": body,
            "no docvalue_fields (fetch nothing)": {k: v for k, v in body.items() if k != "docvalue_fields"},
            "size 3,000 (not 10,000)": {**body, "size": 3000},
            "lookup_keys clause only": only("terms", "lookup_keys"),
            "ids clause only": only("ids"),
            "content_hash clause only": only("terms", "content_hash")}


def diagnose(layouts: dict[str, dict[str, Any]], url: str, repeats: int) -> None:
    """Replay variants of the first captured 500-lookup search on both layouts (``took``, median of ``repeats``,
    after one untimed send), and the profile API's breakdown of it summed over the shards searched."""
    names = {key: e["index"].index for key, e in layouts.items()}
    bodies = {key: e["captured"]["b500"][0][0] for key, e in layouts.items()}
    body = bodies["one"]  # (the same queries; the partitioned layout's search routed by its filters, if any)
    if len(layouts["partitioned"]["captured"]["b500"][0]) > 1:  # (routed: a search per filtered partition)
        bodies["partitioned"] = list(zip(layouts["partitioned"]["captured"]["b500"][0],
                                         layouts["partitioned"]["targets"]["b500"][0]))
    rows = [("search (first 500 lookups)", *(f"{k} took ms" for k in names), "part/one")]
    cases = {"as sent": bodies} if bodies["one"] != bodies["partitioned"] else {}
    cases.update({label: {k: b for k in names} for label, b in variants(body).items()
                  if label != "as sent" or not cases})
    if bodies["one"] != bodies["partitioned"]:
        cases = {("as sent (partitioned: routed, its longest search)" if k == "as sent" else f"{k} (not routed)"): v
                 for k, v in cases.items()}
    for label, per in cases.items():
        took = {}
        for key, name in names.items():
            _send(url, name, per[key], "responses.took")
            took[key] = _es.median([_send(url, name, per[key], "responses.took")["took"] for _ in range(repeats)])
        rows.append((label, *(f"{took[k]:.0f}" for k in names),
                     f"{took['partitioned'] / took['one']:.1f}x" if took["one"] else "-"))
    print(f"\n-- why: the first captured 500-lookup search and variants of it, replayed with urllib (took, median of "
          f"{repeats}; the node shared as above)")
    print(_es.fmt_table(rows))
    prof = {key: _send(url, name, {**bodies[key], "profile": True} if isinstance(bodies[key], dict) else
                       [({**b, "profile": True}, t) for b, t in bodies[key]],
                       "responses.took,responses.profile.shards")["profile"]["shards"]
            for key, name in names.items()}
    parts: dict[str, dict[str, float]] = {}
    for key, shards in prof.items():
        acc: dict[str, float] = {}
        for sh in shards:
            for srch in sh["searches"]:
                for q in srch["query"]:
                    acc["query total"] = acc.get("query total", 0) + q["time_in_nanos"]
                    for k, v in q["breakdown"].items():
                        if not k.endswith("_count") and v:
                            acc[f"  query {k}"] = acc.get(f"  query {k}", 0) + v
                acc["rewrite"] = acc.get("rewrite", 0) + srch.get("rewrite_time", 0)
                acc["collector"] = acc.get("collector", 0) + sum(c["time_in_nanos"] for c in srch["collector"])
            fetch = sh.get("fetch", {})
            acc["fetch total"] = acc.get("fetch total", 0) + fetch.get("time_in_nanos", 0)
            for c in fetch.get("children", []):
                acc[f"  fetch {c['type']}"] = acc.get(f"  fetch {c['type']}", 0) + c["time_in_nanos"]
        acc["shards"] = len(shards)
        parts[key] = acc
    keys = list(dict.fromkeys(k for acc in parts.values() for k in acc))
    order = sorted(keys, key=lambda k: (k == "shards", k.startswith("fetch") or k.startswith("  fetch"),
                                        k.startswith("rewrite") or k.startswith("collector"), k))
    prow = [("profile API, ms summed over shards", *names, "part/one")]
    for k in order:
        a, b = (parts[key].get(k, 0) for key in names)
        scale = 1 if k == "shards" else 1e6
        prow.append((k, *(f"{parts[key].get(k, 0) / scale:.1f}" for key in names),
                     f"{b / a:.1f}x" if a else "-"))
    print(_es.fmt_table(prow))


def report(layouts: dict[str, dict[str, Any]], n: int, args, n_queries: int, loadavg: float, t_start: float) -> int:
    one, part = layouts["one"], layouts["partitioned"]
    rows = [("metric", "one index", f"{args.partitions} partitions", "part/one")]

    def row(label: str, fn, fmt, ratio: bool = True) -> None:
        a, b = fn(one), fn(part)
        rows.append((label, fmt(a), fmt(b), f"{b / a:.2f}x" if ratio and a else ""))

    i0 = lambda v: f"{v:,.0f}"  # noqa: E731
    f2 = lambda v: f"{v:.2f}"  # noqa: E731
    row("load s (bulk + refresh + force-merge)", lambda e: e["load"]["total_s"], i0)
    row("  bulk docs/s", lambda e: n / e["load"]["bulk_s"], i0)
    row("  force-merge s", lambda e: e["load"]["merge_s"], lambda v: f"{v:.1f}")
    row("index store bytes per doc", lambda e: e["store_bytes"] / n, i0)
    row("  segments (all shards)", lambda e: e["segments"], i0, False)
    row("shards a 500-lookup call searches", lambda e: e["shards"], i0, False)
    row(f"batched 500/call lookups/s (median of {args.passes})", lambda e: e["b500"], i0)
    row("  slowest / fastest pass", lambda e: min(e["passes"]["b500"]), i0)
    rows[-1] = rows[-1][:1] + tuple(f"{min(e['passes']['b500']):,.0f} / {max(e['passes']['b500']):,.0f}"
                                    for e in (one, part)) + ("",)
    row(f"batched 100/call lookups/s (median of {args.passes})", lambda e: e["b100"], i0)
    row("lookups/s (better of the two: RESULT)", lambda e: e["best"], i0)
    row("single lookup p50 ms", lambda e: e["p50"], f2)
    row("single lookup p99 ms", lambda e: e["p99"], f2)
    row("searches per 500-lookup call", lambda e: e["c500"]["searches"] * 500 / n_queries, f2, False)
    row("hits read per lookup (before re-rank)", lambda e: e["c500"]["hits_read"] / n_queries, f2, False)
    row("candidates per lookup (after re-rank)", lambda e: e["after500"], f2, False)
    row("crowded / truncated lookups", lambda e: e["crowded"] + e["truncated"], i0, False)
    row("recall k=0..3 (min, incl. single path)", lambda e: e["min_recall"], lambda v: f"{v:.4f}", False)
    row("returned beyond k", lambda e: e["beyond"], i0, False)
    print(f"\n== {n:,} fingerprints, {n_queries:,} queries: one index vs {args.partitions} partitions behind an alias; "
          f"{args.passes} interleaved passes (one, partitioned, ...) of {args.sweeps} sweeps; load average up to "
          f"{loadavg:.1f} on {os.cpu_count()} CPUs during the passes")
    print(_es.fmt_table(rows))
    print("\nwhere one 500-lookup call's time goes, ms per call (one untimed pass of --sweeps sweeps; client side: "
          "http = client.msearch incl. JSON decode, docvalues = rest of msearch_once, match = _match_batch). Server "
          "side, the captured requests replayed with urllib: raw round trip (best of 3, median over calls), took, "
          "and the profile API's query / fetch phases summed over the shards of the first captured call:")
    prow = [("layout", "call", "total", "http", "docvalues", "match", "other", "| raw HTTP", "took", "query (sum)",
             "fetch (sum)", "resp B/lookup")]
    for key, e in layouts.items():
        pr = e["profile"]
        for mode, label in (("b500", "500/call"), ("b100", "100/call"), ("single", "single")):
            by = e["replay"][mode]
            first = (f2(pr["total"]), f2(pr["http"]), f2(pr["docvalues"]), f2(pr["match"]), f2(pr["other"])) \
                if mode == "b500" else ("-",) * 5
            prow.append((key, label, *first, f2(by["rtt_ms"]), f2(by["took_sum_ms"]),
                         f2(by["query_ms"]), f2(by["fetch_ms"]), f"{by['resp_bytes'] / n_queries:,.0f}"))
    print(_es.fmt_table(prow))
    for key in LAYOUTS:
        ps = layouts[key]["passes"]
        print(f"{key} passes: 500/call {', '.join(f'{x:,.0f}' for x in ps['b500'])}; 100/call "
              f"{', '.join(f'{x:,.0f}' for x in ps['b100'])}; p50 ms {', '.join(f'{x:.2f}' for x in ps['p50'])}")
    ratio = part["best"] / one["best"]
    print(f"INFO partitioned / one index: lookups/s {ratio:.2f}, 500/call {part['b500'] / one['b500']:.2f}, "
          f"100/call {part['b100'] / one['b100']:.2f}, single p50 {part['p50'] / one['p50']:.2f}x the latency")
    checks = [(ratio >= TARGET_RATIO, f"lookups/s at {n:,}, {args.partitions} partitions / one index = "
                                      f"{part['best']:,.0f} / {one['best']:,.0f} = {ratio:.2f}  (target >= "
                                      f"{TARGET_RATIO:g})")]
    for key in LAYOUTS:
        e = layouts[key]
        e1, f1, x1 = e["single_recall"]
        checks.append((e["recall_ok"], f"recall at {n:,}, {key}, k = 0..3 = "
                                       f"{', '.join(f'{f / x if x else 1.0:.4f}' for _, x, f, _ in e['recall'])}, "
                                       f"beyond-k returned {e['beyond']}; single path k=3 {f1}/{e1}, beyond {x1}  "
                                       f"(target 1.0, 0)"))
    code = _es.verdicts(checks, t_start, args.strict)
    print(f"RESULT size={n} partitions={args.partitions} one_index_lookups_per_s={round(one['best'])} "
          f"partitioned_lookups_per_s={round(part['best'])} ratio={ratio:.2f} one_index_recall="
          f"{one['min_recall']:.4f} partitioned_recall={part['min_recall']:.4f}")
    return code


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="The same ElasticIndex lookups on one index and on an alias over partitions (made by "
        "ensure_partitioned and roll_over, as `es-simhash index --rollover-docs` makes them) in one run: lookups/s "
        "(500 and 100 per call, as bench/lookup.py), single-lookup latency, recall at k=0..3 against brute force, "
        "over the same --size synthetic fingerprints (bench/lookup.py's data and loading), interleaved passes, "
        "medians; then where a call's time goes on each layout. At the default 1M in 10 partitions MEASURED 419 s "
        "per run on this 2-core machine (shared with other work), ratio 0.82-0.87 with partition term filters (0.46-0.71 "
        "without), recall 1.0.")
    ap.add_argument("--size", type=int, default=1_000_000, help="stored fingerprints (default 1,000,000)")
    ap.add_argument("--sizes", dest="size", type=int, help="the same as --size (one size)")
    ap.add_argument("--partitions", type=int, default=10, help="partitions behind the alias, --size / partitions "
                    "documents each (default 10)")
    ap.add_argument("--passes", type=int, default=5, help="interleaved timed passes per layout (median; default 5)")
    ap.add_argument("--sweeps", type=int, default=3, help="sweeps over the queries per batched figure (default 3)")
    ap.add_argument("--no-shuffle", action="store_true", help="load the documents in make_data's order (the "
                    "planted neighbours last, so all in the last partition) instead of one shuffled order (the "
                    "same for both layouts)")
    lookup.add_load_options(ap)
    _es.add_node_options(ap, heap="2g")
    ap.add_argument("--no-diagnose", action="store_true", help="leave out the replay of variants of one captured "
                    "search and its profile breakdown (where the partitions' extra time goes)")
    ap.add_argument("--no-filters", action="store_true", help="search every partition for every term (no "
                    "partition term filters: ElasticIndex(filter_partitions=False))")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a check fails")
    args = ap.parse_args(argv)
    if min(args.size, args.partitions, args.queries, args.passes, args.sweeps, args.merge_segments, args.load_chunk,
           args.load_threads) < 1:
        ap.error("every number must be >= 1")
    if args.partitions < 2:
        ap.error("--partitions must be >= 2 (one partition is the one index)")

    def terminated(*_: Any) -> None:  # SIGTERM: unwind, so the indexes are dropped and a private node stopped
        print("partitions.py: terminated by SIGTERM; cleaning up", file=sys.stderr, flush=True)
        sys.exit(143)

    signal.signal(signal.SIGTERM, terminated)

    from es_simhash import Fingerprinter

    t_start = time.perf_counter()
    config = Fingerprinter().config
    rng = np.random.default_rng(args.seed)
    n = args.size
    with _es.es_node(args.es_url, args.heap) as (url, where):
        client = _es.client_for(url)
        made: list[str] = []
        try:
            print("es-simhash partitions benchmark: the same ElasticIndex lookups on one index and on an alias over "
                  "partitions")
            print(f"python {platform.python_version()}, numpy {np.__version__}, cpus {os.cpu_count()} (shared with "
                  f"the node and other work: load average {os.getloadavg()[0]:.1f} at start); "
                  f"{_es.server_info(client)}, {where}")
            sims, contents, query_sim, queries, n_random, n_planted = lookup.make_data(rng, n, args.queries)
            if not args.no_shuffle:
                order = rng.permutation(n)
                sims, contents = sims[order], contents[order]
            print(f"{n:,} fingerprints ({n_random:,} random + {n_planted:,} planted for {len(queries):,} queries, "
                  f"{'make_data order' if args.no_shuffle else 'shuffled'}); {args.partitions} partitions of "
                  f"~{math.ceil(n / args.partitions):,}; lookup keys LookupKeys(3,3); force-merge to "
                  f"{args.merge_segments} segment(s) per index; query cache {'on' if args.query_cache else 'off'}",
                  flush=True)
            layouts: dict[str, dict[str, Any]] = {}
            index, ld = load_one(client, url, config, sims, contents, args, made)
            layouts["one"] = {"index": index, "load": ld}
            index, ld = load_partitioned(client, url, config, sims, contents, args, made)
            layouts["partitioned"] = {"index": index, "load": ld}
            for e in layouts.values():
                store = [_es.store_stats(client, name) for name in e["index"].partitions()]
                e["store_bytes"], e["segments"] = sum(s[0] for s in store), sum(s[1] for s in store)
                assert sum(s[2] for s in store) == n, (e["index"].index, store)
            truth, brute_s = lookup.ground_truth(sims, query_sim)
            print(f"brute force: {sum(len(t) for t in truth):,} stored SimHashes within {K} bits of the "
                  f"{len(queries):,} queries ({brute_s:.1f} s over {n:,})", flush=True)
            loadavg = measure(layouts, queries, truth, url, args)
            if not args.no_diagnose:
                diagnose(layouts, url, repeats=5)
            code = report(layouts, n, args, len(queries), loadavg, t_start)
        finally:
            for name in made:
                _es.drop_index(client, name)
            client.close()
    return code


if __name__ == "__main__":
    sys.exit(main())
