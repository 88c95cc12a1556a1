"""Lookup keys (permutation tables): the pigeonhole guarantee, and lookups through them that return exactly the
brute-force neighbours, in the embedded index and in Elasticsearch, for new indexes and for indexes made by the
release before lookup keys existed (four 16-bit segments)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from es_simhash import Fingerprint, Fingerprinter
from es_simhash.engine.dedup_engine import DedupEngine
from es_simhash.records import Document, StoredDoc
from es_simhash.index.base import Lookup
from es_simhash.index.elastic import ElasticIndex, ensure_index, index_template
from es_simhash.index.memory import MemoryIndex
from es_simhash.lookup.keys import DEFAULT, SEGMENTS, LookupKeys
from support import chinese_articles


def _flip(v: int, bits) -> int:
    for b in bits:
        v ^= 1 << int(b)
    return v


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**64 - 1), st.lists(st.integers(0, 63), max_size=3, unique=True),
       st.sampled_from([(3, 3), (3, 1), (3, 2), (2, 2), (4, 3), (1, 1), (0, 1)]))
def test_fingerprints_within_k_share_a_key(v, bits, kr):
    keys = LookupKeys(*kr)
    bits = bits[: keys.k]
    a, b = keys.key_one(v), keys.key_one(_flip(v, bits))
    assert any(x == y for x, y in zip(a, b))
    # the vectorised keys are the same numbers, and the mask test agrees with comparing keys
    assert keys.keys(np.array([v], dtype=np.uint64))[0].tolist() == a
    w = v ^ (0x9E3779B97F4A7C15 * (len(bits) + 1) & (2**64 - 1))  # far away
    for other in (_flip(v, bits), w):
        same = any(x == y for x, y in zip(a, keys.key_one(other)))
        assert keys.share_a_key(np.array([v], np.uint64), np.array([other], np.uint64)).tolist() == [same]


def test_segments_are_the_four_16_bit_segments_and_tables_are_selective():
    v = 0x1234_5678_9ABC_DEF0
    assert SEGMENTS.segment_terms(v) == ["def0", "9abc", "5678", "1234"]
    assert DEFAULT.n_tables == 20 and all(b == 32 or b == 31 for b in DEFAULT.key_bits)
    rng = np.random.default_rng(3)
    sims = rng.integers(0, 2**64 - 1, size=20_000, dtype=np.uint64, endpoint=True)
    keys = DEFAULT.keys(sims)
    # random fingerprints almost never share a 32-bit key (expected 20 * 20,000^2 / 2 / 2^32 ~ 0.9 pairs)
    collisions = sum(len(col) - len(np.unique(col)) for col in keys.T)
    assert collisions <= 10
    # the terms stored in Elasticsearch: table number in hex, ':', the key as 8 hex digits
    terms = DEFAULT.terms(sims[:50])
    assert terms[7][19] == f"13:{int(keys[7, 19]):08x}" and all(len(row) == 20 for row in terms)
    assert LookupKeys.parse("tables") == DEFAULT and LookupKeys.parse("segments") == SEGMENTS
    assert LookupKeys.parse("tables:4:3") == LookupKeys(4, 3)
    assert LookupKeys.from_meta(None) == SEGMENTS and LookupKeys.from_meta(DEFAULT.to_meta()) == DEFAULT
    with pytest.raises(ValueError):
        LookupKeys.parse("tables:x")


def _planted(n_random: int, n_queries: int, max_k: int, seed: int):
    """Random stored SimHashes plus, for each query, one planted neighbour at each distance 0..max_k+2."""
    rng = np.random.default_rng(seed)
    sims = rng.integers(0, 2**64 - 1, size=n_random, dtype=np.uint64, endpoint=True).tolist()
    queries = rng.integers(0, 2**64 - 1, size=n_queries, dtype=np.uint64, endpoint=True).tolist()
    for q in queries:
        for d in range(max_k + 3):
            sims.append(_flip(q, rng.choice(64, size=d, replace=False)))
    docs = [StoredDoc(f"d{i}", Fingerprint(s, i + 1, (), 10, 500, False), f"d{i}") for i, s in enumerate(sims)]
    lookups = [Lookup(f"q{i}", Fingerprint(q, 10**12 + i, (), 10, 500, False)) for i, q in enumerate(queries)]
    return np.array(sims, dtype=np.uint64), docs, lookups


def _brute_force(sims: np.ndarray, q: int, k: int) -> set[str]:
    x = np.bitwise_xor(sims, np.uint64(q))
    d = np.unpackbits(x.view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1)
    return {f"d{i}" for i in np.flatnonzero(d <= k)}


def test_embedded_batched_lookups_equal_brute_force_and_single_lookups():
    sims, docs, lookups = _planted(60_000, 300, 3, seed=11)
    index = MemoryIndex()
    for start in range(0, len(docs), 7_000):  # several runs and a tail
        index.add(docs[start:start + 7_000])
    for k in range(4):
        batched = index.lookup(lookups, k)
        for q, res in zip(lookups, batched):
            expected = _brute_force(sims, q.fingerprint.simhash, k)
            assert {c.id for c in res.candidates} == expected and len(expected) >= k + 1
    single = [index.lookup([q], 3)[0] for q in lookups[:50]]
    assert [[c.id for c in r.candidates] for r in single] == [
        [c.id for c in r.candidates] for r in index.lookup(lookups[:50], 3)]


@pytest.mark.parametrize("keys", [DEFAULT, SEGMENTS], ids=["permutation-tables", "segments"])
def test_elasticsearch_lookups_equal_brute_force_for_every_k(client, es_index_name, keys):
    """Recall 1.0 (and nothing farther than k) against a brute-force scan for k = 0..3, through the batched
    search (tables) or one search per document (segments); above k = 3 the answer is the embedded index's."""
    sims, docs, lookups = _planted(20_000, 200, 3, seed=12)
    ensure_index(client, es_index_name, Fingerprinter().config, replicas=0, lookup_keys=keys)
    index = ElasticIndex(client, es_index_name)
    assert index.lookup_keys == keys
    for start in range(0, len(docs), 5_000):
        assert index.add(docs[start:start + 5_000]) == {}
    memory = MemoryIndex(lookup_keys=keys)
    memory.add(docs)
    for k in range(keys.k + 1):
        for q, res in zip(lookups, index.lookup(lookups, k)):
            expected = _brute_force(sims, q.fingerprint.simhash, k)
            assert {c.id for c in res.candidates} == expected and len(expected) >= k + 1
    for k in (5, 7):  # beyond the guarantee: the same candidates as the embedded index with the same keys
        es_answers = [{c.id for c in r.candidates} for r in index.lookup(lookups, k)]
        assert es_answers == [{c.id for c in r.candidates} for r in memory.lookup(lookups, k)]
    assert index.crowded_batches == 0
    # a batch whose keys, ids and sentences exceed one terms clause's bound (index.max_terms_count) is split
    expected = [[c.id for c in r.candidates] for r in index.lookup(lookups, 3)]
    client.indices.put_settings(index=es_index_name, settings={"index": {"max_terms_count": 64}})
    small = ElasticIndex(client, es_index_name)
    small.max_terms_count = 64
    assert [[c.id for c in r.candidates] for r in small.lookup(lookups, 3)] == expected


