"""A crawl stored in partitions behind an alias: `index --rollover-docs N` makes ``--index`` an alias over
partitions named as Elasticsearch's rollover names them (``crawl-000001``, ``crawl-000002``, ...) and rolls it over
between batches. The clusters are those `dedup` gives on the same input, though canonicals and their members live
in different partitions (each member re-pointed in the partition that holds it, never copied into the write
index); every id is stored exactly once across the partitions, a re-run of the same input changes nothing, a
repair finds nothing to fix, and the commands that read take the alias as ``--index``. The alias may also be
rolled over by the cluster (a lifecycle policy) while a run writes: every partition, whoever made it, gets
es-simhash's mapping from the alias's partition template.

The documents are read back by searching ``INDEX-*`` (every partition, not through the alias): a copy written
through the alias into the write index, next to the document in its older partition, shows there as an id held
twice.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import pytest

from support import chinese_articles, run_cli, templated_crawl

pytestmark = [pytest.mark.es, pytest.mark.slow]

ROLLOVER = 400
BATCH = 100


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def _crawl() -> list[dict]:
    """30 Chinese articles first, then a crawl of short texts half of them reprinted inside site templates (seed 5,
    1,600 records, in random order), then a reprint of each article: reprints land in other partitions than their
    originals, at every partition boundary."""
    articles = chinese_articles()[:30]
    records = [{"id": f"zh{i}", "content": t} for i, t in enumerate(articles)]
    records += templated_crawl(5, 1600)
    records += [{"id": f"zh{i}-reprint", "content": "转载：" + t[:200] + "，" + t[200:]}
                for i, t in enumerate(articles)]
    return records


@pytest.fixture(scope="module")
def crawl(tmp_path_factory) -> Path:
    return _write(tmp_path_factory.mktemp("partitions") / "crawl.jsonl", _crawl())


@pytest.fixture(scope="module")
def deduped(crawl, tmp_path_factory) -> dict[str, tuple[str, str | None]]:
    """The oracle: id -> (cluster, duplicate_of) as `dedup` gives them with its defaults."""
    cwd = tmp_path_factory.mktemp("dedup")
    res = run_cli("dedup", crawl, "--report", "dedup.jsonl", "--dead-letters", "dead.jsonl", "--no-progress", cwd=cwd)
    assert res.returncode == 0, res.stderr.decode()
    return _clusters(cwd / "dedup.jsonl")


@pytest.fixture
def alias(es_index_name, client):
    """A fresh alias name; its partitions and its partition template are deleted afterwards (an index cannot be
    deleted through an alias)."""
    from es_simhash.index.elastic import partition_template_name

    yield es_index_name
    client.options(ignore_status=404).indices.delete(index=f"{es_index_name}-0*", expand_wildcards="all")
    client.options(ignore_status=404).indices.delete_index_template(name=partition_template_name(es_index_name))


def _clusters(report: Path) -> dict[str, tuple[str, str | None]]:
    rows = [json.loads(x) for x in report.read_text(encoding="utf-8").splitlines()]
    return {r["id"]: (r["cluster"], r["duplicate_of"]) for r in rows}


def partitions(client, alias: str) -> dict[str, int]:
    """partition -> documents it holds, of every index named ``ALIAS-*``."""
    client.indices.refresh(index=f"{alias}-*")
    stats = client.indices.stats(index=f"{alias}-*", metric="docs")["indices"]
    return {name: int(s["primaries"]["docs"]["count"]) for name, s in stats.items()}


def every_copy(client, alias: str) -> list[dict]:
    """Every document of every ``ALIAS-*`` partition (not through the alias): ``_id``, ``_index``, cluster fields."""
    client.indices.refresh(index=f"{alias}-*")
    hits = client.search(index=f"{alias}-*", size=10_000, query={"match_all": {}},
                         source=["dup_cluster", "dup_of"])["hits"]["hits"]
    return [{"id": h["_id"], "index": h["_index"], "cluster": h["_source"]["dup_cluster"],
             "dup_of": h["_source"]["dup_of"]} for h in hits]


def stored_once(client, alias: str) -> dict[str, tuple[str, str | None]]:
    """id -> (cluster, duplicate_of) read from the partitions, asserting each id is held by one partition only."""
    copies = every_copy(client, alias)
    twice = [i for i, n in Counter(c["id"] for c in copies).items() if n > 1]
    assert not twice, f"{len(twice)} ids stored in more than one partition, e.g. {twice[:5]}"
    return {c["id"]: (c["cluster"], c["dup_of"]) for c in copies}


def write_index(client, alias: str) -> str:
    found = client.indices.get_alias(name=alias)
    return next(i for i, body in found.items() if body["aliases"][alias].get("is_write_index"))


def index_into(alias: str, crawl: Path, es_url: str, cwd: Path, *args: str) -> str:
    res = run_cli("index", crawl, "--index", alias, "--rollover-docs", str(ROLLOVER), "--batch-size", str(BATCH),
                  "--report", "report.jsonl", "--checkpoint", "cp.json", "--no-progress", *args, cwd=cwd,
                  es_url=es_url)
    assert res.returncode == 0, res.stderr.decode()
    return res.stderr.decode()


def differing(a: dict, b: dict) -> list[str]:
    assert a.keys() == b.keys()
    return sorted(i for i in a if a[i] != b[i])


def test_index_with_rollover_gives_dedups_clusters_once_and_a_re_run_and_a_repair_change_nothing(
        crawl, deduped, es_url, client, alias, tmp_path):
    n = len(deduped)
    index_into(alias, crawl, es_url, tmp_path)
    parts = partitions(client, alias)
    assert sorted(parts) == [f"{alias}-{i:06d}" for i in range(1, len(parts) + 1)]  # (named as rollover names them)
    assert sorted(client.indices.get_alias(name=alias)) == sorted(parts)
    assert write_index(client, alias) == max(parts)
    assert sum(1 for c in parts.values() if c) >= 4, parts
    assert all(c == ROLLOVER for p, c in parts.items() if p < max(parts)), parts  # (rolled over between batches)
    meta = client.indices.get_mapping(index=f"{alias}-*")
    assert len({json.dumps(m["mappings"]["_meta"], sort_keys=True) for m in meta.values()}) == 1  # (carried over)

    first = stored_once(client, alias)
    assert len(first) == n
    assert not differing(deduped, first), differing(deduped, first)[:5]
    assert _clusters(tmp_path / "report.jsonl") == first
    where = {c["id"]: c["index"] for c in every_copy(client, alias)}
    across = [i for i, (cluster, _) in first.items() if where[cluster] != where[i]]
    assert len(across) > 200  # (members in another partition than their canonical: the test has something to miss)
    assert where["zh0"] == f"{alias}-000001" and where["zh0-reprint"] == max(p for p, c in parts.items() if c)

    (tmp_path / "cp.json").unlink(missing_ok=True)
    err = index_into(alias, crawl, es_url, tmp_path)  # the same input again: nothing changes
    assert f"indexed 0 into {alias!r}" in err and f"{n:,} were already indexed" in err, err
    assert partitions(client, alias) == parts  # (no new partition, no copies)
    again = stored_once(client, alias)
    assert not differing(first, again), differing(first, again)[:5]
    assert {c["id"]: c["index"] for c in every_copy(client, alias)} == where

    dry = run_cli("repair", "--index", alias, "--dry-run", "--no-progress", es_url=es_url, cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr.decode()
    assert dry.stdout == b"" and "nothing to fix" in dry.stderr.decode(), dry.stdout.decode()[:500]


def test_the_commands_that_read_take_the_alias_and_a_delete_rewrites_members_where_they_are(
        es_url, client, alias, tmp_path):
    """`check`, `search`, `clusters` and `report` read every partition through the alias; `delete` of a canonical
    in the first partition decides its members again, each written in the partition that holds it."""
    articles = chinese_articles()[:24]
    records = [{"id": f"zh{i}", "content": t, "title": f"标题{i}"} for i, t in enumerate(articles)]
    records += [{"id": f"zh{i}-reprint", "content": "转载：" + t[:200] + "，" + t[200:]} for i, t in enumerate(articles)]
    records += [{"id": "zh0-repost", "content": articles[0][:120] + "。" + articles[0][120:]}]
    path = _write(tmp_path / "articles.jsonl", records)
    res = run_cli("index", path, "--index", alias, "--rollover-docs", "10", "--batch-size", "10", "--no-progress",
                  cwd=tmp_path, es_url=es_url)
    assert res.returncode == 0, res.stderr.decode()
    parts = partitions(client, alias)
    assert sum(1 for c in parts.values() if c) >= 4, parts
    where = {c["id"]: c["index"] for c in every_copy(client, alias)}
    assert where["zh0"] != where["zh0-reprint"] != where["zh0-repost"]

    check = run_cli("check", "--index", alias, articles[0], es_url=es_url, cwd=tmp_path)
    assert check.returncode == 0, check.stderr.decode()
    assert {"zh0", "zh0-reprint", "zh0-repost"} <= {json.loads(x)["id"] for x in check.stdout.decode().splitlines()}
    top = run_cli("clusters", "--index", alias, es_url=es_url, cwd=tmp_path)
    assert top.returncode == 0 and "zh0" in top.stdout.decode(), top.stderr.decode()
    found = run_cli("search", articles[1][:12], "--index", alias, es_url=es_url, cwd=tmp_path)
    assert found.returncode == 0 and "zh1" in found.stdout.decode(), found.stderr.decode()
    page = run_cli("report", "--index", alias, "-o", "report.html", es_url=es_url, cwd=tmp_path)
    assert page.returncode == 0 and (tmp_path / "report.html").stat().st_size > 0, page.stderr.decode()

    res = run_cli("delete", "zh0", "--index", alias, es_url=es_url, cwd=tmp_path)
    assert res.returncode == 0, res.stderr.decode()
    after = stored_once(client, alias)
    assert "zh0" not in after and len(after) == len(records) - 1
    assert after["zh0-reprint"][0] == after["zh0-repost"][0] != "zh0"  # (kept together under a new canonical)
    assert {c["id"]: c["index"] for c in every_copy(client, alias)} == {i: p for i, p in where.items() if i != "zh0"}


def test_an_alias_over_an_index_es_simhash_did_not_make_is_refused(es_url, client, alias, tmp_path):
    path = _write(tmp_path / "articles.jsonl",
                  [{"id": f"zh{i}", "content": t} for i, t in enumerate(chinese_articles()[:3])])
    res = run_cli("index", path, "--index", alias, "--rollover-docs", "2", "--batch-size", "1", "--no-progress",
                  cwd=tmp_path, es_url=es_url)
    assert res.returncode == 0, res.stderr.decode()
    foreign = f"{alias}-foreign"  # (not ALIAS-0*: the alias's partition template would give it es-simhash's mapping)
    client.indices.create(index=foreign, aliases={alias: {}})
    try:
        res = run_cli("check", "--index", alias, chinese_articles()[0], es_url=es_url, cwd=tmp_path)
        assert res.returncode != 0 and "was not made by es-simhash" in res.stderr.decode(), res.stderr.decode()
    finally:
        client.indices.delete(index=foreign)


def test_a_stored_document_is_written_in_its_partition_and_created_nowhere_else(es_url, client, alias, tmp_path):
    """Through the library: a write over a stored document (unconditional, or conditional on its version) goes to
    the partition holding it, and a create (no version: it must not exist yet) of an id an older partition holds
    is a conflict, not a second copy in the write index."""
    from dataclasses import replace

    from es_simhash.index.elastic import ElasticIndex

    path = _write(tmp_path / "articles.jsonl",
                  [{"id": f"zh{i}", "content": t} for i, t in enumerate(chinese_articles()[:3])])
    res = run_cli("index", path, "--index", alias, "--rollover-docs", "1", "--batch-size", "1", "--no-progress",
                  cwd=tmp_path, es_url=es_url)
    assert res.returncode == 0, res.stderr.decode()
    assert write_index(client, alias) == f"{alias}-000003"  # (rolled over before each batch: none left empty)
    index = ElasticIndex.existing(client, alias)
    doc = index.fetch(["zh0"])["zh0"]
    assert index.replace([replace(doc, version=None)]) == ["zh0"]  # (it exists: a conflict, nothing written)
    assert index.replace([replace(doc, distance=0)]) == []
    assert index.add([replace(doc, version=None, distance=1)]) == {}
    assert index.remove([replace(index.fetch(["zh1"])["zh1"])]) == []
    copies = every_copy(client, alias)
    assert sorted((c["id"], c["index"]) for c in copies) == [("zh0", f"{alias}-000001"), ("zh2", f"{alias}-000003")]
    assert index.fetch(["zh0"])["zh0"].distance == 1 and len(index) == 2


def test_dropping_the_oldest_partition_keeps_the_clusters_of_the_others_whole(crawl, es_url, client, alias, tmp_path):
    """`drop-partition` of the oldest partition: it is gone from the alias and deleted; every `cluster` and
    `duplicate_of` of the documents left names a document that exists; the members of a cluster whose canonical it
    held keep together under one canonical; nothing else moves; a repair right after moves no document into another
    cluster. The partition written into is refused, and so is a name that is no partition of the alias."""
    index_into(alias, crawl, es_url, tmp_path)
    parts = partitions(client, alias)
    oldest, newest = min(parts), write_index(client, alias)
    before = stored_once(client, alias)
    where = {c["id"]: c["index"] for c in every_copy(client, alias)}
    dropped = {i for i, p in where.items() if p == oldest}
    orphaned = {i for i, (cluster, _) in before.items() if cluster in dropped and i not in dropped}
    assert len(orphaned) > 20  # (members elsewhere of canonicals in the oldest partition: the test has a case)

    refused = run_cli("drop-partition", newest, "--index", alias, es_url=es_url, cwd=tmp_path)
    assert refused.returncode != 0 and "writes into" in refused.stderr.decode(), refused.stderr.decode()
    unknown = run_cli("drop-partition", f"{alias}x-000001", "--index", alias, es_url=es_url, cwd=tmp_path)
    assert unknown.returncode != 0 and "is no partition of" in unknown.stderr.decode(), unknown.stderr.decode()
    assert partitions(client, alias) == parts  # (nothing dropped)

    res = run_cli("drop-partition", oldest, "--index", alias, es_url=es_url, cwd=tmp_path)
    assert res.returncode == 0, res.stderr.decode()
    assert f"dropped {oldest!r} ({len(dropped):,} documents)" in res.stderr.decode(), res.stderr.decode()
    assert oldest not in partitions(client, alias) and oldest not in client.indices.get_alias(name=alias)
    after = stored_once(client, alias)
    assert after.keys() == before.keys() - dropped
    for i, (cluster, dup_of) in after.items():
        assert cluster in after and after[cluster][0] == cluster, (i, cluster)
        assert dup_of is None or dup_of in after, (i, dup_of)
    # the members of a cluster whose canonical was dropped stay together when they match one another (one that
    # was in it only through the dropped canonical is decided afresh, as `delete` decides it)
    from es_simhash import DefaultRule, Fingerprinter, StoredDoc

    texts = {r["id"]: r["content"] for r in map(json.loads, crawl.read_text(encoding="utf-8").splitlines())}
    fingerprints = dict(zip(sorted(orphaned), Fingerprinter().fingerprint_many([texts[i] for i in sorted(orphaned)])))
    rule = DefaultRule.for_run(recheck=True)

    def match(a: str, b: str) -> bool:
        return any(rule.decide(fingerprints[x], [StoredDoc(y, fingerprints[y], y)]) is not None
                   for x, y in ((a, b), (b, a)))

    pairs = [(a, b) for a in orphaned for b in orphaned if a < b and before[a][0] == before[b][0] and match(a, b)]
    assert len(pairs) > 10
    apart = [(a, b) for a, b in pairs if after[a][0] != after[b][0]]
    assert not apart, apart[:5]
    assert len({before[i][0] for i in orphaned}) > len({after[i][0] for i in orphaned}) / 2  # (kept, not scattered)
    # nothing else moved
    moved = [i for i in after if i not in orphaned and after[i][0] != before[i][0]
             and before[i][0] not in dropped]
    assert not moved, moved[:5]
    changed = {json.loads(x)["id"] for x in res.stdout.decode().splitlines()}
    assert changed and changed <= after.keys()
    repaired = run_cli("repair", "--index", alias, "--no-progress", es_url=es_url, cwd=tmp_path)
    assert repaired.returncode == 0, repaired.stderr.decode()
    regrouped = [c for c in map(json.loads, repaired.stdout.decode().splitlines()) if c["cluster"] != c["was_cluster"]
                 and c["id"] != c["was_cluster"]]
    assert not [c for c in regrouped if c["change"] != "decided again"], regrouped[:3]


def test_a_drop_interrupted_after_the_partition_left_the_alias_is_finished_by_running_it_again(
        es_url, client, alias, tmp_path):
    """A drop killed after it took the partition out of the alias, before it decided the rest again and deleted it
    (the state it leaves: members pointing at documents no read sees): the same command finishes it."""
    from es_simhash.index.elastic.admin import detach

    records = [{"id": f"zh{i}", "content": t} for i, t in enumerate(chinese_articles()[:12])]
    records += [{"id": f"zh{i}-reprint", "content": "转载：" + r["content"]} for i, r in enumerate(records)]
    res = run_cli("index", _write(tmp_path / "articles.jsonl", records), "--index", alias, "--rollover-docs", "12",
                  "--batch-size", "12", "--no-progress", cwd=tmp_path, es_url=es_url)
    assert res.returncode == 0, res.stderr.decode()
    oldest = min(partitions(client, alias))
    assert detach(client, alias, oldest)  # (the first step of a drop, then the kill)
    res = run_cli("drop-partition", oldest, "--index", alias, es_url=es_url, cwd=tmp_path)
    assert res.returncode == 0, res.stderr.decode()
    assert not client.indices.exists(index=oldest)
    after = stored_once(client, alias)
    assert sorted(after) == sorted(r["id"] for r in records[12:])
    assert all(cluster in after and (dup_of is None or dup_of in after) for cluster, dup_of in after.values())
    assert all(after[f"zh{i}-reprint"] == (f"zh{i}-reprint", None) for i in range(12))  # (canonicals now)


def test_rollover_by_age_starts_a_new_partition_once_the_write_index_is_that_old(es_url, client, alias, tmp_path):
    """`--rollover-age 2s`: a run after the write index turned two seconds old writes into a new partition (checked
    before each batch, as --rollover-docs is); each id is stored once and every pointer names a stored document.
    An age that is none is refused in one line naming the option."""
    import time

    articles = chinese_articles()[:20]
    first = [{"id": f"zh{i}", "content": t} for i, t in enumerate(articles[:10])]
    second = [{"id": f"zh{i}", "content": t} for i, t in enumerate(articles[10:], 10)]
    second += [{"id": f"zh{i}-reprint", "content": "转载：" + t} for i, t in enumerate(articles[:10])]
    bad = run_cli("index", _write(tmp_path / "first.jsonl", first), "--index", alias, "--rollover-age", "30x",
                  es_url=es_url, cwd=tmp_path)
    assert bad.returncode == 2 and "invalid value for --rollover-age" in bad.stderr.decode(), bad.stderr.decode()
    assert not client.indices.exists(index=f"{alias}-000001")
    for n, records in enumerate((first, second)):
        if n:
            time.sleep(3)
        res = run_cli("index", _write(tmp_path / f"part{n}.jsonl", records), "--index", alias, "--rollover-age", "2s",
                      "--batch-size", "100", "--no-progress", cwd=tmp_path, es_url=es_url)
        assert res.returncode == 0, res.stderr.decode()
    parts = partitions(client, alias)
    assert len(parts) == 2 and parts[f"{alias}-000001"] == 10, parts
    stored = stored_once(client, alias)
    assert len(stored) == 30
    assert all(cluster in stored and (dup_of is None or dup_of in stored) for cluster, dup_of in stored.values())
    assert all(stored[f"zh{i}-reprint"][0] == stored[f"zh{i}"][0] for i in range(10))  # (found across partitions)


def _mapped_as_es_simhash_maps(client, alias: str) -> dict[str, dict]:
    """partition -> its mapping, asserting every ``ALIAS-*`` partition has es-simhash's (the lookup fields keyword,
    nothing mapped dynamically, the ``_meta`` recording the fingerprint settings and lookup keys) and that all
    record the same ``_meta``."""
    mappings = {name: body["mappings"] for name, body in client.indices.get_mapping(index=f"{alias}-*").items()}
    for name, m in mappings.items():
        props = m.get("properties", {})
        assert str(m.get("dynamic")) == "false", (name, m.get("dynamic"))
        assert props.get("lookup_keys", {}).get("type") == "keyword", (name, props.get("lookup_keys"))
        assert props.get("seg0", {}).get("type") == "keyword", (name, props.get("seg0"))
        assert m["_meta"].get("managed_by") == "es-simhash" and m["_meta"].get("fingerprint"), (name, m.get("_meta"))
    assert len({json.dumps(m["_meta"], sort_keys=True) for m in mappings.values()}) == 1
    return mappings


def test_rollovers_by_the_cluster_while_index_writes_give_partitions_es_simhashs_mapping_and_dedups_clusters(
        crawl, deduped, es_url, client, alias, tmp_path):
    """While `index --rollover-docs` writes, another client rolls the alias over several times with a bare
    ``POST ALIAS/_rollover`` (no mapping, no settings): the request a lifecycle policy's rollover action sends
    (Elasticsearch's ILM, OpenSearch's ISM; the minimal distributions the tests run on have neither, so this is
    the cluster's rollover as such a policy makes it). Every partition, whoever made it, has es-simhash's mapping;
    every id is stored once across them, in partitions of both kinds; the clusters are those `dedup` gives; every
    ``cluster`` and ``duplicate_of`` names a stored document; a re-run changes nothing."""
    import threading

    rolled: list[str] = []
    stop = threading.Event()

    def roll_over_as_a_policy_does() -> None:
        """Roll over a write index es-simhash made once it holds 150 documents (a policy's ``max_docs``, checked
        every 50 ms): es-simhash rolls over those the cluster made, at 400. (A count on a partition whose shard
        has not started yet fails: a policy checks again later.)"""
        while len(rolled) < 4 and not stop.wait(0.05):
            try:
                current = write_index(client, alias) if client.indices.exists_alias(name=alias) else None
                full = current not in rolled and client.count(index=current)["count"] >= 150 if current else False
            except Exception:  # (not started yet)
                continue
            if full:
                rolled.append(str(client.indices.rollover(alias=alias)["new_index"]))

    other = threading.Thread(target=roll_over_as_a_policy_does, daemon=True)
    other.start()
    try:
        index_into(alias, crawl, es_url, tmp_path)
    finally:
        stop.set()
        other.join(30)
    parts = partitions(client, alias)
    assert len(rolled) >= 3, (rolled, parts)  # (the other client rolled the alias over while the run wrote)
    assert set(rolled) <= set(parts) and sorted(client.indices.get_alias(name=alias)) == sorted(parts)
    # (written into after the cluster made them: each but the last, which the run may have ended in before writing)
    assert all(parts[p] for p in rolled[:-1]), (rolled, parts)
    assert len(parts) - len(rolled) >= 3, (rolled, parts)  # (es-simhash made some too: the first, and its rollovers)
    _mapped_as_es_simhash_maps(client, alias)

    n = len(deduped)
    first = stored_once(client, alias)
    assert len(first) == n
    assert not differing(deduped, first), differing(deduped, first)[:5]
    for i, (cluster, dup_of) in first.items():
        assert first[cluster][0] == cluster and (dup_of is None or dup_of in first), (i, cluster, dup_of)
    where = {c["id"]: c["index"] for c in every_copy(client, alias)}

    (tmp_path / "cp.json").unlink(missing_ok=True)
    err = index_into(alias, crawl, es_url, tmp_path)  # the same input again: nothing changes
    assert f"indexed 0 into {alias!r}" in err and f"{n:,} were already indexed" in err, err
    assert partitions(client, alias) == parts
    again = stored_once(client, alias)
    assert not differing(first, again), differing(first, again)[:5]
    assert {c["id"]: c["index"] for c in every_copy(client, alias)} == where


def test_the_partition_template_is_installed_again_from_the_write_index_and_carries_a_grown_mapping(
        client, alias, fingerprinter):
    """An alias whose partition template is missing (made by an older release) gets it when a run opens it, with
    or without rollover options; the template is made from the write index, so a field added to the mapping since
    (as runs of later releases add theirs) is in the mapping of the next partition, made by a bare rollover."""
    from es_simhash.index.elastic import ensure_index, ensure_partitioned, partition_template_name

    config = dict(fingerprinter.config)
    name = partition_template_name(alias)
    assert ensure_partitioned(client, alias, config) is True
    assert ensure_partitioned(client, alias, config) is False
    client.indices.delete_index_template(name=name)
    assert not client.options(ignore_status=404).indices.get_index_template(name=name).get("index_templates")
    ensure_index(client, alias, config)  # (a run without rollover options)
    assert client.indices.get_index_template(name=name)["index_templates"]
    client.indices.put_mapping(index=alias, properties={"later_field": {"type": "keyword"}})
    ensure_partitioned(client, alias, config)
    new = str(client.indices.rollover(alias=alias)["new_index"])
    assert new == f"{alias}-000002"
    mappings = _mapped_as_es_simhash_maps(client, alias)
    assert mappings[new]["properties"]["later_field"] == {"type": "keyword"}
    settings = client.indices.get_settings(index=new, flat_settings=True)[new]["settings"]
    assert settings["index.merge.policy.segments_per_tier"] == "4" and settings["index.number_of_shards"] == "1"


def test_es_simhash_indexes_named_like_partitions_live_next_to_an_alias_in_either_order(client, alias, fingerprinter):
    """The partition template's pattern ``ALIAS-0*`` and the templates of es-simhash indexes named ``ALIAS-test``
    or ``ALIAS-0test`` (an exact name each), or of another alias ``ALIAS-0`` (pattern ``ALIAS-0-0*``), may both be
    installed, whichever comes first (Elasticsearch refuses two templates of one priority matching one name), and
    each index gets its own template's ``_meta``: an index named like the alias's partitions is not shaped as one."""
    from es_simhash.index.elastic import ensure_index, ensure_partitioned, partition_template_name

    config = dict(fingerprinter.config)
    other = {**config, "min_token_len": int(config["min_token_len"]) + 1}
    names = [f"{alias}-test", f"{alias}-0test"]
    try:
        ensure_index(client, names[0], config)
        ensure_partitioned(client, alias, config)  # (after an index named like it)
        ensure_index(client, names[1], other)  # (and before one)
        ensure_partitioned(client, f"{alias}-0", config)  # (an alias whose partitions the first's pattern matches)
        for index in names:
            assert client.indices.exists(index=index) and not client.indices.exists_alias(name=index)
        meta = client.indices.get_mapping(index=names[1])[names[1]]["mappings"]["_meta"]
        assert meta["fingerprint"] == other  # (its own template's, not the alias's partition template's)
        nested = str(client.indices.rollover(alias=f"{alias}-0")["new_index"])
        assert nested == f"{alias}-0-000002"
        own = client.indices.get_mapping(index=nested)[nested]["mappings"]["_meta"]
        assert own == client.indices.get_mapping(index=f"{alias}-0-000001")[f"{alias}-0-000001"]["mappings"]["_meta"]
        assert client.indices.exists_alias(name=alias, index=f"{alias}-000001")
    finally:
        quiet = client.options(ignore_status=404)
        for index in names:
            quiet.indices.delete(index=index)
            quiet.indices.delete_index_template(name=f"es-simhash-{index}")
        quiet.indices.delete(index=f"{alias}-0-0*", expand_wildcards="all")
        quiet.indices.delete_index_template(name=partition_template_name(f"{alias}-0"))


def test_a_template_of_the_users_of_the_same_priority_on_the_partitions_is_named_in_one_line(
        client, alias, fingerprinter):
    """Elasticsearch refuses two templates of one priority that match one name: a template of the user's on
    ``ALIAS-*`` with the partition template's priority is named, with what to do."""
    from es_simhash.errors import ElasticError
    from es_simhash.index.elastic import ensure_partitioned, partition_template_name
    from es_simhash.index.elastic.admin import PARTITION_PRIORITY

    config = dict(fingerprinter.config)
    ensure_partitioned(client, alias, config)
    client.indices.delete_index_template(name=partition_template_name(alias))
    users = f"{alias}-users-template"
    client.indices.put_index_template(name=users, index_patterns=[f"{alias}-*"],
                                      priority=PARTITION_PRIORITY + len(alias))
    try:
        with pytest.raises(ElasticError) as refused:
            ensure_partitioned(client, alias, config)
        assert str(refused.value) == (
            f"index template {users!r} has priority {PARTITION_PRIORITY + len(alias)} and matches partitions of "
            f"{alias!r} ({alias}-0*), as es-simhash's template {partition_template_name(alias)!r} does: give it "
            "another priority")
    finally:
        client.indices.delete_index_template(name=users)
    ensure_partitioned(client, alias, config)
    assert client.indices.get_index_template(name=partition_template_name(alias))["index_templates"]


def test_a_bulk_sent_again_after_a_rollover_writes_over_what_its_first_attempt_stored(client, alias, fingerprinter):
    """A bulk through the alias that was carried out but reported as failed (a timeout), the alias rolled over before
    it is sent again: the second attempt writes over the documents where the first stored them, not a second copy
    in the new write index."""
    from es_simhash import StoredDoc
    from es_simhash.index.elastic import ElasticIndex, ensure_partitioned
    from es_simhash.index.elastic.errors import Transient

    ensure_partitioned(client, alias, dict(fingerprinter.config))
    index = ElasticIndex(client, alias, retry_for=30)
    texts = chinese_articles()[:4]
    docs = [StoredDoc(f"zh{i}", fp, f"zh{i}", text=t) for i, (t, fp) in
            enumerate(zip(texts, fingerprinter.fingerprint_many(texts)))]
    bulk = index.handle.client.streaming_bulk
    attempts = []

    def carried_out_then_timed_out(actions, **kw):
        attempts.append([a["_index"] for a in actions])
        if len(attempts) == 1:
            list(bulk(actions, **kw))  # (stored in the write index of the time)
            client.indices.rollover(alias=alias)  # (by the cluster, before the bulk is sent again)
            raise Transient("timed out")
        return bulk(actions, **kw)

    index.handle.client.streaming_bulk = carried_out_then_timed_out
    try:
        assert index.add(docs) == {}
    finally:
        index.handle.client.streaming_bulk = bulk
    assert len(attempts) == 2 and set(attempts[0]) == {alias} and set(attempts[1]) == {f"{alias}-000001"}
    copies = every_copy(client, alias)
    assert sorted((c["id"], c["index"]) for c in copies) == [(f"zh{i}", f"{alias}-000001") for i in range(4)]


def _stored_with_seq(client, alias: str) -> dict[str, tuple[str, str, str | None, int]]:
    """id -> (partition, cluster, duplicate_of, seq_no) of every document of every ``ALIAS-*`` partition."""
    client.indices.refresh(index=f"{alias}-*")
    hits = client.search(index=f"{alias}-*", size=10_000, query={"match_all": {}}, seq_no_primary_term=True,
                         source=["dup_cluster", "dup_of"])["hits"]["hits"]
    return {h["_id"]: (h["_index"], h["_source"]["dup_cluster"], h["_source"]["dup_of"], h["_seq_no"]) for h in hits}


def _whole(stored: dict[str, tuple[str, str, str | None, int]]) -> None:
    """The invariants of docs/how-it-works.md: every cluster names a stored canonical, every duplicate_of a stored
    document."""
    for i, (_, cluster, dup_of, _) in stored.items():
        assert cluster in stored and stored[cluster][1] == cluster, (i, cluster)
        assert dup_of is None or dup_of in stored, (i, dup_of)


def test_partitions_made_read_only_are_never_written_and_a_drop_they_point_into_is_refused(
        crawl, es_url, client, alias, tmp_path):
    """The two oldest partitions made read-only (``index.blocks.write``, as a lifecycle policy's warm phase does),
    then a second crawl: reprints of articles stored there join their clusters; records with ids stored there and
    other content are dead letters with their reason and line; the same content is found already indexed. No
    document of a read-only partition changes (its sequence numbers neither); the invariants hold; a repair
    changes nothing there either. Dropping the oldest partition while the read-only second holds documents that
    point into it is refused before anything changes; with the second's block lifted, the drop goes through."""
    index_into(alias, crawl, es_url, tmp_path)
    parts = sorted(partitions(client, alias))
    frozen = parts[:2]
    client.indices.put_settings(index=",".join(frozen), settings={"index.blocks.write": True})
    before = _stored_with_seq(client, alias)
    held = {i: v for i, v in before.items() if v[0] in frozen}
    articles = chinese_articles()[:30]
    assert all(before[f"zh{i}"][0] == frozen[0] for i in range(30))  # (the articles came first)
    records = [{"id": f"zh{i}-copy", "content": "来源：某某网\n" + t + "\n（责任编辑：王五）"} for i, t in enumerate(articles)]
    records += [{"id": f"zh{i}", "content": articles[i + 10]} for i in range(5)]  # (other content: refused)
    records += [{"id": f"zh{i}", "content": articles[i]} for i in range(5, 10)]  # (the same: already indexed)
    second = tmp_path / "second"
    second.mkdir()
    res = run_cli("index", _write(second / "more.jsonl", records), "--index", alias, "--rollover-docs",
                  str(ROLLOVER), "--batch-size", "20", "--report", "report.jsonl", "--dead-letters", "dead.jsonl",
                  "--no-progress", cwd=second, es_url=es_url)
    assert res.returncode == 0, res.stderr.decode()
    dead = [json.loads(x) for x in (second / "dead.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(d["line"] for d in dead) == [31, 32, 33, 34, 35], dead  # (the five other contents)
    assert all("read-only partition" in d["reason"] for d in dead), dead
    after = _stored_with_seq(client, alias)
    assert {i: after[i] for i in held} == held  # (not one write into a read-only partition)
    for i in range(30):
        assert after[f"zh{i}-copy"][1] == before[f"zh{i}"][1], i  # (joined the cluster stored read-only)


    res = run_cli("repair", "--index", alias, es_url=es_url, cwd=second)
    assert res.returncode == 0, res.stderr.decode()
    repaired = _stored_with_seq(client, alias)
    assert {i: v for i, v in repaired.items() if i in held} == held
    _whole(repaired)

    pointing = [i for i, v in held.items() if v[0] == frozen[1] and (
        before[v[1]][0] == frozen[0] or (v[2] is not None and before[v[2]][0] == frozen[0]))]
    assert pointing  # (the second partition holds members of clusters of the first: the test has a case)
    refused = run_cli("drop-partition", frozen[0], "--index", alias, es_url=es_url, cwd=second)
    assert refused.returncode != 0, refused.stderr.decode()
    assert "read-only partitions point at documents of" in refused.stderr.decode(), refused.stderr.decode()
    assert frozen[0] in client.indices.get_alias(name=alias)  # (nothing changed)

    client.indices.put_settings(index=frozen[1], settings={"index.blocks.write": False})
    res = run_cli("drop-partition", frozen[0], "--index", alias, es_url=es_url, cwd=second)
    assert res.returncode == 0, res.stderr.decode()
    _whole(_stored_with_seq(client, alias))


def test_a_window_of_the_last_two_partitions_looks_duplicates_up_in_those_only(es_url, client, alias, tmp_path):
    """36 articles in three partitions of 12, then a copy of each with `--window 2`: the copies of the articles in
    the two newest partitions join their clusters; those of the oldest partition's articles, outside the window,
    start clusters of their own (without the window they join theirs: the first test of this file). The invariants
    hold."""
    articles = chinese_articles()[:36]
    first = _write(tmp_path / "articles.jsonl", [{"id": f"a{i}", "content": t} for i, t in enumerate(articles)])
    res = run_cli("index", first, "--index", alias, "--rollover-docs", "12", "--batch-size", "12", "--no-progress",
                  cwd=tmp_path, es_url=es_url)
    assert res.returncode == 0, res.stderr.decode()
    parts = sorted(partitions(client, alias))
    assert parts == [f"{alias}-{n:06d}" for n in (1, 2, 3)], parts
    copies = _write(tmp_path / "copies.jsonl", [{"id": f"a{i}-copy", "content": "转载：" + t + "\n（来源：某某网）"}
                                                for i, t in enumerate(articles)])
    res = run_cli("index", copies, "--index", alias, "--window", "2", "--batch-size", "12", "--no-progress",
                  "--report", "windowed.jsonl", cwd=tmp_path, es_url=es_url)
    assert res.returncode == 0, res.stderr.decode()
    stored = _stored_with_seq(client, alias)
    where = {i: v[0] for i, v in stored.items()}
    for i in range(36):
        cluster = stored[f"a{i}-copy"][1]
        if where[f"a{i}"] == parts[0]:
            assert cluster == f"a{i}-copy", (i, cluster)  # (its original is outside the window)
        else:
            assert cluster == stored[f"a{i}"][1], (i, cluster)
    _whole(stored)


def test_a_window_by_age_looks_duplicates_up_in_the_partitions_written_into_in_that_time(
        es_url, client, alias, tmp_path):
    """24 articles in two partitions of 12, then, 25 seconds later, 12 more (a third partition); then a copy of each
    with `--window 20s`: the second partition was written into until the third was made, seconds ago, so the copies
    of its articles and of the third's join their clusters; the first was last written into more than 20 seconds
    ago: the copies of its articles start clusters of their own. The invariants hold."""
    articles = chinese_articles()[:36]

    def index(name: str, records: list[dict], *args: str) -> None:
        res = run_cli("index", _write(tmp_path / name, records), "--index", alias, "--batch-size", "12",
                      "--no-progress", *args, cwd=tmp_path, es_url=es_url)
        assert res.returncode == 0, res.stderr.decode()

    index("old.jsonl", [{"id": f"a{i}", "content": t} for i, t in enumerate(articles[:24])], "--rollover-docs", "12")
    time.sleep(25)
    index("new.jsonl", [{"id": f"a{i}", "content": t} for i, t in enumerate(articles) if i >= 24],
          "--rollover-docs", "12")
    parts = sorted(partitions(client, alias))
    assert parts == [f"{alias}-{n:06d}" for n in (1, 2, 3)], parts
    index("copies.jsonl", [{"id": f"a{i}-copy", "content": "转载：" + t + "\n（来源：某某网）"}
                           for i, t in enumerate(articles)], "--window", "20s")
    stored = _stored_with_seq(client, alias)
    for i in range(36):
        cluster = stored[f"a{i}-copy"][1]
        if stored[f"a{i}"][0] == parts[0]:
            assert cluster == f"a{i}-copy", (i, cluster)  # (its original is outside the window)
        else:
            assert cluster == stored[f"a{i}"][1], (i, cluster)
    _whole(stored)


def test_a_partition_deleted_by_the_cluster_leaves_no_pointer_after_the_next_run(
        crawl, es_url, client, alias, tmp_path):
    """The oldest partition deleted by the cluster (a lifecycle policy's delete phase: no `drop-partition`, its
    documents are gone before es-simhash hears of it), then a second crawl: copies of the articles that were
    stored there. After that run every `cluster` and `duplicate_of` names a stored document, the members of the
    clusters whose canonical went are decided again as `repair` decides them (a repair right after regroups none of
    them), each copy joins the reprint of its article that outlived the original; a run after it, with nothing
    deleted since, rewrites nothing."""
    index_into(alias, crawl, es_url, tmp_path)
    parts = sorted(partitions(client, alias))
    before = _stored_with_seq(client, alias)
    gone = {i for i, v in before.items() if v[0] == parts[0]}
    orphaned = sorted(i for i, v in before.items() if i not in gone and (v[1] in gone or v[2] in gone))
    assert len(orphaned) > 20  # (members elsewhere of clusters led from the deleted partition: the test has a case)
    client.indices.delete(index=parts[0])
    articles = chinese_articles()[:30]
    records = [{"id": f"zh{i}-copy", "content": "来源：某某网\n" + t + "\n（责任编辑：王五）"} for i, t in enumerate(articles)]
    second = tmp_path / "second"
    second.mkdir()
    more = _write(second / "more.jsonl", records)

    def run() -> None:
        res = run_cli("index", more, "--index", alias, "--rollover-docs", str(ROLLOVER), "--batch-size", "20",
                      "--no-progress", cwd=second, es_url=es_url)
        assert res.returncode == 0, res.stderr.decode()

    run()
    after = _stored_with_seq(client, alias)
    _whole(after)
    for i in range(30):  # (each copy joined the reprint of its article, which outlived the original)
        assert after[f"zh{i}-copy"][1] == after[f"zh{i}-reprint"][1], i
    run()
    assert _stored_with_seq(client, alias) == after  # (nothing vanished since: nothing rewritten)
    repaired = run_cli("repair", "--index", alias, "--no-progress", es_url=es_url, cwd=second)
    assert repaired.returncode == 0, repaired.stderr.decode()
    regrouped = [c for c in map(json.loads, repaired.stdout.decode().splitlines()) if c["cluster"] != c["was_cluster"]
                 and c["id"] != c["was_cluster"]]
    assert not [c for c in regrouped if c["change"] != "decided again"], regrouped[:3]
