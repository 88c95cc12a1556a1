"""Elasticsearch backend against a real node: dedup on ingest, idempotency, parity with the embedded engine,
crowded buckets, search-time filtering, clusters, and the CLI commands."""

import json
import logging

import numpy as np
import pytest

from es_simhash import Fingerprint, Fingerprinter
from es_simhash.engine.dedup_engine import DedupEngine
from es_simhash.records import Document, StoredDoc
from es_simhash.index.base import Lookup
from es_simhash.index.elastic.codec import to_source
from es_simhash.index.elastic import ElasticIndex, ensure_index, index_template, server_version
from es_simhash.index.memory import MemoryIndex
from es_simhash.lookup.keys import DEFAULT, SEGMENTS
from es_simhash.results.search import filter_duplicates, search, top_clusters
from support import chinese_articles, english_articles, run_cli


@pytest.fixture
def index(client, es_index_name, fingerprinter):
    ensure_index(client, es_index_name, fingerprinter.config, replicas=0)
    return ElasticIndex(client, es_index_name)


def articles(n, lo=800, hi=3000):
    return [a for a in chinese_articles() if lo <= len(a) <= hi][:n]


def reprint(a):
    return "本网讯 " + a.replace("，", ",", 2) + "（完）"


def cli(*args, es_url, input=b"", **kw):
    return run_cli(*args, es_url=es_url, stdin=input, **kw)


def test_server_major_matches_the_client(client):
    # The README's rule: elasticsearch-py 9 for 9.x clusters (the default run), 8 for 8.x (scripts/test_es8.sh);
    # opensearch-py 2.4 or later for OpenSearch 2 and 3 (scripts/test_opensearch.sh), told from the node's answer.
    major = int(server_version(client).split(".")[0])
    if client.engine == "opensearch":
        import opensearchpy

        assert major in (2, 3) and opensearchpy.VERSION >= (2, 4), (major, opensearchpy.VERSION)
        return
    import elasticsearch

    assert client.engine == "elasticsearch"
    assert str(major) == elasticsearch.__versionstr__.split(".")[0]


def test_near_duplicate_of_previous_batch_is_found_with_refresh_disabled(client, index, fingerprinter):
    client.indices.put_settings(index=index.index, settings={"index": {"refresh_interval": "-1"}})
    engine = DedupEngine(index, fingerprinter, batch_size=5)
    arts = articles(10)
    first = list(engine.process([Document(f"a{i}", a) for i, a in enumerate(arts)]))
    assert not any(r.duplicate for r in first)
    later = list(engine.process([Document("r3", reprint(arts[3]))]))  # a separate, later batch
    assert later[0].duplicate and later[0].cluster == "a3"


def test_duplicates_inside_one_batch_and_across_runs(client, index, fingerprinter):
    arts = articles(6)
    run1 = list(DedupEngine(index, fingerprinter, batch_size=100).process(
        [Document("x", arts[0]), Document("x-exact", arts[0]), Document("y", arts[1])]))
    assert [r.duplicate for r in run1] == [False, True, False]
    # a new engine (a new process would be the same): only Elasticsearch remembers
    run2 = list(DedupEngine(ElasticIndex(client, index.index), fingerprinter).process(
        [Document("y-reprint", reprint(arts[1]))]))
    assert run2[0].duplicate and run2[0].cluster == "y"


def test_a_client_a_script_made_itself_serves_the_index(client, es_url, es_index_name, fingerprinter):
    """``ElasticIndex`` over the client library's own client (``elasticsearch.Elasticsearch`` or
    ``opensearchpy.OpenSearch``, as a script makes it, not es-simhash's ``connect``): writes, finds and rechecks as
    with es-simhash's."""
    if client.engine == "opensearch":
        from opensearchpy import OpenSearch as Raw
    else:
        from elasticsearch import Elasticsearch as Raw
    raw = Raw(es_url)
    ensure_index(client, es_index_name, fingerprinter.config, replicas=0)
    arts = articles(3)
    index = ElasticIndex(raw, es_index_name)
    results = list(DedupEngine(index, fingerprinter).process(
        [Document("a", arts[0]), Document("b", arts[1]), Document("a-reprint", reprint(arts[0]))]))
    assert [(r.duplicate, r.cluster) for r in results] == [(False, "a"), (False, "b"), (True, "a")]
    assert index.client.engine == client.engine
    raw.close()