def test_lookup_leaves_out_excluded_ids(client, es_index_name):
    ensure_index(client, es_index_name, Fingerprinter().config, replicas=0)
    index = ElasticIndex(client, es_index_name)
    fp = Fingerprint(0xABCDEF, 5, (77,), 10, 500, False)
    index.add([StoredDoc("a", fp, "a"), StoredDoc("b", fp, "a", "a", 0, "exact")])
    probe = Lookup("p", Fingerprint(0xABCDEF ^ 1, 6, (77,), 10, 500, False))
    assert {c.id for c in index.lookup([probe], 3)[0].candidates} == {"a", "b"}
    res = index.lookup([probe], 3, exclude=["b"])[0]
    assert [c.id for c in res.candidates] == ["a"] and res.sentence_df == {77: 1}


def _previous_release_template():
    """The mapping the release before lookup keys installed: no lookup_keys field, nothing left out of _source,
    no _meta.lookup."""
    template = index_template()
    mappings = template["template"]["mappings"]
    del mappings["properties"]["lookup_keys"]
    del mappings["_source"]
    mappings["_meta"].pop("lookup", None)
    return template


def test_an_index_made_by_the_previous_release_still_answers(client, es_index_name):
    fingerprinter = Fingerprinter()
    template = _previous_release_template()
    template["template"]["mappings"]["_meta"]["fingerprint"] = fingerprinter.config
    client.indices.create(index=es_index_name, settings=template["template"]["settings"],
                          mappings=template["template"]["mappings"])
    arts = [a for a in chinese_articles() if 800 <= len(a) <= 3000][:40]
    # an index with segments only (`--lookup segments`)
    old = DedupEngine(ElasticIndex(client, es_index_name, lookup_keys=SEGMENTS), fingerprinter, batch_size=15)
    list(old.process([Document(f"a{i}", a) for i, a in enumerate(arts)]))
    stored = client.search(index=es_index_name, size=1)["hits"]["hits"][0]["_source"]
    assert "seg0" in stored and "lookup_keys" not in stored
    index = ElasticIndex(client, es_index_name)  # today's release: reads no _meta.lookup, so uses the segments
    assert index.lookup_keys == SEGMENTS
    ensure_index(client, es_index_name, fingerprinter.config)  # and ensure_index leaves the index as it is
    assert ElasticIndex(client, es_index_name).lookup_keys == SEGMENTS
    res = list(DedupEngine(index, fingerprinter).process(
        [Document("r3", "本网讯 " + arts[3] + "（完）"), Document("n", "一篇全新的文章，" * 30)]))
    assert res[0].duplicate and res[0].cluster == "a3"
    assert not res[1].duplicate


