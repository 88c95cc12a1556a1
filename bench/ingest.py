#!/usr/bin/env python
"""Ingest throughput with dedup on ingest vs a raw bulk load of the same documents, on one real Elasticsearch.

Absolute rates on a shared 2-core machine are noise; the ratio between the two systems, timed alternately in the
same run against the same node, is what this script reports and checks.

Documents: ``--zh`` People's Daily articles (Jan 1998) + ``--en`` BBC News articles (a seeded sample), shuffled,
plus ``--planted`` near duplicates of random earlier documents (exact copies, a wrapper line added, a few
characters edited, one sentence dropped), each inserted somewhere after its original. Every document carries
``fields`` (title, url, crawl_time) like a crawl record.

Systems, each run into a fresh index made by ``ensure_index`` (the shipped template, 0 replicas) and dropped after:

* ``dedup ingest``  ``DedupEngine(ElasticIndex(client, index, chunk_size=C), fingerprinter, batch_size=B)
  .process(docs)``: per batch of B documents, ``Fingerprinter.fingerprint_many`` + one ``ElasticIndex.lookup``
  (``_msearch``) + decisions + ``ElasticIndex.add`` (``helpers.streaming_bulk`` in chunks of C + refresh).
  The Fingerprinter is shared and warm (its token cache has seen the texts in the warm-up run), as in a
  long-running ingest.
* ``raw bulk``      ``helpers.streaming_bulk`` of the SAME documents, ALREADY FINGERPRINTED: the ``_source`` of
  each is built beforehand, untimed, with ``ElasticIndex._source`` from the very StoredDocs (cluster, dup_of,
  ...) the dedup run decided, so both write byte-for-byte the same documents; same chunk size C, same retry
  settings as ``ElasticIndex.add``; one refresh at the end (so the documents are searchable, as after the dedup
  run). The raw baseline does NOT include fingerprinting and does no lookups.

One warm-up round, then ``--repeats`` rounds alternating the order (A B, B A, A B ...); medians.
Target: dedup ingest docs/s >= 60% of raw bulk docs/s.

For information, where the dedup ingest time goes: ``fingerprint_many``, ``lookup``, ``add`` (split into the bulk
requests and the per-batch refresh) and the rest (decisions, the in-batch MemoryIndex), timed on the same batches
inside the timed dedup runs (medians over the rounds).

Run ``python bench/ingest.py --help`` for options.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import sys
import time
from typing import Any, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _es  # noqa: E402
import corpora  # noqa: E402

TARGET_RATIO = 0.60

_SENT = re.compile(r"[^。！？!?.\n]+[。！？!?.]*")


# -- data ------------------------------------------------------------------------------------------------------
def near_duplicate(text: str, mode: int, rng: random.Random, zh: bool) -> str:
    """A near-duplicate of ``text`` (``mode`` 0 exact copy, 1 wrapper line, 2 a few chars edited, 3 one sentence
    dropped)."""
    if mode == 0:
        return text
    if mode == 1:
        return ("转载自人民网。\n" if zh else "Shared from BBC News.\n") + text + ("\n（责任编辑：王某）" if zh else "\nMore news at bbc.co.uk")
    if mode == 2:
        chars = list(text)
        for _ in range(3):
            i = rng.randrange(len(chars) // 4, 3 * len(chars) // 4)
            chars[i] = "的" if zh else "e"
        return "".join(chars)
    sents = _SENT.findall(text)
    if len(sents) < 4:
        return text + " "
    del sents[rng.randrange(1, len(sents) - 1)]
    return "".join(sents)


def build_docs(n_zh: int, n_en: int, n_planted: int, seed: int):
    from es_simhash.dedup import Document

    rng = random.Random(seed)
    zh = corpora.peoples_daily_articles()[:n_zh]
    en_all = corpora.bbc_news()
    en = rng.sample(en_all, n_en) if n_en < len(en_all) else en_all
    base: list[tuple[str, str, bool]] = [(f"pd-{i:05d}", t, True) for i, t in enumerate(zh)]
    base += [(f"bbc-{i:05d}", t, False) for i, t in enumerate(en)]
    rng.shuffle(base)
    # planted near duplicates: each goes somewhere after its original
    inserts: dict[int, list[tuple[str, str, bool]]] = {}
    for j in range(n_planted):
        src = rng.randrange(len(base) - 1)
        at = rng.randrange(src + 1, len(base) + 1)
        sid, text, is_zh = base[src]
        inserts.setdefault(at, []).append((f"dup-{j:05d}-of-{sid}", near_duplicate(text, j % 4, rng, is_zh), is_zh))
    ordered: list[tuple[str, str, bool]] = []
    for i in range(len(base) + 1):
        ordered += inserts.get(i, [])
        if i < len(base):
            ordered.append(base[i])
    docs = []
    for n, (doc_id, text, is_zh) in enumerate(ordered):
        title = text.strip().split("\n", 1)[0][:120]
        fields = {
            "title": title,
            "url": f"https://{'www.people.com.cn' if is_zh else 'www.bbc.co.uk'}/crawl/{doc_id}.html",
            "crawl_time": f"2024-05-{1 + n % 28:02d}T{n % 24:02d}:00:00Z",
        }
        docs.append(Document(doc_id, text, fields))
    return docs


# -- systems ---------------------------------------------------------------------------------------------------
class Clock:
    """Accumulates wall time of wrapped callables, per name."""

    def __init__(self) -> None:
        self.t: dict[str, float] = {}

    def wrap(self, name: str, fn):
        def timed(*a, **kw):
            t0 = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                self.t[name] = self.t.get(name, 0.0) + time.perf_counter() - t0

        return timed


def run_dedup(client, url: str, fp, docs, config: dict, batch_size: int, chunk_size: int):
    """One dedup ingest into a fresh index. Returns (seconds, results, stage times)."""
    from es_simhash.dedup import DedupEngine
    from es_simhash.index.elastic import ElasticIndex

    name = _es.fresh_index(client, "ingest-dedup", config)
    try:
        index = ElasticIndex(client, name, chunk_size=chunk_size, url=url)
        clock = Clock()
        index.lookup = clock.wrap("lookup", index.lookup)
        index.add = clock.wrap("add", index.add)
        engine = DedupEngine(index, fp, batch_size=batch_size)
        fp_many = fp.fingerprint_many
        fp.fingerprint_many = clock.wrap("fingerprint_many", fp_many)
        refresh = client.indices.refresh
        client.indices.refresh = clock.wrap("refresh", refresh)
        try:
            t0 = time.perf_counter()
            results = list(engine.process(docs))
            elapsed = time.perf_counter() - t0
        finally:
            del fp.fingerprint_many  # back to the class method
            client.indices.refresh = refresh
        count = int(client.count(index=name)["count"])
        assert count == len(docs), (count, len(docs))
        stages = dict(clock.t)
        stages["add: bulk requests"] = stages.get("add", 0.0) - stages.get("refresh", 0.0)
        stages["add: refresh"] = stages.pop("refresh", 0.0)
        stages["engine (decisions, in-batch index)"] = elapsed - sum(
            stages[k] for k in ("fingerprint_many", "lookup", "add")
        )
        return elapsed, results, stages
    finally:
        _es.drop_index(client, name)


def run_raw(client, sources: list[tuple[str, dict[str, Any]]], config: dict, chunk_size: int) -> float:
    """One raw streaming_bulk of ready ``_source`` dicts into a fresh index (+ one refresh). Returns seconds."""
    from elasticsearch import helpers

    name = _es.fresh_index(client, "ingest-raw", config)
    try:
        actions = ({"_index": name, "_id": doc_id, "_source": src} for doc_id, src in sources)
        failed = 0
        t0 = time.perf_counter()
        for ok, _item in helpers.streaming_bulk(
            client, actions, chunk_size=chunk_size, max_retries=8, initial_backoff=1, max_backoff=30,
            raise_on_error=False, yield_ok=False,
        ):
            failed += not ok
        client.indices.refresh(index=name)
        elapsed = time.perf_counter() - t0
        count = int(client.count(index=name)["count"])
        assert failed == 0 and count == len(sources), (failed, count, len(sources))
        return elapsed
    finally:
        _es.drop_index(client, name)


# -- main ------------------------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="docs/s of dedup-on-ingest into Elasticsearch vs a raw streaming_bulk of the same, already "
        "fingerprinted documents (same node, same run, alternating rounds)."
    )
    ap.add_argument("--zh", type=int, default=3000, help="People's Daily articles (default 3,000)")
    ap.add_argument("--en", type=int, default=2000, help="BBC News articles (default 2,000)")
    ap.add_argument("--planted", type=int, default=500, help="planted near duplicates (default 500)")
    ap.add_argument("--batch-size", type=int, default=500, help="DedupEngine batch_size (default 500)")
    ap.add_argument("--chunk-size", type=int, default=500, help="bulk chunk size of both systems (default 500)")
    ap.add_argument("--repeats", type=int, default=3, help="timed rounds after one warm-up (default 3)")
    ap.add_argument("--seed", type=int, default=1998, help="seed of the sample, shuffle and plants (1998)")
    _es.add_node_options(ap, heap="1g")
    ap.add_argument("--quick", action="store_true", help="small run: 600 + 400 articles, 100 planted, 1 repeat")
    ap.add_argument("--strict", action="store_true", help="exit 1 when the target is missed")
    args = ap.parse_args(argv)
    if args.quick:
        args.zh, args.en, args.planted, args.repeats = min(args.zh, 600), min(args.en, 400), min(args.planted, 100), 1
    if args.repeats < 1 or args.zh + args.en < 2:
        ap.error("--repeats >= 1 and at least 2 documents")

    import numpy as np

    from es_simhash import Fingerprinter
    from es_simhash import text as T
    from es_simhash.index.base import StoredDoc
    from es_simhash.index.elastic import ElasticIndex

    t_start = time.perf_counter()
    docs = build_docs(args.zh, args.en, args.planted, args.seed)
    n = len(docs)
    n_chars = sum(len(d.text) for d in docs)
    fp = Fingerprinter()
    config = fp.config

    with _es.es_node(args.es_url, args.heap) as (url, where):
        client = _es.client_for(url)
        print("es-simhash ingest benchmark: dedup on ingest vs raw bulk of already fingerprinted documents")
        print(
            f"python {platform.python_version()}, numpy {np.__version__}, cpus {os.cpu_count()}, "
            f"segmenter {T.segmenter_name()}; {_es.server_info(client)}, {where}"
        )
        print(
            f"documents: {n:,} = {args.zh:,} People's Daily + {args.en:,} BBC News + {args.planted:,} planted near "
            f"duplicates (mean {n_chars / n:,.0f} chars); batch_size {args.batch_size}, bulk chunk_size "
            f"{args.chunk_size}; 1 warm-up round + {args.repeats} alternating rounds (median), fresh index each run"
        )
        print("raw baseline: streaming_bulk of ready _source dicts (ElasticIndex._source, built untimed) + 1 refresh; "
              "it does NOT include fingerprinting and does no lookups")

        # warm-up dedup run: warms the Fingerprinter's token cache and the node; its decisions give the raw sources
        t0 = time.perf_counter()
        _, results, _ = run_dedup(client, url, fp, docs, config, args.batch_size, args.chunk_size)
        warm_dedup = time.perf_counter() - t0
        text_of = {d.id: d for d in docs}
        now = "2024-06-01T00:00:00+00:00"
        idx = ElasticIndex(client, "unused")
        sources = []
        for r in results:
            d = text_of[r.id]
            stored = StoredDoc(r.id, r.fingerprint, r.cluster, r.duplicate_of, r.distance, r.reason, d.fields, d.text)
            sources.append((r.id, idx._source(stored, now)))
        t0 = time.perf_counter()
        run_raw(client, sources, config, args.chunk_size)
        warm_raw = time.perf_counter() - t0
        print(f"warm-up: dedup {warm_dedup:.1f} s (cold token cache), raw {warm_raw:.1f} s")

        dups = [r for r in results if r.duplicate]
        planted_found = sum(1 for r in dups if r.id.startswith("dup-"))
        by_reason: dict[str, int] = {}
        for r in dups:
            by_reason[r.reason] = by_reason.get(r.reason, 0) + 1
        print(f"decisions: {len(dups)} duplicates ({', '.join(f'{k} {v}' for k, v in sorted(by_reason.items()))}); "
              f"planted found {planted_found}/{args.planted}, other (corpus's own) {len(dups) - planted_found}")

        dedup_times: list[float] = []
        raw_times: list[float] = []
        stage_runs: list[dict[str, float]] = []
        for r in range(args.repeats):
            order = ("dedup", "raw") if r % 2 == 0 else ("raw", "dedup")
            for system in order:
                if system == "dedup":
                    t, res, stages = run_dedup(client, url, fp, docs, config, args.batch_size, args.chunk_size)
                    assert [x.to_dict() for x in res] == [x.to_dict() for x in results], "decisions changed"
                    dedup_times.append(t)
                    stage_runs.append(stages)
                else:
                    raw_times.append(run_raw(client, sources, config, args.chunk_size))
            print(f"round {r + 1}: dedup {dedup_times[-1]:.2f} s ({n / dedup_times[-1]:,.0f} docs/s), "
                  f"raw {raw_times[-1]:.2f} s ({n / raw_times[-1]:,.0f} docs/s), "
                  f"ratio {raw_times[-1] / dedup_times[-1]:.3f}")
        client.close()

    dm, rm = _es.median(dedup_times), _es.median(raw_times)
    rows = [("system", "median s", "min s", "max s", "docs/s", "MB text/s")]
    mb = sum(len(d.text.encode("utf-8")) for d in docs) / 1e6
    for name, ts in (("dedup ingest", dedup_times), ("raw bulk (pre-fingerprinted)", raw_times)):
        m = _es.median(ts)
        rows.append((name, f"{m:.2f}", f"{min(ts):.2f}", f"{max(ts):.2f}", f"{n / m:,.0f}", f"{mb / m:.2f}"))
    print()
    print(_es.fmt_table(rows))

    print("\n-- where the dedup ingest time goes (timed inside the timed dedup runs, median per stage)")
    names = ["fingerprint_many", "lookup", "add", "add: bulk requests", "add: refresh",
             "engine (decisions, in-batch index)"]
    n_batches = -(-n // args.batch_size)
    for name in names:
        t = _es.median([s.get(name, 0.0) for s in stage_runs])
        indent = "     " if name.startswith("add:") else "   "
        print(f"{indent}{name:<38} {t:7.2f} s  {100 * t / dm:5.1f}%  ({1000 * t / n_batches:6.1f} ms/batch)")
    print(f"   {'dedup ingest total':<38} {dm:7.2f} s")
    fp_t = _es.median([s["fingerprint_many"] for s in stage_runs])
    lk_t = _es.median([s["lookup"] for s in stage_runs])
    add_t = _es.median([s["add"] for s in stage_runs])

    ratio = rm / dm
    print("\n== results")
    print(f"INFO dedup ingest {n / dm:,.0f} docs/s, raw bulk {n / rm:,.0f} docs/s (per round: "
          f"{', '.join(f'{b / a:.3f}' for a, b in zip(dedup_times, raw_times))})")
    print(f"INFO dedup ingest without fingerprinting (lookups + writes + decisions): {n / (dm - fp_t):,.0f} docs/s "
          f"= {rm / (dm - fp_t):.2f} of raw; if the raw baseline had to fingerprint too: "
          f"{(rm + fp_t) / dm:.2f}")
    print(f"INFO writes inside dedup (add) {n / add_t:,.0f} docs/s vs raw bulk {n / rm:,.0f} docs/s; "
          f"lookups {n / lk_t:,.0f} docs/s; fingerprinting {n / fp_t:,.0f} docs/s")
    return _es.verdicts([(ratio >= TARGET_RATIO, f"dedup ingest / raw bulk = {ratio:.3f}  (target >= "
                                                 f"{TARGET_RATIO:.2f})")], t_start, args.strict)


if __name__ == "__main__":
    sys.exit(main())
