"""`dedup` (embedded, with its defaults) gives the same clusters for the same records in any input order and at any
batch size: the same sets of ids, and the same canonical for each (the first of its cluster in the content order,
``index.base.precedence_key``: content hash, then id), so the same (id, cluster) pairs. So does `evaluate`, which scores the same run.

The input is a real mix: the test split of the accuracy benchmark at scale 0.15 (People's Daily and BBC articles,
their reprints wrapped in site templates, excerpts, cuts, typos, short reposts and their minimal-change negatives:
``bench/accuracy_data.py``), a crawl of short texts in site headers and footers (``support.templated_crawl``) and
articles that arrive after two copies that do not match each other (one carrying a comment section, one with ASCII
punctuation). Each run is the real command line (``support.run_cli``)."""

from __future__ import annotations

import itertools
import json
import random
import re
from pathlib import Path

import pytest

import accuracy  # (bench/accuracy.py)
from support import chinese_articles, templated_crawl

ORDERS = 5
ASCII = str.maketrans({"，": ",", "。": ".", "；": ";", "：": ":", "！": "!", "？": "?", "“": '"', "”": '"',
                       "（": "(", "）": ")"})


def comment_section(n_chars: int, rng: random.Random) -> str:
    """Readers' comments under a page, about as long as ``n_chars``: real People's Daily sentences, one a line."""
    pool = [a for a in chinese_articles() if 100 < len(a) < 300]
    lines, size = ["网友评论"], 0
    for sentence in (s for p in rng.sample(pool, 8) for s in re.findall(r"[^。！？]+[。！？]", p)):
        lines.append(f"网友{rng.randrange(1000, 9999)}：{sentence}")
        size += len(sentence)
        if size > n_chars:
            break
    return "\n".join(lines)


def original_after_two_copies(original: str = "art{n}") -> list[tuple[dict, dict, dict]]:
    """(original, copy with comments, copy cut short with ASCII punctuation) of articles (the original's id:
    ``original`` with the article's number); in some, the two copies do not match each other but each matches the
    original."""
    articles = [a for a in chinese_articles() if 600 < len(a) < 1000]
    out = []
    for n, article in enumerate(articles[:12]):
        rng = random.Random(n)
        out.append(({"id": original.format(n=n), "content": article},
                    {"id": f"art{n}-comments", "content": article + "\n" + comment_section(len(article), rng)},
                    {"id": f"art{n}-ascii", "content": article[:int(len(article) * 0.45)].translate(ASCII)}))
    return out


