"""Embedded ``dedup`` throughput with worker processes fingerprinting ahead (``DedupEngine(workers=N)``, the CLI's
``--workers``) against the default (one thread), on the same documents in the same run; results must be identical.

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

from es_simhash.dedup import DedupEngine, Document  # noqa: E402


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
          f"cpus {os.cpu_count()}, {args.rounds} interleaved rounds (median)")
    times: dict[int, list[float]] = {w: [] for w in args.workers}
    answers: dict[int, list] = {}
    for _ in range(args.rounds):
        for w in args.workers:
            t0 = time.perf_counter()
            res = [(r.id, r.cluster, r.duplicate_of, r.reason)
                   for r in DedupEngine(batch_size=args.batch_size, workers=w).process(docs)]
            times[w].append(time.perf_counter() - t0)
            answers.setdefault(w, res)
            if res != answers[w]:
                raise SystemExit(f"workers={w} changed its own answer between rounds")
    base = sorted(times[args.workers[0]])[len(times[args.workers[0]]) // 2]
    print(f"{'workers':>7}  {'median s':>8}  {'docs/s':>7}  {'x workers=' + str(args.workers[0]):>12}  same results")
    ok = True
    for w in args.workers:
        med = sorted(times[w])[len(times[w]) // 2]
        same = answers[w] == answers[args.workers[0]]
        ok &= same
        print(f"{w:>7}  {med:>8.1f}  {len(docs) / med:>7,.0f}  {base / med:>12.2f}  {same}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