def test_the_clause_bound_is_the_clusters(client):
    """Where the engine has a fixed bound on a search's clauses (OpenSearch), lookups and search read the cluster's
    own setting, raised or not; Elasticsearch sizes it by heap and has none to read."""
    from es_simhash.results.search import MAX_QUERY_CHARS, query_chars

    if client.engine == "elasticsearch":
        assert client.max_clause_count() is None and query_chars(client) == MAX_QUERY_CHARS
        return
    setting = "indices.query.bool.max_clause_count"
    assert client.max_clause_count() == 1024 and query_chars(client) == 504
    try:
        client.cluster.put_settings(persistent={setting: 4096})
        assert client.max_clause_count() == 4096 and query_chars(client) == MAX_QUERY_CHARS
    finally:
        client.cluster.put_settings(persistent={setting: None})
    assert client.max_clause_count() == 1024


def test_documents_without_features_never_match_through_segments(index, fingerprinter):
    res = list(DedupEngine(index, fingerprinter).process(
        [Document(f"e{i}", t) for i, t in enumerate(["", "。。。", "!!!", "的了是", "？？"])]))
    assert not any(r.duplicate for r in res)
    found = index.lookup([Lookup("probe", fingerprinter.fingerprint("……"))], 3)[0]
    assert found.candidates == []


def test_same_clusters_as_the_embedded_engine(index, fingerprinter):
    arts = articles(120) + [a for a in english_articles() if len(a) > 1500][:60]
    docs = [Document(f"d{i}", a) for i, a in enumerate(arts)]
    docs += [Document(f"r{i}", reprint(arts[i])) for i in range(0, 120, 6)]
    docs += [Document(f"x{i}", arts[i]) for i in range(0, 180, 15)]
    docs += [Document(f"s{i}", t) for i, t in enumerate(["转发：今天的天气非常好，适合出去散步和锻炼身体。",
                                                         "今天的天气非常好，适合出去散步和锻炼身体！", ""])]
    # minimal-change pairs, in different batches: the meaning guard reads word_bag and the content hash of m0/m2
    # back from the index
    docs = [Document("m0", "Police say Smith attacked Jones outside the club on Friday night, and both men were "
                           "arrested."),
            Document("m2", "我们支持这项改革方案，它会让更多的年轻人在城市里找到稳定的工作。")] + docs
    docs += [Document("m1", "Police say Jones attacked Smith outside the club on Friday night, and both men were "
                            "arrested."),
             Document("m3", "我们不支持这项改革方案，它会让更多的年轻人在城市里找到稳定的工作。")]
    on_es = [(r.id, r.cluster, r.duplicate_of, r.reason) for r in
             DedupEngine(index, fingerprinter, batch_size=37).process(docs)]
    embedded = [(r.id, r.cluster, r.duplicate_of, r.reason) for r in
                DedupEngine(MemoryIndex(), fingerprinter, batch_size=37).process(docs)]
    assert on_es == embedded
    assert sum(1 for r in on_es if r[2]) >= 30  # the planted duplicates were found
    clusters = {r[0]: r[1] for r in on_es}
    assert clusters["m1"] == "m1" and clusters["m3"] == "m3"  # not merged with m0 / m2


@pytest.mark.parametrize("keys,shared_mask", [(DEFAULT, (1 << 33) - 1), (SEGMENTS, 0xFFFF)],
                         ids=["permutation-tables", "segments"])