@pytest.fixture(scope="module")
def mix() -> list[dict]:
    split = accuracy.data.build("test", scale=0.15)
    records = [{"id": d.id, "content": d.text} for d in split.docs()]
    records += [{**r, "id": f"t-{r['id']}"} for r in templated_crawl(7, 400)]
    records += [r for triple in original_after_two_copies() for r in triple]
    return records


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def _report(cli, records: list[dict], cwd: Path, name: str, *args: str) -> dict[str, str]:
    """id -> cluster from `dedup --report` of ``records`` in this order."""
    res = cli("dedup", _write(cwd / f"{name}.jsonl", records), "--report", f"{name}-report.jsonl",
              "--dead-letters", f"{name}-dead.jsonl", "--no-progress", *args, cwd=cwd)
    assert res.returncode == 0, res.stderr.decode()
    rows = [json.loads(x) for x in (cwd / f"{name}-report.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == [r["id"] for r in records]  # (the report stays in input order)
    return {r["id"]: r["cluster"] for r in rows}


def partition(clusters: dict[str, str]) -> set[frozenset[str]]:
    groups: dict[str, set[str]] = {}
    for i, c in clusters.items():
        groups.setdefault(c, set()).add(i)
    return {frozenset(g) for g in groups.values()}


def test_dedup_gives_the_same_clusters_and_canonicals_in_any_order_and_batch_size(mix, cli, tmp_path):
    runs = {}
    for n in range(ORDERS):
        records = list(mix)
        random.Random(n).shuffle(records)
        for batch_size in ("1000", "37"):
            runs[n, batch_size] = _report(cli, records, tmp_path, f"o{n}-b{batch_size}", "--batch-size", batch_size)
    first = runs[0, "1000"]
    assert sum(c != i for i, c in first.items()) > len(mix) // 5  # (duplicates found: the test has something to miss)
    for key, got in runs.items():
        assert partition(got) == partition(first), key
        assert got == first, (key, sorted(i for i in got if got[i] != first[i])[:5])
    # the canonical is the first of its cluster in the content order (exact copies, one content hash, decided as
    # one), leaving out the members that joined at the end through a member after them (a duplicate_of later in
    # that order): a rule of the records alone
    from es_simhash import Fingerprinter

    fingerprinter = Fingerprinter()
    content_hash = {r["id"]: fingerprinter.fingerprint(r["content"]).content_hash for r in mix}
    rows = {}
    for line in (tmp_path / "o0-b1000-report.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        rows[row["id"]] = row
    key = {i: (content_hash[i], i) for i in rows}
    joined_later = {i for i, r in rows.items() if r["duplicate_of"] is not None and key[r["duplicate_of"]] > key[i]}
    assert joined_later  # (the mix holds originals after two copies that do not match each other)
    firsts: dict[str, tuple[int, str]] = {}
    for i, c in first.items():
        if i not in joined_later:
            firsts[c] = min(firsts.get(c, key[i]), key[i])
    assert all(key[c] == firsts[c] for c in firsts)


def _triples(original: str) -> list[tuple[dict, dict, dict]]:
    """The triples of :func:`original_after_two_copies` whose two copies match the original, not each other."""
    from es_simhash import Fingerprinter
    from es_simhash.decide.default import DefaultRule
    from es_simhash.records import StoredDoc

    fingerprinter, rule = Fingerprinter(), DefaultRule.rechecked()

    def match(a: str, b: str) -> bool:
        return rule.decide(fingerprinter.fingerprint(a), [StoredDoc("b", fingerprinter.fingerprint(b), "b")]) is not None

    triples = [t for t in original_after_two_copies(original)
               if not match(t[1]["content"], t[2]["content"]) and not match(t[2]["content"], t[1]["content"])
               and match(t[1]["content"], t[0]["content"]) and match(t[2]["content"], t[0]["content"])]
    assert len(triples) >= 2  # (the case arises: the two copies match the original, not each other)
    return triples


@pytest.mark.parametrize("original", ["art{n}", "zz{n}"])  # (the original's id sorts before its exact copy's, or after)
def test_an_original_and_two_copies_that_do_not_match_each_other_get_one_partition_in_every_order(original, cli,
                                                                                                 tmp_path):
    triples = _triples(original)
    first = None
    for n, order in enumerate(itertools.permutations(range(3))):
        records = [triple[i] for triple in triples for i in order]
        got = _report(cli, records, tmp_path, f"p{n}")
        first = first or got
        assert got == first, order


@pytest.mark.parametrize("original", ["art{n}", "zz{n}"])
def test_an_original_after_two_copies_that_do_not_match_each_other_joins_them(original, cli, tmp_path):
    """In every order of the three (the original first, between its copies or last), one cluster."""
    triples = _triples(original)
    for n, order in enumerate(itertools.permutations(range(3))):
        got = _report(cli, [triple[i] for triple in triples for i in order], tmp_path, f"j{n}")
        for triple in triples:
            assert got[triple[0]["id"]] == got[triple[1]["id"]] == got[triple[2]["id"]], (order, triple[0]["id"])


@pytest.mark.parametrize("seed", range(1, 8))
def test_a_repair_of_what_dedup_decided_finds_nothing_to_change(seed):
    """The index a `dedup` run leaves (with its defaults, the recheck and the set decision) is what `repair` would
    make of it: repair's dry run lists no change. Short texts inside sites' headers and footers are where a page's
    recheck alone (a headline inside a template split off) and the set decision (which joins it to its original
    again) could disagree."""
    from es_simhash import DedupEngine, DefaultRule, Document, Fingerprinter, MemoryIndex
    from es_simhash.pipeline import dedup_documents, repair_index

    records = templated_crawl(seed, 2000)
    index = MemoryIndex()
    engine = DedupEngine.for_run(index, Fingerprinter(), DefaultRule.for_run(recheck=True), recheck=True)
    clusters = dedup_documents([Document(r["id"], r["content"]) for r in records], engine, recheck=True)
    assert sum(c != i for i, c in clusters.items()) > 500  # (the reprints found: there is something to change)
    report = repair_index(index, DefaultRule.for_run(recheck=True), dry_run=True)
    assert [(c.id, c.why) for c in report.changes] == []
    assert {i: d.cluster for i, d in index.fetch(list(clusters)).items()} == clusters


def test_index_into_a_new_index_gives_dedups_clusters_and_canonicals_in_any_order(mix, cli, es_url, client,
                                                                                  es_index_name, tmp_path):
    """`index` (Elasticsearch, with its defaults) into a new index, fed the same records in five orders, gives
    `dedup`'s clusters with `dedup`'s canonicals: in its report and in what the index holds; and the same input
    again changes nothing."""
    from es_simhash.index.elastic import ElasticIndex

    records = [r for r in mix if not r["id"].startswith("t-")]  # (the accuracy split and the triples)
    want = _report(cli, records, tmp_path, "dedup")
    assert sum(c != i for i, c in want.items()) > len(records) // 5
    others = [f"{es_index_name}-{n}" for n in range(1, ORDERS)]
    second = others[-1]
    try:
        for n, name in enumerate((es_index_name, *others)):
            shuffled = list(records)
            random.Random(100 + n).shuffle(shuffled)
            path = _write(tmp_path / f"input-{n}.jsonl", shuffled)
            res = cli("index", path, "--index", name, "--report", f"index-{n}.jsonl", "--dead-letters",
                      f"index-{n}-dead.jsonl", "--no-progress", cwd=tmp_path, es_url=es_url)
            assert res.returncode == 0, res.stderr.decode()
            rows = [json.loads(x) for x in (tmp_path / f"index-{n}.jsonl").read_text(encoding="utf-8").splitlines()]
            got = {r["id"]: r["cluster"] for r in rows}
            assert got == want, (n, sorted(i for i in got if got[i] != want[i])[:5])
            client.indices.refresh(index=name)
            held = {d.id: d.cluster for page in ElasticIndex(client, name).scan() for d in page}
            assert held == want, n
        res = cli("index", path, "--index", second, "--report", "again.jsonl", "--dead-letters", "again-dead.jsonl",
                  "--no-progress", cwd=tmp_path, es_url=es_url)
        assert res.returncode == 0, res.stderr.decode()
        client.indices.refresh(index=second)
        docs = {d.id: d for page in ElasticIndex(client, second).scan() for d in page}
        assert {i: d.cluster for i, d in docs.items()} == want
        # every duplicate_of a match the rule made: the documents arrive in the order they were decided in, each
        # after the one it duplicates, so repair (which takes the documents by arrival) finds nothing to fix
        assert all((docs[d.duplicate_of].arrival, d.duplicate_of) < (d.arrival, d.id)
                   for d in docs.values() if d.duplicate_of is not None)
        dry = cli("repair", "--index", second, "--dry-run", "--no-progress", cwd=tmp_path, es_url=es_url)
        assert dry.returncode == 0 and dry.stdout == b"", dry.stdout.decode()[:500]
    finally:
        for name in others:
            client.options(ignore_status=404).indices.delete(index=name)


def test_a_living_index_fed_in_other_orders_and_runs_gives_dedups_clusters_after_repair(mix, cli, es_url, client,
                                                                                        es_index_name, tmp_path):
    """Two living indexes fed the same records in other orders and in other runs (two days, three days: each run
    after the first decides on arrival into an index that holds others, as crawls arrive) hold `dedup`'s clusters,
    with `dedup`'s canonicals, once `repair` has run; a second repair changes nothing."""
    from es_simhash.index.elastic import ElasticIndex

    records = [r for r in mix if not r["id"].startswith("t-")]
    want = _report(cli, records, tmp_path, "dedup")
    second = f"{es_index_name}-b"
    try:
        for n, (name, days) in enumerate(((es_index_name, 2), (second, 3))):
            shuffled = list(records)
            random.Random(200 + n).shuffle(shuffled)
            for day in range(days):
                path = _write(tmp_path / f"living-{n}-{day}.jsonl", shuffled[day::days])
                res = cli("index", path, "--index", name, "--dead-letters", f"living-{n}-{day}-dead.jsonl",
                          "--no-progress", cwd=tmp_path, es_url=es_url)
                assert res.returncode == 0, res.stderr.decode()
            client.indices.refresh(index=name)
            before = {d.id: d.cluster for page in ElasticIndex(client, name).scan() for d in page}
            assert before != want  # (decided on arrival, run by run: the test has something to repair)
            res = cli("repair", "--index", name, "--no-progress", cwd=tmp_path, es_url=es_url)
            assert res.returncode == 0, res.stderr.decode()
            client.indices.refresh(index=name)
            held = {d.id: d.cluster for page in ElasticIndex(client, name).scan() for d in page}
            assert held == want, (n, sorted(i for i in held if held[i] != want[i])[:5])
            again = cli("repair", "--index", name, "--no-progress", cwd=tmp_path, es_url=es_url)
            assert again.returncode == 0 and again.stdout == b"", again.stdout.decode()[:500]
    finally:
        client.options(ignore_status=404).indices.delete(index=second)
