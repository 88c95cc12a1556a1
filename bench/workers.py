"""Embedded ``dedup`` throughput with workers fingerprinting ahead (``DedupEngine(workers=N)``, the CLI's
``--workers``): threads (with the native core, which releases the GIL) and processes, against the default (one
thread), on the same documents in the same run; results must be identical.

    python bench/workers.py                 # ~16k documents (People's Daily + BBC, three edited copies each)
    python bench/workers.py --copies 6 --workers 0 1 2 3
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import corpora  # noqa: E402
from _common import cpu_model  # noqa: E402

from es_simhash.engine.dedup_engine import DedupEngine
from es_simhash.records import Document


def documents(copies: int) -> list[Document]:
    arts = corpora.peoples_daily_articles() + corpora.bbc_news()
    docs = []
    for c in range(copies):  # copy c drops its first 7c characters and gets a prefix: near duplicates of copy 0
        docs += [Document(f"{c}-{i}", f"第{c}版 " + a[c * 7:]) for i, a in enumerate(arts)]
    return docs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=3)
    ap.add_argument("--workers", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=1000)
    args = ap.parse_args(argv)
    docs = documents(args.copies)
    print(f"es-simhash dedup with worker processes: {len(docs):,} documents, batch_size {args.batch_size}, "
          f"cpus {os.cpu_count()} ({cpu_model()}), {args.rounds} interleaved rounds (median)")
    from es_simhash import Fingerprinter

    engine = Fingerprinter().engine
    configs = [(0, None)] + [(w, kind) for w in args.workers if w for kind in
                             (("threads", "processes") if engine == "native" else ("processes",))]
    print(f"fingerprint engine: {engine} (threads only help the native one, which releases the GIL)")
    times: dict[tuple, list[float]] = {c: [] for c in configs}
    answers: dict[tuple, list] = {}
    for _ in range(args.rounds):
        for c in configs:
            w, kind = c
            t0 = time.perf_counter()
            engine_ = DedupEngine(batch_size=args.batch_size, workers=w,
                                  worker_threads=None if kind is None else kind == "threads")
            res = [(r.id, r.cluster, r.duplicate_of, r.reason) for r in engine_.process(docs)]
            times[c].append(time.perf_counter() - t0)
            answers.setdefault(c, res)
            if res != answers[c]:
                raise SystemExit(f"workers={c} changed its own answer between rounds")
    med = {c: sorted(t)[len(t) // 2] for c, t in times.items()}
    base = med[configs[0]]
    print(f"{'workers':>16}  {'median s':>8}  {'docs/s':>7}  {'x workers=0':>11}  same results")
    ok = True
    for c in configs:
        same = answers[c] == answers[configs[0]]
        ok &= same
        label = f"{c[0]} {c[1]}" if c[1] else "0 (one thread)"
        print(f"{label:>16}  {med[c]:>8.1f}  {len(docs) / med[c]:>7,.0f}  {base / med[c]:>11.2f}  {same}")
    best = min(configs, key=lambda c: med[c])
    print(f"RESULT docs={len(docs)} engine={engine} best={best[0]}{'-' + best[1] if best[1] else ''} "
          + " ".join(f"{c[0]}_{c[1]}_vs_0={base / med[c]:.2f}" for c in configs[1:]) + f" same={ok}")
    return 0 if ok else 1

if __name__ == "__main__":
    sys.exit(main())