def test_a_bucket_shared_by_5000_documents_is_read_to_the_end(client, es_index_name, fingerprinter, caplog, keys,
                                                              shared_mask):
    """5,000 documents share one lookup key (their low 33 bits: table 0 of the permutation tables, or the low
    16-bit segment): the batched search is full, the lookup falls back to one search per document and reads the
    bucket to the end; with a smaller bound it says so (truncated, and a warning), never silently."""
    ensure_index(client, es_index_name, fingerprinter.config, replicas=0, lookup_keys=keys)
    index = ElasticIndex(client, es_index_name, batch_page=1000)
    assert index.lookup_keys == keys
    rng = np.random.default_rng(5)
    shared = 0x1BEEFCAFE & shared_mask
    sims = [(int(x) & ~shared_mask) | shared for x in rng.integers(0, 2**63, size=5000)]
    query = sims[1234] ^ (1 << 40) ^ (1 << 63)  # distance 2 from one of them, same low bits
    docs = [StoredDoc(f"b{i}", Fingerprint(s, i + 1, (), 10, 500, False), f"b{i}") for i, s in enumerate(sims)]
    assert index.add(docs) == {}
    fp = Fingerprint(query, 10**9, (), 10, 500, False)
    res = index.lookup([Lookup("q", fp)], 3)[0]
    expected = {f"b{i}" for i, s in enumerate(sims) if (s ^ query).bit_count() <= 3}
    assert {c.id for c in res.candidates} == expected and "b1234" in expected
    assert not res.truncated
    # in a batch, only the document that shares the crowded key is read on its own; the rest are split off
    rng2 = np.random.default_rng(6)
    lone = [int(x) for x in rng2.integers(0, 2**63, size=40)]
    assert index.add([StoredDoc(f"n{i}", Fingerprint(s, 10**6 + i, (), 10, 500, False), f"n{i}")
                      for i, s in enumerate(lone)]) == {}
    batch = [Lookup(f"m{i}", Fingerprint(s ^ (1 << 7), 10**8 + i, (), 10, 500, False)) for i, s in enumerate(lone)]
    batch.insert(17, Lookup("q", fp))
    answers = index.lookup(batch, 3)
    assert [{c.id for c in r.candidates} for r in answers] == [
        {f"b{i}" for i, s in enumerate(sims) if (s ^ q.fingerprint.simhash).bit_count() <= 3}
        | {f"n{i}" for i, s in enumerate(lone) if (s ^ q.fingerprint.simhash).bit_count() <= 3} for q in batch]
    if not keys.is_segments:  # (an index with segments is always looked up one search per document)
        assert index.crowded_batches == 2 and index.split_batches > 0
    small = ElasticIndex(client, index.index, max_candidates=1000, batch_page=1000)
    with caplog.at_level(logging.WARNING):
        res = small.lookup([Lookup("q", fp)], 3)[0]
    assert res.truncated and small.truncated_lookups == 1
    assert "shares a bucket with more than 1000 documents" in caplog.text


def test_boilerplate_sentences_do_not_make_duplicates(index, fingerprinter):
    footer = "本文转载仅仅是出于传播信息的需要，并不意味着代表本网站观点或证实其内容的真实性。"
    short_posts = [f"第{i}号公告：今天下午{i}点将进行例行的系统维护工作。{footer}" for i in range(80)]
    res = list(DedupEngine(index, fingerprinter, batch_size=20).process(
        [Document(f"p{i}", t) for i, t in enumerate(short_posts)]))
    # the footer sentence is shared by all: no post is a duplicate of another through it alone (a post matched
    # through sentences shares more than the footer's hashes with its match; the announcements are near copies of
    # each other, which SimHash finds)
    fps = {r.id: r.fingerprint for r in res}
    footer_hashes = set(Fingerprinter(sketch=10_000).fingerprint(footer).hashes)  # (every shingle of it)
    merged = [r for r in res if r.reason == "sentences"]
    assert all(set(fps[r.id].hashes) & set(fps[r.duplicate_of].hashes) - footer_hashes for r in merged)
    assert any(r.reason == "simhash" for r in res)