def test_a_full_batch_search_learns_its_boilerplate_and_tries_again(client, es_index_name):
    """300 stored documents hold sentence S: a batch whose documents hold S fills the search page; S is over the
    boilerplate bound, so it is left out and the same batch is searched again (no split, no per-document pages),
    with the embedded index's answers."""
    ensure_index(client, es_index_name, Fingerprinter().config, replicas=0)
    index = ElasticIndex(client, es_index_name, batch_page=100, max_sentence_df=5)
    rng = np.random.default_rng(13)
    S = 0x0ABC_DEF0_1234_5678
    sims = rng.integers(0, 2**63, size=300).tolist()
    docs = [StoredDoc(f"s{i}", Fingerprint(int(v), i + 1, (S, 10_000 + i), 10, 500, False), f"s{i}")
            for i, v in enumerate(sims)]
    index.add(docs)
    memory = MemoryIndex(max_sentence_df=5)
    memory.add(docs)
    queries = [Lookup(f"q{i}", Fingerprint(int(sims[i]) ^ 0b101, 10**9 + i, (S, 10_000 + i), 10, 500, False))
               for i in range(3)]
    got = index.lookup(queries, 3)
    assert [sorted(c.id for c in r.candidates) for r in got] == [[f"s{i}"] for i in range(3)]
    assert [sorted(c.id for c in r.candidates) for r in got] == [
        sorted(c.id for c in r.candidates) for r in memory.lookup(queries, 3)]
    assert got[0].sentence_df[S] > 5 and index.split_batches == 0 and index.crowded_batches == 0


def test_a_raised_boilerplate_bound_brings_candidates_through_hashes_learned_under_the_old_one(client,
                                                                                               es_index_name):
    """The index learned that sentence S (held by 30 documents) is over its bound of 5; once the bound is raised to
    50, S brings its holders as candidates again, as the embedded index with the same bound finds them."""
    ensure_index(client, es_index_name, Fingerprinter().config, replicas=0)
    index = ElasticIndex(client, es_index_name, max_sentence_df=5)
    memory = MemoryIndex(max_sentence_df=5)
    S = 0x0ABC_DEF0_1234_5678
    docs = [StoredDoc(f"s{i}", Fingerprint((i * 0x9E37_79B9_7F4A_7C15) % 2**63, i + 1, (S, 10_000 + i), 10, 500,
                                           False), f"s{i}") for i in range(30)]
    index.add(docs)
    memory.add(docs)
    query = [Lookup("q", Fingerprint(0x7FFF_0000_FFFF_0000, 10**9, (S, 77), 10, 500, False))]
    assert index.lookup(query, 3)[0].sentence_df[S] > 5  # (learned: S is boilerplate under the bound of 5)
    index.max_sentence_df = memory.max_sentence_df = 50
    got = sorted(c.id for c in index.lookup(query, 3)[0].candidates)
    assert got == sorted(c.id for c in memory.lookup(query, 3)[0].candidates) == sorted(d.id for d in docs)
