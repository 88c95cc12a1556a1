"""Partition term filters: through an alias, a batched lookup asks each partition but the newest only for the terms
its documents hold (``es_simhash.index.elastic.keyfilter``). A filter saves term-dictionary seeks and must lose no
candidate: a filtered lookup answers exactly as an unfiltered one, also for a page re-indexed with other content in
an old partition after the filter was made (its new terms are in no filter: it is found as a document written above
the filter's mark). On a real node, against the same alias searched without filters.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import chinese_articles, run_cli, templated_crawl

pytestmark = [pytest.mark.es, pytest.mark.slow]

ROLLOVER = 300


@pytest.fixture
def alias(es_index_name, client):
    from es_simhash.index.elastic import partition_template_name

    yield es_index_name
    client.options(ignore_status=404).indices.delete(index=f"{es_index_name}-0*", expand_wildcards="all")
    client.options(ignore_status=404).indices.delete_index_template(name=partition_template_name(es_index_name))


def _records() -> list[dict]:
    """40 Chinese articles, a crawl of short texts in site templates (1,000), then a reprint of each article:
    originals and reprints in different partitions."""
    articles = chinese_articles()[:40]
    records = [{"id": f"zh{i}", "content": t} for i, t in enumerate(articles)]
    records += templated_crawl(11, 1000)
    records += [{"id": f"zh{i}-reprint", "content": "转载：" + t[:300]} for i, t in enumerate(articles)]
    return records


def _indexed(alias: str, records: list[dict], tmp_path: Path, es_url: str) -> None:
    crawl = tmp_path / "crawl.jsonl"
    crawl.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    res = run_cli("index", crawl, "--index", alias, "--rollover-docs", str(ROLLOVER), "--batch-size", "100",
                  "--no-progress", cwd=tmp_path, es_url=es_url)
    assert res.returncode == 0, res.stderr.decode()


def _queries(records: list[dict]):
    """A lookup for every record under a new id (so none finds itself) and for an edited copy of it."""
    from es_simhash import Fingerprinter
    from es_simhash.index.base import Lookup

    fp = Fingerprinter()
    out = [Lookup(f"q-{r['id']}", fp.fingerprint(r["content"])) for r in records]
    out += [Lookup(f"e-{r['id']}", fp.fingerprint(r["content"][:-3] + "。另据报道。")) for r in records]
    return out


def _terms(index, fp) -> list[tuple[str, str]]:
    """The terms a lookup of ``fp`` asks a partition for (content hash, lookup keys, sentence hashes)."""
    from es_simhash.fingerprint.model import hex64
    from es_simhash.lookup import hamming

    keys = index.lookup_keys.terms(hamming.as_uint64([fp.simhash]))[0]
    return [("hex", hex64(fp.content_hash)), *(("key", k) for k in keys), *(("hex", hex64(h)) for h in fp.hashes)]


def _answers(index, queries, contract) -> list[tuple[str | None, list[str]]]:
    out = []
    for i in range(0, len(queries), 250):
        for res in index.lookup(queries[i:i + 250], contract):
            out.append((res.existing.id if res.existing else None, sorted(d.id for d in res.candidates)))
    return out


def test_a_filtered_lookup_answers_as_an_unfiltered_one(alias, client, es_url, tmp_path):
    from es_simhash import DefaultRule, ElasticIndex

    records = _records()
    _indexed(alias, records, tmp_path, es_url)
    contract = DefaultRule.rechecked().candidate_contract
    filtered = ElasticIndex(client, alias, url=es_url)
    plain = ElasticIndex(client, alias, url=es_url, filter_partitions=False)
    queries = _queries(records)
    got, want = _answers(filtered, queries, contract), _answers(plain, queries, contract)
    n_partitions = len(filtered.partitions())
    assert n_partitions >= 4, filtered.partitions()
    pf = filtered.partition_filters  # (every partition but the write index; those the run made, from the cache)
    assert pf.built + pf.loaded == n_partitions - 1 and pf.loaded >= 1, (pf.built, pf.loaded)
    assert filtered.planner.batched.routed_searches >= len(queries) // 250
    assert plain.planner.batched.routed_searches == 0
    differ = [(q.id, a, b) for q, a, b in zip(queries, got, want) if a != b]
    assert not differ, f"{len(differ)} of {len(queries)} lookups differ (filtered, unfiltered), e.g. {differ[:3]}"
    assert sum(1 for _, c in want if c) > len(records) // 2  # (the comparison is not of empty answers)
    # documents written above a filter's mark (members re-pointed after the run kept its filters) came back once,
    # by their sequence numbers, and were taken in: a second pass reads exactly the unfiltered hits
    assert filtered.partition_filters.absorbed > 0
    before = filtered.hits_read, plain.hits_read
    assert _answers(filtered, queries, contract) == want
    _answers(plain, queries, contract)
    assert filtered.hits_read - before[0] == plain.hits_read - before[1]
    # a search filled by documents above the marks (a small page, filters read from the cache as the run left
    # them) takes them in and is sent again: the same answers
    tight = ElasticIndex(client, alias, url=es_url, batch_page=120)
    assert _answers(tight, queries, contract) == want
    assert tight.partition_filters.loaded >= 1 and tight.partition_filters.catch_ups >= 1


def test_a_page_re_indexed_in_an_old_partition_after_its_filter_was_made_is_found(alias, client, es_url, tmp_path):
    from es_simhash import DefaultRule, ElasticIndex, Fingerprinter
    from es_simhash.index.base import Lookup
    from es_simhash.index.elastic.keyfilter import term_codes

    records = _records()
    _indexed(alias, records, tmp_path, es_url)
    index = ElasticIndex(client, alias, url=es_url)
    contract = DefaultRule.rechecked().candidate_contract
    fp = Fingerprinter()
    index.lookup([Lookup("any", fp.fingerprint(records[0]["content"]))], contract)  # (the filters are made now)
    assert index.partition_filters.built + index.partition_filters.loaded >= 3
    oldest = index.partitions()[0]
    held = index.partition_filters.of(oldest)
    # an article none of whose terms the oldest partition holds (a fuzzy hash may be shared by chance)
    new_text = next(t for t in chinese_articles()[60:]
                    if not any(held.has(term_codes(kind, [v])).any()
                            for kind, v in _terms(index, fp.fingerprint(t + "（完）"))))
    probe = [Lookup("probe", fp.fingerprint(new_text + "（完）"))]
    assert index.lookup(probe, contract)[0].candidates == []
    assert client.get(index=oldest, id="zh3")["found"]
    # another writer re-indexes zh3 (in the oldest partition) with other content
    again = tmp_path / "again"
    again.mkdir()
    _indexed(alias, [{"id": "zh3", "content": new_text}], again, es_url)
    assert client.get(index=oldest, id="zh3")["_source"]["content"] == new_text  # (rewritten where it lives)
    client.indices.refresh(index=alias)
    index.handle.refresh()  # (as the next batch would: the filter's partition has a mark past the rewrite now)
    # left out while it is "being written" (as the engine leaves out the batch it is writing), then found
    assert index.lookup(probe, contract, exclude=["zh3"])[0].candidates == []
    assert index.partition_filters.absorbed >= 1
    found = index.lookup(probe, contract)[0].candidates
    assert [d.id for d in found] == ["zh3"]
    # a run that reads the filter from the cache finds it too
    later = ElasticIndex(client, alias, url=es_url)
    assert [d.id for d in later.lookup(probe, contract)[0].candidates] == ["zh3"]
    assert later.partition_filters.loaded >= 3 and later.partition_filters.built == 0
    # a page written again there with the same content (a member re-pointed; its terms are in the filter, and it
    # is above the mark): found once, as an unfiltered lookup finds it
    stored = client.get(index=oldest, id="zh5")["_source"]
    client.index(index=oldest, id="zh5", document=stored, refresh=True)
    index.handle.refresh()
    same = [Lookup("probe-same", fp.fingerprint(records[5]["content"]))]
    ids = [d.id for d in index.lookup(same, contract)[0].candidates]
    unfiltered = ElasticIndex(client, alias, url=es_url, filter_partitions=False)
    assert "zh5" in ids and ids == [d.id for d in unfiltered.lookup(same, contract)[0].candidates]
    # a short text re-indexed there too: the hashes of its shingle sketch are in no filter, and the document
    # frequencies the lookup counts for them (which decide what is boilerplate) count it, as an unfiltered count does
    from es_simhash.fingerprint.model import SKETCH_BIT, hex64

    short = next(t[:150] for t in chinese_articles()[90:]
                 if (sketch := [h for h in fp.fingerprint(t[:150]).hashes if h >= SKETCH_BIT])
                 and not held.has(term_codes("hex", [hex64(h) for h in sketch])).any())
    short_fp = fp.fingerprint(short)
    third = tmp_path / "third"
    third.mkdir()
    _indexed(alias, [{"id": "zh4", "content": short}], third, es_url)
    assert client.get(index=oldest, id="zh4")["_source"]["content"] == short
    client.indices.refresh(index=alias)
    index.handle.refresh()
    plain = ElasticIndex(client, alias, url=es_url, filter_partitions=False)
    probe = [Lookup("probe-short", short_fp)]
    got, want = index.lookup(probe, contract)[0], plain.lookup(probe, contract)[0]
    assert [d.id for d in got.candidates] == [d.id for d in want.candidates] == ["zh4"]
    sketch_df = {h: n for h, n in got.sentence_df.items() if h >= SKETCH_BIT}
    assert sketch_df and min(sketch_df.values()) >= 1, got.sentence_df
    assert got.sentence_df == want.sentence_df


def test_a_partition_taken_out_of_the_alias_is_not_searched_by_a_filtered_lookup(alias, client, es_url, tmp_path):
    """A partition being dropped leaves the alias before it is deleted: a lookup routed by filters made before
    (its partitions read up to seconds earlier) must not bring its documents back, as a search of the alias would
    not."""
    from es_simhash import DefaultRule, ElasticIndex, Fingerprinter
    from es_simhash.index.base import Lookup

    records = _records()
    _indexed(alias, records, tmp_path, es_url)
    index = ElasticIndex(client, alias, url=es_url)
    contract = DefaultRule.rechecked().candidate_contract
    fp = Fingerprinter()
    probe = [Lookup("probe", fp.fingerprint(records[0]["content"]))]
    assert "zh0" in [d.id for d in index.lookup(probe, contract)[0].candidates]  # (filters made, marks read)
    oldest = index.partitions()[0]
    assert client.get(index=oldest, id="zh0")["found"] and index.partition_filters.of(oldest) is not None
    client.indices.update_aliases(actions=[{"remove": {"index": oldest, "alias": alias}}])
    got = [d.id for d in index.lookup(probe, contract)[0].candidates]
    want = [d.id for d in ElasticIndex(client, alias, url=es_url, filter_partitions=False)
            .lookup(probe, contract)[0].candidates]
    assert "zh0" not in want and got == want