def test_search_collapses_clusters_and_filter_duplicates(client, index, fingerprinter):
    arts = articles(30)
    docs = [Document(f"a{i}", a, {"title": a[:15], "url": f"https://news.example/{i}"}) for i, a in enumerate(arts)]
    docs += [Document(f"a{i}-copy{j}", reprint(arts[i]), {"title": arts[i][:15]}) for i in (2, 5) for j in range(3)]
    list(DedupEngine(index, fingerprinter).process(docs))
    word = arts[2][:4]
    collapsed = search(client, index.index, word, size=50)
    clusters = [h.cluster for h in collapsed]
    assert len(clusters) == len(set(clusters))
    assert {h.cluster: h.cluster_size for h in collapsed}.get("a2") == 4
    everything = search(client, index.index, word, size=50, collapse=False)
    assert len(everything) > len(collapsed)
    raw = client.search(index=index.index, query={"match": {"content": word}}, size=50)["hits"]["hits"]
    kept = filter_duplicates(raw, k=3)
    assert len({h["_source"]["dup_cluster"] for h in kept}) == len(kept)
    assert {h["_source"]["dup_cluster"] for h in kept} == {h["_source"]["dup_cluster"] for h in raw}
    top = top_clusters(client, index.index, top=2)
    assert [(c.cluster, c.size) for c in top] == [("a2", 4), ("a5", 4)]
    assert top[0].url == "https://news.example/2"


def test_prepare_checks_an_existing_index_now_and_creates_a_new_one_when_the_run_starts(client, es_index_name,
                                                                                        fingerprinter):
    """``ElasticIndex.prepare``, what ``index`` and ``migrate`` make their index ready with: a new index is created
    (with the run's lookup keys) only by the function it returns; an existing one is checked at once and keeps its
    keys; ``on_ready`` gets the keys the index is looked up with."""
    from es_simhash.errors import ElasticError, IndexNotManaged

    ready = []
    start = ElasticIndex(client, es_index_name).prepare(fingerprinter.config, SEGMENTS, on_ready=ready.append)
    assert start is not None and not client.indices.exists(index=es_index_name) and ready == []
    start()
    assert client.indices.exists(index=es_index_name) and ready == [SEGMENTS]
    assert ElasticIndex(client, es_index_name).prepare(fingerprinter.config, DEFAULT, on_ready=ready.append) is None
    assert ready == [SEGMENTS, SEGMENTS]  # (it keeps the keys it was made with)
    with pytest.raises(ElasticError, match="sentences"):
        ElasticIndex(client, es_index_name).prepare({**fingerprinter.config, "sentences": 3})
    assert ElasticIndex.existing(client, es_index_name).lookup_keys == SEGMENTS
    with pytest.raises(IndexNotManaged, match="does not exist"):
        ElasticIndex.existing(client, es_index_name + "-missing")


def test_template_maps_every_field_the_code_writes(index, fingerprinter):
    props = index_template()["template"]["mappings"]["properties"]
    doc = StoredDoc("id1", fingerprinter.fingerprint(articles(1)[0]), "id1", text="t",
                    fields={"title": "T", "url": "u", "crawl_time": "2026-11-21T10:00:00Z", "extra": {"a": 1}})
    written = to_source(doc, "2026-11-21T00:00:00+00:00", ["0:00000000"])
    assert set(written) <= set(props) and "lookup_keys" in written
    assert all(props[f"seg{i}"]["type"] == "keyword" for i in range(4))


# -- CLI -------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def crawl_file(tmp_path_factory):
    arts = articles(60)
    lines = [{"id": f"a{i}", "title": a[:12], "url": f"https://s/{i}", "content": a} for i, a in enumerate(arts)]
    lines += [{"id": f"r{i}", "content": reprint(arts[i])} for i in range(0, 60, 5)]
    lines += [{"id": f"c{i}", "content": arts[i]} for i in range(0, 60, 20)]
    raw = [json.dumps(x, ensure_ascii=False) for x in lines] + ['{"broken', json.dumps({"id": "e", "content": 5})]
    p = tmp_path_factory.mktemp("crawl") / "crawl.jsonl"
    p.write_text("\n".join(raw) + "\n")
    return p, len(raw)


def test_cli_index_is_idempotent_and_matches_embedded_dedup(es_url, es_index_name, crawl_file, tmp_path, client):
    path, n = crawl_file
    first = cli("index", path, "--index", es_index_name, "--report", tmp_path / "es1.jsonl",
                "--dead-letters", tmp_path / "dead.jsonl", es_url=es_url)
    assert first.returncode == 0, first.stderr.decode()
    assert f"read {n}" in first.stderr.decode() and "dead letters 2" in first.stderr.decode()
    client.indices.refresh(index=es_index_name)
    count1 = client.count(index=es_index_name)["count"]
    assert count1 == n - 2
    second = cli("index", path, "--index", es_index_name, "--report", tmp_path / "es2.jsonl",
                 "--dead-letters", tmp_path / "dead2.jsonl", es_url=es_url)
    assert second.returncode == 0 and "already indexed" in second.stderr.decode()
    client.indices.refresh(index=es_index_name)
    assert client.count(index=es_index_name)["count"] == count1
    strip = lambda p: [(r["id"], r["cluster"], r["duplicate_of"]) for r in map(json.loads, p.read_text().splitlines())]  # noqa: E731
    assert strip(tmp_path / "es1.jsonl") == strip(tmp_path / "es2.jsonl")
    embedded = cli("dedup", path, "--report", tmp_path / "mem.jsonl", "--dead-letters", tmp_path / "d3.jsonl",
                   es_url=es_url)  # (each with its defaults: the same clusters)
    assert embedded.returncode == 0
    assert strip(tmp_path / "es1.jsonl") == strip(tmp_path / "mem.jsonl")
    found = {r[0] for r in strip(tmp_path / "es1.jsonl") if r[2]}
    assert {"c0", "c20", "c40"} <= found  # exact copies: always
    assert len(found) >= 13  # and most of the 12 reprints (site header + edits) at the default k = 3


def test_cli_check_search_clusters(es_url, es_index_name, crawl_file):
    path, _ = crawl_file
    assert cli("index", path, "--index", es_index_name, "--no-progress", es_url=es_url).returncode == 0
    arts = articles(60)
    fingerprinter = Fingerprinter()

    def head(texts):  # (a cluster is headed by its first member in content order: content hash, then id)
        return min(texts, key=lambda i: (fingerprinter.fingerprint(texts[i]).content_hash, i))

    res = cli("check", "--index", es_index_name, "-", input=reprint(arts[10]).encode(), es_url=es_url)
    assert res.returncode == 0
    hits = [json.loads(x) for x in res.stdout.decode().splitlines()]
    assert hits and hits[0]["cluster"] == head({"a10": arts[10], "r10": reprint(arts[10])})
    res = cli("clusters", "--index", es_index_name, "--json", "--limit", "3", es_url=es_url)
    rows = [json.loads(x) for x in res.stdout.decode().splitlines()]
    # (the three largest: a0, a20 and a40, each with its reprint and its copy)
    assert [r["size"] for r in rows] == [3, 3, 3] and {r["cluster"] for r in rows} == {
        head({f"a{i}": arts[i], f"r{i}": reprint(arts[i]), f"c{i}": arts[i]}) for i in (0, 20, 40)}
    res = cli("search", arts[0][:6], "--index", es_index_name, "--json", es_url=es_url)
    hits = [json.loads(x) for x in res.stdout.decode().splitlines()]
    assert hits and len({h["cluster"] for h in hits}) == len(hits)


def test_cli_unreachable_cluster_is_one_line_and_exit_3(tmp_path):
    (tmp_path / "in.jsonl").write_text('{"content": "x"}\n')
    res = cli("index", tmp_path / "in.jsonl", "--index", "x", es_url="http://127.0.0.1:9")
    assert res.returncode == 3
    err = res.stderr.decode().strip()
    assert err.count("\n") == 0 and "cannot reach Elasticsearch at http://127.0.0.1:9" in err


def test_cli_rejects_bad_index_names(tmp_path):
    (tmp_path / "in.jsonl").write_text('{"content": "x"}\n')
    for bad in ("UPPER", "has space", "-dash", "a/b", "*"):
        res = cli("index", tmp_path / "in.jsonl", "--index", bad, es_url="http://127.0.0.1:9")
        err = res.stderr.decode()
        assert res.returncode == 2 and err.startswith("es-simhash: error: invalid value for --index: ") and \
            "is not a valid index name" in err and err.count("\n") == 1, err
